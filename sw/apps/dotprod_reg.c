/*
 * dotprod_reg.c - dot product computed as the request's words are read: on the nanoPU
 * straight from netRX (register-direct, the nanoPU way), on IceNIC in place from the
 * receive buffer the DMA wrote.  Protocol in dotprod.h.
 */
#include "dotprod.h"

static void serve_one(void)
{
    struct appnet_peer from;
    uint32_t words = appnet_recv_begin(&from);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < words; i++) {
        sum += weights[i % DOTPROD_MAX] * appnet_recv_word();
    }
    appnet_recv_end();
    reply_sum(from, sum);
}

int main(void)
{
    dotprod_serve_forever(serve_one);
}
