/*
 * appnet.h - the small send/receive layer the paper's applications (docs/apps/paper-apps.md)
 * are written against, so that their logic never touches a NIC directly.  One interface,
 * two implementations chosen when the program is built:
 *   - the nanoPU NIC (here): a message's words stream straight from netRX (x30) and to
 *     netTX (x31), never through memory (docs/platform.md section 2);
 *   - IceNIC, with -DAPPNET_ICENIC (appnet_ice.h): a message is one UDP frame moved by DMA
 *     through receive and send buffers in memory (docs/models/icenic.md).
 * Each provides appnet_core_serves, appnet_init, appnet_recv_begin, appnet_recv_word,
 * appnet_recv_end, appnet_send and its word-at-a-time form appnet_send_begin,
 * appnet_send_word, appnet_send_end (for a reply streamed from where it lies, as a store's
 * value), appnet_recv_hdr and appnet_send_hdr (a message started by its header word,
 * below), appnet_ready (a non-blocking poll), APPNET_LONGEST_WORDS and APPNET_IRQ_ENTRY,
 * with the meanings below; appnet_recv and appnet_boot_msg are built on them.
 *
 * A message is at most APPNET_MAX_WORDS payload words for appnet_send; the peer is named by
 * its IPv4 address and context, as in the nanoPU application header.
 */
#ifndef APPNET_H
#define APPNET_H

#include "nanopu.h"

/* ---- Header words ----------------------------------------------------------------------
 * For programs that keep a peer in a word (to answer it later, or to pass it on in a
 * message, as chain.c passes its client down the chain) and that handle a message by its
 * header: a header word is the nanoPU application header's layout (docs/platform.md
 * section 2), IPv4 << 32 | context << 16 | payload bytes, naming the sender of a message
 * received and the receiver of one sent.  appnet_recv_hdr and appnet_send_hdr (one per NIC)
 * start a message by its header word; on IceNIC the word is made from and into the frame's
 * addresses and length. */
static inline uint64_t appnet_hdr(uint32_t ip, uint16_t context, uint16_t bytes)
{
    return lnic_hdr(ip, context, bytes);
}
static inline uint32_t appnet_hdr_ip(uint64_t hdr) { return lnic_hdr_ip(hdr); }
static inline uint16_t appnet_hdr_context(uint64_t hdr) { return lnic_hdr_context(hdr); }
static inline uint32_t appnet_hdr_words(uint64_t hdr) { return lnic_hdr_words(hdr); }

#ifdef APPNET_ICENIC
#include "appnet_ice.h"
#else

#define APPNET_MAX_WORDS 16

struct appnet_peer {
    uint32_t ip;
    uint16_t context;
};

/* Whether this core can send and receive: every core of a nanoPU node. */
static inline int appnet_core_serves(void)
{
    return 1;
}

/* Serve `context` on this core at priority 0. */
static inline void appnet_init(uint16_t context)
{
    lnic_add_context(context, 0);
}

/* Start reading the next message, waiting for it: return its payload word count and its
 * sender in *from.  Read exactly that many words with appnet_recv_word, then call
 * appnet_recv_end. */
static inline uint32_t appnet_recv_begin(struct appnet_peer *from)
{
    lnic_wait();
    uint64_t hdr = lnic_read();
    from->ip = lnic_hdr_ip(hdr);
    from->context = lnic_hdr_context(hdr);
    return lnic_hdr_words(hdr);
}

/* The message's next word. */
static inline uint64_t appnet_recv_word(void)
{
    return lnic_read();
}

/* The message is read: the NIC may deliver the next (JBSQ). */
static inline void appnet_recv_end(void)
{
    lnic_msg_done();
}

/* Send w[0..n) (1 <= n <= APPNET_MAX_WORDS) to `to`. */
static inline void appnet_send(struct appnet_peer to, const uint64_t *w, uint32_t n)
{
    lnic_write_r(lnic_hdr(to.ip, to.context, (uint16_t)(n * LNIC_WORD_BYTES)));
    for (uint32_t i = 0; i < n; i++)
        lnic_write_r(w[i]);
}

/* Send a message of n words (1 <= n <= APPNET_MAX_WORDS) to `to` a word at a time: n calls
 * of appnet_send_word, then appnet_send_end. On the nanoPU each word goes straight to netTX. */
static inline void appnet_send_begin(struct appnet_peer to, uint32_t n)
{
    lnic_write_r(lnic_hdr(to.ip, to.context, (uint16_t)(n * LNIC_WORD_BYTES)));
}

static inline void appnet_send_word(uint64_t w)
{
    lnic_write_r(w);
}

static inline void appnet_send_end(void)
{
}

/* The longest message appnet_send_hdr may start, in words: the application header's 16-bit
 * byte length (the NIC's own limit, NicParams::max_msg_bytes, may be lower). */
#define APPNET_LONGEST_WORDS (65535 / 8)

/* Whether a message waits to be read, without waiting (for a loop that also watches
 * timers, as raft.c's): the NIC's count of messages ready for this core. */
static inline int appnet_ready(void)
{
    return lnic_ready() != 0;
}

/* Start reading the next message, waiting for it: its header word (the sender, the length).
 * Read appnet_hdr_words of it with appnet_recv_word, then call appnet_recv_end.  The read
 * of netRX itself waits (appnet_recv_begin polls the ready count first): a core may take
 * an interrupt while it waits here (chain.c's master). */
static inline uint64_t appnet_recv_hdr(void)
{
    return lnic_read();
}

/* Start a message to the peer and of the length `hdr` names (whole words: on the nanoPU at
 * most the NIC's largest message, on IceNIC APPNET_ICE_MAX_WORDS, one frame); then its
 * words with appnet_send_word, then appnet_send_end. */
static inline void appnet_send_hdr(uint64_t hdr)
{
    lnic_write_r(hdr);
}

#endif

/* Receive the next message into w[0..max), waiting for it; return its payload word count
 * (words beyond `max` are read and dropped: the caller sees the count and can refuse it)
 * and its sender in *from. */
static inline uint32_t appnet_recv(uint64_t *w, uint32_t max, struct appnet_peer *from)
{
    uint32_t n = appnet_recv_begin(from);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t x = appnet_recv_word();
        if (i < max)
            w[i] = x;
    }
    appnet_recv_end();
    return n;
}

/* Tell the test host (10.0.0.1, context 0) that this core is up: a one-word message, the
 * core's id (lnic_boot_msg on the nanoPU). */
static inline void appnet_boot_msg(void)
{
    appnet_send_hdr(appnet_hdr(NANOPU_HOST_IP, 0, LNIC_WORD_BYTES));
    appnet_send_word(nanopu_core_id());
    appnet_send_end();
}

/* APPNET_IRQ_ENTRY(entry, handler): `entry`, an interrupt entry for mtvec (4-byte aligned)
 * that runs `static void handler(void)` and returns with mret: GCC's interrupt("machine")
 * attribute, on both NICs.  On the nanoPU it saves only the registers the handler uses,
 * which never include x30/x31 as long as the handler calls no function (every nanoPU send
 * is inline; GCC saves t5/t6 around a call, which in a nanoPU program would pop netRX and
 * push netTX: NANOPU_TRAP_ENTRY in nanopu.h is the entry for handlers that call).  An
 * IceNIC program is plain RISC-V (sw/Makefile), where x30/x31 are ordinary registers the
 * attribute saves like the others. */
#define APPNET_IRQ_ENTRY(entry, handler) \
    static void __attribute__((interrupt("machine"), aligned(4))) entry(void) { handler(); }

/* The address of node `node` (10.0.0.(2+node), docs/platform.md section 2). */
static inline uint32_t appnet_node_ip(uint64_t node)
{
    return NANOPU_IP(10, 0, 0, 2) + (uint32_t)node;
}

#endif
