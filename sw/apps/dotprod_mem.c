/*
 * dotprod_mem.c - dot product that first copies the request into memory and
 * then computes from there (the copy-to-memory baseline of dotprod_reg.c).
 * Context 0, priority 0 on every core.  Protocol in dotprod.h; words beyond
 * DOTPROD_MAX are consumed but reuse the buffer cyclically.
 */
#include "dotprod.h"

static uint64_t buffer[DOTPROD_MAX];

static uint32_t copy_in(uint32_t words)
{
    for (uint32_t i = 0; i < words; i++) {
        buffer[i % DOTPROD_MAX] = lnic_read();
    }
    return words < DOTPROD_MAX ? words : DOTPROD_MAX;
}

static uint64_t dot(uint32_t n)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        sum += weights[i] * buffer[i];
    }
    return sum;
}

static void serve_one(void)
{
    uint64_t hdr = lnic_read();
    uint32_t n = copy_in(lnic_hdr_words(hdr));
    reply_sum(hdr, dot(n));
}

int main(void)
{
    init_weights();
    lnic_serve_forever(serve_one);
}
