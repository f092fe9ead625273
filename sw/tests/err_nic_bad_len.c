/*
 * err_nic_bad_len.c - NEGATIVE test: a header with length 0 is invalid
 * (docs/platform.md section 2).  The simulator is expected to stop the run with an
 * error naming the core; if it accepts the header this program prints a
 * message and exits with 1, so "exit 0" can never be mistaken for a pass.
 */
#include "nanopu.h"

int main(void)
{
    lnic_add_context(nanopu_core_id(), 0);
    lnic_write_r(lnic_hdr(nanopu_node_ip(), (uint16_t)nanopu_core_id(), 0));
    lnic_write_r(0xdead);
    for (volatile int i = 0; i < 10000; i++) {
    }
    printf("err_nic_bad_len: simulator accepted a length-0 header\n");
    return 1;
}
