/*
 * tcp_int.h - the TCP's internals, shared by its files (docs/apps/tcp.md "Code"):
 *   tcp_seg.c  segment build and parse, checksum (RFC 9293 3.1, RFC 1071)
 *   tcp_in.c   the connection state machine on input (RFC 9293 3.10.7)
 *   tcp_out.c  send buffer, output, retransmission timer (RFC 6298)
 *   tcp_rcv.c  receive buffer, reassembly, window scaling (RFC 7323)
 *   tcp_cc.c   congestion control: slow start, avoidance (RFC 5681), NewReno (RFC 6582)
 *   tcp_dctcp.c  ECN (RFC 3168) and DCTCP (RFC 8257), built with -DTCP_DCTCP only
 *   tcp_ack.c  delayed ACKs (RFC 1122 4.2.3.2, RFC 5681 4.2)
 *   tcp_sack.c selective acknowledgments (RFC 2018), range sets
 *   tcp_nic.c  frames in and out of IceNIC (or ZeroNIC's control queue), the clock
 *   tcp_zeronic.c  ZeroNIC's data path: regions, flows, pieces, payload posting, tcp_zc.h
 *              (built with -DTCP_ZERONIC; docs/models/zeronic.md "Software")
 *   tcp_gro.c  in-order segments of one poll coalesced, as Linux's GRO
 *   tcp_prof.c per-region cycle counts (-DTCP_PROF only; tcp_prof.h, docs/apps/tcp.md)
 *   tcp_api.c  connections, timers and the sockets-like API
 */
#ifndef TCP_INT_H
#define TCP_INT_H

#include "tcp.h"
#include "icenic.h"
#include "tcp_prof.h"

/* Connection slots (listeners count): 4 unless a program's build asks for more
 * (-DTCP_MAX_CONN=N; each slot holds TCP_SNDBUF + TCP_RCVBUF bytes). */
#ifndef TCP_MAX_CONN
#define TCP_MAX_CONN  4
#endif
#define TCP_MSS       1460            /* 1,500-byte IPv4 MTU less IPv4 and TCP headers */
#define TCP_SNDBUF    (64u << 10)
#define TCP_RCVBUF    (256u << 10)    /* more than 65,535: needs window scaling */
#define TCP_RCV_SHIFT 3               /* RFC 7323 2.3: 256 KiB >> 3 fits 16 bits */
/* The window field of our SYN: never scaled (RFC 7323 2.2), so at most 65,535. */
#define TCP_SYN_WND   (TCP_RCVBUF > 65535 ? 65535u : TCP_RCVBUF)
#define TCP_OOO_MAX   8               /* out-of-order ranges held (each a SACK block) */
#define TCP_HDR       20
#define TCP_FRAME_TCP (ICE_FRAME_IP + 20)

/* Sequence-space comparisons (RFC 9293 3.4: arithmetic modulo 2^32). */
#define SEQ_LT(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) < 0)
#define SEQ_LE(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) <= 0)
#define SEQ_GT(a, b) SEQ_LT(b, a)
#define SEQ_GE(a, b) SEQ_LE(b, a)

enum { F_FIN = 1, F_SYN = 2, F_RST = 4, F_PSH = 8, F_ACK = 16, F_URG = 32, F_ECE = 64, F_CWR = 128 };

/* RFC 9293 3.3.2 */
enum tcp_state {
    TS_FREE, TS_CLOSED, TS_LISTEN, TS_SYN_SENT, TS_SYN_RCVD, TS_ESTABLISHED, TS_FIN_WAIT_1,
    TS_FIN_WAIT_2, TS_CLOSE_WAIT, TS_CLOSING, TS_LAST_ACK, TS_TIME_WAIT
};

/* A range of sequence numbers, [start, end). */
struct tcp_range { uint32_t start, end; };

/* A parsed segment: header fields, options, payload. */
struct tcp_seg {
    uint32_t src_ip, dst_ip;
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t wnd;
    int mss;      /* MSS option, or -1 */
    int wscale;   /* window scale option, or -1 */
    int sack_ok;  /* SACK-permitted option */
    int nsack;    /* SACK blocks (RFC 2018 3) */
    struct tcp_range sack[4];
    const uint8_t *data;
    uint32_t len;
#ifdef TCP_DCTCP
    uint8_t ecn;  /* the IPv4 header's ECN field (RFC 3168 5) */
    uint32_t segs; /* segments coalesced into this one (tcp_gro.c; Linux's NAPI_GRO_CB count) */
#endif
    /* when data is 0: the payload bytes already in the receive ring, [pl_seq, pl_seq +
     * pl_len), placed by ZeroNIC or copied there by tcp_gro.c */
    uint32_t pl_seq, pl_len;
};


struct tcp_conn {
    enum tcp_state state;
    uint32_t rip;
    uint16_t lport, rport;
    int listener;            /* for a passive open: the listener's descriptor; else -1 */
    int accepted;            /* handed to the app by tcp_accept */
    int error;               /* TCP_ERESET once reset or timed out */
    /* Send side (RFC 9293 3.3.1) */
    uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, snd_wl1, snd_wl2;
    uint8_t snd_shift, rcv_shift;
    int rcv_shift_offered;   /* our SYN carries (or will carry) the window scale option */
    uint16_t mss;            /* what we may send per segment */
    uint8_t *sbuf;           /* TCP_SNDBUF bytes: data from snd_una's first data byte */
    uint32_t sbuf_len;
    int fin_queued;          /* the app shut down: our FIN follows the buffered data */
    /* Congestion control (RFC 5681, RFC 6582) */
    uint32_t cwnd, ssthresh, recover, acked_ca;
    int dupacks, in_recovery, partial_seen;
    /* RTT and RTO (RFC 6298), cycles */
    uint64_t srtt, rttvar, rto, rto_at, rtt_start;
    uint32_t rtt_seq, timeouts;
    int rtt_timing, rtt_valid;
    /* Receive side */
    uint32_t irs, rcv_nxt, rcv_read, rcv_adv;
    uint8_t *rbuf;           /* TCP_RCVBUF bytes, byte s at (s - irs - 1) % TCP_RCVBUF */
    struct tcp_range ooo[TCP_OOO_MAX];
    int nooo;
    uint32_t last_ooo_start;  /* the most recent out-of-order segment (RFC 2018 4) */
    /* SACK (RFC 2018): negotiated; the peer's SACKed ranges above snd_una; the highest
     * sequence resent in this recovery */
    int sack_ok, sack_offered;
    struct tcp_range sacked[TCP_OOO_MAX];
    int nsacked;
    uint32_t high_rxt;
    int fin_seen;            /* the peer's FIN arrived at seq fin_seq (maybe ahead) */
    uint32_t fin_seq;
    int fin_rcvd;            /* rcv_nxt passed the peer's FIN: end of stream */
    /* ACK scheduling (RFC 5681 4.2) */
    int ack_now, unacked_segs;
    uint64_t delack_at, tw_at;
#ifdef TCP_DCTCP
    /* ECN (RFC 3168) and DCTCP (RFC 8257 3): negotiated; the receiver's DCTCP.CE; the
     * sender's DCTCP.Alpha (in 1/1024), bytes acknowledged and marked in the observation
     * window ending at window_end; cwnd was last cut with cwr_end outstanding; CWR owed */
    int ecn_ok, ce_state, cwr_pending;
    uint32_t alpha, dc_acked, dc_marked, window_end, cwr_end;
#endif
#ifdef TCP_ZERONIC
    /* the receive ring's pieces posted to ZeroNIC cover [zn_lo, zn_hi) */
    uint32_t zn_lo, zn_hi;
#endif
};

/* Copy `n` bytes a 64-bit word at a time whatever the pointers' alignment. The runtime's
 * memcpy (sw/lib/string.c) copies unaligned buffers a byte at a time and a misaligned load
 * costs extra cycles (`misaligned_penalty`, docs/models/node.md), so a source whose offset
 * differs from the destination's mod 8 is read as aligned words and shifted into place
 * (little-endian), as word-at-a-time memcpy implementations do. Ring offsets lose their
 * alignment as soon as a segment shorter than the MSS arrives (after losses, at the end of
 * a write). The first and last aligned words read may hold up to 7 bytes before and after
 * the source: an aligned word never crosses a page. */
static inline void tcp_copy_shifted(uint64_t *d, const uint8_t *s, uint32_t words)
{
    const uint64_t *w = (const uint64_t *)((uintptr_t)s & ~(uintptr_t)7);
    unsigned sh = ((uintptr_t)s & 7) * 8;
    uint64_t lo = *w++;
    for (; words; words--) {
        uint64_t hi = *w++; /* each source word loaded once: a store through d may alias */
        *d++ = (lo >> sh) | (hi << (64 - sh));
        lo = hi;
    }
}

static inline void tcp_copy(uint8_t *d, const uint8_t *s, uint32_t n)
{
    for (; n && ((uintptr_t)d & 7); n--)
        *d++ = *s++;
    if ((uintptr_t)s & 7)
        tcp_copy_shifted((uint64_t *)d, s, n / 8);
    else
        for (uint32_t i = 0; i < n / 8; i++)
            ((uint64_t *)d)[i] = ((const uint64_t *)s)[i];
    d += n & ~7u, s += n & ~7u, n &= 7;
    while (n--)
        *d++ = *s++;
}

extern struct tcp_conn tcp_conns[TCP_MAX_CONN];
extern struct tcp_stats tcp_st;

/* tcp_nic.c */
/* The node's own addresses, read once at tcp_nic_init, as Linux keeps a device's address
 * in memory (dev->dev_addr) and the interface's in its in_ifaddr list, instead of reading
 * the NIC's MAC register and the boot words for every segment (docs/apps/tcp.md
 * "Profile"). */
extern uint64_t tcp_my_mac;
extern uint32_t tcp_my_ip;
#define TCP_MY_MAC() tcp_my_mac
#define TCP_MY_IP()  tcp_my_ip
uint64_t tcp_now(void);
uint64_t tcp_us(uint32_t us);
uint8_t *tcp_tx_buf(void);
uint8_t *tcp_tx_copy(const uint8_t *prev, uint32_t hdr);
void tcp_tx(uint8_t *f, uint32_t len);
void tcp_nic_init(void);
void tcp_nic_poll(void);
void tcp_nic_sleep(uint64_t until);

/* tcp_zeronic.c (TCP_ZERONIC builds only) */
void tcp_nic_flow_open(struct tcp_conn *c);
void tcp_nic_consumed(struct tcp_conn *c);
void tcp_nic_payload(const struct tcp_conn *c, uint32_t seq, uint32_t len);
uint32_t tcp_nic_contig(const struct tcp_conn *c, uint32_t seq, uint32_t len);
void tcp_nic_parse_meta(const uint8_t *f, uint32_t *len, struct tcp_seg *s, int *ok);

/* tcp_gro.c */
struct tcp_seg *tcp_gro_slot(void);
void tcp_gro_receive(struct tcp_seg *s);
void tcp_gro_flush(void);

/* tcp_seg.c */
int tcp_parse(const uint8_t *f, uint32_t len, struct tcp_seg *s);
void tcp_emit(struct tcp_conn *c, uint32_t seq, uint8_t flags, uint32_t len);
/* around a tcp_output pass, whose segments may share headers */
void tcp_gso_begin(void);
void tcp_gso_end(void);
void tcp_emit_rst(const struct tcp_seg *s);

/* tcp_in.c */
void tcp_input(const struct tcp_seg *s);

/* tcp_out.c */
void tcp_output(struct tcp_conn *c);
void tcp_send_ack(struct tcp_conn *c);
void tcp_rto_timer(struct tcp_conn *c);
void tcp_rto_sample(struct tcp_conn *c, uint32_t ack);
void tcp_rto_restart(struct tcp_conn *c);
void tcp_sbuf_drop(struct tcp_conn *c, uint32_t acked);
uint32_t tcp_fin_seq(const struct tcp_conn *c);
void tcp_retransmit_first(struct tcp_conn *c);
uint32_t tcp_retransmit_at(struct tcp_conn *c, uint32_t seq, uint32_t room);

/* tcp_rcv.c */
void tcp_rcv_data(struct tcp_conn *c, uint32_t seq, const uint8_t *data, uint32_t len);
void tcp_rcv_copy(struct tcp_conn *c, uint32_t seq, const uint8_t *data, uint32_t len);
uint32_t tcp_rcv_window(const struct tcp_conn *c);
uint16_t tcp_wnd_field(struct tcp_conn *c);
uint32_t tcp_rcv_read(struct tcp_conn *c, uint8_t *buf, uint32_t len);

/* tcp_sack.c */
int tcp_ranges_add(struct tcp_range *r, int *n, uint32_t start, uint32_t end);
uint32_t tcp_ranges_below(struct tcp_range *r, int *n, uint32_t seq);
int tcp_sack_option(const struct tcp_conn *c, uint8_t *o);
int tcp_sack_option_len(const struct tcp_conn *c);
void tcp_sack_input(struct tcp_conn *c, const struct tcp_seg *s);
int tcp_sack_next_hole(struct tcp_conn *c);

/* tcp_cc.c */
void tcp_cc_init(struct tcp_conn *c);
void tcp_cc_ack(struct tcp_conn *c, uint32_t acked);
int tcp_cc_dupack(struct tcp_conn *c);
void tcp_cc_timeout(struct tcp_conn *c);
uint32_t tcp_flight(const struct tcp_conn *c);

/* tcp_dctcp.c (TCP_DCTCP builds only) */
void tcp_dctcp_syn_in(struct tcp_conn *c, const struct tcp_seg *s);
uint8_t tcp_dctcp_flags(struct tcp_conn *c, uint32_t seq, uint8_t flags, uint32_t len);
void tcp_dctcp_ect(uint8_t *f, const struct tcp_conn *c, uint32_t seq, uint8_t flags, uint32_t len);
void tcp_dctcp_data_in(struct tcp_conn *c, const struct tcp_seg *s);
void tcp_dctcp_ack_in(struct tcp_conn *c, const struct tcp_seg *s, uint32_t acked);

/* tcp_ack.c */
void tcp_ack_segment(struct tcp_conn *c, uint32_t len, int in_order);
void tcp_ack_timer(struct tcp_conn *c);
void tcp_ack_sent(struct tcp_conn *c);

/* tcp_api.c */
uint64_t tcp_next_timer(void);
struct tcp_conn *tcp_find(uint32_t rip, uint16_t rport, uint16_t lport);
struct tcp_conn *tcp_find_listener(uint16_t lport);
struct tcp_conn *tcp_new_conn(void);
void tcp_set_state(struct tcp_conn *c, enum tcp_state st);
void tcp_reset_conn(struct tcp_conn *c);

#endif /* TCP_INT_H */
