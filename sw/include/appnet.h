/*
 * appnet.h - the small send/receive layer the paper's applications (docs/apps/paper-apps.md)
 * are written against, so that their logic never touches a NIC directly.  This is the
 * nanoPU implementation: a message's words stream straight from netRX (x30) and to netTX
 * (x31), never through memory (docs/platform.md section 2).  An implementation for another
 * NIC provides the same four functions with the same meaning.
 *
 * A message is at most APPNET_MAX_WORDS payload words; the peer is named by its IPv4
 * address and context, as in the nanoPU application header.
 */
#ifndef APPNET_H
#define APPNET_H

#include "nanopu.h"

#define APPNET_MAX_WORDS 16

struct appnet_peer {
    uint32_t ip;
    uint16_t context;
};

/* Serve `context` on this core at priority 0. */
static inline void appnet_init(uint16_t context)
{
    lnic_add_context(context, 0);
}

/* Receive the next message into w[0..max), waiting for it; return its payload word count
 * (words beyond `max` are read and dropped: the caller sees the count and can refuse it)
 * and its sender in *from.  The message is done once read: JBSQ may deliver the next. */
static inline uint32_t appnet_recv(uint64_t *w, uint32_t max, struct appnet_peer *from)
{
    lnic_wait();
    uint64_t hdr = lnic_read();
    uint32_t n = lnic_hdr_words(hdr);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t x = lnic_read();
        if (i < max)
            w[i] = x;
    }
    lnic_msg_done();
    from->ip = lnic_hdr_ip(hdr);
    from->context = lnic_hdr_context(hdr);
    return n;
}

/* Send w[0..n) (1 <= n <= APPNET_MAX_WORDS) to `to`. */
static inline void appnet_send(struct appnet_peer to, const uint64_t *w, uint32_t n)
{
    lnic_write_r(lnic_hdr(to.ip, to.context, (uint16_t)(n * LNIC_WORD_BYTES)));
    for (uint32_t i = 0; i < n; i++)
        lnic_write_r(w[i]);
}

/* The address of node `node` (10.0.0.(2+node), docs/platform.md section 2). */
static inline uint32_t appnet_node_ip(uint64_t node)
{
    return NANOPU_IP(10, 0, 0, 2) + (uint32_t)node;
}

#endif
