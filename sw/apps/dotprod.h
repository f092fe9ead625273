/*
 * dotprod.h - shared parts of the dot-product servers (docs/platform.md section 5:
 * "dot product with in-memory weights, register-direct vs copy-to-memory").
 * A request carries N u64 data words (N = length / 8, at most DOTPROD_MAX);
 * the reply to the sender is one word: sum over i of weight[i] * data[i]
 * (mod 2^64).  Weights are weight[i] = i + 1, initialised at start-up.
 * Longer requests use the weights cyclically.
 *
 * Written against appnet.h, so each builds for both NICs (docs/apps/paper-apps.md): on the
 * nanoPU every core serves context 0; on IceNIC hart 0 alone, and a request is at most one
 * frame (APPNET_ICE_MAX_WORDS words).
 */
#ifndef DOTPROD_H
#define DOTPROD_H

#include "appnet.h"

#define DOTPROD_MAX 256  /* words: the prototype's 2 KiB maximum message */

static uint64_t weights[DOTPROD_MAX];

static void init_weights(void)
{
    for (uint64_t i = 0; i < DOTPROD_MAX; i++) {
        weights[i] = i + 1;
    }
}

static void reply_sum(struct appnet_peer to, uint64_t sum)
{
    appnet_send(to, &sum, 1);
}

/* Serve context 0 forever with `serve` (which reads one request and replies); a core that
 * cannot drive the NIC (IceNIC's harts other than 0) exits with 0. */
static void __attribute__((noreturn)) dotprod_serve_forever(void (*serve)(void))
{
    if (!appnet_core_serves())
        nanopu_exit(0);
    init_weights();
    appnet_init(0);
    for (;;)
        serve();
}

#endif
