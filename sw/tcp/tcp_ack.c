/*
 * tcp_ack.c - when to acknowledge (RFC 1122 4.2.3.2, RFC 5681 4.2): a delayed ACK is sent
 * for at least every second full-sized segment and within tcp_cfg.delack_us of the first
 * unacknowledged one; a segment out of order, or one that fills a hole, is acknowledged
 * at once (RFC 5681 3.2, 4.2), as is every segment when delayed ACKs are off.
 */
#include "tcp_int.h"

/* A segment of `len` bytes was received; `may_delay` if it was in order and filled no hole. */
void tcp_ack_segment(struct tcp_conn *c, uint32_t len, int may_delay)
{
    if (!may_delay || !tcp_cfg.delayed_ack) {
        c->ack_now = 1;
        return;
    }
    /* A coalesced segment (tcp_gro.c) counts as the full-sized ones it holds, as Linux's
     * __tcp_ack_snd_check compares the bytes unacknowledged with the MSS. */
    c->unacked_segs += len >= c->mss ? 2 * (len / c->mss) : 1; /* full-sized count double */
    if (c->unacked_segs >= 4)                 /* ... so two full-sized ones reach 4 */
        c->ack_now = 1;
    else if (!c->delack_at)
        c->delack_at = tcp_now() + tcp_us(tcp_cfg.delack_us);
}

/* The delayed-ACK timer expired. */
void tcp_ack_timer(struct tcp_conn *c)
{
    c->delack_at = 0;
    if (c->unacked_segs) {
        tcp_st.delayed_acks++;
        tcp_send_ack(c);
    }
}

/* A segment carrying an ACK left: nothing is owed any more. */
void tcp_ack_sent(struct tcp_conn *c)
{
    c->ack_now = 0;
    c->unacked_segs = 0;
    c->delack_at = 0;
}
