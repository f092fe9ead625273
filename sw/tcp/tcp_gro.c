/*
 * tcp_gro.c - receive coalescing (docs/apps/tcp.md "Profile"), after Linux's GRO
 * (net/ipv4/tcp_offload.c tcp_gro_receive, run by a driver's NAPI poll on any NIC):
 * consecutive in-order segments of one connection taken from the NIC (IceNIC's receive
 * queue, ZeroNIC's control queue) in one poll are handed to tcp_input as one segment, so
 * the state machine, the ACK and the window run once per batch instead of once per header.
 * Every byte of a batch is in the receive ring before tcp_input sees it: ZeroNIC placed
 * it; on IceNIC the core copies each segment's payload there as the segment joins (its
 * receive buffer is posted again at once), after its checksum was verified in software.
 *
 * A segment joins the held one when, as in tcp_gro_receive: it is of the same connection;
 * its flags equal the held one's except PSH and FIN; its ACK number is the same; it carries
 * no options we parse (Linux: options byte-identical); it is no longer than the held
 * batch's first segment; and it starts where the batch ends. Ours also asks: the same
 * window (Linux keeps the first header's, which would hide a window update), the same ECN
 * field in DCTCP builds (Linux: inet_gro_receive flushes on a TOS change), and every byte
 * of both in the ring (so that the batch's placed bytes are one range). As in
 * tcp_gro_receive's final check, a segment shorter than the first, or carrying PSH, FIN,
 * SYN, RST or URG, ends the batch (after joining it if it may); the end of the poll ends
 * it too (napi_gro_flush), and so does 64 KiB (GRO_MAX_SIZE).
 */
#include "tcp_int.h"

#define GRO_MAX 65536u
#define ENDS (F_PSH | F_FIN | F_SYN | F_RST | F_URG)

uint64_t tcp_gro_merged;
static struct tcp_seg segs[2];
static int held = -1;    /* segs[held] is the batch, if any */
static uint32_t first_len; /* the batch's first segment's length (Linux: gso_size) */

struct tcp_seg *tcp_gro_slot(void) { return &segs[held == 0]; }

/* A batch starts only at rcv_nxt of a connection holding nothing out of order: beyond a
 * hole every segment is acknowledged at once (RFC 5681 4.2), so that the sender's count of
 * duplicate ACKs works as without coalescing. (Linux coalesces there too and counts on
 * SACK-based loss detection, RFC 6675, which our sender does not do.) With delayed ACKs
 * off, every segment is acknowledged (tcp_cfg.delayed_ack's contract): none is coalesced. */
static struct tcp_conn *in_order(const struct tcp_seg *s)
{
    if (!tcp_cfg.delayed_ack)
        return 0;
    struct tcp_conn *c = tcp_find(s->src_ip, s->sport, s->dport);
    return c && c->nooo == 0 && s->seq == c->rcv_nxt ? c : 0;
}

/* Whether all of `s` is in the receive ring of `c`, whose rcv_nxt is the batch's start.
 * ZeroNIC: its metadata says what it placed. IceNIC: the core copies the payload now if
 * it fits the window (nothing is stored beyond rcv_read + TCP_RCVBUF, tcp_rcv.c). */
static int placed(struct tcp_conn *c, struct tcp_seg *s)
{
#ifdef TCP_ZERONIC
    (void)c;
    return s->pl_seq == s->seq && s->pl_len == s->len;
#else
    if (s->seq + s->len - c->rcv_nxt > tcp_rcv_window(c))
        return 0;
    tcp_rcv_copy(c, s->seq, s->data, s->len);
    s->data = 0, s->pl_seq = s->seq, s->pl_len = s->len;
    return 1;
#endif
}

static struct tcp_conn *held_conn; /* the batch's connection */

static int plain(struct tcp_seg *s)
{
    return s->len && !(s->flags & (ENDS | F_CWR)) && (s->flags & F_ACK) && s->mss < 0 && s->wscale < 0 &&
           !s->sack_ok && !s->nsack && (held_conn = in_order(s)) && placed(held_conn, s);
}

static int same_ecn(const struct tcp_seg *h, const struct tcp_seg *s)
{
#ifdef TCP_DCTCP
    return h->ecn == s->ecn; /* a CE mark is DCTCP's signal, per segment (RFC 8257 3.2) */
#else
    (void)h, (void)s;
    return 1;
#endif
}

static int joins(const struct tcp_seg *h, struct tcp_seg *s)
{
    return s->src_ip == h->src_ip && s->sport == h->sport && s->dport == h->dport &&
           ((s->flags ^ h->flags) & ~(F_PSH | F_FIN)) == 0 && s->ack == h->ack && s->wnd == h->wnd &&
           s->mss < 0 && s->wscale < 0 && !s->sack_ok && !s->nsack && s->len && s->len <= first_len &&
           s->seq == h->seq + h->len && h->len + s->len <= GRO_MAX && same_ecn(h, s) && placed(held_conn, s);
}

void tcp_gro_flush(void)
{
    if (held < 0)
        return;
    TCP_PROF_IN(TP_INPUT);
    tcp_input(&segs[held]);
    TCP_PROF_OUT();
    held = -1;
}

/* Segment `s` (parsed into tcp_gro_slot()) arrived. */
void tcp_gro_receive(struct tcp_seg *s)
{
    if (held >= 0 && joins(&segs[held], s)) {
        struct tcp_seg *h = &segs[held];
        h->len += s->len, h->pl_len += s->pl_len;
        h->flags |= s->flags & (F_PSH | F_FIN);
#ifdef TCP_DCTCP
        h->segs += s->segs;
#endif
        tcp_gro_merged++;
        if (s->len < first_len || (s->flags & ENDS))
            tcp_gro_flush();
        return;
    }
    tcp_gro_flush();
    if (!plain(s)) {
        TCP_PROF_IN(TP_INPUT);
        tcp_input(s);
        TCP_PROF_OUT();
        return;
    }
    held = (int)(s - segs);
    first_len = s->len;
}
