/*
 * dotprod_reg.c - dot product reading the request words straight from netRX
 * (register-direct, the nanoPU way).  Context 0, priority 0 on every core.
 * Protocol in dotprod.h.
 */
#include "dotprod.h"

static void serve_one(void)
{
    uint64_t hdr = lnic_read();
    uint32_t words = lnic_hdr_words(hdr);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < words; i++) {
        sum += weights[i % DOTPROD_MAX] * lnic_read();
    }
    reply_sum(hdr, sum);
}

int main(void)
{
    init_weights();
    lnic_serve_forever(serve_one);
}
