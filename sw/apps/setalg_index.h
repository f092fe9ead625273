/*
 * setalg_index.h - the inverted index and the intersection of setalg.c (docs/apps/setalg.md),
 * shared by the programs that serve queries: setalg.c (nanoPU cores, netRX/netTX) and
 * setalg_ice.c (one IceNIC core, UDP frames through appnet; docs/apps/setalg.md "On
 * IceNIC").  The corpus generator, the index, its checksum and the galloping intersection;
 * setalg_serve.h answers queries with them.
 */
#ifndef SETALG_INDEX_H
#define SETALG_INDEX_H

#include "nanopu.h"

#define MAX_DOCS      65536
#define MAX_VOCAB     16384
#define MAX_WORDS_DOC 64
#define MAX_DRAWS     (1u << 18)        /* documents x words per document */
#define MAX_QUERY     4                 /* words in a query */
#define MAX_IDS       32                /* document ids in a reply (docs/apps/setalg.md) */
#define NONE          0xffffu           /* a draw that repeats a word of its document */
#define GOLDEN        0x9e3779b97f4a7c15ull
#define MERGE_DOCS    128               /* SETALG_MERGE only: the most documents it serves */

enum { OP_QUERY = 1 };
enum { ST_OK = 0, ST_BAD = 3 };

static uint64_t cum[MAX_VOCAB];          /* Zipf weights, cumulative */
static uint32_t off[MAX_VOCAB + 1];      /* word r's list: post[off[r] .. off[r + 1]) */
static uint32_t last_doc[MAX_VOCAB];     /* 1 + the last document that drew word r */
static uint16_t drawn[MAX_DRAWS];        /* each draw's word, NONE for a repeat */
static uint32_t post[MAX_DRAWS];         /* the posting lists, ascending document ids */
static uint64_t vocab;

/* The 64-bit finalizer of SplitMix64 (Steele, Lea, Flood, OOPSLA 2014), as mica.c has it. */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Word r's weight floor(2^32 / (r + 1)): Zipf's law with exponent 1, in integers so that
 * this server and the load generator's Rust compute the same table exactly. */
static void weights(void)
{
    uint64_t sum = 0;
    for (uint64_t r = 0; r < vocab; r++)
        cum[r] = sum += (1ull << 32) / (r + 1);
}

/* The word whose cumulative weight first exceeds u % total (binary search). */
static uint64_t zipf_word(uint64_t u)
{
    uint64_t x = u % cum[vocab - 1], lo = 0, hi = vocab - 1;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (x < cum[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Draw every word of every document; count each document once per distinct word. */
static void draw_all(uint64_t seed, uint64_t docs, uint64_t per_doc)
{
    for (uint64_t d = 0; d < docs; d++) {
        for (uint64_t j = 0; j < per_doc; j++) {
            uint64_t k = d * per_doc + j, r = zipf_word(mix(seed + (k + 1) * GOLDEN));
            drawn[k] = last_doc[r] == d + 1 ? NONE : (uint16_t)r;
            if (drawn[k] != NONE)
                off[r + 1]++;
            last_doc[r] = (uint32_t)(d + 1);
        }
    }
}

/* Lay the lists out (prefix sums), then fill them in document order: each comes sorted. */
static void fill(uint64_t docs, uint64_t per_doc)
{
    for (uint64_t r = 0; r < vocab; r++) {
        off[r + 1] += off[r];
        last_doc[r] = off[r];            /* now each list's next free slot */
    }
    for (uint64_t k = 0; k < docs * per_doc; k++)
        if (drawn[k] != NONE)
            post[last_doc[drawn[k]]++] = (uint32_t)(k / per_doc);
}

/* The index's checksum (docs/apps/setalg.md): every (word, document) pair in order. */
static uint64_t checksum(void)
{
    uint64_t c = 0;
    for (uint64_t r = 0; r < vocab; r++)
        for (uint32_t i = off[r]; i < off[r + 1]; i++)
            c = mix(c + (r << 32 | post[i]) + GOLDEN);
    return c;
}

static __attribute__((unused)) int build(uint64_t seed, uint64_t docs, uint64_t per_doc)
{
    if (docs < 1 || docs > MAX_DOCS || vocab < 1 || vocab > MAX_VOCAB || per_doc < 1 ||
        per_doc > MAX_WORDS_DOC || docs * per_doc > MAX_DRAWS) {
        printf("setalg: parameters beyond the limits of docs/apps/setalg.md\n");
        return 2;
    }
#ifdef SETALG_MERGE
    if (docs > MERGE_DOCS) {
        printf("setalg: the linear-merge build serves at most %u documents\n", MERGE_DOCS);
        return 2;
    }
#endif
    weights();
    draw_all(seed, docs, per_doc);
    fill(docs, per_doc);
    printf("setalg: %lu documents, %lu words, %u postings, checksum %016lx\n",
           docs, vocab, off[vocab], checksum());
    return 0;
}

#ifdef SETALG_FIXED_INDEX
/* For measurement only (experiments/setalg/prototype-corpus): the index given as arrays in
 * setalg_fixed_index.h, which that script writes from another program's index (FIXED_WORDS
 * lists; word r's ids are FIXED_POST[FIXED_OFF[r] .. FIXED_OFF[r + 1])), instead of the
 * generated corpus. Its replies then match no load generator's check. */
#include "setalg_fixed_index.h"
#ifdef SETALG_MERGE
#define FIXED_MAX_LIST MERGE_DOCS   /* the merge's buffers hold a list */
#else
#define FIXED_MAX_LIST MAX_DOCS
#endif

static int build_fixed(void)
{
    vocab = FIXED_WORDS;
    for (uint64_t r = 0; r <= vocab; r++)
        off[r] = FIXED_OFF[r];
    for (uint64_t r = 0; r < vocab; r++)
        if (off[r + 1] - off[r] > FIXED_MAX_LIST) {
            printf("setalg: word %lu of the fixed index lists more than %u documents\n", r, FIXED_MAX_LIST);
            return 2;
        }
    for (uint32_t i = 0; i < off[vocab]; i++)
        post[i] = FIXED_POST[i];
    printf("setalg: a fixed index, %lu words, %u postings\n", vocab, off[vocab]);
    return 0;
}
#endif

/* The first index i >= lo of list a (n long) with a[i] >= x, n if none: galloping
 * (exponential search, Bentley and Yao 1976) then binary search, so a cursor that moves
 * far costs the logarithm of the distance, not the distance. */
static __attribute__((unused)) uint32_t gallop(const uint32_t *a, uint32_t lo, uint32_t n, uint32_t x)
{
    uint32_t step = 1, hi = lo;
    while (hi < n && a[hi] < x) {
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    if (hi > n)
        hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct list { const uint32_t *a; uint32_t n, at; };

/* Sort the query's lists shortest first (insertion sort of at most four). */
static __attribute__((unused)) void by_length(struct list *l, uint64_t n)
{
    for (uint64_t i = 1; i < n; i++)
        for (uint64_t j = i; j > 0 && l[j].n < l[j - 1].n; j--) {
            struct list t = l[j];
            l[j] = l[j - 1];
            l[j - 1] = t;
        }
}

/* Whether document x is in every list after the first; cursors only move forward. Sets
 * *end when some list is exhausted (no later candidate can match). */
static __attribute__((unused)) int in_rest(struct list *l, uint64_t n, uint32_t x, int *end)
{
    for (uint64_t i = 1; i < n; i++) {
        l[i].at = gallop(l[i].a, l[i].at, l[i].n, x);
        if (l[i].at == l[i].n)
            *end = 1;
        if (*end || l[i].a[l[i].at] != x)
            return 0;
    }
    return 1;
}

#ifdef SETALG_MERGE
/* The nanoPU prototype's intersection, for measurement beside ours (experiments/setalg,
 * "Where the p99 goes"): its lnic-intersect.cc (l-nic/chipyard branch lnic-dev,
 * software/set-intersection/, with intersection.h) merges the first list with the second,
 * that result with the third, and so on in the query's order, each pair by a linear merge,
 * stopping at an empty result. Written here from that description; as there, the results go
 * to two buffers on the stack (its intersection_tmp), so a corpus may have at most
 * MERGE_DOCS documents (build() checks). */

/* The ids in both a[0..na) and b[0..nb) into out; their number. */
static uint32_t merge_pair(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb, uint32_t *out)
{
    uint32_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) {
        if (a[i] < b[j])
            i++;
        else if (b[j] < a[i])
            j++;
        else {
            out[k++] = a[i];
            i++;
            j++;
        }
    }
    return k;
}

static uint64_t intersect(struct list *l, uint64_t n, uint32_t *ids)
{
    uint32_t buf[2][MERGE_DOCS];
    const uint32_t *r = l[0].a;
    uint32_t rn = l[0].n;
    for (uint64_t q = 1; q < n && rn > 0; q++) {
        rn = merge_pair(r, rn, l[q].a, l[q].n, buf[q % 2]);
        r = buf[q % 2];
    }
    for (uint32_t i = 0; i < rn && i < MAX_IDS; i++)
        ids[i] = r[i];
    return rn;
}
#else
/* Intersect: every id of the shortest list is looked up in the others. The number of
 * matches, the first MAX_IDS of them in ids. A one-word query is its list: its length and
 * first ids, without walking it. */
static uint64_t intersect(struct list *l, uint64_t n, uint32_t *ids)
{
    uint64_t count = 0;
    int end = 0;
    if (n == 1) {
        for (uint32_t i = 0; i < l[0].n && i < MAX_IDS; i++)
            ids[i] = l[0].a[i];
        return l[0].n;
    }
    by_length(l, n);
    for (uint32_t i = 0; i < l[0].n && !end; i++) {
        if (in_rest(l, n, l[0].a[i], &end)) {
            if (count < MAX_IDS)
                ids[count] = l[0].a[i];
            count++;
        }
    }
    return count;
}
#endif /* SETALG_MERGE */

#endif
