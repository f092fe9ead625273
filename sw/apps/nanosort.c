/*
 * nanosort.c - NanoSort (docs/nanosort.md, the algorithm notes) on the nanoPU: one sorter per core,
 * sorter s on node s / C, core s % C, context s % C (sortbench.h).
 *
 * Args: BUCKETS FANIN [MULTICAST [TREES [PIVOTS]]] (argv[3..7]); BUCKETS b in {4, 8, 16}; the number
 * of sorters P must be a power of two: every level splits its group into b partitions but
 * the last, which gets P / b^(L-1) < b buckets when P is not a power of b (256 = 8 * 8 * 4);
 * FANIN >= 2 is the median trees' fan-in; MULTICAST 1 (default) multicasts the pivots, 0
 * unicasts them; TREES 1 (default) picks the b-1 pivots with b-1 independent median trees,
 * one value per message (the paper's algorithm, docs/nanosort.md), 0 with one tree whose
 * messages carry all b-1 candidates (a single-tree variant, for comparison); PIVOTS 1
 * (default) is the paper's PivotSelect, its 16-bucket routine for every b, 0 our own rule for
 * each b (nanosort_pivots.h).
 *
 * Steps (every core runs them independently; no coordinator, no barrier):
 *   shuffle   key i of sorter s goes to sorter sigma_i(s), sigma_i a pseudo-random
 *             permutation of the sorters that every core computes from a shared seed, so
 *             every sorter receives exactly n keys (docs/nanosort.md step 0: "a random
 *             permutation does this") and knows it is complete after n keys.
 *   level k   (k = 1..L) on the group of m = P / b^(k-1) sorters containing this one, with
 *             b_k = min(b, m) buckets: sort, PivotSelect (nanosort_pivots.h), the b_k-1
 *             median trees, each tree's pivot from its root to the group, then the key
 *             exchange of the sorted keys, cut into b_k contiguous runs, into b_k
 *             partitions of m/b_k sorters.
 *   fetch     sort the final bucket, ask each origin for the values (batched per origin),
 *             write the records to the output; keep serving others' requests until every
 *             one of this sorter's n input values has been asked for.
 *
 * Message formats (payload word 0 is always the tag word below; keys travel as two words,
 * the key and ns_tag(origin, index)):
 *   KEYS     level (0 = shuffle), a = chunk index, b = chunks in the transfer; then pairs
 *   CAND     level, a = t << 8 | j0 (median-tree level t, first pivot j0 of the tree),
 *            b = values (1 per tree, b-1 for the combined tree, 0 from a subtree without
 *            keys); then the candidates (or, above the leaves, the medians)
 *   PIVOTS   level, a = j0, b = values; then the pivots j0.. of that tree
 *   REQ      b = entries; then entries pos << 32 | index (pos = slot in the requester's
 *            output, index = the key's index at the origin)
 *   REP      b = records; then per record pos and the 12 value words
 * Every message is at most NS_MAX_MSG_BYTES (the NIC default maximum) of payload.
 *
 * Completion of the shuffle: key i of sorter s goes to pi(s) XOR h_i (pi a shared
 * pseudo-random permutation of the P = 2^L sorters, h_i a shared hash of i below P): for
 * every i that is a permutation, so each sorter receives exactly one key of each index,
 * n keys in all, and is complete after n keys.  Keys to the same destination share a message.
 *
 * Completion of the level-k exchange (b below is the level's bucket count b_k): sender x of
 * a group (local id) sends its bucket-i keys (a contiguous run of its sorted keys) to ONE
 * member of partition i, at position (pi_k(x) XOR h_{k,i}) mod (m/b), with pi_k a
 * shared pseudo-random permutation of [0, m) (fresh per level and group) and h_{k,i} a shared
 * hash.  Each member therefore receives exactly b transfers per level (one from each of the
 * b senders mapped to it), each of 1 or more chunks (an empty transfer is one message with
 * no keys).  Chunk 0 announces the chunk count, so a receiver is complete when it has seen
 * b chunk-0s and as many chunks as they announced, in any arrival order.  Cost: b messages
 * per sender and level (plus one per 127 keys beyond the first 127), against m for "one
 * message to every member of the partition" and against about one per key for independent
 * per-key destinations (which would also leave receivers unable to know their count).  Each
 * sender-bucket destination is uniform over the partition; the keys of one sender and bucket
 * travel together, which makes the received counts no more variable than independent
 * per-key choices (variance n(1-1/b) instead of about n).  The per-core PRNG (seeded from
 * the sorter id) makes the private choices: PivotSelect, ties to pivots, even medians.
 *
 * Reordering: cores are not in lockstep, so a message may belong to a later step.  Candidate
 * messages are parked in a pool keyed by (level, tree level, tree), pivots in per-level slots,
 * fetch requests are served whenever they are read, and keys go to the one exchange being
 * received (a later level's keys cannot arrive earlier: its pivots need this sorter's
 * candidates, sent only after this level's exchange completed).
 */
#include "sortbench.h"
#include "nanosort_util.h"
#include "nanosort_pivots.h"

#define NS_MAX_MSG_BYTES 2048
#define NS_MAX_WORDS (NS_MAX_MSG_BYTES / LNIC_WORD_BYTES)            /* payload words */
/* Keys per KEYS message; a build with -DNS_KEYS_PER_MSG=1 sends every key as its own
 * message, as the paper's exchange does (docs/nanosort.md, "Against the paper's 68 us"). */
#ifndef NS_KEYS_PER_MSG
#define NS_KEYS_PER_MSG ((NS_MAX_WORDS - 1) / 2)                      /* 127 */
#endif
#define NS_REQ_PER_MSG (NS_MAX_WORDS - 1)                             /* 255 */
#define NS_REP_PER_MSG ((NS_MAX_WORDS - 1) / (1 + SORT_VALUE_WORDS))  /* 19 */
#define NS_MAX_LEVELS 30 /* stage ids STAGE_LEVEL .. STAGE_LEVEL + 29 */
#define NS_POOL 256
/* Pool entries warmed at start: more than a sorter parks at once up to fan-in 32 (measured
 * on 4,096 cores at fan-in 2, 4 and 16: fewer than 24); fan-in 64 parks up to 63. */
#define NS_POOL_WARM 32
#define NS_STACK_WARM 4096 /* bytes of stack below main's frame that the levels reach */
#define NS_MAX_FANIN 64
#define NS_SEED 0x4e616e6f536f7274ull /* shared by every core: the shared permutations */

enum ns_type { MSG_KEYS = 1, MSG_CAND, MSG_PIVOTS, MSG_REQ, MSG_REP };

/* Payload word 0: type 63..56, level 55..48, a 47..24, b 23..0. */
static inline uint64_t ns_w0(uint64_t type, uint64_t level, uint64_t a, uint64_t b)
{
    return type << 56 | level << 48 | (a & 0xffffff) << 24 | (b & 0xffffff);
}
static inline uint64_t w0_type(uint64_t w) { return w >> 56; }
static inline uint64_t w0_level(uint64_t w) { return (w >> 48) & 0xff; }
static inline uint64_t w0_a(uint64_t w) { return (w >> 24) & 0xffffff; }
static inline uint64_t w0_b(uint64_t w) { return w & 0xffffff; }

/* A parked median-tree message. */
struct ns_cand {
    uint8_t level, tlevel, j0, count;
    uint32_t pad;
    uint64_t v[NS_MAX_B - 1];
};

/* One median tree of a level (docs/nanosort.md step 3): it computes pivots j0 .. j0+cnt-1 over
 * the group, its positions rotated by `off` so that different trees have different mergers
 * and roots.  `has`: the values below this sorter in this tree include a key. */
struct ns_tree {
    uint64_t j0, cnt, off, active, has;
};

struct ns {
    struct sort_area *a;
    uint64_t me, P, C, core, b, logb, logp, F, mcast, n, levels;
    int c_shift; /* log2 C when C is a power of two, else -1 */
    struct ns_rng rng;
    struct ns_rec *cur, *nxt, *tmp, *aux; /* cap records each */
    uint64_t ncur, nnxt, cap;
    uint64_t *scratch;                     /* cap + 2b words */
    uint64_t trees;                        /* 1: b-1 independent median trees, 0: one */
    uint64_t pivots;                       /* PivotSelect's rule: NS_PIVOTS_PAPER or _PER_B */
    /* the exchange being received into nxt: level, chunk-0s, chunks announced and seen */
    uint64_t rx_level, rx_first, rx_expect, rx_got, rx_keys;
    uint64_t piv[NS_MAX_LEVELS + 1][NS_MAX_B - 1];
    uint64_t piv_got[NS_MAX_LEVELS + 1];   /* pivots of each level received (or picked) */
    /* merge scratch, warm with the rest of the struct: the parked messages of one merge
     * and one column of values */
    struct ns_cand *kids[NS_MAX_FANIN];
    uint64_t col[NS_MAX_FANIN];
    /* the merge being waited for: (level, tree level, tree), and its messages parked */
    uint64_t w_level, w_tlevel, w_j0, w_got;
    uint64_t npool;
    uint64_t served, vals_got; /* fetch: own values served, own records' values received */
    struct ns_cand pool[NS_POOL]; /* dense: entries 0..npool-1; last, see main */
};

#define ns_fail(s, ...) do { \
    printf("nanosort: sorter %lu: ", (s)->me); printf(__VA_ARGS__); printf("\n"); \
    nanopu_exit(1); } while (0)

/* ceil(log2 x) */
static uint64_t log2_exact(uint64_t x)
{
    uint64_t l = 0;
    while ((1ull << l) < x)
        l++;
    return l;
}

/* ---- sending ---------------------------------------------------------------------------- */

/* Header of a unicast of `words` payload words to sorter `dest`.  Nothing is counted here:
 * the summary's messages and bytes are the NIC's own counts, taken by the simulator out of
 * band (docs/sort-harness.md, "Figures"), as the prototype's `lnic-sort.c` counts nothing. */
static void tx_begin(struct ns *s, uint64_t dest, uint64_t words)
{
    uint16_t len = (uint16_t)(words * LNIC_WORD_BYTES);
    if (s->c_shift >= 0) /* sort_hdr without its two 66-cycle divisions when C = 2^c */
        lnic_write_r(lnic_hdr(NANOPU_IP(10, 0, 0, 2) + (uint32_t)(dest >> s->c_shift),
                              (uint16_t)(dest & (s->C - 1)), len));
    else
        lnic_write_r(sort_hdr(dest, s->C, len));
}

/* Accept `cnt` keys of exchange level `level` (from a message or from this sorter itself). */
static void rx_account(struct ns *s, uint64_t level, uint64_t chunk, uint64_t chunks, uint64_t cnt)
{
    if (level != s->rx_level)
        ns_fail(s, "keys of level %lu while receiving level %lu", level, s->rx_level);
    s->rx_keys += cnt;
    s->rx_got++;
    if (chunk == 0) {
        s->rx_first++;
        s->rx_expect += chunks;
    }
}

static void nxt_room(struct ns *s, uint64_t cnt)
{
    if (s->nnxt + cnt > s->cap)
        ns_fail(s, "more than %lu keys arrived (bucket overflow)", s->cap);
}

/* Send cnt records to sorter dest as one transfer of exchange level `level`: chunks of at
 * most NS_KEYS_PER_MSG keys, at least one message even when empty (the receiver counts
 * transfers).  To itself: straight into nxt. */
static void send_keys(struct ns *s, uint64_t dest, uint64_t level, const struct ns_rec *r, uint64_t cnt)
{
    /* one chunk without a division (66 cycles on the Rocket core, docs/models/node.md) in
     * the usual case of at most 127 keys */
    uint64_t chunks = cnt <= NS_KEYS_PER_MSG ? 1 : (cnt + NS_KEYS_PER_MSG - 1) / NS_KEYS_PER_MSG;
    for (uint64_t c = 0, at = 0; c < chunks; c++) {
        uint64_t k = cnt - at < NS_KEYS_PER_MSG ? cnt - at : NS_KEYS_PER_MSG;
        if (dest == s->me) {
            nxt_room(s, k);
            for (uint64_t i = 0; i < k; i++)
                s->nxt[s->nnxt++] = r[at + i];
            rx_account(s, level, c, chunks, k);
        } else {
            tx_begin(s, dest, 1 + 2 * k);
            lnic_write_r(ns_w0(MSG_KEYS, level, c, chunks));
            for (uint64_t i = 0; i < k; i++) {
                lnic_write_r(r[at + i].key);
                lnic_write_r(r[at + i].tag);
            }
        }
        at += k;
    }
}

/* Tree tr's values (candidates, or medians above the leaves) of level k, tree level t, to
 * the tree parent: one value per independent tree, none from a subtree without keys. */
static void send_cand(struct ns *s, uint64_t dest, uint64_t k, uint64_t t, const struct ns_tree *tr,
                      const uint64_t *v)
{
    uint64_t cnt = tr->has ? tr->cnt : 0;
    tx_begin(s, dest, 1 + cnt);
    lnic_write_r(ns_w0(MSG_CAND, k, t << 8 | tr->j0, cnt));
    for (uint64_t j = tr->j0; j < tr->j0 + cnt; j++)
        lnic_write_r(v[j]);
}

static void write_pivots(uint64_t k, uint64_t j0, const uint64_t *piv, uint64_t cnt)
{
    lnic_write_r(ns_w0(MSG_PIVOTS, k, j0, cnt));
    for (uint64_t j = 0; j < cnt; j++)
        lnic_write_r(piv[j]);
}

/* A tree root's pivots j0..j0+cnt-1 to the m sorters of group g0 (docs/nanosort.md step 4).
 * Multicast reaches a contiguous node range and ONE context, and skips the sender's node
 * (nanopu.h): so when the group is whole nodes, one multicast per context plus unicasts to
 * this node's other cores; otherwise (or with MULTICAST 0) one unicast per member. */
static void send_pivots(struct ns *s, uint64_t k, uint64_t m, uint64_t g0, uint64_t j0,
                        const uint64_t *piv, uint64_t cnt)
{
    uint64_t words = 1 + cnt;
    if (s->mcast && m % s->C == 0 && m / s->C > 1) {
        for (uint64_t c = 0; c < s->C; c++) {
            lnic_write_multicast_hdr((uint32_t)(g0 / s->C), (uint32_t)(m / s->C), (uint16_t)c,
                                     (uint16_t)(words * LNIC_WORD_BYTES));
            write_pivots(k, j0, piv, cnt);
        }
        for (uint64_t c = 0; c < s->C; c++) {
            if (c == s->core)
                continue;
            tx_begin(s, s->me - s->core + c, words);
            write_pivots(k, j0, piv, cnt);
        }
        return;
    }
    for (uint64_t y = g0; y < g0 + m; y++) {
        if (y == s->me)
            continue;
        tx_begin(s, y, words);
        write_pivots(k, j0, piv, cnt);
    }
}

/* ---- receiving -------------------------------------------------------------------------- */

static void on_keys(struct ns *s, uint64_t w, uint64_t words)
{
    uint64_t cnt = (words - 1) / 2;
    nxt_room(s, cnt);
    for (uint64_t i = 0; i < cnt; i++) {
        s->nxt[s->nnxt].key = lnic_read();
        s->nxt[s->nnxt].tag = lnic_read();
        s->nnxt++;
    }
    rx_account(s, w0_level(w), w0_a(w), w0_b(w), cnt);
}

static void on_cand(struct ns *s, uint64_t w)
{
    uint64_t cnt = w0_b(w);
    if (s->npool == NS_POOL)
        ns_fail(s, "candidate pool full (%d parked messages)", NS_POOL);
    if (cnt > NS_MAX_B - 1)
        ns_fail(s, "candidate message of %lu values", cnt);
    struct ns_cand *c = &s->pool[s->npool++];
    c->level = (uint8_t)w0_level(w);
    c->tlevel = (uint8_t)(w0_a(w) >> 8);
    c->j0 = (uint8_t)w0_a(w);
    c->count = (uint8_t)cnt;
    for (uint64_t j = 0; j < cnt; j++)
        c->v[j] = lnic_read();
    s->w_got += c->level == s->w_level && c->tlevel == s->w_tlevel && c->j0 == s->w_j0;
}

static void on_pivots(struct ns *s, uint64_t w)
{
    uint64_t k = w0_level(w), j0 = w0_a(w), cnt = w0_b(w);
    if (k > NS_MAX_LEVELS || j0 + cnt > NS_MAX_B - 1)
        ns_fail(s, "pivot message %lx", w);
    for (uint64_t j = j0; j < j0 + cnt; j++)
        s->piv[k][j] = lnic_read();
    s->piv_got[k] += cnt;
}

/* Reply to one request of `cnt` entries from sorter `to` (entries pos << 32 | index). */
static void serve(struct ns *s, uint64_t to, const uint64_t *e, uint64_t cnt)
{
    for (uint64_t at = 0; at < cnt; at += NS_REP_PER_MSG) {
        uint64_t k = cnt - at < NS_REP_PER_MSG ? cnt - at : NS_REP_PER_MSG;
        tx_begin(s, to, 1 + k * (1 + SORT_VALUE_WORDS));
        lnic_write_r(ns_w0(MSG_REP, 0, 0, k));
        for (uint64_t i = at; i < at + k; i++) {
            const uint64_t *v = &s->a->in_values[ns_tag_index(e[i]) * SORT_VALUE_WORDS];
            lnic_write_r(e[i] >> 32);
            for (int j = 0; j < SORT_VALUE_WORDS; j++)
                lnic_write_r(v[j]);
        }
    }
    s->served += cnt;
}

/* Read the whole request first, so the message is done (JBSQ can deliver the next) before
 * the replies go out. */
static void on_req(struct ns *s, uint64_t hdr, uint64_t w)
{
    uint64_t e[NS_REQ_PER_MSG], cnt = w0_b(w);
    for (uint64_t i = 0; i < cnt; i++)
        e[i] = lnic_read();
    lnic_msg_done();
    serve(s, sort_src(hdr, s->C), e, cnt);
}

static void on_rep(struct ns *s, uint64_t w)
{
    for (uint64_t i = 0; i < w0_b(w); i++) {
        uint64_t *v = &s->a->out_values[lnic_read() * SORT_VALUE_WORDS];
        for (int j = 0; j < SORT_VALUE_WORDS; j++)
            v[j] = lnic_read();
    }
    s->vals_got += w0_b(w);
}

/* Wait for one message (idle time charged to the open stage) and consume all of it. */
static void handle_one(struct ns *s)
{
    sort_wait(s->a);
    uint64_t hdr = lnic_read(), words = lnic_hdr_words(hdr);
    if (words == 0)
        ns_fail(s, "empty message, header %lx", hdr);
    uint64_t w = lnic_read();
    switch (w0_type(w)) {
    case MSG_KEYS: on_keys(s, w, words); break;
    case MSG_CAND: on_cand(s, w); break;
    case MSG_PIVOTS: on_pivots(s, w); break;
    case MSG_REQ: on_req(s, hdr, w); return; /* already done */
    case MSG_REP: on_rep(s, w); break;
    default: ns_fail(s, "unknown message word %lx, header %lx", w, hdr);
    }
    lnic_msg_done();
}

/* ---- step 0: shuffle -------------------------------------------------------------------- */

/* Exchange level 0 receives into nxt; complete after exactly n keys. */
static void start_rx(struct ns *s, uint64_t level)
{
    s->nnxt = 0;
    s->rx_level = level;
    s->rx_first = s->rx_expect = s->rx_got = s->rx_keys = 0;
}

static void swap_keys(struct ns *s)
{
    struct ns_rec *t = s->cur;
    s->cur = s->nxt;
    s->nxt = t;
    s->ncur = s->nnxt;
    s->nnxt = 0;
}

/* Send cnt records sorted by destination (aux: key = destination, tag = record index in
 * src) as one transfer per destination. */
static void send_runs(struct ns *s, uint64_t level, const struct ns_rec *src, uint64_t cnt)
{
    for (uint64_t i = 0; i < cnt;) {
        uint64_t j = i;
        for (; j < cnt && s->aux[j].key == s->aux[i].key; j++)
            s->tmp[j - i] = src[s->aux[j].tag];
        send_keys(s, s->aux[i].key, level, s->tmp, j - i);
        i = j;
    }
}

static void shuffle(struct ns *s)
{
    sort_stage_begin(s->a, STAGE_SHUFFLE);
    start_rx(s, 0);
    uint64_t pi = ns_permute(s->me, ns_hash3(NS_SEED, 0xffff, 0), (unsigned)s->logp);
    for (uint64_t i = 0; i < s->n; i++) {
        s->cur[i].key = s->a->in_keys[i];
        s->cur[i].tag = ns_tag(s->me, i);
        s->aux[i].key = pi ^ (ns_mix(NS_SEED + i) & (s->P - 1));
        s->aux[i].tag = i;
    }
    ns_sort_recs(s->aux, s->tmp, s->n);
    send_runs(s, 0, s->cur, s->n);
    while (s->rx_keys < s->n)
        handle_one(s);
    swap_keys(s);
    sort_stage_end(s->a);
}

/* ---- recursion level k ------------------------------------------------------------------ */

/* Buckets of level k: b, but P / b^(L-1) on the last level when P is not a power of b. */
static uint64_t level_buckets(struct ns *s, uint64_t k)
{
    uint64_t m = s->P >> (s->logb * (k - 1));
    return m < s->b ? m : s->b;
}

/* The median trees of a level on a group of m.  Independent (docs/nanosort.md step 3, "the j-th
 * median tree aggregates the p_j^i computed by each node"): tree j carries pivot j alone,
 * its positions rotated by j (F + 1), so that its level-t mergers (the x with x + off = 0
 * mod F^t) differ from every other tree's whenever b-1 <= F, and its root, x = m - off,
 * sits on another node than the others' while F + 1 >= C.  Combined: one tree of all
 * b-1 columns, unrotated. */
static uint64_t level_trees(struct ns *s, uint64_t m, uint64_t bk, uint64_t has, struct ns_tree *tr)
{
    uint64_t n = s->trees ? bk - 1 : 1;
    for (uint64_t i = 0; i < n; i++) {
        tr[i].j0 = s->trees ? i : 0;
        tr[i].cnt = s->trees ? 1 : bk - 1;
        tr[i].off = s->trees ? (i * (s->F + 1)) & (m - 1) : 0; /* m: a power of two */
        tr[i].active = 1;
        tr[i].has = has;
    }
    return n;
}

/* x mod F^t: a mask when F is a power of two (a 64-bit remainder takes 66 cycles on the
 * Rocket core, docs/models/node.md). */
static uint64_t mod(const struct ns *s, uint64_t x, uint64_t up)
{
    return (s->F & (s->F - 1)) == 0 ? x & (up - 1) : x % up;
}

static int cand_is(const struct ns_cand *c, uint64_t k, uint64_t t, uint64_t j0)
{
    return c->level == k && c->tlevel == t && c->j0 == j0;
}

static uint64_t parked(struct ns *s, uint64_t k, uint64_t t, uint64_t j0)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < s->npool; i++)
        n += cand_is(&s->pool[i], k, t, j0);
    return n;
}

/* Point s->kids at the parked (k, t, tree) messages that carry values; returns how many. */
static uint64_t find_children(struct ns *s, uint64_t k, uint64_t t, uint64_t j0)
{
    uint64_t nk = 0;
    for (uint64_t i = 0; i < s->npool; i++)
        if (cand_is(&s->pool[i], k, t, j0) && s->pool[i].count)
            s->kids[nk++] = &s->pool[i];
    return nk;
}

/* Drop the parked (k, t, tree) messages; the pool stays dense, so scans touch only what is
 * parked. */
static void drop_children(struct ns *s, uint64_t k, uint64_t t, uint64_t j0)
{
    for (uint64_t i = 0; i < s->npool;) {
        if (cand_is(&s->pool[i], k, t, j0))
            s->pool[i] = s->pool[--s->npool];
        else
            i++;
    }
}

/* Per-column medians of this sorter's values of tree tr and its children's nk messages
 * (s->kids).  One coin for all columns keeps a combined tree's vector sorted when every
 * input is. */
static void merge_columns(struct ns *s, struct ns_tree *tr, uint64_t *v, uint64_t nk)
{
    uint64_t upper = ns_rand(&s->rng) & 1;
    for (uint64_t j = tr->j0; j < tr->j0 + tr->cnt && (nk || tr->has); j++) {
        uint64_t n = 0;
        if (tr->has)
            s->col[n++] = v[j];
        for (uint64_t i = 0; i < nk; i++)
            s->col[n++] = s->kids[i]->v[j - tr->j0];
        ns_sort_small(s->col, n);
        v[j] = n % 2 ? s->col[n / 2] : s->col[n / 2 - 1 + upper];
    }
    tr->has = tr->has || nk;
}

/* Tree level t of tree tr at local id x (rotated position p): wait for the children
 * p + c span (c = 1..F-1, inside the group), then take the medians. */
static void merge_round(struct ns *s, uint64_t k, uint64_t t, uint64_t span, uint64_t m, uint64_t p,
                        struct ns_tree *tr, uint64_t *v)
{
    uint64_t children = 0;
    for (uint64_t c = 1; c < s->F && p + c * span < m; c++)
        children++;
    s->w_level = k; /* on_cand counts arrivals from here on */
    s->w_tlevel = t;
    s->w_j0 = tr->j0;
    s->w_got = parked(s, k, t, tr->j0);
    while (s->w_got < children)
        handle_one(s);
    s->w_level = 0; /* levels start at 1: nothing matches */
    merge_columns(s, tr, v, find_children(s, k, t, tr->j0));
    drop_children(s, k, t, tr->j0);
}

/* The level's median trees over the group's m sorters (local ids x = 0..m-1), fan-in F: in
 * each tree, at tree level t the sorters whose rotated position p = (x + off) mod m is a
 * multiple of F^t take the medians of their children p + c F^(t-1); the root is p = 0, the
 * depth ceil(log_F m) (docs/nanosort.md step 3).  Every round first sends what leaves this
 * sorter and only then waits: a sorter waiting at tree level t needs only others' work
 * below t, so the trees never wait on each other in a cycle.  The trees still active at
 * the end are the ones this sorter is the root of. */
static void median_trees(struct ns *s, uint64_t k, uint64_t m, uint64_t g0, uint64_t *v, struct ns_tree *tr,
                         uint64_t nt)
{
    uint64_t x = s->me - g0;
    for (uint64_t t = 1, span = 1; span < m; t++, span *= s->F) {
        uint64_t up = span * s->F;
        for (uint64_t i = 0; i < nt; i++) {
            uint64_t p = (x + tr[i].off) & (m - 1), r = mod(s, p, up); /* m: a power of two */
            if (tr[i].active && r != 0) {
                send_cand(s, g0 + ((p - r + m - tr[i].off) & (m - 1)), k, t, &tr[i], v);
                tr[i].active = 0;
            }
        }
        for (uint64_t i = 0; i < nt; i++)
            if (tr[i].active)
                merge_round(s, k, t, span, m, (x + tr[i].off) & (m - 1), &tr[i], v);
    }
}

/* The roots' part of step 4: each tree rooted here sends its pivots to the group (any
 * value when the whole group holds no key) and keeps them. */
static void root_pivots(struct ns *s, uint64_t k, uint64_t m, uint64_t g0, uint64_t *v, const struct ns_tree *tr,
                        uint64_t nt)
{
    for (uint64_t i = 0; i < nt; i++) {
        if (!tr[i].active)
            continue;
        for (uint64_t j = tr[i].j0; j < tr[i].j0 + tr[i].cnt; j++)
            s->piv[k][j] = tr[i].has ? v[j] : 0;
        send_pivots(s, k, m, g0, tr[i].j0, &s->piv[k][tr[i].j0], tr[i].cnt);
        s->piv_got[k] += tr[i].cnt;
    }
}

/* Keys from *pos on equal to pivots p_j..p_h (= p_j): any bucket j..h+1 keeps the global
 * order (buckets below hold keys <= them, above >= them), so each such key's bucket is
 * drawn uniformly and the equal keys are cut by the counts: duplicates do not pile into
 * one partition.  Sets end[j..h], moves *pos past the equal keys, returns h. */
static uint64_t spread_ties(struct ns *s, const uint64_t *piv, uint64_t bk, uint64_t j, uint64_t *pos,
                            uint64_t *end)
{
    uint64_t h = j, eq = *pos, at = *pos, cnt[NS_MAX_B] = {0};
    while (h + 2 < bk && piv[h + 1] == piv[j])
        h++;
    for (; eq < s->ncur && s->cur[eq].key == piv[j]; eq++)
        cnt[ns_below(&s->rng, h - j + 2)]++;
    for (uint64_t i = j; i <= h; i++) {
        at += cnt[i - j];
        end[i] = at;
    }
    *pos = eq;
    return h;
}

/* Where bucket i of the sorted keys ends (end[i]), in one pass over the keys and pivots
 * (docs/nanosort.md step 4): keys below pivot j go below it, keys above it above, ties are
 * spread. */
static void bucket_ends(struct ns *s, const uint64_t *piv, uint64_t bk, uint64_t *end)
{
    uint64_t pos = 0, n = s->ncur;
    for (uint64_t j = 0; j + 1 < bk; j++) {
        while (pos < n && s->cur[pos].key < piv[j])
            pos++;
        end[j] = pos;
        if (pos < n && s->cur[pos].key == piv[j])
            j = spread_ties(s, piv, bk, j, &pos, end);
    }
    end[bk - 1] = n;
}

/* Step 4's exchange: bucket i, a contiguous run of the sorted keys, to one member of
 * partition i, chosen by the shared random permutation pi_{k,g0,i} of the group (see the
 * top of the file for why and how receivers know they are complete). */
static void exchange(struct ns *s, uint64_t k, uint64_t m, uint64_t g0, uint64_t bk, const uint64_t *piv)
{
    uint64_t q = m >> log2_exact(bk), x = s->me - g0, end[NS_MAX_B]; /* powers of two */
    uint64_t seed = ns_hash3(NS_SEED, k, g0), pi = ns_permute(x, seed, (unsigned)log2_exact(m));
    bucket_ends(s, piv, bk, end);
    for (uint64_t i = 0, lo = 0; i < bk; lo = end[i++]) {
        uint64_t pos = (pi ^ ns_mix(seed + i)) & (q - 1);
        send_keys(s, g0 + i * q + pos, k, s->cur + lo, end[i] - lo);
    }
}

static void level(struct ns *s, uint64_t k)
{
    uint64_t m = s->P >> (s->logb * (k - 1)), g0 = s->me & ~(m - 1), bk = level_buckets(s, k);
    uint64_t v[NS_MAX_B - 1];
    struct ns_tree tr[NS_MAX_B - 1];
    sort_stage_begin(s->a, STAGE_LEVEL + k - 1);
    ns_sort_recs(s->cur, s->tmp, s->ncur);
    start_rx(s, k); /* before the candidates leave: exchange keys can follow soon after */
    uint64_t has = ns_pivot_select(s->cur, s->ncur, bk, s->pivots, v, s->scratch, &s->rng) != 0;
    uint64_t nt = level_trees(s, m, bk, has, tr);
    median_trees(s, k, m, g0, v, tr, nt);
    root_pivots(s, k, m, g0, v, tr, nt);
    while (s->piv_got[k] < bk - 1)
        handle_one(s);
    ns_sort_small(s->piv[k], bk - 1); /* independent trees' medians need not be in order */
    exchange(s, k, m, g0, bk, s->piv[k]);
    while (s->rx_first < bk || s->rx_got < s->rx_expect)
        handle_one(s);
    swap_keys(s);
    sort_stage_end(s->a);
}

/* ---- final value fetch ------------------------------------------------------------------ */

/* Ask each origin for the values of its keys here, one request per origin (split at
 * NS_REQ_PER_MSG entries); values of this sorter's own keys are copied locally. */
static void request_values(struct ns *s)
{
    for (uint64_t i = 0; i < s->ncur; i++) {
        s->aux[i].key = s->cur[i].tag;
        s->aux[i].tag = i;
    }
    ns_sort_recs(s->aux, s->tmp, s->ncur);
    for (uint64_t i = 0; i < s->ncur;) {
        uint64_t origin = ns_tag_origin(s->aux[i].key), j = i;
        while (j < s->ncur && ns_tag_origin(s->aux[j].key) == origin && j - i < NS_REQ_PER_MSG)
            j++;
        if (origin == s->me) {
            uint64_t e[NS_REQ_PER_MSG];
            for (uint64_t r = i; r < j; r++)
                e[r - i] = s->aux[r].tag << 32 | ns_tag_index(s->aux[r].key);
            s->served += j - i;
            for (uint64_t r = 0; r < j - i; r++)
                memcpy(&s->a->out_values[(e[r] >> 32) * SORT_VALUE_WORDS],
                       &s->a->in_values[ns_tag_index(e[r]) * SORT_VALUE_WORDS], 8 * SORT_VALUE_WORDS);
            s->vals_got += j - i;
        } else {
            tx_begin(s, origin, 1 + (j - i));
            lnic_write_r(ns_w0(MSG_REQ, 0, 0, j - i));
            for (uint64_t r = i; r < j; r++)
                lnic_write_r(s->aux[r].tag << 32 | ns_tag_index(s->aux[r].key));
        }
        i = j;
    }
}

static void fetch(struct ns *s)
{
    struct sort_area *a = s->a;
    sort_stage_begin(a, STAGE_FETCH);
    ns_sort_recs(s->cur, s->tmp, s->ncur); /* docs/nanosort.md step 1: m = 1, sort; done */
    if (s->ncur > a->out_cap)
        ns_fail(s, "final bucket of %lu records exceeds the output capacity %lu", s->ncur, a->out_cap);
    for (uint64_t i = 0; i < s->ncur; i++)
        a->out_keys[i] = s->cur[i].key;
    request_values(s);
    /* Done when this bucket's values are in and every own input value has been asked for
     * (each of the n keys sits in exactly one final bucket, which asks exactly once). */
    while (s->vals_got < s->ncur || s->served < s->n)
        handle_one(s);
    a->n_out = s->ncur;
    sort_stage_end(a);
}

/* ---- set-up ------------------------------------------------------------------------------ */

/* The arguments' problem, or NULL; sets b, F, mcast, trees, pivots and the number of levels:
 * the levels split by b while a group has more than b sorters, the last by what remains. */
static const char *parse_args(struct ns *s, int argc, char **argv)
{
    s->b = nanopu_arg_u64(argc, argv, 0, 0);
    s->F = nanopu_arg_u64(argc, argv, 1, 0);
    s->mcast = nanopu_arg_u64(argc, argv, 2, 1);
    s->trees = nanopu_arg_u64(argc, argv, 3, 1);
    s->pivots = nanopu_arg_u64(argc, argv, 4, NS_PIVOTS_PAPER);
    if (s->b != 4 && s->b != 8 && s->b != 16)
        return "BUCKETS must be 4, 8 or 16";
    if (s->F < 2 || s->F > NS_MAX_FANIN)
        return "FANIN must be 2..64";
    if (s->mcast > 1)
        return "MULTICAST must be 0 or 1";
    if (s->trees > 1)
        return "TREES must be 0 or 1";
    if (s->pivots > 1)
        return "PIVOTS must be 0 or 1";
    if (s->P & (s->P - 1))
        return "the number of sorters must be a power of two (BUCKETS per level, fewer on the last)";
    s->levels = 0;
    for (uint64_t p = 1; p < s->P; p *= s->b)
        s->levels++;
    if (s->levels > NS_MAX_LEVELS)
        return "too many recursion levels";
    return 0;
}

static void *alloc_or_fail(struct ns *s, uint64_t bytes)
{
    void *p = nanopu_malloc(bytes);
    if (!p)
        ns_fail(s, "out of memory (%lu bytes)", bytes);
    return p;
}

/* Touch the stack the deeper calls of a level will use (their frames hold the PivotSelect
 * sample, the trees and the exchange's bucket ends), as the buffers below are touched. */
static void __attribute__((noinline)) warm_stack(void)
{
    uint8_t pad[NS_STACK_WARM];
    memset(pad, 0, sizeof(pad));
    __asm__ volatile("" : : "r"(pad) : "memory"); /* the stores must happen */
}

static void init_buffers(struct ns *s)
{
    s->cap = s->a->out_cap > 4 * s->n + 64 ? s->a->out_cap : 4 * s->n + 64;
    s->cur = alloc_or_fail(s, s->cap * sizeof(struct ns_rec));
    s->nxt = alloc_or_fail(s, s->cap * sizeof(struct ns_rec));
    s->tmp = alloc_or_fail(s, s->cap * sizeof(struct ns_rec));
    s->aux = alloc_or_fail(s, s->cap * sizeof(struct ns_rec));
    s->scratch = alloc_or_fail(s, (s->cap + 2 * NS_MAX_B) * sizeof(uint64_t));
    /* Touch the part of the fresh buffers a sorter normally uses now, outside the timed
     * stages, so they are in the caches like any buffer in steady use (the struct itself,
     * with the pivots and the merge scratch, is cleared in main; the stack here).  The
     * rest (room for a skewed bucket, a pool far fuller than usual) stays untouched: the
     * simulator then never allocates it, which keeps a 65,536-core run's memory down. */
    uint64_t recs = 2 * s->n + 64 < s->cap ? 2 * s->n + 64 : s->cap, warm = recs * sizeof(struct ns_rec);
    memset(s->cur, 0, warm);
    memset(s->nxt, 0, warm);
    memset(s->tmp, 0, warm);
    memset(s->aux, 0, warm);
    memset(s->scratch, 0, recs * sizeof(uint64_t));
    memset(s->pool, 0, NS_POOL_WARM * sizeof(struct ns_cand));
    warm_stack();
}

int main(int argc, char **argv)
{
    struct sort_area *a = sort_area();
    if (!a) {
        printf("nanosort: core %lu: no sort input (run it with `nanopu sort`)\n", nanopu_core_id());
        return 1;
    }
    struct ns *s = nanopu_malloc(sizeof(struct ns));
    if (!s)
        return 1;
    memset(s, 0, offsetof(struct ns, pool)); /* pool entries are written before use */
    s->a = a;
    s->me = a->sorter;
    s->P = a->sorters;
    s->n = a->n_in;
    s->C = nanopu_num_cores();
    s->core = nanopu_core_id();
    s->logp = log2_exact(s->P);
    s->c_shift = (s->C & (s->C - 1)) == 0 ? (int)log2_exact(s->C) : -1;
    s->rng.s = ns_mix(NS_SEED ^ (s->me + 1));
    /* Register before anything is sent to us; the NIC holds early arrivals meanwhile. */
    lnic_add_context(s->core, 0);
    const char *err = parse_args(s, argc, argv);
    if (err) {
        if (s->me == 0)
            printf("nanosort: %s (BUCKETS=%lu FANIN=%lu MULTICAST=%lu TREES=%lu, %lu sorters)\n",
                   err, s->b, s->F, s->mcast, s->trees, s->P);
        return 1;
    }
    s->logb = log2_exact(s->b);
    init_buffers(s);
    if (s->n > s->cap)
        ns_fail(s, "%lu input keys exceed the buffers", s->n);
    shuffle(s);
    for (uint64_t k = 1; k <= s->levels; k++)
        level(s, k);
    fetch(s);
    a->done = 1;
    return 0;
}
