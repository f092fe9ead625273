/*
 * rdma_ice.c - the one-sided RDMA-like operations of rdma.c on an IceNIC node, the
 * traditional baseline (docs/apps/rdma.md "On IceNIC"; docs/models/icenic.md).  The same
 * region, contents, wire format, checks and operations (rdma_ops.h: not a copy), the same
 * argument; only the NIC layer differs: each request and each reply is one UDP frame
 * through appnet on IceNIC (appnet_ice.h), moved by DMA through buffers in memory, and hart
 * 0 alone serves (the NIC has one queue pair).  Built only for IceNIC, as
 * apps/rdma_ice.elf (sw/Makefile ICE_ONLY_APPS).
 *
 * A WRITE's words go from the receive buffer into the region; a READ's go from the region
 * straight into the send buffer (appnet_send_word): one copy each way, on the core.  A
 * 64-word WRITE is a 584-byte frame, a 64-word READ's reply 576 bytes: each one frame.
 */
#include "appnet.h"
#include "rdma_ops.h"               /* the region and the operations, shared with rdma.c */

/* rdma_ops.h's NIC layer: appnet's frames. A reply's peer is the request's source address
 * and UDP port, ip << 16 | port. */
static inline uint64_t rdma_begin(uint64_t *peer)
{
    struct appnet_peer from;
    uint64_t words = appnet_recv_begin(&from);
    *peer = (uint64_t)from.ip << 16 | from.context;
    return words;
}

static inline uint64_t rdma_in(void)
{
    return appnet_recv_word();
}

static inline void rdma_out(uint64_t w)
{
    appnet_send_word(w);
}

static void reply_hdr(uint64_t peer, uint64_t op, uint64_t st, uint64_t n, uint64_t tag)
{
    struct appnet_peer to = { (uint32_t)(peer >> 16), (uint16_t)peer };
    appnet_send_begin(to, (uint32_t)(2 + n));
    appnet_send_word(op | st << 8 | n << 16);
    appnet_send_word(tag);
}

/* The reply is queued before the request's buffer goes back to the NIC. */
static inline void rdma_end(void)
{
    appnet_send_end();
    appnet_recv_end();
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0; /* hart 0 alone drives the NIC (appnet_ice.h) */
    if (argc < 4 || nanopu_num_cores() != 1) {
        printf("rdma_ice: %s\nusage: rdma_ice.elf SEED (one core)\n",
               argc < 4 ? "missing arguments" : "bad arguments");
        return 2;
    }
    fill(nanopu_arg_u64(argc, argv, 0, 0));
    appnet_init(0);
    for (;;)
        serve_one(); /* polls the receive completion count while idle */
}
