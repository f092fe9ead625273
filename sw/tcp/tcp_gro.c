/*
 * tcp_gro.c - receive coalescing of the ZeroNIC control path (built with -DTCP_ZERONIC;
 * docs/apps/tcp.md "Profile"), after Linux's GRO (net/ipv4/tcp_offload.c tcp_gro_receive,
 * run by a driver's NAPI poll): consecutive in-order segments of one connection taken from
 * the control queue in one poll are handed to tcp_input as one segment, so the state
 * machine, the ACK and the window run once per batch instead of once per header.
 *
 * A segment joins the held one when, as in tcp_gro_receive: it is of the same connection;
 * its flags equal the held one's except PSH and FIN; its ACK number is the same; it carries
 * no options we parse (Linux: options byte-identical); it is no longer than the held
 * batch's first segment; and it starts where the batch ends. Ours also asks: the same
 * window (Linux keeps the first header's, which would hide a window update), and every
 * byte of both placed by the NIC (so that the batch's placed bytes are one range). As in
 * tcp_gro_receive's final check, a segment shorter than the first, or carrying PSH, FIN,
 * SYN, RST or URG, ends the batch (after joining it if it may); the end of the poll ends
 * it too (napi_gro_flush), and so does 64 KiB (GRO_MAX_SIZE).
 */
#ifdef TCP_ZERONIC
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
 * SACK-based loss detection, RFC 6675, which our sender does not do.) */
static int in_order(const struct tcp_seg *s)
{
    const struct tcp_conn *c = tcp_find(s->src_ip, s->sport, s->dport);
    return c && c->nooo == 0 && s->seq == c->rcv_nxt;
}

static int plain(const struct tcp_seg *s)
{
    return s->len && !(s->flags & (ENDS | F_CWR)) && (s->flags & F_ACK) && s->mss < 0 && s->wscale < 0 &&
           !s->sack_ok && !s->nsack && s->pl_seq == s->seq && s->pl_len == s->len && in_order(s);
}

static int joins(const struct tcp_seg *h, const struct tcp_seg *s)
{
    return s->src_ip == h->src_ip && s->sport == h->sport && s->dport == h->dport &&
           ((s->flags ^ h->flags) & ~(F_PSH | F_FIN)) == 0 && s->ack == h->ack && s->wnd == h->wnd &&
           s->mss < 0 && s->wscale < 0 && !s->sack_ok && !s->nsack && s->len && s->len <= first_len &&
           s->seq == h->seq + h->len && s->pl_seq == s->seq && s->pl_len == s->len && h->len + s->len <= GRO_MAX;
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
#endif /* TCP_ZERONIC */
