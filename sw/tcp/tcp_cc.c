/*
 * tcp_cc.c - congestion control: Reno's slow start and congestion avoidance (RFC 5681 3.1),
 * fast retransmit and NewReno's fast recovery (RFC 5681 3.2, RFC 6582 3.2), the loss
 * window after a timeout (RFC 5681 3.1 eq. 4, RFC 6298 5.5).
 */
#include "tcp_int.h"

/* Bytes sent and not yet acknowledged (RFC 5681 2 FlightSize). */
uint32_t tcp_flight(const struct tcp_conn *c) { return c->snd_nxt - c->snd_una; }

/* Initial window: min(10 * MSS, max(2 * MSS, 14600)) (RFC 6928 2); ssthresh arbitrarily
 * high (RFC 5681 3.1). */
void tcp_cc_init(struct tcp_conn *c)
{
    uint32_t iw = 2 * c->mss > 14600 ? 2 * c->mss : 14600;
    c->cwnd = 10 * c->mss < iw ? 10 * c->mss : iw;
    c->ssthresh = 0x7fffffff;
    c->recover = c->iss;
    c->dupacks = c->in_recovery = c->partial_seen = 0;
    c->acked_ca = 0;
}

/* ssthresh = max(FlightSize / 2, 2 * SMSS) (RFC 5681 3.1 eq. 4). */
static uint32_t half_flight(const struct tcp_conn *c)
{
    uint32_t h = tcp_flight(c) / 2;
    return h > 2u * c->mss ? h : 2u * c->mss;
}

/* An ACK outside recovery acknowledged `acked` new bytes: slow start adds them all up to
 * ssthresh (RFC 5681 3.1 eq. 2 with RFC 3465's L unlimited, as Linux); congestion avoidance adds SMSS once per cwnd of
 * bytes acknowledged (RFC 5681 3.1, the byte-counting form). */
static void grow(struct tcp_conn *c, uint32_t acked)
{
    if (c->cwnd < c->ssthresh) {
        /* A stretch ACK (the peer coalesced, tcp_gro.c) counts every segment it covers,
         * up to ssthresh, as Linux's tcp_slow_start does (RFC 3465 3.2 leaves L open
         * beyond 2 SMSS; Linux takes L unlimited). */
        c->cwnd += acked;
        if (c->cwnd > c->ssthresh)
            c->cwnd = c->ssthresh;
        return;
    }
    c->acked_ca += acked;
    if (c->acked_ca >= c->cwnd) {
        c->acked_ca -= c->cwnd;
        c->cwnd += c->mss;
    }
}

/* A partial ACK in recovery (RFC 6582 3.2 step 5): resend the first unacknowledged
 * segment, deflate cwnd by what was acknowledged and add back one SMSS if that was at
 * least one SMSS; restart the timer on the first partial ACK only (the "Impatient" variant
 * of RFC 6582 4). */
static void partial_ack(struct tcp_conn *c, uint32_t acked)
{
    tcp_st.partial_ack_retransmits++;
    tcp_retransmit_first(c);
    c->cwnd = c->cwnd > acked ? c->cwnd - acked : 0;
    if (acked >= c->mss)
        c->cwnd += c->mss;
    if (c->cwnd < c->mss)
        c->cwnd = c->mss;
    if (!c->partial_seen)
        tcp_rto_restart(c);
    c->partial_seen = 1;
}

/* A full ACK ends recovery: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS) (RFC 6582
 * 3.2 step 6, option 1). */
static void full_ack(struct tcp_conn *c)
{
    uint32_t f = tcp_flight(c);
    uint32_t w = (f > c->mss ? f : c->mss) + c->mss;
    c->cwnd = w < c->ssthresh ? w : c->ssthresh;
    c->in_recovery = 0;
}

/* An ACK that acknowledged `acked` new bytes (snd_una already advanced). */
void tcp_cc_ack(struct tcp_conn *c, uint32_t acked)
{
    c->dupacks = 0;
    if (!c->in_recovery) {
        grow(c, acked);
        return;
    }
    if (SEQ_GE(c->snd_una, c->recover))
        full_ack(c);
    else
        partial_ack(c, acked);
}

/* A duplicate ACK (RFC 5681 2). Returns 1 if it triggered a fast retransmit. */
int tcp_cc_dupack(struct tcp_conn *c)
{
    tcp_st.dupacks_in++;
    if (!tcp_cfg.newreno)
        return 0;
    if (c->in_recovery) {
        /* A segment left the network: with SACK, resend the next hole for it; else
         * inflate cwnd by one segment (RFC 6582 3.2 step 3) so new data goes out. */
        if (!tcp_sack_next_hole(c))
            c->cwnd += c->mss;
        return 0;
    }
    if (++c->dupacks != 3)
        return 0;
    /* RFC 6582 3.2 step 2: only if the ACK covers more than recover, the highest sequence
     * number sent when the last recovery or timeout began (ours is one past it). */
    if (SEQ_LT(c->snd_una, c->recover))
        return 0;
    c->ssthresh = half_flight(c);
    c->recover = c->snd_max;
    c->in_recovery = 1;
    c->partial_seen = 0;
    c->high_rxt = c->snd_una;
    tcp_st.fast_retransmits++;
    tcp_retransmit_first(c);
    c->cwnd = c->ssthresh + 3u * c->mss;
    return 1;
}

/* The retransmission timer expired (RFC 5681 3.1 eq. 4; RFC 6582 3.2 step 1: recover is
 * the highest sequence sent; cwnd becomes the loss window, one SMSS). */
void tcp_cc_timeout(struct tcp_conn *c)
{
    c->ssthresh = half_flight(c);
    c->cwnd = c->mss;
    c->recover = c->snd_max;
    c->in_recovery = 0;
    c->dupacks = 0;
    c->acked_ca = 0;
}
