/*
 * mica_ice.c - the MICA-style store of mica.c on an IceNIC node, the traditional baseline
 * (docs/apps/mica.md "On IceNIC"; docs/models/icenic.md).  The same store (kvstore.h: index,
 * log, preloading), the same wire format and arguments; only the NIC layer differs: each
 * request and each reply is one UDP frame through appnet on IceNIC (appnet_ice.h), moved by
 * DMA through buffers in memory, and hart 0 alone serves (the NIC has one queue pair), so
 * the store is one partition ("static" steering, context 0).  Built only for IceNIC, as
 * apps/mica_ice.elf (sw/Makefile ICE_ONLY_APPS).
 *
 * A SET's value words go from the receive buffer into the log; a GET's value words go from
 * the log straight into the send buffer (appnet_send_word), one copy each way, as a driver's
 * store would do with the frame in memory.  A 512-byte value is a 592-byte frame: one frame
 * within the 1,500-byte MTU.
 */
#include "appnet.h"
#include "kvstore.h"

static struct partition part;

/* Start the reply to `to`: op | status | value length, then the request's tag. */
static void reply_begin(struct appnet_peer to, uint64_t op, uint64_t st, uint64_t len, uint64_t tag)
{
    appnet_send_begin(to, (uint32_t)(2 + len / 8));
    appnet_send_word(op | st << 8 | len << 16);
    appnet_send_word(tag);
}

/* A reply without a value. */
static void reply(struct appnet_peer to, uint64_t op, uint64_t st, uint64_t tag)
{
    reply_begin(to, op, st, 0, tag);
    appnet_send_end();
}

/* Read and drop the rest of a request the store cannot use, and free its buffer. */
static void drop(uint64_t words)
{
    while (words--)
        appnet_recv_word();
    appnet_recv_end();
}

/* GET: the value words from the log into the reply frame (a miss has none). */
static void get(struct appnet_peer to, uint64_t tag, uint64_t h, uint64_t k0, uint64_t k1)
{
    struct bucket *b = &part.bucket[h & BUCKET_MASK];
    int i = find(&part, b, tag_of(h), k0, k1);
    const uint64_t *it = item(&part, i < 0 ? 0 : b->entry[i] & OFF_MASK);
    uint64_t len = i < 0 ? 0 : it[2];
    reply_begin(to, OP_GET, i < 0 ? ST_MISS : ST_OK, len, tag);
    for (uint64_t w = 0; w < len / 8; w++)
        appnet_send_word(it[ITEM_HDR + w]);
    appnet_send_end();
}

/* SET: append the item with the value words from the request frame, point the key at it. */
static void set(uint64_t h, uint64_t k0, uint64_t k1, uint64_t len)
{
    uint64_t off = append_hdr(&part, k0, k1, len);
    for (uint64_t w = 0; w < len; w += 8)
        logw_set(&part, off + 24 + w, appnet_recv_word());
    index_set(&part, h, k0, k1, off);
    appnet_recv_end();
}

static void serve_one(void)
{
    struct appnet_peer from;
    uint64_t words = appnet_recv_begin(&from);
    if (words < 4) {
        drop(words);
        reply(from, 0, ST_BAD, 0);
        return;
    }
    uint64_t w0 = appnet_recv_word(), tag = appnet_recv_word();
    uint64_t k0 = appnet_recv_word(), k1 = appnet_recv_word();
    uint64_t op = w0 & 0xff, len = w0 >> 16, h = key_hash(k0, k1);
    if (kv_bad(op, len, words)) {
        drop(words - 4);
        reply(from, op, ST_BAD, tag);
    } else if (op == OP_SET) {
        set(h, k0, k1, len);
        reply(from, OP_SET, ST_OK, tag);
    } else {
        appnet_recv_end();
        get(from, tag, h, k0, k1);
    }
}

static int usage(const char *why)
{
    printf("mica_ice: %s\nusage: mica_ice.elf static ITEMS SEED VALUE_MIN VALUE_MAX (one core)\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0; /* hart 0 alone drives the NIC (appnet_ice.h) */
    if (argc < 8)
        return usage("missing arguments");
    nparts = 1;
    uint64_t items = nanopu_arg_u64(argc, argv, 1, 0);
    seed = nanopu_arg_u64(argc, argv, 2, 0);
    vmin = nanopu_arg_u64(argc, argv, 3, 0);
    vmax = nanopu_arg_u64(argc, argv, 4, 0);
    if (strcmp(argv[3], "static") || nanopu_num_cores() != 1 || items > BUCKETS || vmin % 8
        || vmax % 8 || vmin > vmax || vmax > MAX_VALUE)
        return usage("bad arguments (\"static\", one core, at most 16384 items)");
    preload(&part, 0, items);
    if (part.evicted) {
        printf("mica_ice: the index dropped %lu keys while preloading\n", (unsigned long)part.evicted);
        return 5;
    }
    appnet_init(0);
    for (;;)
        serve_one(); /* polls the receive completion count while idle */
}
