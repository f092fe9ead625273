/*
 * loopback.c - echo server (docs/platform.md section 5, microbenchmarks).
 * Every core registers context 0, priority 0, and serves forever: each message
 * goes back to its sender with the same length and payload.  The received
 * header names the sender (IP, context) and the length, which is exactly the
 * header of the reply (docs/platform.md section 2), so it is forwarded unchanged.
 * Build with -DBOOT_MSG to announce each core to the test host first
 * (lnic_serve_forever).
 */
#include "nanopu.h"

/* The payload is copied four words per iteration, as the prototype's echo programs unroll
 * their copy loops: one loop branch per four words instead of one per word. */
static void serve_one(void)
{
    uint64_t hdr = lnic_read();
    uint32_t words = lnic_hdr_words(hdr);
    lnic_write_r(hdr);
    uint32_t i = 0;
    for (; i + 4 <= words; i += 4) {
        lnic_copy();
        lnic_copy();
        lnic_copy();
        lnic_copy();
    }
    for (; i < words; i++) {
        lnic_copy();
    }
    lnic_msg_done();
}

int main(void)
{
    lnic_serve_forever(serve_one);
}
