/*
 * tcp_rcv.c - the receive buffer: in-order bytes waiting for the app, out-of-order bytes
 * held until the hole before them fills (RFC 9293 3.10.7.4 "seventh, process the segment
 * text"; RFC 5681 4.2 for the ACKs that follows), and the advertised window with window
 * scaling (RFC 7323 2).
 *
 * Byte s of the stream lives at rbuf[(s - irs - 1) % TCP_RCVBUF]. The app has read up to
 * rcv_read; rcv_nxt is the first byte not yet received in order; ooo[] holds the ranges
 * received beyond it, sorted and disjoint (tcp_sack.c's range sets; also our SACK blocks). Nothing is stored beyond rcv_read + TCP_RCVBUF,
 * so stored bytes never overwrite unread ones.
 */
#include "tcp_int.h"

/* Where byte `seq` lives in the ring, and how many bytes from there fit before it wraps. */
static uint32_t ring_at(const struct tcp_conn *c, uint32_t seq, uint32_t len, uint32_t *first)
{
    uint32_t at = (seq - c->irs - 1) % TCP_RCVBUF;
    *first = TCP_RCVBUF - at < len ? TCP_RCVBUF - at : len;
    return at;
}

/* Copy `len` bytes at `seq` into the ring, unless `data` is 0: the bytes are there already
 * (ZeroNIC placed them through the NIC's pieces, or tcp_gro.c copied them). */
void tcp_rcv_copy(struct tcp_conn *c, uint32_t seq, const uint8_t *data, uint32_t len)
{
    if (!data)
        return;
    uint32_t first, at = ring_at(c, seq, len, &first);
    tcp_copy(c->rbuf + at, data, first);
    tcp_copy(c->rbuf, data + first, len - first);
}

/* rcv_nxt moved: take the ranges it reached into the in-order stream. */
static void ooo_advance(struct tcp_conn *c)
{
    c->rcv_nxt = tcp_ranges_below(c->ooo, &c->nooo, c->rcv_nxt);
}

/* Take `len` bytes at `seq` (already trimmed to the window, starting at or after
 * rcv_nxt), and schedule the ACK RFC 5681 4.2 asks for. */
void tcp_rcv_data(struct tcp_conn *c, uint32_t seq, const uint8_t *data, uint32_t len)
{
#ifdef TCP_MUTANT_NO_REASSEMBLY
    seq = c->rcv_nxt; /* the mutation the tests must catch: data taken in arrival order */
#endif
    int in_order = seq == c->rcv_nxt, filled_hole = c->nooo > 0;
    tcp_rcv_copy(c, seq, data, len);
    if (in_order) {
        c->rcv_nxt += len;
        ooo_advance(c);
    } else {
        tcp_st.ooo_segs_in++;
        /* A range that fits nowhere (all TCP_OOO_MAX in use) is forgotten: resent later. */
        tcp_ranges_add(c->ooo, &c->nooo, seq, seq + len);
        c->last_ooo_start = seq;
        filled_hole = 0;
    }
    /* Out of order, or filling a hole: ACK at once (RFC 5681 4.2, 3.2). */
    tcp_ack_segment(c, len, in_order && !filled_hole);
}

/* Free space in the buffer: what we may advertise beyond rcv_nxt. */
uint32_t tcp_rcv_window(const struct tcp_conn *c)
{
    uint32_t free = TCP_RCVBUF - (c->rcv_nxt - c->rcv_read);
#ifdef TCP_ZERONIC
    /* Only what the NIC's pieces cover: payload beyond them is not placed. */
    uint32_t posted = SEQ_GT(c->zn_hi, c->rcv_nxt) ? c->zn_hi - c->rcv_nxt : 0;
    free = posted < free ? posted : free;
#endif
    return free;
}

/* The window field of a segment we send: the free space scaled by our shift (RFC 7323
 * 2.3), never moving the right edge we advertised before to the left (RFC 9293 3.8.6.2.2,
 * RFC 7323 2.4). Remembers the edge advertised. */
uint16_t tcp_wnd_field(struct tcp_conn *c)
{
    uint32_t wnd = tcp_rcv_window(c), edge = c->rcv_nxt + wnd;
    if (SEQ_LT(edge, c->rcv_adv))
        wnd = c->rcv_adv - c->rcv_nxt;
    uint32_t field = wnd >> c->rcv_shift;
    if (field > 0xffff)
        field = 0xffff;
    uint32_t adv = c->rcv_nxt + (field << c->rcv_shift);
    if (SEQ_GT(adv, c->rcv_adv))
        c->rcv_adv = adv;
    return (uint16_t)field;
}

/* Copy up to `len` in-order bytes to the app. Every ACK carries the window; a pure window
 * update is sent only once the window has opened by half the buffer since it was last
 * advertised (so a sender limited by our window learns of it; RFC 9293 3.8.6.2.2 requires
 * at least min(Fr * buffer, MSS), Fr = 1/2, and leaves the rest to the implementation). */
uint32_t tcp_rcv_read(struct tcp_conn *c, uint8_t *buf, uint32_t len)
{
    uint32_t have = c->rcv_nxt - c->rcv_read - (uint32_t)c->fin_rcvd; /* the FIN is no byte */
    if (len > have)
        len = have;
    uint32_t first, at = ring_at(c, c->rcv_read, len, &first);
    tcp_copy(buf, c->rbuf + at, first);
    tcp_copy(buf + first, c->rbuf, len - first);
    c->rcv_read += len;
#ifdef TCP_ZERONIC
    tcp_nic_consumed(c); /* the pieces read out go back to the NIC for later bytes */
#endif
    uint32_t opened = (c->rcv_read + TCP_RCVBUF) - c->rcv_adv;
    if (len && opened >= TCP_RCVBUF / 2)
        c->ack_now = 1;
    tcp_st.bytes_in += len;
    return len;
}
