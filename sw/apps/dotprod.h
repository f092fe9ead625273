/*
 * dotprod.h - shared parts of the dot-product servers (docs/platform.md section 5:
 * "dot product with in-memory weights, register-direct vs copy-to-memory").
 * A request carries N u64 data words (N = length / 8, at most DOTPROD_MAX);
 * the reply to the sender is one word: sum over i of weight[i] * data[i]
 * (mod 2^64).  Weights are weight[i] = i + 1, initialised at start-up.
 * Longer requests use the weights cyclically.
 */
#ifndef DOTPROD_H
#define DOTPROD_H

#include "nanopu.h"

#define DOTPROD_MAX 256  /* words: the prototype's 2 KiB maximum message */

static uint64_t weights[DOTPROD_MAX];

static void init_weights(void)
{
    for (uint64_t i = 0; i < DOTPROD_MAX; i++) {
        weights[i] = i + 1;
    }
}

static void reply_sum(uint64_t hdr, uint64_t sum)
{
    lnic_write_r(lnic_hdr(lnic_hdr_ip(hdr), lnic_hdr_context(hdr), LNIC_WORD_BYTES));
    lnic_write_r(sum);
    lnic_msg_done();
}

#endif
