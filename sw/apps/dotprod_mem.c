/*
 * dotprod_mem.c - dot product that first copies the request into memory and
 * then computes from there (the copy-to-memory baseline of dotprod_reg.c).
 * Protocol in dotprod.h; words beyond DOTPROD_MAX are consumed but reuse the
 * buffer cyclically.
 */
#include "dotprod.h"

static uint64_t buffer[DOTPROD_MAX];

static uint32_t copy_in(uint32_t words)
{
    for (uint32_t i = 0; i < words; i++) {
        buffer[i % DOTPROD_MAX] = appnet_recv_word();
    }
    appnet_recv_end();
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
    struct appnet_peer from;
    uint32_t n = copy_in(appnet_recv_begin(&from));
    reply_sum(from, dot(n));
}

int main(void)
{
    dotprod_serve_forever(serve_one);
}
