/*
 * tcp_out.c - the send side: what may be sent now (the lesser of the peer's window and
 * cwnd, RFC 5681 3.1; sender silly-window avoidance, RFC 9293 3.8.6.2.1), our FIN after the
 * data, and the retransmission timer with RTT estimation per RFC 6298 (Karn's rule: no
 * sample from a retransmitted segment, RFC 6298 3), exponential backoff (5.5), and
 * zero-window probes (RFC 9293 3.8.6.1).
 */
#include "tcp_int.h"

/* Our FIN's sequence number: right after the buffered data (until the FIN is acknowledged). */
uint32_t tcp_fin_seq(const struct tcp_conn *c) { return c->snd_una + c->sbuf_len; }

/* Note a segment sent from `seq` to `end`: a resend, or new data whose RTT may be timed. */
static void sent(struct tcp_conn *c, uint32_t seq, uint32_t end)
{
    if (SEQ_LT(seq, c->snd_max))
        tcp_st.segs_retransmitted++;
    else if (!c->rtt_timing) {
        c->rtt_timing = 1;
        c->rtt_seq = end;
        c->rtt_start = tcp_now();
    }
    if (SEQ_GT(end, c->snd_max))
        c->snd_max = end;
    if (!c->rto_at)
        tcp_rto_restart(c); /* RFC 6298 5.1 */
}

/* Send one segment from snd_nxt: up to `room` bytes of data, and the FIN if it follows. */
static void send_one(struct tcp_conn *c, uint32_t room)
{
    uint32_t end = tcp_fin_seq(c), len = end - c->snd_nxt, mss = c->mss - (uint32_t)tcp_sack_option_len(c);
    if (len > room)
        len = room;
    if (len > mss)
        len = mss; /* options and data within the MSS (RFC 9293 3.7.1) */
#ifdef TCP_ZERONIC
    len = tcp_nic_contig(c, c->snd_nxt, len); /* a payload is one run of the send ring */
#endif
    uint8_t flags = c->snd_nxt + len == end ? F_PSH : 0;
    int fin = c->fin_queued && c->snd_nxt + len == end;
    tcp_emit(c, c->snd_nxt, flags | (fin ? F_FIN : 0), len);
    uint32_t seq = c->snd_nxt;
    c->snd_nxt += len + fin;
    sent(c, seq, c->snd_nxt);
}

static int can_send(const struct tcp_conn *c)
{
    return c->state == TS_ESTABLISHED || c->state == TS_CLOSE_WAIT || c->state == TS_FIN_WAIT_1 ||
           c->state == TS_CLOSING || c->state == TS_LAST_ACK;
}

/* Send what the windows allow; then an ACK if one is owed and nothing carried it. */
void tcp_output(struct tcp_conn *c)
{
    TCP_PROF_IN(TP_OUTPUT);
    tcp_gso_begin();
    uint32_t wnd = c->cwnd < c->snd_wnd ? c->cwnd : c->snd_wnd;
    while (can_send(c)) {
        uint32_t end = tcp_fin_seq(c), flight = tcp_flight(c);
        uint32_t data_left = SEQ_LT(c->snd_nxt, end) ? end - c->snd_nxt : 0;
        int fin_left = c->fin_queued && c->snd_nxt == end; /* once sent, snd_nxt is past it */
        if (data_left == 0 && !fin_left)
            break;
        uint32_t room = flight < wnd ? wnd - flight : 0;
        if (data_left && c->snd_wnd == 0 && !c->rto_at)
            tcp_rto_restart(c); /* the persist timer: probe the closed window */
        /* Sender SWS avoidance: a short segment only if it is all there is to send. */
        if (data_left && (room == 0 || (room < c->mss && room < data_left && flight > 0)))
            break;
        send_one(c, room);
    }
    if (c->ack_now)
        tcp_send_ack(c);
    tcp_gso_end(); /* outside the pass, ACK number and window may change */
    TCP_PROF_OUT();
}

void tcp_send_ack(struct tcp_conn *c) { tcp_emit(c, c->snd_nxt, 0, 0); }

/* Resend up to `room` bytes (at most a segment) from `seq`; how many were sent. */
uint32_t tcp_retransmit_at(struct tcp_conn *c, uint32_t seq, uint32_t room)
{
    uint32_t saved = c->snd_nxt;
    c->snd_nxt = seq;
    c->rtt_timing = 0; /* Karn's rule (RFC 6298 3) */
    send_one(c, room);
    uint32_t sent = c->snd_nxt - seq;
    if (SEQ_GT(saved, c->snd_nxt))
        c->snd_nxt = saved;
    return sent;
}

/* Resend the first unacknowledged segment (fast retransmit, partial ACKs). */
void tcp_retransmit_first(struct tcp_conn *c)
{
    uint32_t end = c->snd_una + tcp_retransmit_at(c, c->snd_una, c->mss);
    if (SEQ_GT(end, c->high_rxt))
        c->high_rxt = end;
}

void tcp_rto_restart(struct tcp_conn *c) { c->rto_at = tcp_now() + c->rto; }

/* A new RTT measurement R (RFC 6298 2.2 and 2.3: alpha 1/8, beta 1/4, K 4; the clock's
 * granularity G is one cycle). */
static void rtt_update(struct tcp_conn *c, uint64_t r)
{
    if (!c->rtt_valid) {
        c->srtt = r;
        c->rttvar = r / 2;
        c->rtt_valid = 1;
    } else {
        uint64_t d = c->srtt > r ? c->srtt - r : r - c->srtt;
        c->rttvar = (3 * c->rttvar + d) / 4;
        c->srtt = (7 * c->srtt + r) / 8;
    }
    uint64_t rto = c->srtt + (4 * c->rttvar > 1 ? 4 * c->rttvar : 1);
    uint64_t lo = tcp_us(tcp_cfg.rto_min_us), hi = tcp_us(tcp_cfg.rto_max_us);
    c->rto = rto < lo ? lo : rto > hi ? hi : rto; /* RFC 6298 2.4, 2.5 */
}

/* An ACK of `ack` arrived: take an RTT sample if it covers the timed segment. */
void tcp_rto_sample(struct tcp_conn *c, uint32_t ack)
{
    if (c->rtt_timing && SEQ_GE(ack, c->rtt_seq)) {
        c->rtt_timing = 0;
        rtt_update(c, tcp_now() - c->rtt_start);
    }
}

/* The peer's window is closed and nothing is in flight: probe it with one byte. */
static void window_probe(struct tcp_conn *c) { send_one(c, 1); }

static void backoff(struct tcp_conn *c)
{
    uint64_t hi = tcp_us(tcp_cfg.rto_max_us);
    c->rto = 2 * c->rto > hi ? hi : 2 * c->rto; /* RFC 6298 5.5 */
    tcp_rto_restart(c);                         /* RFC 6298 5.6 */
}

/* The retransmission timer expired (RFC 6298 5.4-5.6): resend the earliest unacknowledged
 * segment, collapse cwnd (RFC 5681 3.1), back the timer off, and go back to sending from
 * snd_una as cwnd grows again. A handshake resends its SYN. */
void tcp_rto_timer(struct tcp_conn *c)
{
    c->rto_at = 0;
    if (++c->timeouts > tcp_cfg.max_retries) {
        c->error = TCP_ERESET;
        return tcp_reset_conn(c);
    }
    c->rtt_timing = 0;
    if (c->state == TS_SYN_SENT || c->state == TS_SYN_RCVD) {
        tcp_st.rto_timeouts++;
        tcp_emit(c, c->iss, F_SYN, 0);
        tcp_st.segs_retransmitted++;
        return backoff(c);
    }
    if (c->snd_wnd == 0 && c->snd_nxt == c->snd_una && c->sbuf_len) {
        window_probe(c);
        return backoff(c);
    }
    if (c->snd_una == c->snd_max)
        return;
    tcp_st.rto_timeouts++;
    tcp_cc_timeout(c);
    c->nsacked = 0; /* RFC 2018 8: after a timeout, SACKed data may have been reneged */
    c->snd_nxt = c->snd_una;
    send_one(c, c->mss);
    backoff(c);
}
