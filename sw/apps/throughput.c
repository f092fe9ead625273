/*
 * throughput.c - receive-rate benchmark (docs/platform.md section 5).
 * Context 0, priority 0 on every core.  Each message's payload is read and
 * discarded.  After every THROUGHPUT_N messages (a compile-time constant,
 * default 100, override with -DTHROUGHPUT_N=...) the core replies to the sender
 * of the N-th message with one word: the total number of messages this core
 * has received so far.  A load generator measures the time between replies.
 */
#include "nanopu.h"

#ifndef THROUGHPUT_N
#define THROUGHPUT_N 100
#endif

/* Consume one message; return its header. */
static uint64_t drain_one(void)
{
    uint64_t hdr = lnic_read();
    uint32_t words = lnic_hdr_words(hdr);
    for (uint32_t i = 0; i < words; i++) {
        (void)lnic_read();
    }
    lnic_msg_done();
    return hdr;
}

static void reply_count(uint64_t hdr, uint64_t count)
{
    lnic_write_r(lnic_hdr(lnic_hdr_ip(hdr), lnic_hdr_context(hdr), LNIC_WORD_BYTES));
    lnic_write_r(count);
}

static void serve_one(void)
{
    static uint64_t count;
    uint64_t hdr = drain_one();
    if (++count % THROUGHPUT_N == 0) {
        reply_count(hdr, count);
    }
}

int main(void)
{
    lnic_serve_forever(serve_one);
}
