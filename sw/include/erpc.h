/*
 * erpc.h - an eRPC-like RPC server over IceNIC (sw/include/icenic.h), as C running on the
 * simulated cores so that the stack's cost is measured (docs/apps/erpc.md: what follows
 * eRPC, Kalia et al., NSDI 2019, and what is simplified).
 *
 * Sessions between a client and this server; each session has ERPC_SLOTS request slots
 * (eRPC's request window, 8), slot i carrying request numbers i, i + 8, i + 16, ...
 * Messages longer than one frame's data (ERPC_PKT_DATA) travel as several packets and are
 * reassembled here. The client drives reliability as in eRPC: it sends at most
 * ERPC_CREDITS packets a session has not had answered (eRPC's session credits, 8); the
 * server answers every request packet but the last with an explicit credit return (CR),
 * the last with the response's first packet, and each request-for-response (RFR) with
 * the response packet it names. A client that times out goes back to its last answered
 * packet and resends from there (go-back-N); the server keeps each slot's response, so a
 * resent request is answered again without running its handler twice.
 *
 * Frames: Ethernet, IPv4, UDP (ICE_FRAME_* in icenic.h), then the 16-byte eRPC header
 * below, then the data. The server needs no timer: only the client retransmits.
 */
#ifndef ERPC_H
#define ERPC_H

#include "icenic.h"

/* ---- Packet header: 16 bytes after UDP, little-endian as eRPC's pkthdr_t bitfields
 * are in host order (docs/apps/erpc.md "Packet header"). ------------------------------ */
#define ERPC_HDR          ICE_FRAME_PAYLOAD       /* offset of the eRPC header */
#define ERPC_HDR_BYTES    16
#define ERPC_DATA         (ERPC_HDR + ERPC_HDR_BYTES) /* offset of the packet's data */
#define ERPC_OFF_TYPE     0  /* u8: request type */
#define ERPC_OFF_SIZE     1  /* u24: the message's size in bytes */
#define ERPC_OFF_SESSION  4  /* u16: the destination's session number */
#define ERPC_OFF_PKT      6  /* u16: bits 1:0 packet type, 15:2 packet number */
#define ERPC_OFF_REQNUM   8  /* u64: bits 43:0 request number, 47:44 magic */
#define ERPC_MAGIC        11ull /* eRPC's kPktHdrMagic */
#define ERPC_REQ_BITS     44

enum { ERPC_PKT_REQ = 0, ERPC_PKT_RFR = 1, ERPC_PKT_CR = 2, ERPC_PKT_RESP = 3 };

#define ERPC_UDP_PORT     31882 /* the server's datapath UDP port (docs/apps/erpc.md) */
#define ERPC_MTU          1500  /* IPv4 packet, as IceNIC's 1,514-byte frames allow */
#define ERPC_PKT_DATA     (ERPC_MTU - 20 - 8 - ERPC_HDR_BYTES) /* 1,456 bytes */
#define ERPC_MAX_MSG      4096
#define ERPC_SLOTS        8  /* eRPC kSessionReqWindow */
#define ERPC_CREDITS      8  /* eRPC kSessionCredits (the client enforces them) */
#ifndef ERPC_SESSIONS
#define ERPC_SESSIONS     2
#endif
#define ERPC_TX_BUFS      ICENIC_QUEUE_DEPTH
#define ERPC_RX_BUFS      ICENIC_QUEUE_DEPTH
#define ERPC_BUF_BYTES    1536

/* Message data sits at ERPC_SKEW past an 8-byte boundary everywhere (frames in 64-byte
 * aligned buffers put it at offset 58), so copies between frames and messages move
 * aligned 64-bit words (erpc_copy). */
#define ERPC_SKEW         (ERPC_DATA % 8)

/* A request handler: the response to request `req` (`len` bytes, of type `type`) written
 * at `resp` (room for ERPC_MAX_MSG bytes); returns the response's size. Both sit at
 * ERPC_SKEW past an 8-byte boundary. */
typedef uint32_t (*erpc_handler)(uint8_t type, const uint8_t *req, uint32_t len, uint8_t *resp);

/* One request slot: the request being reassembled and the response kept for resends. */
struct erpc_slot {
    uint64_t req_num;   /* the slot's current request */
    uint32_t req_size;
    uint32_t resp_size;
    uint16_t rx_pkts;   /* request packets received in order */
    uint8_t active;     /* a request has arrived in the slot */
    uint8_t has_resp;   /* the handler ran for req_num */
    uint8_t req_buf[ERPC_MAX_MSG + 8] __attribute__((aligned(8))); /* message at +ERPC_SKEW */
    uint8_t resp_buf[ERPC_MAX_MSG + 8] __attribute__((aligned(8)));
};

static inline uint8_t *erpc_req(struct erpc_slot *sl) { return sl->req_buf + ERPC_SKEW; }
static inline uint8_t *erpc_resp(struct erpc_slot *sl) { return sl->resp_buf + ERPC_SKEW; }

/* memcpy that moves 64-bit words when source and destination are equally misaligned
 * (message data always is, ERPC_SKEW): the runtime's memcpy copies bytes then. */
static inline void erpc_copy(uint8_t *d, const uint8_t *s, uint32_t n)
{
    if ((((uintptr_t)d ^ (uintptr_t)s) & 7) != 0) {
        memcpy(d, s, n);
        return;
    }
    for (; n > 0 && ((uintptr_t)d & 7); n--)
        *d++ = *s++;
    for (; n >= 8; n -= 8, d += 8, s += 8)
        *(uint64_t *)d = *(const uint64_t *)s;
    while (n--)
        *d++ = *s++;
}

struct erpc_session {
    uint8_t hdr[ERPC_HDR];  /* Ethernet/IPv4/UDP header of frames to the client */
    uint32_t ip_sum;        /* the IPv4 header's ones' complement sum without total length */
    uint8_t connected;
    struct erpc_slot slot[ERPC_SLOTS];
};

struct erpc_server {
    erpc_handler handler;
    uint64_t mac;
    uint32_t ip;
    uint64_t executed;                        /* handler runs */
    uint64_t tx_posted, tx_done, rx_next;     /* send requests, completions; next rx buffer */
    struct erpc_session sess[ERPC_SESSIONS];
    uint8_t tx[ERPC_TX_BUFS][ERPC_BUF_BYTES] __attribute__((aligned(64)));
    uint8_t rx[ERPC_RX_BUFS][ERPC_BUF_BYTES] __attribute__((aligned(64)));
};

/* ---- Little-endian header fields. The header starts 2 bytes past an 8-byte boundary
 * (offset 42), so it is read and written in aligned 16-bit pieces: Rocket traps on
 * misaligned accesses. ---------------------------------------------------------------- */
static inline uint32_t erpc_pkts(uint32_t size) { return size == 0 ? 1 : (size + ERPC_PKT_DATA - 1) / ERPC_PKT_DATA; }
static inline uint8_t *erpc_hdr(uint8_t *f) { return f + ERPC_HDR; }
static inline uint64_t erpc_le(const uint8_t *h, int off, int halves)
{
    uint64_t v = 0;
    for (int i = halves - 1; i >= 0; i--)
        v = (v << 16) | *(const uint16_t *)(h + off + 2 * i);
    return v;
}
static inline void erpc_put_le(uint8_t *h, int off, int halves, uint64_t v)
{
    for (int i = 0; i < halves; i++, v >>= 16)
        *(uint16_t *)(h + off + 2 * i) = (uint16_t)v;
}
static inline uint32_t erpc_size(const uint8_t *h) { return (uint32_t)erpc_le(h, 0, 2) >> 8; }
static inline uint16_t erpc_session_num(const uint8_t *h) { return (uint16_t)erpc_le(h, ERPC_OFF_SESSION, 1); }
static inline uint32_t erpc_pkt_type(const uint8_t *h) { return erpc_le(h, ERPC_OFF_PKT, 1) & 3; }
static inline uint32_t erpc_pkt_num(const uint8_t *h) { return (uint32_t)erpc_le(h, ERPC_OFF_PKT, 1) >> 2; }
static inline uint64_t erpc_req_num(const uint8_t *h) { return erpc_le(h, ERPC_OFF_REQNUM, 3) & ((1ull << ERPC_REQ_BITS) - 1); }
static inline uint64_t erpc_magic(const uint8_t *h) { return (erpc_le(h, ERPC_OFF_REQNUM, 3) >> ERPC_REQ_BITS) & 15; }

static inline void erpc_put_hdr(uint8_t *h, uint8_t type, uint32_t size, uint16_t sess, uint32_t pkt_type,
                                uint32_t pkt_num, uint64_t req_num)
{
    erpc_put_le(h, 0, 2, type | (size << 8));
    erpc_put_le(h, ERPC_OFF_SESSION, 1, sess);
    erpc_put_le(h, ERPC_OFF_PKT, 1, pkt_type | (pkt_num << 2));
    erpc_put_le(h, ERPC_OFF_REQNUM, 4, req_num | (ERPC_MAGIC << ERPC_REQ_BITS));
}

/* ---- Stop with a message naming what a frame got wrong (the program's self-check). -- */
static inline void erpc_fail(const char *what, uint64_t a)
{
    printf("erpc: %s (%lu)\n", what, (unsigned long)a);
    nanopu_exit(2);
}

/* ---- Send path: ERPC_TX_BUFS frame buffers, reused once their send has completed. -- */
static inline void erpc_reap(struct erpc_server *s)
{
    for (uint32_t n = icenic_send_comps(); n > 0; n--)
        s->tx_done += icenic_take_send_comp();
}

/* A free frame buffer (waiting for a send completion if all are in flight). */
static inline uint8_t *erpc_tx_buf(struct erpc_server *s)
{
    /* One completion at a time: the poll takes the rest (erpc_poll), so a full ring costs
     * this send one register read, not a read for every send in flight. */
    while (s->tx_posted - s->tx_done >= ERPC_TX_BUFS)
        s->tx_done += icenic_take_send_comp();
    return s->tx[s->tx_posted % ERPC_TX_BUFS];
}

/* IPv4 header checksum from the session's precomputed sum and the total length. */
static inline uint16_t erpc_ip_csum(uint32_t sum, uint32_t ip_len)
{
    sum += ip_len;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* Send the frame in `f` carrying `dlen` bytes of data after its eRPC header. */
static inline void erpc_tx_frame(struct erpc_server *s, struct erpc_session *ss, uint8_t *f, uint32_t dlen)
{
    uint32_t ip_len = 20 + 8 + ERPC_HDR_BYTES + dlen;
    uint64_t *d = (uint64_t *)f, *t = (uint64_t *)ss->hdr;
    for (int i = 0; i < ERPC_HDR / 8; i++)
        d[i] = t[i];
    *(uint16_t *)(f + 40) = *(uint16_t *)(ss->hdr + 40);
    ice_put16(f, ICE_FRAME_IP_LEN, (uint16_t)ip_len);
    ice_put16(f, ICE_FRAME_IP + 10, erpc_ip_csum(ss->ip_sum, ip_len));
    ice_put16(f, ICE_FRAME_UDP + 4, (uint16_t)(ip_len - 20));
    /* No space check: fewer than ERPC_TX_BUFS (the queue's depth) sends are incomplete
     * (erpc_tx_buf), so the send request queue has room without a register read. */
    icenic_send(f, ICE_FRAME_IP + ip_len);
    s->tx_posted++;
}

/* A packet with no data: an explicit credit return for request packet `pkt`. */
static inline void erpc_send_cr(struct erpc_server *s, uint16_t sn, uint8_t type, uint64_t req_num, uint32_t pkt)
{
    uint8_t *f = erpc_tx_buf(s);
    erpc_put_hdr(erpc_hdr(f), type, 0, sn, ERPC_PKT_CR, pkt, req_num);
    erpc_tx_frame(s, &s->sess[sn], f, 0);
}

/* Response packet `pkt` of the slot's response (copied: IceNIC sends one buffer a frame). */
static inline void erpc_send_resp(struct erpc_server *s, uint16_t sn, struct erpc_slot *sl, uint8_t type,
                                  uint32_t pkt)
{
    uint8_t *f = erpc_tx_buf(s);
    uint32_t off = pkt * ERPC_PKT_DATA, left = sl->resp_size - off;
    uint32_t n = left < ERPC_PKT_DATA ? left : ERPC_PKT_DATA;
    erpc_put_hdr(erpc_hdr(f), type, sl->resp_size, sn, ERPC_PKT_RESP, pkt, sl->req_num);
    erpc_copy(f + ERPC_DATA, erpc_resp(sl) + off, n);
    erpc_tx_frame(s, &s->sess[sn], f, n);
}

/* ---- Receive path ------------------------------------------------------------------ */

/* The first frame of a session fixes its client: the header of frames back to it. */
static inline void erpc_connect(struct erpc_server *s, struct erpc_session *ss, const uint8_t *f)
{
    uint8_t *h = ss->hdr;
    memcpy(h, f, ERPC_HDR);
    memcpy(h + ICE_FRAME_ETH_DST, f + ICE_FRAME_ETH_SRC, 6);
    for (int i = 0; i < 6; i++)
        h[ICE_FRAME_ETH_SRC + i] = (uint8_t)(s->mac >> (8 * (5 - i)));
    memcpy(h + ICE_FRAME_IP_SRC, f + ICE_FRAME_IP_DST, 4);
    memcpy(h + ICE_FRAME_IP_DST, f + ICE_FRAME_IP_SRC, 4);
    memcpy(h + ICE_FRAME_UDP, f + ICE_FRAME_UDP + 2, 2);
    memcpy(h + ICE_FRAME_UDP + 2, f + ICE_FRAME_UDP, 2);
    h[ICE_FRAME_IP + 10] = h[ICE_FRAME_IP + 11] = 0;
    h[ICE_FRAME_IP + 2] = h[ICE_FRAME_IP + 3] = 0;
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += ice_get16(h, ICE_FRAME_IP + i);
    ss->ip_sum = sum;
    ss->connected = 1;
}

/* 0 if the frame is an eRPC packet to this server, else what is wrong with it. */
static inline const char *erpc_check(struct erpc_server *s, const uint8_t *f, uint32_t len)
{
    if (len < ERPC_DATA || ice_get16(f, ICE_FRAME_ETH_TYPE) != 0x0800 || f[ICE_FRAME_IP] != 0x45 ||
        f[ICE_FRAME_IP + 9] != 17)
        return "not an IPv4/UDP frame long enough for an eRPC header";
    if ((uint32_t)ice_get16(f, ICE_FRAME_IP_LEN) + ICE_FRAME_IP != len || ice_get32(f, ICE_FRAME_IP_DST) != s->ip ||
        ice_get16(f, ICE_FRAME_UDP + 2) != ERPC_UDP_PORT)
        return "IPv4 length, address or UDP port wrong";
    const uint8_t *h = f + ERPC_HDR;
    if (erpc_magic(h) != ERPC_MAGIC || erpc_session_num(h) >= ERPC_SESSIONS || erpc_size(h) > ERPC_MAX_MSG)
        return "bad magic, session number or message size";
    uint32_t pkt = erpc_pkt_num(h), size = erpc_size(h), type = erpc_pkt_type(h);
    if (type == ERPC_PKT_RFR)
        return len == ERPC_DATA ? 0 : "RFR with data";
    if (type != ERPC_PKT_REQ || pkt >= erpc_pkts(size))
        return "not a request packet of its message";
    uint32_t off = pkt * ERPC_PKT_DATA, want = size - off < ERPC_PKT_DATA ? size - off : ERPC_PKT_DATA;
    return len - ERPC_DATA == want ? 0 : "request packet's data length disagrees with the message size";
}

/* The handler ran for the slot's request: respond with the first packet. */
static inline void erpc_execute(struct erpc_server *s, uint16_t sn, struct erpc_slot *sl, uint8_t type,
                                const uint8_t *req)
{
    sl->resp_size = s->handler(type, req, sl->req_size, erpc_resp(sl));
    if (sl->resp_size > ERPC_MAX_MSG)
        erpc_fail("handler's response longer than ERPC_MAX_MSG", sl->resp_size);
    sl->has_resp = 1;
    s->executed++;
    erpc_send_resp(s, sn, sl, type, 0);
}

/* A request packet already received (the client went back): answer it again. The
 * response is resent, never recomputed: each request runs once (eRPC's server). */
static inline void erpc_duplicate(struct erpc_server *s, uint16_t sn, struct erpc_slot *sl, const uint8_t *h,
                                  const uint8_t *data)
{
    uint32_t pkt = erpc_pkt_num(h), last = erpc_pkts(sl->req_size) - 1;
    if (pkt < last)
        return erpc_send_cr(s, sn, h[ERPC_OFF_TYPE], sl->req_num, pkt);
#ifdef ERPC_MUTANT_NO_DEDUP
    /* Mutation check only (erpc_server_nodedup.c): run the handler again. */
    return erpc_execute(s, sn, sl, h[ERPC_OFF_TYPE], last == 0 ? data : erpc_req(sl));
#else
    (void)data;
    erpc_send_resp(s, sn, sl, h[ERPC_OFF_TYPE], 0);
#endif
}

/* A request packet: reassemble in order (later ones are dropped, as eRPC's server does),
 * a credit return for all but the last, the handler and the response after the last. */
static inline void erpc_on_req(struct erpc_server *s, uint16_t sn, const uint8_t *h, const uint8_t *data)
{
    uint64_t rn = erpc_req_num(h);
    struct erpc_slot *sl = &s->sess[sn].slot[rn % ERPC_SLOTS];
    if (sl->active && rn < sl->req_num)
        return; /* an older request of the slot: its client has its response */
    if (!sl->active || rn > sl->req_num) {
        sl->active = 1, sl->req_num = rn, sl->rx_pkts = 0, sl->has_resp = 0;
        sl->req_size = erpc_size(h);
    }
    uint32_t pkt = erpc_pkt_num(h), npkts = erpc_pkts(sl->req_size);
    if (pkt < sl->rx_pkts)
        return erpc_duplicate(s, sn, sl, h, data);
    if (pkt > sl->rx_pkts)
        return;
    sl->rx_pkts++;
    if (npkts == 1) /* one packet: the handler reads it in place (eRPC's zero-copy case) */
        return erpc_execute(s, sn, sl, h[ERPC_OFF_TYPE], data);
    uint32_t off = pkt * ERPC_PKT_DATA, left = sl->req_size - off;
    erpc_copy(erpc_req(sl) + off, data, left < ERPC_PKT_DATA ? left : ERPC_PKT_DATA);
    if (pkt + 1 < npkts)
        return erpc_send_cr(s, sn, h[ERPC_OFF_TYPE], rn, pkt);
    erpc_execute(s, sn, sl, h[ERPC_OFF_TYPE], erpc_req(sl));
}

/* A request for response packet `pkt` of the slot's current request. */
static inline void erpc_on_rfr(struct erpc_server *s, uint16_t sn, const uint8_t *h)
{
    uint64_t rn = erpc_req_num(h);
    struct erpc_slot *sl = &s->sess[sn].slot[rn % ERPC_SLOTS];
    if (sl->active && sl->req_num == rn && sl->has_resp && erpc_pkt_num(h) < erpc_pkts(sl->resp_size))
        erpc_send_resp(s, sn, sl, h[ERPC_OFF_TYPE], erpc_pkt_num(h));
}

/* One received frame of `len` bytes. */
static inline void erpc_on_frame(struct erpc_server *s, const uint8_t *f, uint32_t len)
{
    const char *bad = erpc_check(s, f, len);
    if (bad)
        erpc_fail(bad, len);
    const uint8_t *h = f + ERPC_HDR;
    uint16_t sn = erpc_session_num(h);
    if (!s->sess[sn].connected)
        erpc_connect(s, &s->sess[sn], f);
    if (erpc_pkt_type(h) == ERPC_PKT_REQ)
        erpc_on_req(s, sn, h, f + ERPC_DATA);
    else
        erpc_on_rfr(s, sn, h);
}

/* ---- The event loop ---------------------------------------------------------------- */
static inline void erpc_server_init(struct erpc_server *s, erpc_handler handler)
{
    s->handler = handler;
    s->mac = icenic_mac();
    s->ip = nanopu_node_ip();
    for (int i = 0; i < ERPC_RX_BUFS; i++)
        icenic_post_recv(s->rx[i]);
}

/* Process one received frame if there is one (its buffer is posted again once
 * processed); returns its length, 0 if none. One register read a poll: taking a receive
 * completion answers 0 when there is none (the frame's length otherwise), so the counts
 * need not be read first; each register read is a PCIe round trip on the PCIe variant.
 * A poll that finds no frame takes one send completion, if a send is outstanding, as a
 * Linux driver cleans its transmit ring in its NAPI poll: taking them only once all
 * ERPC_TX_BUFS (64) are in use would put 64 register reads on one request's path. */
static inline uint32_t erpc_poll(struct erpc_server *s)
{
    uint32_t len = icenic_take_recv_comp();
    if (len == 0) {
        if (s->tx_done < s->tx_posted)
            s->tx_done += icenic_take_send_comp();
        return 0;
    }
    uint8_t *f = s->rx[s->rx_next % ERPC_RX_BUFS];
    erpc_on_frame(s, f, len);
    icenic_post_recv(f);
    s->rx_next++;
    return len;
}

/* Wait until every frame sent has left memory. */
static inline void erpc_flush(struct erpc_server *s)
{
    while (s->tx_done < s->tx_posted)
        erpc_reap(s);
}

#endif /* ERPC_H */
