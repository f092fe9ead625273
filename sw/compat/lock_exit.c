/* lock_exit.c - every hart contends for one spinlock in thread_entry; hart 0 takes it
   first and exits from main while still holding it, so harts 1.. spin on it forever.
   Under the prototype's exit convention (the first exit ends the node) the run ends with
   hart 0's exit code, 0. */
#include <stdint.h>
#include "lnic.h"

static volatile uint32_t lock;
static volatile uint32_t held;

static void acquire(void)
{
    while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE) != 0) {
    }
}

void thread_entry(uint64_t hartid, uint64_t ncores)
{
    (void)ncores;
    if (hartid == 0) {
        acquire();
        held = 1;
        return;
    }
    while (!held) {
    }
    acquire();
    printstr("a parked hart got the lock: hart 0 released it\n");
    for (;;) {
    }
}

int main(void)
{
    printstr("hart 0 exits holding the lock\n");
    return lock == 1 ? 0 : 1;
}
