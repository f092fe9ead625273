/*
 * nanosort_util.h - small building blocks of NanoSort (nanosort.c): records, a
 * per-core PRNG, shared pseudo-random bijections, sorting and medians.
 *
 * Everything here is local computation; no message is sent or received.
 */
#ifndef NANOSORT_UTIL_H
#define NANOSORT_UTIL_H

#include <stdint.h>

/* A key in flight: the key and where its value lives (its origin sorter and the key's
 * index there), so the final fetch can ask the origin for it (docs/nanosort.md, "Finally"). */
struct ns_rec {
    uint64_t key;
    uint64_t tag; /* origin sorter << 32 | index at the origin */
};

static inline uint64_t ns_tag(uint64_t origin, uint64_t index) { return origin << 32 | index; }
static inline uint64_t ns_tag_origin(uint64_t tag) { return tag >> 32; }
static inline uint64_t ns_tag_index(uint64_t tag) { return tag & 0xffffffffull; }

/* ---- randomness ---------------------------------------------------------------------- */

/* splitmix64: a good 64-bit mixer, used both as the per-core PRNG step and as a hash. */
static inline uint64_t ns_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t ns_hash3(uint64_t a, uint64_t b, uint64_t c)
{
    return ns_mix(ns_mix(ns_mix(a) ^ b) ^ c);
}

/* Per-core PRNG (its choices are private to the core: PivotSelect, ties, median tie
 * breaks); seeded from the sorter id so runs are reproducible. */
struct ns_rng {
    uint64_t s;
};

static inline uint64_t ns_rand(struct ns_rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return ns_mix(r->s);
}

/* Uniform in [0, n), 1 <= n < 2^32: a multiply instead of a 66-cycle remainder (the bias
 * is below n / 2^32). */
static inline uint64_t ns_below(struct ns_rng *r, uint64_t n)
{
    return ((ns_rand(r) >> 32) * n) >> 32;
}

/* A pseudo-random bijection of [0, 2^bits) chosen by `seed`.  Every sorter computes the
 * same one from the same seed, so destinations can be random yet exactly balanced without
 * any coordination (docs/nanosort.md step 0: "a random permutation does this").  Each round is
 * a bijection mod 2^bits: multiply by an odd number, add, xor with a right shift. */
static inline uint64_t ns_permute(uint64_t x, uint64_t seed, unsigned bits)
{
    if (bits == 0)
        return 0;
    uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    unsigned shift = (bits + 1) / 2;
    for (unsigned round = 0; round < 4; round++) {
        uint64_t h = ns_mix(seed + round);
        x = (x * (h | 1) + (h >> 17)) & mask;
        x ^= x >> shift;
    }
    return x;
}

/* ---- sorting ------------------------------------------------------------------------- */

/* Stable bottom-up merge sort of n records by key; tmp holds n records.  O(n log n) with a
 * small, branch-light inner loop: the nodes hold tens to hundreds of keys. */
static inline void ns_sort_recs(struct ns_rec *v, struct ns_rec *tmp, uint64_t n)
{
    struct ns_rec *src = v, *dst = tmp;
    for (uint64_t w = 1; w < n; w *= 2) {
        for (uint64_t lo = 0; lo < n; lo += 2 * w) {
            uint64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = src[j].key < src[i].key ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        struct ns_rec *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        for (uint64_t i = 0; i < n; i++)
            v[i] = src[i];
}

/* Insertion sort of a few words (samples, candidate columns: at most 32). */
static inline void ns_sort_small(uint64_t *v, uint64_t n)
{
    for (uint64_t i = 1; i < n; i++) {
        uint64_t x = v[i], j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Median of n >= 1 words (v is reordered).  For even n either middle element, each with
 * probability 1/2, so the median tree has no systematic downward or upward drift. */
static inline uint64_t ns_median(uint64_t *v, uint64_t n, struct ns_rng *r)
{
    ns_sort_small(v, n);
    if (n % 2 == 1)
        return v[n / 2];
    return v[n / 2 - 1 + (ns_rand(r) & 1)];
}

#endif
