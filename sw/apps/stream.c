/*
 * stream.c - increment every word and return it (docs/platform.md section 5).
 * Context 0, priority 0 on every core; the reply goes to the sender with the
 * same length; each payload word w comes back as w + 1 (addi t6, t5, 1).
 */
#include "nanopu.h"

static void serve_one(void)
{
    uint64_t hdr = lnic_read();
    uint32_t words = lnic_hdr_words(hdr);
    lnic_write_r(hdr);
    for (uint32_t i = 0; i < words; i++) {
        lnic_add_int_i(1);
    }
    lnic_msg_done();
}

int main(void)
{
    lnic_serve_forever(serve_one);
}
