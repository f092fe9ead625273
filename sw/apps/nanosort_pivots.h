/*
 * nanosort_pivots.h - PivotSelect (docs/nanosort.md "PivotSelect"), for b = 2, 4, 8 and 16 (2 only
 * on a last level with fewer buckets, docs/nanosort.md), by one of two rules:
 *
 *   NS_PIVOTS_PAPER (the default): the paper's routine, which it gives for 16 buckets only ("our
 *     specific instantiation of this approach for the setting we implemented where the number of
 *     buckets is 16", its section 4), for every b: its 15 candidates, of which every (16/b)-th
 *     is kept (candidate 16j/b, j = 1..b-1).  Candidate i's median sits at the i/16 quantile
 *     (below), so candidate 16j/b's sits at j/b: the buckets are equal in expectation, and the
 *     sample is the paper's, up to 32 of the node's keys whatever b is.
 *   NS_PIVOTS_PER_B: rules of our own for each b, below, which sample b or 2b keys: with 4
 *     buckets and 32 keys per node, 8 of the 32.  Kept for comparison (docs/nanosort.md).
 *
 * A node with n sorted keys proposes b-1 candidate pivots; the median tree takes, for every
 * j, the median over nodes of the j-th candidates.  That median converges to the *median*
 * of the distribution of one node's j-th candidate, so the rule must put that median at the
 * j/b quantile of the keys (not its mean: docs/nanosort.md).  Then the pivots cut the group's
 * keys into b buckets of equal expected size.
 *
 * The per-b rules, for every b (a "b-sample" is b keys, a "2b-sample" 2b keys, both sorted):
 *   n = 0:        no candidates (the median tree skips this node).
 *   n < b:        add b-n keys drawn uniformly (with replacement) from the n, then b-rule.
 *   b <= n < 2b:  a uniformly random subset of b keys, then b-rule.
 *   n >= 2b:      a uniformly random subset of 2b keys, then 2b-rule.
 *   b-rule:  with probability 1/4 drop one of the b keys uniformly at random ("naive": b-1
 *            of b without replacement); with 3/8 return k1..k(b-1); with 3/8 k2..kb.
 *   2b-rule: with probability 1/2 the ranks A_b, else the ranks B_b (1-based):
 *            b=16: A = 1 3 6 8 10 12 14 16 18 20 22 24 26 27 29 (docs/nanosort.md)
 *                  B = 4 6 7 9 11 13 15 17 19 21 23 25 27 30 32
 *            b=8:  A = 1 3 6 8 10 11 13,  B = 4 6 7 9 11 14 16
 *            b=4:  A = 1 4 5,             B = 4 5 8
 *            b=2:  A = 2,                 B = 3
 *
 * Why these give equal expected buckets.  For keys drawn from a continuous distribution
 * (w.l.o.g. uniform on [0,1]), the r-th smallest of s samples is below x with probability
 * P(Binomial(s, x) >= r).  For a rule mixing ranks r with probabilities p_r, the median of
 * the j-th candidate is the x solving sum_r p_r P(Bin(s, x) >= r) = 1/2.
 *  - b-rule: the j-th candidate is k(j+1) with probability 3/8 + (1/4)(j/b) (the naive
 *    case drops one of k1..kj with probability j/b), else kj.  Solving numerically, the
 *    median sits within 0.0013 of j/b for every j and b = 4, 8, 16 (relative error < 1.1%);
 *    docs/nanosort.md states the same 1/4, 3/8, 3/8 mixture for b = 8 and b = 16.
 *  - 2b-rule: for each j we chose the rank pair (A_j, B_j), both lists increasing, whose
 *    50/50 mixture has its median closest to j/b, ties broken by the smallest spread
 *    (B_j - A_j).  The same search over 32 keys returns exactly docs/nanosort.md's b=16 lists,
 *    which is why we trust it for b = 4 and 8.  Worst median errors: b=16 0.0031,
 *    b=8 0.0025, b=4 0.0056 (at j = 1 and 3; 8 samples cannot do better with two ranks).
 *    b=2 is exact: ranks 2 and 3 of 4 are symmetric about 1/2, and the b-rule's candidate
 *    is the smaller or the larger of 2 keys with probability 1/2 each, whose mixture is
 *    uniform (P = ((1-(1-x)^2) + x^2) / 2 = x).
 * Random subsets keep the sample a uniform sample of the node's keys, so these hold for
 * every n.  Duplicated keys (n < b) keep the median right in expectation over the draw.
 */
#ifndef NANOSORT_PIVOTS_H
#define NANOSORT_PIVOTS_H

#include "nanosort_util.h"

#define NS_MAX_B 16

static const uint8_t ns_ranks_a16[15] = {1, 3, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 27, 29};
static const uint8_t ns_ranks_b16[15] = {4, 6, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 30, 32};
static const uint8_t ns_ranks_a8[7] = {1, 3, 6, 8, 10, 11, 13};
static const uint8_t ns_ranks_b8[7] = {4, 6, 7, 9, 11, 14, 16};
static const uint8_t ns_ranks_a4[3] = {1, 4, 5};
static const uint8_t ns_ranks_b4[3] = {4, 5, 8};
static const uint8_t ns_ranks_a2[1] = {2};
static const uint8_t ns_ranks_b2[1] = {3};

/* The 2b-rule's rank list for b, list 0 (A) or 1 (B). */
static inline const uint8_t *ns_ranks(uint64_t b, int which)
{
    if (b == 16)
        return which ? ns_ranks_b16 : ns_ranks_a16;
    if (b == 8)
        return which ? ns_ranks_b8 : ns_ranks_a8;
    if (b == 4)
        return which ? ns_ranks_b4 : ns_ranks_a4;
    return which ? ns_ranks_b2 : ns_ranks_a2;
}

/* Indices of a uniformly random s-subset of [0, n) (s <= n <= cap of idx), sorted:
 * a partial Fisher-Yates shuffle, then sorting the chosen indices keeps the sample sorted
 * because the keys are. */
static inline void ns_random_subset(uint64_t *idx, uint64_t n, uint64_t s, struct ns_rng *r)
{
    for (uint64_t i = 0; i < n; i++)
        idx[i] = i;
    for (uint64_t i = 0; i < s; i++) {
        uint64_t j = i + ns_below(r, n - i), t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
    ns_sort_small(idx, s);
}

/* b-rule on a sorted b-sample. */
static inline void ns_rule_b(const uint64_t *sample, uint64_t b, uint64_t *out, struct ns_rng *r)
{
    uint64_t pick = ns_below(r, 8), skip; /* 0,1: naive; 2..4: k1..k(b-1); 5..7: k2..kb */
    if (pick < 2)
        skip = ns_below(r, b);
    else if (pick < 5)
        skip = b - 1;
    else
        skip = 0;
    for (uint64_t i = 0, o = 0; i < b; i++)
        if (i != skip)
            out[o++] = sample[i];
}

/* 2b-rule on a sorted 2b-sample. */
static inline void ns_rule_2b(const uint64_t *sample, uint64_t b, uint64_t *out, struct ns_rng *r)
{
    const uint8_t *ranks = ns_ranks(b, (int)(ns_rand(r) & 1));
    for (uint64_t j = 0; j + 1 < b; j++)
        out[j] = sample[ranks[j] - 1];
}

/* The rules above, as nanosort.c's PIVOTS argument names them. */
#define NS_PIVOTS_PER_B 0
#define NS_PIVOTS_PAPER 1

/* The per-b rules: b-1 candidates from n sorted keys (keys[i].key), into out; returns how
 * many (b-1, or 0 when n = 0).  idx is scratch of at least max(n, 2b) words. */
static inline uint64_t ns_pivots_per_b(const struct ns_rec *keys, uint64_t n, uint64_t b,
                                       uint64_t *out, uint64_t *idx, struct ns_rng *r)
{
    uint64_t sample[2 * NS_MAX_B];
    if (n == 0)
        return 0;
    if (n < b) {
        for (uint64_t i = 0; i < n; i++)
            sample[i] = keys[i].key;
        for (uint64_t i = n; i < b; i++)
            sample[i] = keys[ns_below(r, n)].key;
        ns_sort_small(sample, b);
        ns_rule_b(sample, b, out, r);
        return b - 1;
    }
    uint64_t s = n < 2 * b ? b : 2 * b;
    if (s == n) { /* the subset is every key: no draw, no index sort */
        for (uint64_t i = 0; i < s; i++)
            sample[i] = keys[i].key;
    } else {
        ns_random_subset(idx, n, s, r);
        for (uint64_t i = 0; i < s; i++)
            sample[i] = keys[idx[i]].key;
    }
    if (s == b)
        ns_rule_b(sample, b, out, r);
    else
        ns_rule_2b(sample, b, out, r);
    return b - 1;
}

/* PivotSelect by `rule` (NS_PIVOTS_*): b-1 candidates from n sorted keys, into out; returns
 * how many (b-1, or 0 when n = 0).  idx is scratch of at least max(n, 2 NS_MAX_B) words.
 * For b = 16 both rules are the paper's. */
static inline uint64_t ns_pivot_select(const struct ns_rec *keys, uint64_t n, uint64_t b, uint64_t rule,
                                       uint64_t *out, uint64_t *idx, struct ns_rng *r)
{
    uint64_t all[NS_MAX_B - 1], step = NS_MAX_B / b;
    if (rule == NS_PIVOTS_PER_B || b == NS_MAX_B || n == 0)
        return ns_pivots_per_b(keys, n, b, out, idx, r);
    ns_pivots_per_b(keys, n, NS_MAX_B, all, idx, r);
    for (uint64_t j = 1; j < b; j++)
        out[j - 1] = all[j * step - 1];
    return b - 1;
}

#endif
