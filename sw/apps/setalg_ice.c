/*
 * setalg_ice.c - the set algebra server of setalg.c on an IceNIC node, the traditional
 * baseline (docs/apps/setalg.md "On IceNIC"; docs/models/icenic.md).  The same corpus,
 * index, intersection, wire format and arguments (setalg_index.h: not a copy); only the NIC
 * layer differs: each query and each reply is one UDP frame through appnet on IceNIC
 * (appnet_ice.h), moved by DMA through buffers in memory, and hart 0 alone serves (the NIC
 * has one queue pair), so there is no JBSQ.  Built only for IceNIC, as apps/setalg_ice.elf
 * (sw/Makefile ICE_ONLY_APPS).
 *
 * A query's words are read from the receive buffer; the reply (count and up to 32 ids, 35
 * words) is written straight into the send buffer (appnet_send_word).
 *
 * Arguments (after program, MAC and IP): SEED DOCUMENTS VOCABULARY WORDS_PER_DOCUMENT.
 */
#include "appnet.h"
#include "setalg_index.h"          /* the index and the intersection, shared with setalg.c */

/* setalg_serve.h's NIC layer: appnet's frames. A reply's peer is the query's source address
 * and UDP port, ip << 16 | port. */
static inline uint64_t setalg_begin(uint64_t *peer)
{
    struct appnet_peer from;
    uint64_t words = appnet_recv_begin(&from);
    *peer = (uint64_t)from.ip << 16 | from.context;
    return words;
}

static inline uint64_t setalg_in(void)
{
    return appnet_recv_word();
}

static inline void setalg_out(uint64_t w)
{
    appnet_send_word(w);
}

static void reply_hdr(uint64_t peer, uint64_t st, uint64_t ids, uint64_t tag)
{
    struct appnet_peer to = { (uint32_t)(peer >> 16), (uint16_t)peer };
    appnet_send_begin(to, (uint32_t)(st == ST_OK ? 3 + ids : 2));
    appnet_send_word(OP_QUERY | st << 8 | ids << 16);
    appnet_send_word(tag);
}

/* The reply is queued before the query's buffer goes back to the NIC. */
static inline void setalg_end(void)
{
    appnet_send_end();
    appnet_recv_end();
}

#include "setalg_serve.h"          /* queries answered, shared with setalg.c */

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0; /* hart 0 alone drives the NIC (appnet_ice.h) */
    if (argc < 7 || nanopu_num_cores() != 1) {
        printf("setalg_ice: %s\nusage: setalg_ice.elf SEED DOCUMENTS VOCABULARY WORDS_PER_DOCUMENT (one core)\n",
               argc < 7 ? "missing arguments" : "bad arguments");
        return 2;
    }
    vocab = nanopu_arg_u64(argc, argv, 2, 0);
    if (build(nanopu_arg_u64(argc, argv, 0, 0), nanopu_arg_u64(argc, argv, 1, 0),
              nanopu_arg_u64(argc, argv, 3, 0)))
        return 2;
    appnet_init(0);
    for (;;)
        serve_one(); /* polls the receive completion count while idle */
}
