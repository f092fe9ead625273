/*
 * tcp_dctcp.c - ECN (RFC 3168) and DCTCP's congestion control (RFC 8257; Alizadeh et al.,
 * "Data Center TCP (DCTCP)", SIGCOMM 2010), in builds with -DTCP_DCTCP only: every other
 * build of the stack is Reno/NewReno and compiles none of this (docs/apps/tcp.md "DCTCP").
 *
 * - Negotiation (RFC 3168 6.1.1): our SYN carries ECE and CWR; a SYN-ACK with ECE and
 *   without CWR agrees. A listener answers a SYN carrying both with a SYN-ACK carrying ECE.
 *   A peer without ECN (smoltcp in the tests) answers neither way, and the connection is
 *   plain Reno/NewReno: no ECT, no ECE, no alpha.
 * - ECT(0) on new data segments only: not on SYNs, pure ACKs or retransmissions (RFC 3168
 *   6.1.4, 6.1.5).
 * - The receiver echoes CE as DCTCP does (RFC 8257 3.2): DCTCP.CE follows the CE code
 *   point of each arriving data segment, every ACK carries ECE = DCTCP.CE, and when the
 *   state changes an ACK owed for the segments before is sent at once with the old value,
 *   then the new segment is acknowledged at once with the new one (so delayed ACKs do not
 *   blur which bytes were marked).
 * - The sender (RFC 8257 3.3, 3.4): bytes acknowledged and bytes acknowledged with ECE over
 *   an observation window of about one RTT (until the ACK passes the window's end, then the
 *   window ends at SND.NXT); DCTCP.Alpha = (1 - g) Alpha + g F with g = 1/16, F the marked
 *   fraction; on ECE, at most once per window of data (RFC 3168 6.1.2), cwnd = cwnd (1 -
 *   Alpha / 2), ssthresh = cwnd, and CWR on the next new data segment (RFC 3168 6.1.2).
 *   Loss is handled as Reno/NewReno does (tcp_cc.c); no ECE cut during loss recovery.
 * Alpha starts at 1 (1024/1024), the conservative initial value RFC 8257 section 4
 * discusses (and Linux's default, dctcp_alpha_on_init). Fixed point: 1/1024 units.
 */
#include "tcp_int.h"

#ifdef TCP_DCTCP

#define ECN_MASK 3
#define ECT0     2  /* RFC 3168 5: ECT(0) */
#define CE       3
#define ALPHA_ONE 1024u
#define G_SHIFT   4 /* g = 1/16 (RFC 8257 3.3; the paper's section 3.3) */

/* The peer's SYN (or SYN-ACK) arrived: was ECN agreed (RFC 3168 6.1.1)? */
void tcp_dctcp_syn_in(struct tcp_conn *c, const struct tcp_seg *s)
{
    int syn_ack = c->state == TS_SYN_SENT && (s->flags & F_ACK);
    uint8_t want = syn_ack ? F_ECE : F_ECE | F_CWR;
    c->ecn_ok = (s->flags & (F_ECE | F_CWR)) == want;
    c->alpha = ALPHA_ONE;
    c->window_end = c->snd_nxt;
    c->cwr_end = c->snd_una;
    tcp_st.ecn_conns += (uint64_t)c->ecn_ok;
}

/* The ECN flags of a segment we send: the setup flags on a SYN; ECE while the receiver's
 * DCTCP.CE is set; CWR on the first new data after a cut. */
uint8_t tcp_dctcp_flags(struct tcp_conn *c, uint32_t seq, uint8_t flags, uint32_t len)
{
    if (flags & F_SYN)
        return c->state == TS_SYN_SENT ? F_ECE | F_CWR : c->ecn_ok ? F_ECE : 0;
    if (!c->ecn_ok)
        return 0;
    uint8_t f = c->ce_state ? F_ECE : 0;
    if (c->cwr_pending && len && SEQ_GE(seq, c->snd_max)) {
        c->cwr_pending = 0;
        f |= F_CWR;
    }
    return f;
}

/* Mark frame `f` ECT(0) if it carries new data of an ECN connection, and fix the IPv4
 * header checksum. */
void tcp_dctcp_ect(uint8_t *f, const struct tcp_conn *c, uint32_t seq, uint8_t flags, uint32_t len)
{
    if (!c->ecn_ok || !len || (flags & F_SYN) || SEQ_LT(seq, c->snd_max))
        return;
    uint8_t *ip = f + ICE_FRAME_IP;
    ip[1] = (uint8_t)((ip[1] & ~ECN_MASK) | ECT0);
    ice_put16(ip, 10, 0);
    ice_put16(ip, 10, ice_ip_checksum(ip));
}

/* A data segment arrived (before its bytes are taken): DCTCP's receiver state machine
 * (RFC 8257 3.2). */
void tcp_dctcp_data_in(struct tcp_conn *c, const struct tcp_seg *s)
{
    if (!c->ecn_ok)
        return;
    int ce = s->ecn == CE;
    tcp_st.ce_in += ce ? (uint64_t)s->segs : 0; /* marked segments, coalesced or not */
    if (ce == c->ce_state)
        return;
    if (c->unacked_segs)
        tcp_send_ack(c); /* the segments before this one, with the old ECE */
    c->ce_state = ce;
    c->ack_now = 1;      /* this one at once, with the new ECE */
}

/* The observation window ended: fold its marked fraction into alpha (RFC 8257 3.3 steps
 * 4-8). */
static void update_alpha(struct tcp_conn *c)
{
    uint32_t f = c->dc_acked ? (uint32_t)(((uint64_t)c->dc_marked * ALPHA_ONE) / c->dc_acked) : 0;
    c->alpha = c->alpha - (c->alpha >> G_SHIFT) + (f >> G_SHIFT);
    c->window_end = c->snd_nxt;
    c->dc_acked = c->dc_marked = 0;
    tcp_st.alpha_1024 = c->alpha;
}

/* cwnd = cwnd (1 - alpha / 2), at least two segments (RFC 5681 3.1's floor); ssthresh
 * follows, so the window grows again in congestion avoidance (RFC 8257 3.4). */
static void cut(struct tcp_conn *c)
{
    uint32_t w = c->cwnd - (uint32_t)(((uint64_t)c->cwnd * c->alpha) / (2 * ALPHA_ONE));
    c->cwnd = w > 2u * c->mss ? w : 2u * c->mss;
    c->ssthresh = c->cwnd;
    c->acked_ca = 0;
    c->cwr_end = c->snd_max;
    c->cwr_pending = 1;
    tcp_st.ecn_reductions++;
}

/* An ACK that acknowledged `acked` new bytes (snd_una already advanced). */
void tcp_dctcp_ack_in(struct tcp_conn *c, const struct tcp_seg *s, uint32_t acked)
{
    if (!c->ecn_ok)
        return;
    int ece = (s->flags & F_ECE) != 0;
    tcp_st.ece_in += (uint64_t)ece;
    c->dc_acked += acked;
    c->dc_marked += ece ? acked : 0;
    if (SEQ_GT(c->snd_una, c->window_end))
        update_alpha(c);
    if (ece && !c->in_recovery && SEQ_GE(c->snd_una, c->cwr_end))
        cut(c);
}

void tcp_report_dctcp(const struct tcp_stats *s)
{
    printf("dctcp: ecn_conns=%lu ce_in=%lu ece_in=%lu ecn_reductions=%lu alpha_1024=%lu\n",
           (unsigned long)s->ecn_conns, (unsigned long)s->ce_in, (unsigned long)s->ece_in,
           (unsigned long)s->ecn_reductions, (unsigned long)s->alpha_1024);
}

#endif /* TCP_DCTCP */
