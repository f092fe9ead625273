#include "common.h"
int main(int hart, void *boot) {
    (void)boot;
    puts_("hello from hart ");
    putdec(hart);
    putch('\n');
    return 7;
}
