/*
 * tcp_seg.c - TCP segments on the wire: parse and check an arriving frame, build one to
 * send (RFC 9293 3.1 header format, 3.2 options; RFC 791 IPv4; checksum RFC 1071 over the
 * pseudo-header of RFC 9293 3.1).
 */
#include "tcp_int.h"

/* One's-complement sum of `len` bytes at `p`, which must be 4-byte aligned. The sum is the
 * same whatever the byte order it is computed in (RFC 1071 2(B)), so the bytes are summed
 * as little-endian 32-bit words into 64 bits, and only the folded result is swapped. */
static uint64_t csum_words(const uint8_t *p, uint32_t len)
{
    uint64_t sum = 0;
    const uint32_t *w = (const uint32_t *)p;
    for (; len >= 4; len -= 4)
        sum += *w++;
    const uint8_t *b = (const uint8_t *)w;
    if (len >= 2)
        sum += *(const uint16_t *)b, b += 2, len -= 2;
    if (len)
        sum += *b; /* the odd byte, padded with a zero byte after it (RFC 9293 3.1) */
    return sum;
}

/* The 16-bit big-endian checksum of a little-endian one's-complement sum. */
static uint16_t csum_fold(uint64_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return ice_bswap16((uint16_t)~sum);
}

/* The TCP checksum of `seg` (`len` bytes of header and data) between the two addresses,
 * over the pseudo-header (RFC 9293 3.1): addresses, protocol 6, TCP length. */
__attribute__((unused)) static uint16_t tcp_checksum(uint32_t src, uint32_t dst, const uint8_t *seg, uint32_t len)
{
    uint64_t pseudo = (uint64_t)ice_bswap32(src) + ice_bswap32(dst) + ice_bswap16(6) + ice_bswap16((uint16_t)len);
    return csum_fold(pseudo + csum_words(seg, len));
}

static void parse_options(const uint8_t *o, int n, struct tcp_seg *s)
{
    for (int i = 0; i < n;) {
        int kind = o[i];
        if (kind == 0)
            break;
        if (kind == 1) {
            i++;
            continue;
        }
        if (i + 1 >= n || o[i + 1] < 2 || i + o[i + 1] > n)
            break; /* malformed: ignore the rest (RFC 9293 3.2: be robust) */
        int len = o[i + 1];
        if (kind == 2 && len == 4)
            s->mss = o[i + 2] << 8 | o[i + 3];
        else if (kind == 3 && len == 3)
            s->wscale = o[i + 2] > 14 ? 14 : o[i + 2]; /* RFC 7323 2.3: at most 14 */
        else if (kind == 4 && len == 2)
            s->sack_ok = 1;
        else if (kind == 5 && len >= 10 && (len - 2) % 8 == 0)
            for (int b = i + 2; b < i + len && s->nsack < 4; b += 8, s->nsack++) {
                s->sack[s->nsack].start = ice_get32(o, b);
                s->sack[s->nsack].end = ice_get32(o, b + 4);
            }
        i += len;
    }
}

/* Parse frame `f` of `len` bytes into `s`: 0 if it is a well-formed TCP/IPv4 segment to
 * this node with a right checksum, else -1 (counted in tcp_st). */
int tcp_parse(const uint8_t *f, uint32_t len, struct tcp_seg *s)
{
    const uint8_t *ip = f + ICE_FRAME_IP;
#ifdef TCP_ZERONIC
    /* Headers and metadata only: `len` becomes the segment's length on the wire. */
    int csum_ok = 0;
    tcp_nic_parse_meta(f, &len, s, &csum_ok);
    if (!len)
        return tcp_st.dropped++, -1;
#endif
    if (len < TCP_FRAME_TCP + TCP_HDR || ice_get16(f, ICE_FRAME_ETH_TYPE) != 0x0800 || ip[0] != 0x45 ||
        ip[9] != 6 || ice_get32(ip, 16) != TCP_MY_IP())
        return tcp_st.dropped++, -1;
    uint32_t ip_len = ice_get16(ip, 2);
    if (ip_len + ICE_FRAME_IP > len || ip_len < 40)
        return tcp_st.dropped++, -1;
    const uint8_t *t = f + TCP_FRAME_TCP;
    uint32_t seg_len = ip_len - 20, off = (uint32_t)(t[12] >> 4) * 4;
    if (off < TCP_HDR || off > seg_len)
        return tcp_st.dropped++, -1;
    s->src_ip = ice_get32(ip, 12);
    s->dst_ip = ice_get32(ip, 16);
#ifdef TCP_ZERONIC
    if (!csum_ok) /* the NIC verified it: software never sees the payload */
        return tcp_st.bad_checksums++, -1;
#else
    if (tcp_checksum(s->src_ip, s->dst_ip, t, seg_len) != 0)
        return tcp_st.bad_checksums++, -1;
#endif
    s->sport = ice_get16(t, 0);
    s->dport = ice_get16(t, 2);
    s->seq = ice_get32(t, 4);
    s->ack = ice_get32(t, 8);
    s->flags = t[13];
    s->wnd = ice_get16(t, 14);
    s->mss = s->wscale = -1;
    s->sack_ok = s->nsack = 0;
    parse_options(t + TCP_HDR, (int)off - TCP_HDR, s);
    s->data = t + off;
    s->len = seg_len - off;
#ifdef TCP_DCTCP
    s->ecn = ip[1] & 3;
    s->segs = 1;
#endif
#ifdef TCP_ZERONIC
    s->data = 0; /* pl_seq, pl_len: tcp_nic_parse_meta */
#endif
    tcp_st.segs_in++;
    return 0;
}

static void put_mac_of(uint8_t *f, int off, uint32_t ip)
{
    ice_put_mac(f, off, 0x020000000000ull | ip); /* 02:00 and the IPv4 address (icenic.h) */
}

/* Ethernet and IPv4 headers for a segment of `tcp_len` bytes from this node to `dst`. */
static void put_ip(uint8_t *f, uint32_t dst, uint32_t tcp_len)
{
    put_mac_of(f, ICE_FRAME_ETH_DST, dst);
    ice_put_mac(f, ICE_FRAME_ETH_SRC, TCP_MY_MAC());
    ice_put16(f, ICE_FRAME_ETH_TYPE, 0x0800);
    uint8_t *ip = f + ICE_FRAME_IP;
    ice_put16(ip, 0, 0x4500);
    ice_put16(ip, 2, (uint16_t)(20 + tcp_len));
    ice_put32(ip, 4, 0x00004000); /* DF: we never send more than the path's MTU */
    ice_put16(ip, 8, (64 << 8) | 6);
    ice_put16(ip, 10, 0);
    ice_put32(ip, 12, TCP_MY_IP());
    ice_put32(ip, 16, dst);
    ice_put16(ip, 10, ice_ip_checksum(ip));
}

/* SYN options: MSS (RFC 9293 3.7.1), window scale (RFC 7323 2.2), SACK-permitted (RFC
 * 2018 2), the last two in a SYN-ACK only if the SYN had them; NOPs pad to 4 bytes. */
static int put_syn_options(const struct tcp_conn *c, uint8_t *o)
{
    int n = 4;
    o[0] = 2, o[1] = 4, o[2] = TCP_MSS >> 8, o[3] = TCP_MSS & 0xff;
    if (c->rcv_shift_offered)
        o[n] = 1, o[n + 1] = 3, o[n + 2] = 3, o[n + 3] = TCP_RCV_SHIFT, n += 4;
    if (c->sack_offered)
        o[n] = 1, o[n + 1] = 1, o[n + 2] = 4, o[n + 3] = 2, n += 4;
    return n;
}

static void put_tcp(uint8_t *t, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
                    uint16_t wnd, int optlen)
{
    ice_put16(t, 0, sport);
    ice_put16(t, 2, dport);
    ice_put32(t, 4, seq);
    ice_put32(t, 8, ack);
    t[12] = (uint8_t)(((TCP_HDR + optlen) / 4) << 4);
    t[13] = flags;
    ice_put16(t, 14, wnd);
    ice_put32(t, 16, 0); /* checksum, urgent pointer */
}

/* Copy `len` bytes of the send buffer, from sequence number `seq` on, to `to`: one copy
 * from the ring into the frame, or two where the ring wraps. */
__attribute__((unused)) static void copy_out(const struct tcp_conn *c, uint32_t seq, uint8_t *to, uint32_t len)
{
    uint32_t at = (seq - c->iss - 1) % TCP_SNDBUF, first = TCP_SNDBUF - at;
    if (first > len)
        first = len;
    tcp_copy(to, c->sbuf + at, first);
    tcp_copy(to + first, c->sbuf, len - first);
}

/* Segmentation in software, after Linux's GSO (net/ipv4/tcp_offload.c tcp_gso_segment,
 * used when the NIC has no TSO: neither IceNIC nor ZeroNIC's published descriptions name
 * one): within one tcp_output pass the ACK number, window and options do not change, so a
 * segment of the same length and flags as the one just built takes a copy of its headers
 * with only the sequence number changed. Every segment copied is full-sized like the
 * first, and the IPv4 identification is 0 (DF set), so the IPv4 header, its checksum
 * included, is the same (Linux's inet_gso_segment rewrites tot_len, id and the checksum
 * per segment). The TCP checksum is ZeroNIC's; on IceNIC the core still copies the payload
 * and sums it per segment, as Linux's skb_segment does without checksum offload. */
static int gso_on;                      /* inside a tcp_output pass */
static const struct tcp_conn *gso_conn; /* the connection of its last frame built, if any */
static const uint8_t *gso_frame;
static uint32_t gso_len, gso_hdr;
static uint8_t gso_flags;
#ifdef TCP_DCTCP
static int gso_resent; /* the last frame resent data: no ECT (tcp_dctcp_ect), so no copy */
#endif

void tcp_gso_begin(void) { gso_on = 1, gso_conn = 0; }
void tcp_gso_end(void) { gso_on = 0, gso_conn = 0; }

static void gso_note(const struct tcp_conn *c, const uint8_t *f, uint32_t seq, uint32_t len, uint32_t hdr,
                     uint8_t flags)
{
    if (!gso_on)
        return;
    gso_conn = c, gso_frame = f, gso_len = len, gso_hdr = hdr, gso_flags = flags;
    (void)seq;
#ifdef TCP_DCTCP
    gso_resent = SEQ_LT(seq, c->snd_max);
#endif
}

static int gso_next(struct tcp_conn *c, uint32_t seq, uint8_t flags, uint32_t len)
{
    if (gso_conn != c || len != gso_len || flags != gso_flags || !len)
        return 0;
#ifdef TCP_DCTCP
    if (SEQ_LT(seq, c->snd_max) != gso_resent)
        return 0;
#endif
    uint8_t *f = tcp_tx_copy(gso_frame, gso_hdr), *t = f + TCP_FRAME_TCP;
    ice_put32(t, 4, seq);
#ifdef TCP_ZERONIC
    tcp_nic_payload(c, seq, len);
    tcp_tx(f, gso_hdr);
#else
    uint32_t tcp_len = gso_hdr - TCP_FRAME_TCP + len;
    copy_out(c, seq, f + gso_hdr, len);
    ice_put16(t, 16, 0);
    ice_put16(t, 16, tcp_checksum(TCP_MY_IP(), c->rip, t, tcp_len));
    tcp_tx(f, gso_hdr + len);
#endif
    gso_frame = f;
    tcp_ack_sent(c);
    return 1;
}

/* Send a segment of connection `c`: `len` bytes of its send buffer at `seq`, with `flags`
 * (ACK is added whenever we have the peer's ISN; a SYN carries our options). */
void tcp_emit(struct tcp_conn *c, uint32_t seq, uint8_t flags, uint32_t len)
{
    TCP_PROF_IN(TP_EMIT);
    if (c->state != TS_SYN_SENT && gso_next(c, seq, flags | F_ACK, len))
        return TCP_PROF_OUT();
    uint8_t *f = tcp_tx_buf(), *t = f + TCP_FRAME_TCP;
    if (c->state != TS_SYN_SENT)
        flags |= F_ACK;
#ifdef TCP_DCTCP
    flags |= tcp_dctcp_flags(c, seq, flags, len);
#endif
    int optlen = (flags & F_SYN) ? put_syn_options(c, t + TCP_HDR) : tcp_sack_option(c, t + TCP_HDR);
    uint16_t wnd = (flags & F_SYN) ? (uint16_t)TCP_SYN_WND : tcp_wnd_field(c);
    put_tcp(t, c->lport, c->rport, seq, (flags & F_ACK) ? c->rcv_nxt : 0, flags, wnd, optlen);
#ifdef TCP_ZERONIC
    /* The NIC merges the payload from the send ring and fills in the checksum. */
    uint32_t tcp_len = TCP_HDR + (uint32_t)optlen + len;
    put_ip(f, c->rip, tcp_len);
    if (len)
        tcp_nic_payload(c, seq, len);
    tcp_tx(f, TCP_FRAME_TCP + tcp_len - len);
#else
    copy_out(c, seq, t + TCP_HDR + optlen, len);
    uint32_t tcp_len = TCP_HDR + (uint32_t)optlen + len;
    put_ip(f, c->rip, tcp_len);
#ifdef TCP_DCTCP
    tcp_dctcp_ect(f, c, seq, flags, len);
#endif
    ice_put16(t, 16, tcp_checksum(TCP_MY_IP(), c->rip, t, tcp_len));
    tcp_tx(f, TCP_FRAME_TCP + tcp_len);
#endif
    gso_note(c, f, seq, len, TCP_FRAME_TCP + TCP_HDR + (uint32_t)optlen, flags);
    if (flags & F_ACK)
        tcp_ack_sent(c);
    if (len == 0 && !(flags & (F_SYN | F_FIN)))
        tcp_st.acks_out++;
    TCP_PROF_OUT();
}

/* Answer segment `s`, which belongs to no connection, with a reset (RFC 9293 3.10.7.1). */
void tcp_emit_rst(const struct tcp_seg *s)
{
    if (s->flags & F_RST)
        return;
    uint8_t *f = tcp_tx_buf(), *t = f + TCP_FRAME_TCP;
    uint32_t seq = (s->flags & F_ACK) ? s->ack : 0;
    uint32_t ack = s->seq + s->len + !!(s->flags & F_SYN) + !!(s->flags & F_FIN);
    uint8_t flags = (s->flags & F_ACK) ? F_RST : (F_RST | F_ACK);
    put_tcp(t, s->dport, s->sport, seq, ack, flags, 0, 0);
    put_ip(f, s->src_ip, TCP_HDR);
#ifndef TCP_ZERONIC
    ice_put16(t, 16, tcp_checksum(TCP_MY_IP(), s->src_ip, t, TCP_HDR)); /* else the NIC's */
#endif
    tcp_tx(f, TCP_FRAME_TCP + TCP_HDR);
}
