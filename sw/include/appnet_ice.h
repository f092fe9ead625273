/*
 * appnet_ice.h - appnet (appnet.h) on IceNIC, the DMA NIC of the traditional baseline node
 * (docs/models/icenic.md; docs/apps/paper-apps.md "On IceNIC").  Included by appnet.h when
 * a program is built with -DAPPNET_ICENIC (sw/Makefile: apps/<name>_ice.elf).
 *
 * A message is one UDP frame: Ethernet, IPv4 and UDP headers (icenic.h ICE_FRAME_*), six
 * bytes of zero padding, then the payload words in the cores' byte order.  The padding puts
 * the words 8-byte aligned in an 8-byte-aligned buffer (the cores trap on misaligned loads;
 * icenet pads its own frames for the IP header in the same way, NET_IP_ALIGN).  A context is
 * a UDP port: the destination port names the receiver's context, the source port the
 * sender's.  A node's MAC is 02:00 followed by its IPv4 address (boot::node_mac), so
 * no address resolution is needed.
 *
 * Hart 0 alone drives the NIC (icenet has one send and one receive queue): its queue depth
 * of receive buffers are posted at init and each is posted again once its frame has been
 * read; as many send buffers are used in turn, a buffer reused only after its send completed.  Every
 * frame costs what a driver's does: register accesses (20 cycles each), the header built
 * or checked in memory, the words copied between the buffer and the program.
 */
#ifndef APPNET_ICE_H
#define APPNET_ICE_H

#include "icenic.h"

#define APPNET_MAX_WORDS 16
#define APPNET_ICE_BUFS ICENIC_QUEUE_DEPTH
#define APPNET_ICE_BUF_BYTES 1536
/* Offset of the first payload word in a frame: the 42 header bytes and 6 of padding. */
#define APPNET_ICE_WORDS (ICE_FRAME_PAYLOAD + 6)
/* The most words one frame carries (icenet's largest frame, 1,516 bytes). */
#define APPNET_ICE_MAX_WORDS ((ICENIC_MAX_FRAME - APPNET_ICE_WORDS) / 8)

struct appnet_peer {
    uint32_t ip;
    uint16_t context;
};

static struct {
    uint16_t port;
    uint32_t ip;
    uint32_t ip_sum;           /* the IPv4 header's constant 16-bit words, summed */
    uint32_t rx_next, tx_next; /* the buffer of the next frame received, sent */
    uint32_t tx_busy;          /* sends not yet seen completed */
    uint64_t dropped;          /* frames not IPv4/UDP to this context, skipped */
    const uint64_t *cursor;    /* the next word of the message being read */
    uint32_t left;             /* its words not yet read */
    uint64_t *out;             /* appnet_send_word: where the next word goes */
    uint8_t *out_frame;        /* the frame being filled, its words, its peer */
    uint32_t out_words;
    struct appnet_peer out_to;
} appnet_ice;

static uint8_t appnet_ice_rx[APPNET_ICE_BUFS][APPNET_ICE_BUF_BYTES] __attribute__((aligned(64)));
static uint8_t appnet_ice_tx[APPNET_ICE_BUFS][APPNET_ICE_BUF_BYTES] __attribute__((aligned(64)));

/* The MAC of the node (or host) at `ip`: 02:00 then the address. */
static inline void appnet_ice_put_mac(uint8_t *f, int off, uint32_t ip)
{
    ice_put16(f, off, 0x0200);
    ice_put32(f, off + 2, ip);
}

/* The fields every frame this core sends shares, written once into each send buffer. */
static void appnet_ice_template(uint8_t *f, uint64_t mac)
{
    ice_put16(f, ICE_FRAME_ETH_SRC, (uint16_t)(mac >> 32));
    ice_put32(f, ICE_FRAME_ETH_SRC + 2, (uint32_t)mac);
    ice_put16(f, ICE_FRAME_ETH_TYPE, 0x0800);
    ice_put16(f, ICE_FRAME_IP, 0x4500);      /* version 4, 20-byte header, no TOS */
    ice_put16(f, ICE_FRAME_IP + 4, 0);       /* identification */
    ice_put16(f, ICE_FRAME_IP + 6, 0x4000);  /* don't fragment */
    ice_put16(f, ICE_FRAME_IP + 8, 0x4011);  /* TTL 64, protocol UDP */
    ice_put32(f, ICE_FRAME_IP_SRC, appnet_ice.ip);
    ice_put16(f, ICE_FRAME_UDP, appnet_ice.port);
    ice_put16(f, ICE_FRAME_UDP + 6, 0);      /* no UDP checksum, as IPv4 allows */
    memset(f + ICE_FRAME_PAYLOAD, 0, APPNET_ICE_WORDS - ICE_FRAME_PAYLOAD);
}

/* Whether this core can send and receive: hart 0 alone (the NIC has one queue pair). */
static inline int appnet_core_serves(void)
{
    return nanopu_core_id() == 0;
}

/* Serve `context` (a UDP port): post every receive buffer and prepare the send buffers.
 * Only hart 0 may call it (the NIC has one queue pair); another hart exits with 90. */
static inline void appnet_init(uint16_t context)
{
    if (nanopu_core_id() != 0)
        nanopu_exit(90);
    appnet_ice.port = context;
    appnet_ice.ip = nanopu_node_ip();
    appnet_ice.ip_sum = 0x4500 + 0x4000 + 0x4011 + (appnet_ice.ip >> 16) + (appnet_ice.ip & 0xffff);
    uint64_t mac = icenic_mac();
    for (int i = 0; i < APPNET_ICE_BUFS; i++) {
        appnet_ice_template(appnet_ice_tx[i], mac);
        icenic_post_recv(appnet_ice_rx[i]);
    }
}

/* 1 if the frame of `len` bytes at `f` is IPv4/UDP to this core's port with whole words. */
static inline int appnet_ice_ours(const uint8_t *f, uint32_t len)
{
    return len >= APPNET_ICE_WORDS && (len - APPNET_ICE_WORDS) % 8 == 0 &&
           ice_get16(f, ICE_FRAME_ETH_TYPE) == 0x0800 && f[ICE_FRAME_IP + 9] == 17 &&
           ice_get16(f, ICE_FRAME_UDP + 2) == appnet_ice.port;
}

/* Wait for a receive completion (polling the counts, as the artifact's nic_recv does)
 * and take it. While none is pending, the poll takes one send completion per counts read,
 * as a Linux driver cleans its transmit ring in its NAPI poll: with ICENIC_QUEUE_DEPTH (64)
 * send buffers, taking them only once all are in use would put 64 register reads on one
 * request's path (docs/models/icenic.md "Queue and buffer sizes"). */
static inline uint32_t appnet_ice_wait_recv(void)
{
    for (;;) {
        uint32_t c = icenic_counts();
        if (c >> 24)
            return icenic_take_recv_comp();
        if (((c >> 16) & 0xff) && appnet_ice.tx_busy) {
            icenic_take_send_comp();
            appnet_ice.tx_busy--;
        }
    }
}

/* Take the next frame's completion and return its buffer; *len is its length. */
static inline uint8_t *appnet_ice_next_frame(uint32_t *len)
{
    *len = appnet_ice_wait_recv();
    return appnet_ice_rx[appnet_ice.rx_next];
}

/* Give the frame's buffer back to the NIC: it is the oldest posted. */
static inline void appnet_ice_repost(void)
{
    icenic_post_recv(appnet_ice_rx[appnet_ice.rx_next]);
    appnet_ice.rx_next = (appnet_ice.rx_next + 1) % APPNET_ICE_BUFS;
}

/* Start reading the next message: wait for a frame to this context (skipping and counting
 * any other), return its word count and its sender in *from. */
static inline uint32_t appnet_recv_begin(struct appnet_peer *from)
{
    for (;;) {
        uint32_t len;
        const uint8_t *f = appnet_ice_next_frame(&len);
        if (appnet_ice_ours(f, len)) {
            from->ip = ice_get32(f, ICE_FRAME_IP_SRC);
            from->context = ice_get16(f, ICE_FRAME_UDP);
            appnet_ice.cursor = (const uint64_t *)(f + APPNET_ICE_WORDS);
            return appnet_ice.left = (len - APPNET_ICE_WORDS) / 8;
        }
        appnet_ice.dropped++;
        appnet_ice_repost();
    }
}

/* The message's next word, read from the receive buffer where the DMA wrote it. */
static inline uint64_t appnet_recv_word(void)
{
    appnet_ice.left--;
    return *appnet_ice.cursor++;
}

/* The message is read: its buffer goes back to the NIC. */
static inline void appnet_recv_end(void)
{
    appnet_ice_repost();
}

/* The next send buffer, once the send that last used it has completed. */
static inline uint8_t *appnet_ice_tx_buffer(void)
{
    /* One completion at a time: the receive poll takes the rest (appnet_ice_wait_recv). */
    while (appnet_ice.tx_busy == APPNET_ICE_BUFS)
        appnet_ice.tx_busy -= icenic_take_send_comp();
    return appnet_ice_tx[appnet_ice.tx_next];
}

/* The per-frame header fields: addresses, lengths, the IPv4 checksum (RFC 791). */
static inline void appnet_ice_address(uint8_t *f, struct appnet_peer to, uint32_t bytes)
{
    uint32_t ip_len = bytes - ICE_FRAME_IP;
    appnet_ice_put_mac(f, ICE_FRAME_ETH_DST, to.ip);
    ice_put16(f, ICE_FRAME_IP_LEN, (uint16_t)ip_len);
    ice_put32(f, ICE_FRAME_IP_DST, to.ip);
    uint32_t s = appnet_ice.ip_sum + ip_len + (to.ip >> 16) + (to.ip & 0xffff);
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    ice_put16(f, ICE_FRAME_IP + 10, (uint16_t)~s);
    ice_put16(f, ICE_FRAME_UDP + 2, to.context);
    ice_put16(f, ICE_FRAME_UDP + 4, (uint16_t)(ip_len - 20));
}

/* Send w[0..n) (1 <= n <= APPNET_ICE_MAX_WORDS) to `to`: copy the words into the next send
 * buffer after its header and queue the frame (the send request queue has room: at most
 * APPNET_ICE_BUFS, the queue's depth, sends are outstanding). */
static inline void appnet_send(struct appnet_peer to, const uint64_t *w, uint32_t n)
{
    uint8_t *f = appnet_ice_tx_buffer();
    uint64_t *words = (uint64_t *)(f + APPNET_ICE_WORDS);
    for (uint32_t i = 0; i < n; i++)
        words[i] = w[i];
    uint32_t bytes = APPNET_ICE_WORDS + 8 * n;
    appnet_ice_address(f, to, bytes);
    icenic_send(f, bytes);
    appnet_ice.tx_next = (appnet_ice.tx_next + 1) % APPNET_ICE_BUFS;
    appnet_ice.tx_busy++;
}

/* appnet_send a word at a time (n <= APPNET_ICE_MAX_WORDS): the words are written straight
 * into the next send buffer, then appnet_send_end addresses and queues the frame. */
static inline void appnet_send_begin(struct appnet_peer to, uint32_t n)
{
    appnet_ice.out_frame = appnet_ice_tx_buffer();
    appnet_ice.out = (uint64_t *)(appnet_ice.out_frame + APPNET_ICE_WORDS);
    appnet_ice.out_words = n;
    appnet_ice.out_to = to;
}

static inline void appnet_send_word(uint64_t w)
{
    *appnet_ice.out++ = w;
}

static inline void appnet_send_end(void)
{
    uint32_t bytes = APPNET_ICE_WORDS + 8 * appnet_ice.out_words;
    appnet_ice_address(appnet_ice.out_frame, appnet_ice.out_to, bytes);
    icenic_send(appnet_ice.out_frame, bytes);
    appnet_ice.tx_next = (appnet_ice.tx_next + 1) % APPNET_ICE_BUFS;
    appnet_ice.tx_busy++;
}

/* The longest message: one frame (appnet.h). */
#define APPNET_LONGEST_WORDS APPNET_ICE_MAX_WORDS

/* Whether a frame waits to be read (appnet.h): a receive completion is pending.  A frame
 * that is not IPv4/UDP to this context is skipped by appnet_recv_hdr, which then waits for
 * the next: in a cluster of one program every frame is one of its own. */
static inline int appnet_ready(void)
{
    return icenic_recv_comps() != 0;
}

/* Start reading the next message (appnet_recv_begin): its header word, made from the
 * frame's source address, source port and payload length. */
static inline uint64_t appnet_recv_hdr(void)
{
    struct appnet_peer from;
    uint32_t words = appnet_recv_begin(&from);
    return appnet_hdr(from.ip, from.context, (uint16_t)(8 * words));
}

/* Start a message by its header word (appnet_send_begin to its address and port). */
static inline void appnet_send_hdr(uint64_t hdr)
{
    struct appnet_peer to = { appnet_hdr_ip(hdr), appnet_hdr_context(hdr) };
    appnet_send_begin(to, appnet_hdr_words(hdr));
}

#endif
