/*
 * millisort.c - MilliSort, the baseline of docs/nanosort.md ("MilliSort"), on the sort
 * harness (sortbench.h): P sorters, one per core, N records each (8-byte key, 96-byte value).
 * Argument: the reduction factor R (argv[3], default 4).
 *
 * Steps (docs/nanosort.md), with the stage each is logged under:
 *  1. STAGE_LOCAL_SORT: sort the local records.
 *  2. STAGE_PIVOTS: pick L = min(N, P) evenly spaced local pivots (the middle record of each
 *     of L equal slices; L = N takes every record). Sorters form groups of R consecutive ids; the group's first sorter, its
 *     pivot sorter, gathers the group's pivots and merges them.
 *  3. STAGE_SPLITTERS: every pivot sorter picks G evenly spaced super-pivots (G = number of
 *     groups, i.e. of pivot sorters: MilliSort's pickSuperPivots, docs/nanosort.md; fewer
 *     only when its group holds fewer pivots) and sends them to the root, sorter 0, which
 *     merges the G^2, picks G-1 evenly spaced bucket boundaries, one between
 *     each two pivot sorters, and broadcasts them. The pivot sorters shuffle their pivots by
 *     bucket (bucket b goes to the pivot sorter of group b), each message also carrying how
 *     many of the sender's pivots lie in lower buckets: summed over senders that is the
 *     global rank of the bucket's first pivot. So pivot sorter b knows exactly which of the P-1 final splitters
 *     (the pivots of global rank L-1, 2L-1, ...) it holds, and broadcasts them (with their
 *     index) to every sorter: switch multicast, one per context, plus unicasts to the other
 *     cores of its own node (the network skips the sender's node; with multicast off in the
 *     switches the NIC unicasts instead, docs/models/network.md).
 *  4. STAGE_RECORDS: every sorter sends every other sorter the records of its splitter range,
 *     keys and values (104 bytes each), 19 to a message (<= 2048 payload bytes).
 *  5. STAGE_MERGE: merge the sorted runs that arrived and write the output.
 *
 * Ties (duplicate keys, --distribution dup-prefix): records are ordered by (key, gid) with
 * gid = sorter * N + input index, unique per record, and pivots, boundaries and splitters
 * are such pairs. Every comparison is therefore in one total order, a record equal to a
 * splitter key goes below or above it consistently on every sorter, and even a run of equal
 * keys longer than a bucket is split evenly. The output is ordered by key (the gid only
 * breaks ties), which is what the validator checks.
 *
 * Completion is counted, never signalled (docs/nanosort.md "Fire and forget"): a sorter knows how
 * many pivots (R members * L), super-pivots, boundaries (G-1) and splitters (P-1) it will
 * receive; the two shuffles whose sizes are data dependent (pivots by bucket, records)
 * carry the transfer's total in every message and every sender sends every receiver at
 * least one message, possibly empty, so a receiver is done when it has heard from all
 * senders and has each one's total.
 *
 * Reorder buffer (docs/nanosort.md: cores are not in lockstep): every message, whatever its
 * step, is handled on arrival by one dispatcher (handle_msg) into that step's buffer, so
 * records arriving while this sorter still waits for splitters are simply stored.
 *
 * Limits: every sorter must hold the same N (the harness does); a sorter receiving more
 * records than its output capacity prints an error, drops the excess and exits 1 (the
 * validator then fails loudly too); messages assume the default 2048-byte maximum payload.
 */
#include "nanopu.h"
#include "sortbench.h"

#define MSG_WORDS   (2048 / LNIC_WORD_BYTES)          /* max payload words of a message */
#define REC_WORDS   (1 + SORT_VALUE_WORDS)            /* a record on the wire: key, value */
#define PAIRS_PER_MSG ((MSG_WORDS - 2) / 2)           /* tag (+ prefix) then (key, gid) pairs */
#define RECS_PER_MSG  ((MSG_WORDS - 1) / REC_WORDS)   /* tag then records: 19 */

/* Message types: the top byte of the first payload word (the tag). */
enum { T_PIV = 1, T_SUP, T_BND, T_PSH, T_SPL, T_REC };

/* Tag: type (8 bits) | a (24 bits) | n (32 bits, items in this message). `a` is the index
 * of the first item (BND, SPL) or the transfer's total (PSH, REC). */
static uint64_t tag(uint64_t type, uint64_t a, uint64_t n) { return type << 56 | (a & 0xffffff) << 32 | n; }
static uint64_t tag_type(uint64_t t) { return t >> 56; }
static uint64_t tag_a(uint64_t t) { return (t >> 32) & 0xffffff; }
static uint64_t tag_n(uint64_t t) { return t & 0xffffffff; }

/* ---- (key, tiebreak) pairs and merging ---------------------------------------------------- */

struct pair { uint64_t key, lo; };

static int pair_lt(struct pair x, struct pair y) { return x.key < y.key || (x.key == y.key && x.lo < y.lo); }
static int pair_le(struct pair x, struct pair y) { return !pair_lt(y, x); }

/* Merge sorted x[0..nx) and y[0..ny) into out (stable: x first on ties). */
static void merge(const struct pair *x, uint64_t nx, const struct pair *y, uint64_t ny, struct pair *out)
{
    uint64_t i = 0, j = 0, k = 0;
    while (i < nx && j < ny)
        out[k++] = pair_lt(y[j], x[i]) ? y[j++] : x[i++];
    while (i < nx)
        out[k++] = x[i++];
    while (j < ny)
        out[k++] = y[j++];
}

/* A buffer of pairs made of sorted runs (received messages, or local slices). */
struct runs {
    struct pair *p, *tmp;
    uint64_t n, cap;
    uint64_t *start;      /* start[i]: first pair of run i */
    uint64_t nruns;
};

static void runs_init(struct runs *r, uint64_t cap)
{
    r->p = nanopu_malloc(cap * sizeof *r->p);
    r->tmp = nanopu_malloc(cap * sizeof *r->tmp);
    r->start = nanopu_malloc((cap + 1) * sizeof *r->start);
    r->n = r->nruns = 0;
    r->cap = cap;
}

/* Close the run p[from..n) if it is not empty. */
static void runs_close(struct runs *r, uint64_t from)
{
    if (r->n > from)
        r->start[r->nruns++] = from;
}

/* Merge adjacent runs pairwise until one is left; r->p then holds the sorted pairs. */
static void runs_merge(struct runs *r)
{
    while (r->nruns > 1) {
        uint64_t k = 0;
        for (uint64_t i = 0; i < r->nruns; i += 2) {
            uint64_t s = r->start[i];
            uint64_t mid = i + 1 < r->nruns ? r->start[i + 1] : r->n;
            uint64_t e = i + 2 < r->nruns ? r->start[i + 2] : r->n;
            merge(r->p + s, mid - s, r->p + mid, e - mid, r->tmp + s);
            r->start[k++] = s;
        }
        r->nruns = k;
        struct pair *t = r->p; r->p = r->tmp; r->tmp = t;
    }
}

static void insertion_sort(struct pair *p, uint64_t n)
{
    for (uint64_t i = 1; i < n; i++) {
        struct pair x = p[i];
        uint64_t j = i;
        for (; j > 0 && pair_lt(x, p[j - 1]); j--)
            p[j] = p[j - 1];
        p[j] = x;
    }
}

/* Sort r's pairs from scratch: insertion-sorted runs of 8, then merges. */
static void runs_sort(struct runs *r)
{
    r->nruns = 0;
    for (uint64_t i = 0; i < r->n; i += 8) {
        insertion_sort(r->p + i, r->n - i < 8 ? r->n - i : 8);
        r->start[r->nruns++] = i;
    }
    runs_merge(r);
}

/* Sample i of n evenly spaced samples of sorted p[0..m): the middle of the i-th of n equal
 * slices, so that sample i stands for quantile (i + 1/2)/n. (The slice's last element would
 * bias every sample upwards and pile the low pivots into the first bucket.) n = m takes all. */
static struct pair sample(const struct pair *p, uint64_t m, uint64_t n, uint64_t i)
{
    return p[(2 * i + 1) * m / (2 * n)];
}

/* Boundary i of n buckets over sorted p[0..m): the last element of the i-th slice. */
static struct pair boundary(const struct pair *p, uint64_t m, uint64_t n, uint64_t i)
{
    return p[(i + 1) * m / n - 1];
}

/* ---- completion of data-dependent transfers ---------------------------------------------- */

/* Per sender: items announced and received; a sender is finished when they match. */
struct tally {
    uint64_t *want, *got;
    uint8_t *heard, *fin;
    uint64_t finished;
};

static void tally_init(struct tally *t, uint64_t senders)
{
    t->want = nanopu_malloc(senders * sizeof *t->want);
    t->got = nanopu_malloc(senders * sizeof *t->got);
    t->heard = nanopu_malloc(senders);
    t->fin = nanopu_malloc(senders);
    for (uint64_t i = 0; i < senders; i++) {
        t->want[i] = t->got[i] = 0;
        t->heard[i] = t->fin[i] = 0;
    }
    t->finished = 0;
}

static void tally_add(struct tally *t, uint64_t s, uint64_t total, uint64_t n)
{
    t->heard[s] = 1;
    t->want[s] = total;
    t->got[s] += n;
    if (!t->fin[s] && t->got[s] >= t->want[s]) {
        t->fin[s] = 1;
        t->finished++;
    }
}

/* ---- the sorter's state ------------------------------------------------------------------- */

struct ms {
    struct sort_area *a;
    uint64_t P, N, me, C, R, G, L;
    uint64_t group;           /* this sorter's group */
    struct runs loc;          /* local records as (key, gid), sorted */
    struct runs gpiv;         /* pivot sorter: the group's pivots */
    uint64_t gpiv_want;
    struct runs sup;          /* root: super-pivots */
    uint64_t sup_want;
    struct pair *bnd;         /* G-1 bucket boundaries of the pivot shuffle */
    uint64_t bnd_got;
    struct runs pbk;          /* pivot sorter: the pivots of its bucket */
    struct tally pt;          /* pivot shuffle, by sender group */
    uint64_t pbase;           /* global rank of the bucket's first pivot */
    struct pair *spl;         /* P-1 splitters: sorter d owns (spl[d-1], spl[d]] */
    uint64_t spl_got;
    struct runs rec;          /* received records as (key, slot) */
    uint64_t *vals;           /* their values, by slot */
    struct tally rt;          /* record shuffle, by sender */
    uint64_t dropped;
};

static uint64_t min_u(uint64_t x, uint64_t y) { return x < y ? x : y; }
static uint64_t group_size(const struct ms *m, uint64_t g) { return min_u(m->R, m->P - g * m->R); }
static int is_pivot_sorter(const struct ms *m) { return m->me % m->R == 0; }
/* Super-pivots group g sends to the root: as many as there are pivot sorters (MilliSort's
 * pickSuperPivots), so the root merges G^2 of them and its work grows with the square of
 * the number of groups, which is how MilliSort scales (docs/nanosort.md).  Correctness
 * never depends on the count: the splitters' ranks are exact (select_splitters). */
static uint64_t sup_count(const struct ms *m, uint64_t g)
{
    return min_u(m->G, group_size(m, g) * m->L);
}

static void ms_init(struct ms *m, struct sort_area *a, uint64_t R)
{
    m->a = a;
    m->P = a->sorters;
    m->N = a->n_in;
    m->me = a->sorter;
    m->C = nanopu_num_cores();
    m->R = R < 1 ? 1 : R > m->P ? m->P : R;
    m->G = (m->P + m->R - 1) / m->R;
    m->L = min_u(m->N, m->P);
    m->group = m->me / m->R;
    runs_init(&m->loc, m->N);
    m->gpiv_want = group_size(m, m->group) * m->L;
    runs_init(&m->gpiv, is_pivot_sorter(m) ? m->gpiv_want : 0);
    m->sup_want = 0;
    for (uint64_t g = 0; m->me == 0 && g < m->G; g++)
        m->sup_want += sup_count(m, g);
    runs_init(&m->sup, m->sup_want);
    m->bnd = nanopu_malloc(m->G * sizeof *m->bnd);
    m->bnd_got = 0;
    runs_init(&m->pbk, is_pivot_sorter(m) ? m->P * m->L : 0);
    tally_init(&m->pt, m->G);
    m->pbase = 0;
    m->spl = nanopu_malloc(m->P * sizeof *m->spl);
    m->spl_got = 0;
    runs_init(&m->rec, a->out_cap);
    m->vals = nanopu_malloc(a->out_cap * SORT_VALUE_WORDS * sizeof *m->vals);
    tally_init(&m->rt, m->P);
    m->dropped = 0;
}

/* ---- sending -------------------------------------------------------------------------------- */

/* Header of a `words`-word message to sorter d (the simulator counts messages and bytes at
 * the NIC, docs/sort-harness.md "Figures"). */
static void put_hdr(struct ms *m, uint64_t d, uint64_t words)
{
    lnic_write_r(sort_hdr(d, m->C, words * LNIC_WORD_BYTES));
}

static void put_pairs(const struct pair *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        lnic_write_r(p[i].key);
        lnic_write_r(p[i].lo);
    }
}

/* Send p[0..n) to sorter d as messages of `type`, tag field a = first + offset. */
static void send_pairs(struct ms *m, uint64_t d, uint64_t type, uint64_t first, const struct pair *p, uint64_t n)
{
    for (uint64_t off = 0; off < n; off += PAIRS_PER_MSG) {
        uint64_t c = min_u(PAIRS_PER_MSG, n - off);
        put_hdr(m, d, 1 + 2 * c);
        lnic_write_r(tag(type, first + off, c));
        put_pairs(p + off, c);
    }
}

/* Pivot shuffle to pivot sorter d: `below` of the sender's pivots lie in lower buckets.
 * Always at least one message, so that an empty bucket is still heard of. */
static void send_psh(struct ms *m, uint64_t d, uint64_t below, const struct pair *p, uint64_t n)
{
    uint64_t off = 0;
    do {
        uint64_t c = min_u(PAIRS_PER_MSG, n - off);
        put_hdr(m, d, 2 + 2 * c);
        lnic_write_r(tag(T_PSH, n, c));
        lnic_write_r(below);
        put_pairs(p + off, c);
        off += c;
    } while (off < n);
}

/* One message of `type` to every other sorter: a multicast per context over all nodes (the
 * network skips the sender's node), and unicasts to the other cores of this node. */
static void bcast_pairs(struct ms *m, uint64_t type, uint64_t first, const struct pair *p, uint64_t c)
{
    uint64_t words = 1 + 2 * c, nodes = m->P / m->C, my_core = m->me % m->C, my_node = m->me / m->C;
    for (uint64_t ctx = 0; nodes > 1 && ctx < m->C; ctx++) {
        lnic_write_multicast_hdr(0, (uint32_t)nodes, (uint16_t)ctx, (uint16_t)(words * LNIC_WORD_BYTES));
        lnic_write_r(tag(type, first, c));
        put_pairs(p, c);
    }
    for (uint64_t ctx = 0; ctx < m->C; ctx++) {
        if (ctx == my_core)
            continue;
        put_hdr(m, my_node * m->C + ctx, words);
        lnic_write_r(tag(type, first, c));
        put_pairs(p, c);
    }
}

/* Broadcast p[first..end) of an indexed array (boundaries, splitters), chunked. */
static void bcast_indexed(struct ms *m, uint64_t type, const struct pair *p, uint64_t first, uint64_t end)
{
    for (uint64_t off = first; off < end; off += PAIRS_PER_MSG)
        bcast_pairs(m, type, off, p + off, min_u(PAIRS_PER_MSG, end - off));
}

/* ---- receiving: one dispatcher for every step (the reorder buffer) --------------------------- */

/* Append n pairs from netRX to r as one run (dropping what does not fit). */
static void read_run(struct ms *m, struct runs *r, uint64_t n)
{
    uint64_t from = r->n;
    for (uint64_t i = 0; i < n; i++) {
        struct pair x;
        x.key = lnic_read();
        x.lo = lnic_read();
        if (r->n < r->cap)
            r->p[r->n++] = x;
        else
            m->dropped++;
    }
    runs_close(r, from);
}

/* Store n indexed pairs from netRX at dst[first..]. */
static uint64_t read_indexed(struct pair *dst, uint64_t limit, uint64_t first, uint64_t n)
{
    uint64_t stored = 0;
    for (uint64_t i = 0; i < n; i++) {
        struct pair x;
        x.key = lnic_read();
        x.lo = lnic_read();
        if (first + i < limit) {
            dst[first + i] = x;
            stored++;
        }
    }
    return stored;
}

/* n records from netRX, kept as one run of (key, slot) with the value at vals[slot]. */
static void read_records(struct ms *m, uint64_t n)
{
    uint64_t from = m->rec.n;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t key = lnic_read();
        if (m->rec.n >= m->rec.cap) {
            for (int w = 0; w < SORT_VALUE_WORDS; w++)
                (void)lnic_read();
            m->dropped++;
            continue;
        }
        uint64_t slot = m->rec.n++;
        m->rec.p[slot] = (struct pair){ key, slot };
        for (int w = 0; w < SORT_VALUE_WORDS; w++)
            m->vals[slot * SORT_VALUE_WORDS + w] = lnic_read();
    }
    runs_close(&m->rec, from);
}

static void handle_msg(struct ms *m)
{
    uint64_t hdr = lnic_read();
    uint64_t words = lnic_hdr_words(hdr), src = sort_src(hdr, m->C);
    uint64_t t = lnic_read(), used = 1, n = tag_n(t);
    switch (tag_type(t)) {
    case T_PIV:
        read_run(m, &m->gpiv, n);
        used += 2 * n;
        break;
    case T_SUP:
        read_run(m, &m->sup, n);
        used += 2 * n;
        break;
    case T_BND:
        m->bnd_got += read_indexed(m->bnd, m->G - 1, tag_a(t), n);
        used += 2 * n;
        break;
    case T_PSH: {
        uint64_t below = lnic_read();
        if (!m->pt.heard[src / m->R]) /* every chunk repeats it: count it once per sender */
            m->pbase += below;
        read_run(m, &m->pbk, n);
        tally_add(&m->pt, src / m->R, tag_a(t), n);
        used += 1 + 2 * n;
        break;
    }
    case T_SPL:
        m->spl_got += read_indexed(m->spl, m->P - 1, tag_a(t), n);
        used += 2 * n;
        break;
    case T_REC:
        read_records(m, n);
        tally_add(&m->rt, src, tag_a(t), n);
        used += REC_WORDS * n;
        break;
    default:
        printf("millisort: sorter %lu: unknown message tag %lx from sorter %lu\n", m->me, t, src);
    }
    for (; used < words; used++) /* a malformed message must not desynchronise netRX */
        (void)lnic_read();
    lnic_msg_done();
}

/* Handle messages until *count reaches want (counts the dispatcher updates). */
static void wait_count(struct ms *m, const uint64_t *count, uint64_t want)
{
    while (*count < want) {
        sort_wait(m->a);
        handle_msg(m);
    }
}

/* ---- the steps ---------------------------------------------------------------------------- */

static void local_sort(struct ms *m)
{
    for (uint64_t i = 0; i < m->N; i++)
        m->loc.p[i] = (struct pair){ m->a->in_keys[i], m->me * m->N + i };
    m->loc.n = m->N;
    runs_sort(&m->loc);
}

/* Local pivots to the group's pivot sorter; it gathers and merges the group's. */
static void pivots(struct ms *m)
{
    struct pair lp[m->L ? m->L : 1];
    for (uint64_t i = 0; i < m->L; i++)
        lp[i] = sample(m->loc.p, m->N, m->L, i);
    if (!is_pivot_sorter(m)) {
        send_pairs(m, m->group * m->R, T_PIV, 0, lp, m->L);
        return;
    }
    uint64_t from = m->gpiv.n;
    for (uint64_t i = 0; i < m->L; i++)
        m->gpiv.p[m->gpiv.n++] = lp[i];
    runs_close(&m->gpiv, from);
    wait_count(m, &m->gpiv.n, m->gpiv_want);
    runs_merge(&m->gpiv);
}

/* Root: gather the super-pivots, pick G-1 boundaries, broadcast them. */
static void root_boundaries(struct ms *m)
{
    wait_count(m, &m->sup.n, m->sup_want);
    runs_merge(&m->sup);
    for (uint64_t b = 0; b + 1 < m->G; b++)
        m->bnd[b] = boundary(m->sup.p, m->sup.n, m->G, b);
    m->bnd_got = m->G - 1;
    /* One broadcast instead of G-1 unicasts of G-1 boundaries each: the root's sending would
     * grow as G^2; the other sorters read and ignore the boundaries. */
    bcast_indexed(m, T_BND, m->bnd, 0, m->G - 1);
}

/* Send the group's pivots to the pivot sorters by bucket: bucket b is (bnd[b-1], bnd[b]]. */
static void shuffle_pivots(struct ms *m)
{
    uint64_t lo = 0, self_lo = 0, self_hi = 0;
    for (uint64_t b = 0; b < m->G; b++) {
        uint64_t hi = lo;
        while (hi < m->gpiv.n && (b + 1 == m->G || pair_le(m->gpiv.p[hi], m->bnd[b])))
            hi++;
        if (b == m->group) {
            self_lo = lo;
            self_hi = hi;
        } else {
            send_psh(m, b * m->R, lo, m->gpiv.p + lo, hi - lo);
        }
        lo = hi;
    }
    uint64_t from = m->pbk.n;
    for (uint64_t i = self_lo; i < self_hi; i++)
        m->pbk.p[m->pbk.n++] = m->gpiv.p[i];
    runs_close(&m->pbk, from);
    m->pbase += self_lo;
    tally_add(&m->pt, m->group, self_hi - self_lo, self_hi - self_lo);
}

/* The splitters in this pivot sorter's bucket: global pivot ranks (k+1)L-1, k = 0..P-2. */
static void select_splitters(struct ms *m)
{
    wait_count(m, &m->pt.finished, m->G);
    runs_merge(&m->pbk);
    uint64_t k = m->pbase / m->L, first = UINT64_MAX, end = m->pbase + m->pbk.n;
    for (; k + 1 < m->P && (k + 1) * m->L - 1 < end; k++) {
        uint64_t r = (k + 1) * m->L - 1;
        if (r < m->pbase)
            continue;
        if (first == UINT64_MAX)
            first = k;
        m->spl[k] = m->pbk.p[r - m->pbase];
    }
    if (first == UINT64_MAX)
        return;
    m->spl_got += k - first;
    bcast_indexed(m, T_SPL, m->spl, first, k);
}

static void splitters(struct ms *m)
{
    if (is_pivot_sorter(m)) {
        uint64_t s = sup_count(m, m->group);
        struct pair sp[s ? s : 1];
        for (uint64_t i = 0; i < s; i++)
            sp[i] = sample(m->gpiv.p, m->gpiv.n, s, i);
        if (m->me == 0) {
            uint64_t from = m->sup.n; /* others' may have arrived already */
            for (uint64_t i = 0; i < s; i++)
                m->sup.p[m->sup.n++] = sp[i];
            runs_close(&m->sup, from);
            root_boundaries(m);
        } else {
            send_pairs(m, 0, T_SUP, 0, sp, s);
            wait_count(m, &m->bnd_got, m->G - 1);
        }
        shuffle_pivots(m);
        select_splitters(m);
    }
    wait_count(m, &m->spl_got, m->P - 1);
}

/* Records [lo, hi) of the local sorted run to sorter d: always at least one message. */
static void send_records(struct ms *m, uint64_t d, uint64_t lo, uint64_t hi)
{
    uint64_t total = hi - lo, off = lo;
    do {
        uint64_t c = min_u(RECS_PER_MSG, hi - off);
        put_hdr(m, d, 1 + REC_WORDS * c);
        lnic_write_r(tag(T_REC, total, c));
        for (uint64_t i = off; i < off + c; i++) {
            uint64_t idx = m->loc.p[i].lo - m->me * m->N;
            const uint64_t *v = m->a->in_values + idx * SORT_VALUE_WORDS;
            lnic_write_r(m->loc.p[i].key);
            for (int w = 0; w < SORT_VALUE_WORDS; w++)
                lnic_write_r(v[w]);
        }
        off += c;
    } while (off < hi);
}

/* Keep the local records of this sorter's own range as one run. */
static void keep_records(struct ms *m, uint64_t lo, uint64_t hi)
{
    uint64_t from = m->rec.n;
    for (uint64_t i = lo; i < hi && m->rec.n < m->rec.cap; i++) {
        uint64_t slot = m->rec.n++, idx = m->loc.p[i].lo - m->me * m->N;
        m->rec.p[slot] = (struct pair){ m->loc.p[i].key, slot };
        for (int w = 0; w < SORT_VALUE_WORDS; w++)
            m->vals[slot * SORT_VALUE_WORDS + w] = m->a->in_values[idx * SORT_VALUE_WORDS + w];
    }
    runs_close(&m->rec, from);
}

/* end[d]: one past the last local record of sorter d's range (spl[d-1], spl[d]]. */
static void ranges(struct ms *m, uint64_t *end)
{
    uint64_t pos = 0;
    for (uint64_t d = 0; d + 1 < m->P; d++) {
        while (pos < m->N && pair_le(m->loc.p[pos], m->spl[d]))
            pos++;
        end[d] = pos;
    }
    end[m->P - 1] = m->N;
}

/* Send every other sorter its range, starting with the next sorter so that the P senders
 * do not all aim at the same receiver at once; then wait for everyone's. */
static void shuffle_records(struct ms *m)
{
    uint64_t *end = nanopu_malloc(m->P * sizeof *end);
    ranges(m, end);
    for (uint64_t k = 1; k < m->P; k++) {
        uint64_t d = (m->me + k) % m->P;
        send_records(m, d, d ? end[d - 1] : 0, end[d]);
    }
    keep_records(m, m->me ? end[m->me - 1] : 0, end[m->me]);
    m->rt.fin[m->me] = 1;
    m->rt.finished++;
    wait_count(m, &m->rt.finished, m->P);
}

static void merge_output(struct ms *m)
{
    struct sort_area *a = m->a;
    runs_merge(&m->rec);
    for (uint64_t i = 0; i < m->rec.n; i++) {
        uint64_t slot = m->rec.p[i].lo;
        a->out_keys[i] = m->rec.p[i].key;
        for (int w = 0; w < SORT_VALUE_WORDS; w++)
            a->out_values[i * SORT_VALUE_WORDS + w] = m->vals[slot * SORT_VALUE_WORDS + w];
    }
    a->n_out = m->rec.n;
    if (m->dropped)
        printf("millisort: sorter %lu: %lu items beyond its buffers were dropped (output capacity %lu)\n",
               m->me, m->dropped, a->out_cap);
}

int main(int argc, char **argv)
{
    struct sort_area *a = sort_area();
    uint64_t core = nanopu_core_id();
    if (a == 0) {
        if (core == 0)
            printf("millisort: needs the sort harness (nanopu sort --algorithm millisort)\n");
        return 2;
    }
    /* Register before sending anything, so early messages from faster sorters are kept. */
    lnic_add_context(core, 0);
    static struct ms state[64]; /* per core; the stack of a hart is only 128 KiB */
    struct ms *m = &state[core];
    ms_init(m, a, nanopu_arg_u64(argc, argv, 0, 4));
    if (m->N == 0) {
        a->done = 1;
        return 0;
    }
    sort_stage_begin(a, STAGE_LOCAL_SORT);
    local_sort(m);
    sort_stage_end(a);
    sort_stage_begin(a, STAGE_PIVOTS);
    pivots(m);
    sort_stage_end(a);
    sort_stage_begin(a, STAGE_SPLITTERS);
    splitters(m);
    sort_stage_end(a);
    sort_stage_begin(a, STAGE_RECORDS);
    shuffle_records(m);
    sort_stage_end(a);
    sort_stage_begin(a, STAGE_MERGE);
    merge_output(m);
    sort_stage_end(a);
    a->done = 1;
    return m->dropped ? 1 : 0; /* a non-zero exit makes the driver show the console line */
}
