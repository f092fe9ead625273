/*
 * tcp_zeronic.c - the C TCP as ZeroNIC's control path (docs/models/zeronic.md "Software";
 * built only with -DTCP_ZERONIC). The stack keeps every decision (states, sequence numbers,
 * windows, reassembly ranges, timers, congestion control) and never touches a payload byte:
 *  - each connection slot's send and receive rings are registered memory regions (2i, 2i+1);
 *  - when a connection learns the peer's ISN, its flow is opened in the NIC and the
 *    receive ring is posted as pieces, so byte k of the stream lands at ring[k % size];
 *  - as the application finishes with a piece, it is retired and posted again for the bytes
 *    one ring further on;
 *  - a segment to send is a header plus (region, offset, length) in the send ring.
 * The zero-copy API of tcp_zc.h lets another core be the application.
 */
#ifdef TCP_ZERONIC
#include "tcp_int.h"
#include "tcp_zc.h"
#include "zeronic.h"

#define PIECE (TCP_RCVBUF / 4) /* the receive ring posted as four pieces */

static uint32_t slot(const struct tcp_conn *c) { return (uint32_t)(c - tcp_conns); }
static uint32_t rx_region(const struct tcp_conn *c) { return 2 * slot(c) + 1; }
static uint32_t tx_region(const struct tcp_conn *c) { return 2 * slot(c); }
static uint32_t registered; /* slots whose rings are registered */

static void post_piece(struct tcp_conn *c)
{
    uint32_t at = (c->zn_hi - c->irs - 1) % TCP_RCVBUF;
    zn_cmd(ZN_OP_PIECE, slot(c), (uint64_t)rx_region(c) << 56 | at, PIECE);
    c->zn_hi += PIECE;
}

void tcp_nic_flow_open(struct tcp_conn *c)
{
    if (!(registered & (1u << slot(c)))) {
        zn_region(tx_region(c), c->sbuf, TCP_SNDBUF);
        zn_region(rx_region(c), c->rbuf, TCP_RCVBUF);
        registered |= 1u << slot(c);
    }
    uint64_t id = (uint64_t)c->rip << 32 | (uint64_t)c->rport << 16 | c->lport;
    c->zn_lo = c->zn_hi = c->irs + 1;
    zn_cmd(ZN_OP_FLOW, slot(c), id, c->zn_lo);
    for (int i = 0; i < 4; i++)
        post_piece(c);
}

/* rcv_read moved: every piece read out entirely is retired and posted again. */
void tcp_nic_consumed(struct tcp_conn *c)
{
    while (c->rcv_read - c->zn_lo >= PIECE && SEQ_LE(c->zn_lo + PIECE, c->rcv_read)) {
        c->zn_lo += PIECE;
        zn_cmd(ZN_OP_RETIRE, slot(c), c->zn_lo, 0);
        post_piece(c);
    }
}

/* The next send request carries `len` bytes of the send ring from sequence number `seq`. */
void tcp_nic_payload(const struct tcp_conn *c, uint32_t seq, uint32_t len)
{
    zn_tx_payload(tx_region(c), (seq - c->iss - 1) % TCP_SNDBUF, len);
}

/* At most `len`, but no further than the send ring's end from `seq`. */
uint32_t tcp_nic_contig(const struct tcp_conn *c, uint32_t seq, uint32_t len)
{
    uint32_t room = TCP_SNDBUF - (seq - c->iss - 1) % TCP_SNDBUF;
    return len < room ? len : room;
}

/* The metadata after a header of the control queue (`*len` bytes with it): the bytes
 * placed, and `*len` turned into the segment's length on the wire (0 if it is no TCP). */
void tcp_nic_parse_meta(const uint8_t *f, uint32_t *len, struct tcp_seg *s, int *ok)
{
    struct zn_meta m;
    if (*len < ZN_META + TCP_FRAME_TCP) {
        *len = 0;
        return;
    }
    uint32_t hdr = *len - ZN_META;
    memcpy(&m, f + hdr, ZN_META);
    *len = (m.magic == ZN_MAGIC && (m.flags & ZN_SPLIT)) ? hdr + m.payload : 0;
    *ok = m.flags & ZN_CSUM_OK;
    s->pl_seq = m.seq;
    s->pl_len = m.placed;
}

/* ---- tcp_zc.h: the application on another core ---- */

static struct tcp_conn *zc_conn(int fd) { return (fd >= 0 && fd < TCP_MAX_CONN) ? &tcp_conns[fd] : 0; }

void tcp_zc_attach(int fd, struct tcp_zc *z)
{
    struct tcp_conn *c = zc_conn(fd);
    z->rx_size = TCP_RCVBUF;
    z->tx_size = TCP_SNDBUF;
    z->rx_seen = z->tx_seen = z->acked_seen = 0;
    z->tx_ring = c->sbuf;
    z->rx_ring = c->rbuf; /* last: the app waits for it */
}

/* Received in order: rx_ready moves with rcv_nxt (less the FIN). */
static int zc_rx(struct tcp_conn *c, struct tcp_zc *z)
{
    int moved = 0;
    uint32_t ready = c->rcv_nxt - c->irs - 1 - (uint32_t)c->fin_rcvd;
    if (ready != (uint32_t)z->rx_ready)
        z->rx_ready += ready - (uint32_t)z->rx_ready, moved = 1;
    if (c->fin_rcvd && !z->rx_eof)
        z->rx_eof = 1, moved = 1;
    uint64_t taken = z->rx_taken;
    if (taken != z->rx_seen) {
        c->rcv_read += (uint32_t)(taken - z->rx_seen);
        tcp_st.bytes_in += taken - z->rx_seen;
        z->rx_seen = taken;
        tcp_nic_consumed(c);
        if ((c->rcv_read + TCP_RCVBUF) - c->rcv_adv >= TCP_RCVBUF / 2)
            c->ack_now = 1; /* a window update, as tcp_rcv_read sends one */
        moved = 1;
    }
    return moved;
}

/* To send: bytes the app wrote join the send buffer; acknowledged ones are reported. */
static int zc_tx(int fd, struct tcp_conn *c, struct tcp_zc *z)
{
    int moved = 0;
    uint64_t written = z->tx_written;
    if (written != z->tx_seen) {
        c->sbuf_len += (uint32_t)(written - z->tx_seen);
        tcp_st.bytes_out += written - z->tx_seen;
        z->tx_seen = written;
        moved = 1;
    }
    uint64_t acked = z->tx_seen - c->sbuf_len;
    if (acked != z->acked_seen)
        z->tx_acked = z->acked_seen = acked, moved = 1;
    /* tx_done is set after the last tx_written: read that again once tx_done is seen. */
    if (z->tx_done && !c->fin_queued && z->tx_written == z->tx_seen)
        tcp_shutdown(fd), moved = 1;
    return moved;
}

int tcp_zc_poll(int fd, struct tcp_zc *z)
{
    struct tcp_conn *c = zc_conn(fd);
    if (!c || c->state == TS_FREE)
        return z->closed = 1, 0;
    int moved = zc_rx(c, z) | zc_tx(fd, c, z);
    if (c->state == TS_CLOSED || c->state == TS_TIME_WAIT) {
        z->error = c->error;
        z->closed = 1; /* after the last rx_ready and rx_eof: the app reads it first */
        return 0;
    }
    if (moved)
        tcp_output(c);
    return moved;
}

void tcp_zc_wait(uint32_t us)
{
    TCP_PROF_IN(TP_WAIT);
    uint64_t until = tcp_next_timer(), cap = tcp_now() + tcp_us(us);
    tcp_nic_sleep(until && until < cap ? until : cap);
    TCP_PROF_OUT();
    tcp_poll();
}
#endif /* TCP_ZERONIC */
