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

static void serve_one(void)
{
    uint64_t hdr = lnic_read();
    uint32_t words = lnic_hdr_words(hdr);
    lnic_write_r(hdr);
    for (uint32_t i = 0; i < words; i++) {
        lnic_copy();
    }
    lnic_msg_done();
}

int main(void)
{
    lnic_serve_forever(serve_one);
}
