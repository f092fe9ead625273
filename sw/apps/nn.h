/*
 * nn.h - the neuron of the paper's NN inference application (docs/apps/paper-apps.md):
 * weights from a seed, multiply-accumulate in fixed point, the activation.  The host side
 * (crates/harness/src/apps/nn.rs) computes the same integers, so results match bit for bit.
 *
 * Fixed point: weights, inputs and activations are Q8 (value = integer / 256) in int64;
 * a neuron accumulates bias * 256 + sum of weight * input (Q16, wrapping 64-bit) and its
 * activation is that shifted right by 8 (arithmetic), then ReLU in hidden layers.
 */
#ifndef NN_H
#define NN_H

#include <stdint.h>

#define NN_FRAC_BITS 8
#define NN_MAX_INPUTS 256

/* SplitMix64's output function (Steele, Lea, Flood: "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): one 64-bit hash per (seed, position). */
static inline uint64_t nn_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Weight i of neuron j of layer `layer` (i == inputs is its bias): Q8 in [-1, 1). */
static inline int64_t nn_weight(uint64_t seed, uint64_t layer, uint64_t j, uint64_t i)
{
    uint64_t h = nn_mix(seed ^ (layer << 48) ^ (j << 24) ^ i);
    return (int64_t)(h % 512) - 256;
}

/* Q16 accumulator -> Q8 activation; ReLU unless this is the output layer. */
static inline int64_t nn_activate(int64_t acc, int output)
{
    int64_t y = acc >> NN_FRAC_BITS;
    return (output || y > 0) ? y : 0;
}

#endif
