/*
 * txflood.c - transmit-rate benchmark on the nanoPU (`nanopu bench nic-throughput`,
 * experiments/nic-compare).  Core 0 registers context 0 and waits for a start message
 * {N, W} (two payload words); it then sends N messages of W words back to the start
 * message's sender as fast as it can write them to netTX: message i carries i in every
 * word, so that the host can check each.  Then it waits for the next start message.  A
 * start message of another length, or W of 0 or above 128, stops the program with exit
 * code 2.  Other cores exit.
 */
#include "nanopu.h"

static void __attribute__((noreturn)) fail(const char *what)
{
    printf("txflood: %s\n", what);
    nanopu_exit(2);
}

static void flood(uint64_t hdr, uint64_t n, uint64_t words)
{
    uint64_t reply = lnic_hdr(lnic_hdr_ip(hdr), lnic_hdr_context(hdr), (uint16_t)(words * LNIC_WORD_BYTES));
    for (uint64_t i = 0; i < n; i++) {
        lnic_write_r(reply);
        for (uint64_t w = 0; w < words; w++)
            lnic_write_r(i);
    }
}

int main(void)
{
    if (nanopu_core_id() != 0)
        return 0;
    lnic_add_context(0, 0);
    for (;;) {
        lnic_wait();
        uint64_t hdr = lnic_read();
        if (lnic_hdr_words(hdr) != 2)
            fail("expected a start message of two words {N, W}");
        uint64_t n = lnic_read(), words = lnic_read();
        lnic_msg_done();
        if (words == 0 || words > 128)
            fail("W must be 1 to 128 words");
        flood(hdr, n, words);
    }
}
