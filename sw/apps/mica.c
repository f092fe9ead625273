/*
 * mica.c - a MICA-style key-value store (Lim et al., "MICA: A Holistic Approach to Fast
 * In-Memory Key-Value Storage", NSDI 2014) served from the nanoPU's register interface.
 * What it follows of MICA and where it departs: docs/apps/mica.md.
 *
 * One partition per core, each a lossy-concurrency hash index (buckets of one version word
 * and 7 entries, an entry = 16-bit key-hash tag | 48-bit log offset) over a circular log of
 * items {key (2 words), value length, value words}.  A SET appends a new item and points the
 * key's entry at it; a GET follows the entry, compares the full key and streams the value
 * out.  Space the log needs is reclaimed from its tail: a live item there is moved to the
 * head (a departure: MICA's cache mode drops it; we keep every item, as a store must).
 * The store itself is kvstore.h, shared with chain.c.
 *
 * Steering, argv[3]:
 *   static  core i registers context i and serves only its own partition (MICA's EREW mode,
 *           the client sends each request to the owning core's context)
 *   jbsq    every core registers context 0; the NIC gives each request to a core by JBSQ,
 *           which serves any partition: writers lock the partition, readers check the
 *           bucket's version around their copy (MICA's CREW optimistic reads, with writes
 *           from any core serialised by the lock)
 * argv[4] items per core, argv[5] seed, argv[6], argv[7] smallest and largest preloaded
 * value in bytes (multiples of 8, at most 512).  Wire format, key and value generation:
 * docs/apps/mica.md; the load generator (crates/harness/src/workload/kv.rs) computes the same ones.
 */
#include "kvstore.h"               /* the store: index, log, preloading, GET from one core */

#define MAX_PARTS   8

static struct partition parts[MAX_PARTS];
static volatile uint64_t loaded;        /* partitions preloaded (jbsq waits for all) */

/* GET, any core: copy the value while the bucket's version stays the same (MICA's
 * optimistic read), then send the copy. */
static void get_shared(struct partition *p, uint64_t hdr, uint64_t tag, uint64_t h, uint64_t k0, uint64_t k1)
{
    static __thread uint64_t copy[MAX_VALUE / 8];
    struct bucket *b = &p->bucket[h & BUCKET_MASK];
    uint64_t v, len;
    int i;
    do {
        while ((v = b->version) & 1) { }
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        i = find(p, b, tag_of(h), k0, k1);
        const uint64_t *it = item(p, i < 0 ? 0 : b->entry[i] & OFF_MASK);
        len = i < 0 ? 0 : it[2];
        for (uint64_t w = 0; w < len / 8 && len <= MAX_VALUE; w++)
            copy[w] = it[ITEM_HDR + w];
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    } while (b->version != v);
    reply_hdr(hdr, OP_GET, i < 0 ? ST_MISS : ST_OK, len, tag);
    for (uint64_t w = 0; w < len; w += 8)
        lnic_write_r(copy[w / 8]);
}

/* SET: append the new item from the request's value words, then point the key at it. */
static void set(struct partition *p, uint64_t hdr, uint64_t tag, uint64_t h, uint64_t k0, uint64_t k1, uint64_t len)
{
    set_from_request(p, h, k0, k1, len);
    reply_hdr(hdr, OP_SET, ST_OK, 0, tag);
}

static void serve_one(void)
{
    uint64_t hdr = lnic_read(), words = lnic_hdr_words(hdr);
    if (words < 4) {
        skip(words);
        reply_hdr(hdr, 0, ST_BAD, 0, 0);
        return;
    }
    uint64_t w0 = lnic_read(), tag = lnic_read(), k0 = lnic_read(), k1 = lnic_read();
    uint64_t op = w0 & 0xff, len = w0 >> 16, h = key_hash(k0, k1), part = part_of(h);
    uint64_t want = op == OP_SET ? 4 + len / 8 : 4;
    if ((op != OP_GET && op != OP_SET) || words != want || len % 8 || len > MAX_VALUE) {
        skip(words - 4);
        reply_hdr(hdr, op, ST_BAD, 0, tag);
    } else if (!shared && part != nanopu_core_id()) {
        skip(words - 4);
        reply_hdr(hdr, op, ST_WRONG_PART, 0, tag);
    } else if (op == OP_SET) {
        set(&parts[part], hdr, tag, h, k0, k1, len);
    } else if (shared) {
        get_shared(&parts[part], hdr, tag, h, k0, k1);
    } else {
        get_exclusive(&parts[part], hdr, tag, h, k0, k1);
    }
    lnic_msg_done();
}

static int usage(const char *why)
{
    if (nanopu_core_id() == 0)
        printf("mica: %s\nusage: mica.elf static|jbsq ITEMS_PER_CORE SEED VALUE_MIN VALUE_MAX\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 8)
        return usage("missing arguments");
    shared = !strcmp(argv[3], "jbsq");
    nparts = nanopu_num_cores();
    uint64_t items = nanopu_arg_u64(argc, argv, 1, 0), core = nanopu_core_id();
    seed = nanopu_arg_u64(argc, argv, 2, 0);
    vmin = nanopu_arg_u64(argc, argv, 3, 0);
    vmax = nanopu_arg_u64(argc, argv, 4, 0);
    if ((!shared && strcmp(argv[3], "static")) || nparts > MAX_PARTS || items > BUCKETS
        || vmin % 8 || vmax % 8 || vmin > vmax || vmax > MAX_VALUE)
        return usage("bad arguments (at most 8 cores, 16384 items per core)");
    preload(&parts[core], core, items);
    if (parts[core].evicted) {
        printf("mica: core %lu: the index dropped %lu keys while preloading\n",
               (unsigned long)core, (unsigned long)parts[core].evicted);
        return 5;
    }
    __atomic_fetch_add(&loaded, 1, __ATOMIC_SEQ_CST);
    while (shared && loaded < nparts) { }
    lnic_add_context(shared ? 0 : core, 0);
    lnic_boot_msg();
    for (;;)
        serve_one(); /* blocks in its first read of x30: idle time is netRX stall */
}
