/*
 * kvstore.h - the MICA-style store of mica.c (Lim et al., NSDI 2014), shared by the programs
 * that serve it: mica.c (one partition per core), mica_ice.c (the same on an IceNIC node, one
 * core) and chain.c (one partition per replica).
 * A partition is a lossy-concurrency hash index (buckets of one version word and 7 entries,
 * an entry = 16-bit key-hash tag | 48-bit log offset) over a circular log of items {key (2
 * words), value length, value words}; preloading computes the same keys and values as the
 * load generator (crates/harness/src/workload/kv.rs).  Design, departures from MICA, wire format,
 * keys and values: docs/apps/mica.md.
 *
 * The includer sets nparts (partitions: keys are spread over them by hash), shared (1 when
 * several cores write one partition: SETs then take its lock), seed, vmin and vmax.
 */
#ifndef KVSTORE_H
#define KVSTORE_H

#include "appnet.h"

#define BUCKETS     16384               /* per partition: mean load 0.6 of 7 entries at 10,000 items */
#define BUCKET_MASK (BUCKETS - 1)
#define ENTRIES     7                   /* + the version word: one 64-byte line */
#define LOG_WORDS   (2ul << 20)         /* 16 MiB per partition: live items fill at most ~55% */
#define LOG_MASK    (LOG_WORDS - 1)
#define ITEM_HDR    3                   /* key (2 words), value length */
#define MAX_VALUE   512
#define MAX_ITEM    (ITEM_HDR + MAX_VALUE / 8)
#define OFF_MASK    ((1ul << 48) - 1)

enum { OP_GET = 1, OP_SET = 2 };
enum { ST_OK = 0, ST_MISS = 1, ST_WRONG_PART = 2, ST_BAD = 3 };

struct bucket {
    volatile uint64_t version;          /* odd while a writer changes the bucket */
    volatile uint64_t entry[ENTRIES];   /* 0 = empty, else tag << 48 | offset */
};

struct partition {
    struct bucket bucket[BUCKETS];
    uint64_t log[LOG_WORDS + MAX_ITEM]; /* the first MAX_ITEM words mirrored past the end */
    uint64_t head, tail;                /* byte offsets, only ever increasing */
    uint64_t evicted;                   /* entries the lossy index dropped */
    int lock;                           /* jbsq: held by the core writing this partition */
} __attribute__((aligned(64)));


static uint64_t nparts, shared;

/* The 64-bit finalizer of SplitMix64 (Steele, Lea, Flood, OOPSLA 2014). */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t key_hash(uint64_t k0, uint64_t k1) { return mix(k0 ^ mix(k1 + 0x9e3779b97f4a7c15ull)); }
static uint64_t part_of(uint64_t h) { return ((h >> 16) & 0xffffffffu) % nparts; }
static uint64_t tag_of(uint64_t h) { return (h >> 48) ? (h >> 48) : 1; }
/* The item at byte offset `off`, contiguous even where it wraps (the mirror). */
static const uint64_t *item(struct partition *p, uint64_t off) { return &p->log[(off >> 3) & LOG_MASK]; }
static uint64_t logw(struct partition *p, uint64_t off) { return *item(p, off); }

static void logw_set(struct partition *p, uint64_t off, uint64_t w)
{
    uint64_t i = (off >> 3) & LOG_MASK;
    p->log[i] = w;
    if (i < MAX_ITEM)
        p->log[i + LOG_WORDS] = w;
}
static uint64_t item_bytes(uint64_t len) { return 8 * ITEM_HDR + len; }

static void __attribute__((unused)) lock(struct partition *p)
{
    if (shared)
        while (__atomic_exchange_n(&p->lock, 1, __ATOMIC_ACQUIRE)) { }
}

static void __attribute__((unused)) unlock(struct partition *p)
{
    if (shared)
        __atomic_store_n(&p->lock, 0, __ATOMIC_RELEASE);
}

/* A writer makes the version odd while it changes the bucket, readers retry around it. */
static void bucket_begin(struct bucket *b) { b->version++; __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static void bucket_end(struct bucket *b) { __atomic_thread_fence(__ATOMIC_SEQ_CST); b->version++; }

/* The entry slot holding key (k0, k1), or -1. */
static int find(struct partition *p, struct bucket *b, uint64_t tag, uint64_t k0, uint64_t k1)
{
    for (int i = 0; i < ENTRIES; i++) {
        uint64_t e = b->entry[i];
        if (e && (e >> 48) == tag) {
            const uint64_t *it = item(p, e & OFF_MASK);
            if (it[0] == k0 && it[1] == k1)
                return i;
        }
    }
    return -1;
}

/* A slot for a new key: an empty one, else the oldest item's (MICA's lossy index). */
static int victim(struct partition *p, struct bucket *b)
{
    int old = 0;
    for (int i = 0; i < ENTRIES; i++) {
        if (!b->entry[i])
            return i;
        if ((b->entry[i] & OFF_MASK) < (b->entry[old] & OFF_MASK))
            old = i;
    }
    p->evicted++;
    return old;
}

/* Point the key's entry (existing or new) at `off`. */
static void index_set(struct partition *p, uint64_t h, uint64_t k0, uint64_t k1, uint64_t off)
{
    struct bucket *b = &p->bucket[h & BUCKET_MASK];
    int i = find(p, b, tag_of(h), k0, k1);
    if (i < 0)
        i = victim(p, b);
    bucket_begin(b);
    b->entry[i] = tag_of(h) << 48 | off;
    bucket_end(b);
}

/* Free the item at the log's tail: moved to the head if the index still points at it. */
static void clean_one(struct partition *p)
{
    uint64_t off = p->tail, k0 = logw(p, off), k1 = logw(p, off + 8), len = logw(p, off + 16);
    uint64_t h = key_hash(k0, k1), size = item_bytes(len);
    struct bucket *b = &p->bucket[h & BUCKET_MASK];
    int i = find(p, b, tag_of(h), k0, k1);
    if (i >= 0 && (b->entry[i] & OFF_MASK) == off) {
        uint64_t to = p->head;
        for (uint64_t w = 0; w < size; w += 8)
            logw_set(p, to + w, logw(p, off + w));
        p->head += size;
        bucket_begin(b);
        b->entry[i] = tag_of(h) << 48 | to;
        bucket_end(b);
    }
    p->tail += size;
}

/* Room for an item of `size` bytes at the head, keeping one largest item's worth free so
 * that a live item at the tail can always be moved. */
static void make_room(struct partition *p, uint64_t size)
{
    while (8 * LOG_WORDS - (p->head - p->tail) < size + 8 * MAX_ITEM)
        clean_one(p);
}

/* Append the item header at the head; the caller writes the value words after it. */
static uint64_t append_hdr(struct partition *p, uint64_t k0, uint64_t k1, uint64_t len)
{
    make_room(p, item_bytes(len));
    uint64_t off = p->head;
    logw_set(p, off, k0);
    logw_set(p, off + 8, k1);
    logw_set(p, off + 16, len);
    p->head += item_bytes(len);
    return off;
}

/* ---- Preloading: the same keys and values as the load generator computes ---------- */

static uint64_t seed, vmin, vmax;

static void key_of(uint64_t k, uint64_t *k0, uint64_t *k1)
{
    *k0 = mix(seed ^ (k << 1));
    *k1 = k;
}

/* Version v of key k's value: its length, and word j. */
static uint64_t value_base(uint64_t k, uint64_t v) { return mix(mix(seed ^ k) + v); }
static uint64_t value_len(uint64_t base) { return vmin + 8 * (base % ((vmax - vmin) / 8 + 1)); }
static uint64_t value_word(uint64_t k, uint64_t v, uint64_t base, uint64_t j)
{
    return j == 0 ? (k << 32 | v) : mix(base ^ j);
}

static void preload(struct partition *p, uint64_t part, uint64_t items)
{
    for (uint64_t k = 0; k < items * nparts; k++) {
        uint64_t k0, k1;
        key_of(k, &k0, &k1);
        uint64_t h = key_hash(k0, k1);
        if (part_of(h) != part)
            continue;
        uint64_t base = value_base(k, 0), len = value_len(base);
        uint64_t off = append_hdr(p, k0, k1, len);
        for (uint64_t j = 0; j < len / 8; j++)
            logw_set(p, off + 24 + 8 * j, value_word(k, 0, base, j));
        index_set(p, h, k0, k1, off);
    }
}

/* ---- Requests ---------------------------------------------------------------------- */

/* Whether a request of `words` payload words (4 and a SET's value) with this op and value
 * length is one the store refuses (wire format: docs/apps/mica.md). */
static int __attribute__((unused)) kv_bad(uint64_t op, uint64_t len, uint64_t words)
{
    uint64_t want = op == OP_SET ? 4 + len / 8 : 4;
    return (op != OP_GET && op != OP_SET) || words != want || len % 8 || len > MAX_VALUE;
}

/* The request functions below go through appnet's header words (appnet.h): `hdr` is the
 * request's, naming its sender.  On the nanoPU they stream from netRX and to netTX; chain.c
 * and mica_ice.c use them on IceNIC, where the words come from and go into frames. */

/* Start the reply to `hdr`'s sender: op | status | value length, then the request's tag;
 * the caller sends the len / 8 value words, then appnet_send_end. */
static void __attribute__((unused)) reply_hdr(uint64_t hdr, uint64_t op, uint64_t st, uint64_t len, uint64_t tag)
{
    appnet_send_hdr(appnet_hdr(appnet_hdr_ip(hdr), appnet_hdr_context(hdr), (uint16_t)(16 + len)));
    appnet_send_word(op | st << 8 | len << 16);
    appnet_send_word(tag);
}

/* A reply without a value: its status alone. */
static void __attribute__((unused)) reply_status(uint64_t hdr, uint64_t op, uint64_t st, uint64_t tag)
{
    reply_hdr(hdr, op, st, 0, tag);
    appnet_send_end();
}

/* Drop the rest of a request the server cannot use. */
static void __attribute__((unused)) skip(uint64_t words)
{
    while (words--)
        appnet_recv_word();
}

/* SET: append the item with the request's value words (read from the message as they
 * come), then point the key at it; the writer holds the partition's lock if it is shared. */
static void __attribute__((unused)) set_from_request(struct partition *p, uint64_t h, uint64_t k0, uint64_t k1, uint64_t len)
{
    lock(p);
    uint64_t off = append_hdr(p, k0, k1, len);
    for (uint64_t w = 0; w < len; w += 8)
        logw_set(p, off + 24 + w, appnet_recv_word());
    index_set(p, h, k0, k1, off);
    unlock(p);
}

/* GET, one core per partition: stream the value from the log. */
static void __attribute__((unused)) get_exclusive(struct partition *p, uint64_t hdr, uint64_t tag, uint64_t h, uint64_t k0, uint64_t k1)
{
    struct bucket *b = &p->bucket[h & BUCKET_MASK];
    int i = find(p, b, tag_of(h), k0, k1);
    if (i < 0) {
        reply_status(hdr, OP_GET, ST_MISS, tag);
        return;
    }
    const uint64_t *it = item(p, b->entry[i] & OFF_MASK), *end = it + ITEM_HDR + it[2] / 8;
    reply_hdr(hdr, OP_GET, ST_OK, it[2], tag);
    for (const uint64_t *w = it + ITEM_HDR; w < end; w++)
        appnet_send_word(*w);
    appnet_send_end();
}

#endif
