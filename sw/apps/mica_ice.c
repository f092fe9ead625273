/*
 * mica_ice.c - the MICA-style store of mica.c on an IceNIC node, the traditional baseline
 * (docs/apps/mica.md "On IceNIC"; docs/models/icenic.md).  The same store and request code
 * (kvstore.h: index, log, preloading, SET, GET and replies through appnet's header words),
 * the same wire format and arguments; only the NIC layer differs: each
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

/* One request: its frame's words read in place, its buffer posted again before the reply
 * is built (kvstore.h's request functions, through appnet's header words). */
static void serve_one(void)
{
    uint64_t hdr = appnet_recv_hdr(), words = appnet_hdr_words(hdr);
    if (words < 4) {
        skip(words);
        appnet_recv_end();
        reply_status(hdr, 0, ST_BAD, 0);
        return;
    }
    uint64_t w0 = appnet_recv_word(), tag = appnet_recv_word();
    uint64_t k0 = appnet_recv_word(), k1 = appnet_recv_word();
    uint64_t op = w0 & 0xff, len = w0 >> 16, h = key_hash(k0, k1);
    if (kv_bad(op, len, words)) {
        skip(words - 4);
        appnet_recv_end();
        reply_status(hdr, op, ST_BAD, tag);
    } else if (op == OP_SET) {
        set_from_request(&part, h, k0, k1, len);
        appnet_recv_end();
        reply_status(hdr, OP_SET, ST_OK, tag);
    } else {
        appnet_recv_end();
        get_exclusive(&part, hdr, tag, h, k0, k1);
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
