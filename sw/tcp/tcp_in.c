/*
 * tcp_in.c - the connection state machine on an arriving segment, in the order of RFC
 * 9293 3.10.7 ("SEGMENT ARRIVES"): LISTEN, SYN-SENT, then the synchronized states
 * (acceptability, RST, SYN, ACK, text, FIN). Option negotiation: MSS (RFC 9293 3.7.1;
 * 536 if absent, RFC 9293 3.7.1 / RFC 1122 4.2.2.6) and window scale (RFC 7323 2.2: used
 * only if both SYNs carry it; the window of a SYN is never scaled).
 */
#include "tcp_int.h"

static void take_syn_options(struct tcp_conn *c, const struct tcp_seg *s)
{
    uint32_t mss = s->mss > 0 ? (uint32_t)s->mss : 536;
    c->mss = (uint16_t)(mss < TCP_MSS ? mss : TCP_MSS);
    if (s->wscale >= 0 && c->rcv_shift_offered) {
        c->snd_shift = (uint8_t)s->wscale;
        c->rcv_shift = TCP_RCV_SHIFT;
    } else {
        c->snd_shift = c->rcv_shift = 0;
    }
    c->irs = s->seq;
    c->rcv_nxt = c->rcv_read = s->seq + 1;
    c->rcv_adv = c->rcv_nxt + TCP_SYN_WND; /* what our SYN (or SYN-ACK) offers */
    c->sack_ok = c->sack_offered && s->sack_ok; /* RFC 2018 2: both SYNs carry it */
    c->snd_wnd = s->wnd;
    c->snd_wl1 = s->seq;
    c->snd_wl2 = s->ack;
    tcp_cc_init(c);
#ifdef TCP_DCTCP
    tcp_dctcp_syn_in(c, s);
#endif
#ifdef TCP_ZERONIC
    tcp_nic_flow_open(c); /* the receive ring's pieces, from the peer's first byte */
#endif
}

/* RFC 9293 3.10.7.2: a SYN to a listener starts a connection in SYN-RECEIVED. */
static void listen_input(struct tcp_conn *l, const struct tcp_seg *s)
{
    if (s->flags & F_RST)
        return;
    if (s->flags & F_ACK)
        return tcp_emit_rst(s);
    if (!(s->flags & F_SYN))
        return;
    struct tcp_conn *c = tcp_new_conn();
    if (!c)
        return; /* no room: drop it, the peer will retry */
    c->rip = s->src_ip;
    c->rport = s->sport;
    c->lport = s->dport;
    c->listener = (int)(l - tcp_conns);
    c->rcv_shift_offered = s->wscale >= 0; /* RFC 7323 2.2: answer a WS option only */
    c->sack_offered = s->sack_ok && tcp_cfg.sack;
    take_syn_options(c, s);
    tcp_set_state(c, TS_SYN_RCVD);
    tcp_emit(c, c->iss, F_SYN, 0);
    tcp_rto_restart(c);
}

/* RFC 9293 3.10.7.3 */
static void syn_sent_input(struct tcp_conn *c, const struct tcp_seg *s)
{
    int ack_ok = (s->flags & F_ACK) && s->ack == c->iss + 1;
    if ((s->flags & F_ACK) && !ack_ok)
        return tcp_emit_rst(s);
    if (s->flags & F_RST) {
        if (ack_ok) {
            c->error = TCP_ERESET;
            tcp_reset_conn(c);
        }
        return;
    }
    if (!(s->flags & F_SYN))
        return;
    take_syn_options(c, s);
    if (!ack_ok) { /* simultaneous open */
        tcp_set_state(c, TS_SYN_RCVD);
        return tcp_emit(c, c->iss, F_SYN, 0);
    }
    c->snd_una = s->ack;
    c->rto_at = 0;
    c->timeouts = 0;
    tcp_set_state(c, TS_ESTABLISHED);
    c->ack_now = 1;
}

/* RFC 9293 3.10.7.4 "first, check sequence number". */
static int acceptable(const struct tcp_conn *c, const struct tcp_seg *s)
{
    uint32_t wnd = tcp_rcv_window(c), seg_len = s->len + !!(s->flags & F_SYN) + !!(s->flags & F_FIN);
    uint32_t off = s->seq - c->rcv_nxt;
    if (seg_len == 0)
        return wnd == 0 ? s->seq == c->rcv_nxt : off < wnd;
    if (wnd == 0)
        return 0;
    uint32_t last = s->seq + seg_len - 1 - c->rcv_nxt;
    return off < wnd || last < wnd;
}

/* Our FIN was acknowledged: move on (RFC 9293 3.10.7.4 "fifth"). */
static void fin_acked(struct tcp_conn *c)
{
    if (c->state == TS_FIN_WAIT_1)
        tcp_set_state(c, TS_FIN_WAIT_2);
    else if (c->state == TS_CLOSING)
        tcp_set_state(c, TS_TIME_WAIT);
    else if (c->state == TS_LAST_ACK)
        tcp_set_state(c, TS_CLOSED);
}

/* An ACK of new data: free the buffer, sample the RTT, grow cwnd, manage the timer
 * (RFC 6298 5.2, 5.3; in NewReno recovery only the first partial ACK restarts it). */
static void new_ack(struct tcp_conn *c, uint32_t ack)
{
    uint32_t acked = ack - c->snd_una, data = acked < c->sbuf_len ? acked : c->sbuf_len;
    c->sbuf_len -= data;
    c->snd_una = ack;
    if (SEQ_LT(c->snd_nxt, ack))
        c->snd_nxt = ack;
    c->timeouts = 0;
    tcp_rto_sample(c, ack);
    int was_recovering = c->in_recovery;
    tcp_cc_ack(c, acked);
    if (c->snd_una == c->snd_max)
        c->rto_at = 0;
    else if (!was_recovering || !c->in_recovery)
        tcp_rto_restart(c);
    if (acked > data)
        fin_acked(c);
}

/* RFC 9293 3.10.7.4 "fifth, check the ACK field"; 0 if the segment is to be dropped. */
static int ack_input(struct tcp_conn *c, const struct tcp_seg *s)
{
    if (c->state == TS_SYN_RCVD) {
        if (!SEQ_GT(s->ack, c->snd_una) || SEQ_GT(s->ack, c->snd_max))
            return tcp_emit_rst(s), 0;
        c->snd_una = s->ack;
        c->rto_at = 0;
        c->timeouts = 0;
        tcp_set_state(c, TS_ESTABLISHED);
    }
    if (SEQ_GT(s->ack, c->snd_max))
        return c->ack_now = 1, 0;
    uint32_t wnd = (uint32_t)s->wnd << c->snd_shift;
    tcp_sack_input(c, s);
#ifdef TCP_DCTCP
    uint32_t una = c->snd_una;
#endif
    if (SEQ_GT(s->ack, c->snd_una))
        new_ack(c, s->ack);
    else if (s->ack == c->snd_una && s->len == 0 && !(s->flags & (F_SYN | F_FIN)) &&
             c->snd_una != c->snd_max && wnd == c->snd_wnd)
        tcp_cc_dupack(c); /* RFC 5681 2: the definition of a duplicate ACK */
#ifdef TCP_DCTCP
    tcp_dctcp_ack_in(c, s, c->snd_una - una);
#endif
    if (SEQ_LT(c->snd_wl1, s->seq) || (c->snd_wl1 == s->seq && SEQ_LE(c->snd_wl2, s->ack))) {
        if (wnd && !c->snd_wnd)
            c->timeouts = 0; /* the window reopened: the persist probes worked */
        c->snd_wnd = wnd;
        c->snd_wl1 = s->seq;
        c->snd_wl2 = s->ack;
    }
    return 1;
}

/* "seventh, process the segment text": trim to rcv_nxt and the window, then store. */
static void text_input(struct tcp_conn *c, const struct tcp_seg *s)
{
    uint32_t seq = s->seq, len = s->len;
    const uint8_t *data = s->data;
    if (!data) /* already in the ring: only what ZeroNIC placed was received */
        seq = s->pl_seq, len = s->pl_len;
    if (SEQ_LT(seq, c->rcv_nxt)) {
        uint32_t skip = c->rcv_nxt - seq;
        skip = skip < len ? skip : len;
        seq += skip, data += skip, len -= skip;
    }
    uint32_t room = c->rcv_nxt + tcp_rcv_window(c) - seq;
    if (len > room) {
        len = room;
        c->ack_now = 1;
    }
    if (len == 0) {
        tcp_st.dup_segs_in++;
        c->ack_now = 1; /* a duplicate: its ACK may have been lost (RFC 9293 3.10.7.4) */
        return;
    }
    tcp_rcv_data(c, seq, data, len);
}

/* "eighth, check the FIN bit": remember where it is; act on it once rcv_nxt reaches it. */
static void fin_input(struct tcp_conn *c, const struct tcp_seg *s)
{
    uint32_t at = s->seq + s->len;
    if ((s->flags & F_FIN) && !c->fin_seen && at - c->rcv_nxt <= tcp_rcv_window(c)) {
        c->fin_seen = 1;
        c->fin_seq = at;
    }
    if (!c->fin_seen || c->fin_rcvd || c->rcv_nxt != c->fin_seq)
        return;
    c->fin_rcvd = 1;
    c->rcv_nxt++;
    c->ack_now = 1;
    if (c->state == TS_SYN_RCVD || c->state == TS_ESTABLISHED)
        tcp_set_state(c, TS_CLOSE_WAIT);
    else if (c->state == TS_FIN_WAIT_1)
        tcp_set_state(c, TS_CLOSING);
    else if (c->state == TS_FIN_WAIT_2)
        tcp_set_state(c, TS_TIME_WAIT);
}

static int receives_text(const struct tcp_conn *c)
{
    return c->state == TS_ESTABLISHED || c->state == TS_FIN_WAIT_1 || c->state == TS_FIN_WAIT_2;
}

static void synchronized_input(struct tcp_conn *c, const struct tcp_seg *s)
{
    if (!acceptable(c, s)) {
        if (!(s->flags & F_RST))
            c->ack_now = 1;
        return;
    }
    if (s->flags & F_RST) {
        /* RFC 5961 3.2: only an exact match resets; otherwise a challenge ACK. */
        if (s->seq != c->rcv_nxt)
            return (void)(c->ack_now = 1);
        c->error = TCP_ERESET;
        return tcp_reset_conn(c);
    }
    if (s->flags & F_SYN)
        return (void)(c->ack_now = 1); /* RFC 5961 4.2: a challenge ACK */
    if (!(s->flags & F_ACK))
        return;
    TCP_PROF_IN(TP_ACK);
    int ack_ok = ack_input(c, s);
    TCP_PROF_OUT();
    if (!ack_ok)
        return;
    if (c->state == TS_TIME_WAIT && (s->flags & F_FIN))
        c->tw_at = tcp_now() + tcp_us(tcp_cfg.time_wait_us), c->ack_now = 1;
#ifdef TCP_DCTCP
    if (s->len && receives_text(c))
        tcp_dctcp_data_in(c, s);
#endif
    if (s->len && receives_text(c)) {
        TCP_PROF_IN(TP_TEXT);
        text_input(c, s);
        TCP_PROF_OUT();
    }
    if (c->state != TS_CLOSED)
        fin_input(c, s);
}

void tcp_input(const struct tcp_seg *s)
{
    struct tcp_conn *c = tcp_find(s->src_ip, s->sport, s->dport);
    if (!c) {
        struct tcp_conn *l = tcp_find_listener(s->dport);
        return l ? listen_input(l, s) : tcp_emit_rst(s);
    }
    if (c->state == TS_SYN_SENT)
        syn_sent_input(c, s);
    else
        synchronized_input(c, s);
    if (c->state != TS_CLOSED && c->state != TS_FREE)
        tcp_output(c);
}
