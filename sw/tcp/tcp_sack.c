/*
 * tcp_sack.c - selective acknowledgments (RFC 2018): the sets of sequence ranges both sides
 * keep (the receiver's out-of-order data, the sender's SACKed data), the SACK option we
 * send, and the sender's use of the blocks it receives: during fast recovery each further
 * duplicate ACK resends the next hole below SACKed data instead of inflating cwnd, so
 * several losses in one window are repaired in one round trip (the conservative spirit of
 * RFC 6675: one segment out for each that left the network).
 */
#include "tcp_int.h"

/* Add [start, end) to the sorted, disjoint set r[0..*n), merging what it overlaps or
 * touches; returns its index, or -1 if the set was full (the range is then forgotten). */
int tcp_ranges_add(struct tcp_range *r, int *n, uint32_t start, uint32_t end)
{
    int i = 0;
    while (i < *n && SEQ_LT(r[i].end, start))
        i++;
    int j = i;
    while (j < *n && SEQ_LE(r[j].start, end)) {
        if (SEQ_LT(r[j].start, start))
            start = r[j].start;
        if (SEQ_GT(r[j].end, end))
            end = r[j].end;
        j++;
    }
    int removed = j - i;
    if (removed == 0 && *n == TCP_OOO_MAX)
        return -1;
    for (int k = j; k < *n; k++)
        r[k - removed + 1] = r[k];
    *n += 1 - removed;
    r[i].start = start;
    r[i].end = end;
    return i;
}

/* Drop what lies below `seq` from the set; returns the highest end dropped past `seq`
 * (a range reaching over it), or `seq`. */
uint32_t tcp_ranges_below(struct tcp_range *r, int *n, uint32_t seq)
{
    int k = 0;
    while (k < *n && SEQ_LE(r[k].start, seq)) {
        if (SEQ_GT(r[k].end, seq))
            seq = r[k].end;
        k++;
    }
    for (int i = k; i < *n; i++)
        r[i - k] = r[i];
    *n -= k;
    return seq;
}

/* The SACK option of an ACK we send (RFC 2018 3, 4): the block holding the most recent
 * out-of-order segment first, then the others, at most 4 (40 option bytes); padded with
 * two NOPs. Returns its length, 0 if there is nothing to report. */
int tcp_sack_option(const struct tcp_conn *c, uint8_t *o)
{
    if (!c->sack_ok || c->nooo == 0)
        return 0;
    int nb = 0, len = 4;
    o[0] = 1, o[1] = 1, o[2] = 5;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->nooo && nb < 4; i++) {
            int recent = c->ooo[i].start == c->last_ooo_start || (SEQ_LE(c->ooo[i].start, c->last_ooo_start) &&
                                                                   SEQ_GT(c->ooo[i].end, c->last_ooo_start));
            if (recent != (pass == 0))
                continue;
            ice_put32(o, len, c->ooo[i].start);
            ice_put32(o, len + 4, c->ooo[i].end);
            len += 8, nb++;
        }
    o[3] = (uint8_t)(2 + 8 * nb);
    return len;
}

/* The length tcp_sack_option() will give (a segment's data makes room for it). */
int tcp_sack_option_len(const struct tcp_conn *c)
{
    if (!c->sack_ok || c->nooo == 0)
        return 0;
    return 4 + 8 * (c->nooo < 4 ? c->nooo : 4);
}

/* Note the SACK blocks of an arriving ACK: those within (snd_una, snd_max]. */
void tcp_sack_input(struct tcp_conn *c, const struct tcp_seg *s)
{
    if (!c->sack_ok)
        return;
    for (int i = 0; i < s->nsack; i++) {
        uint32_t a = s->sack[i].start, b = s->sack[i].end;
        if (SEQ_LT(a, b) && SEQ_GT(a, c->snd_una) && SEQ_LE(b, c->snd_max))
            tcp_ranges_add(c->sacked, &c->nsacked, a, b);
    }
    tcp_ranges_below(c->sacked, &c->nsacked, c->snd_una);
}

/* In recovery, a duplicate ACK: resend the next hole (data not SACKed, below the highest
 * SACKed byte, not yet resent in this recovery). 1 if one was sent. */
int tcp_sack_next_hole(struct tcp_conn *c)
{
    if (!c->sack_ok || c->nsacked == 0)
        return 0;
    uint32_t seq = SEQ_GT(c->high_rxt, c->snd_una) ? c->high_rxt : c->snd_una;
    for (int i = 0; i < c->nsacked; i++) {
        if (SEQ_LT(seq, c->sacked[i].start)) {
            uint32_t room = c->sacked[i].start - seq;
            tcp_st.sack_retransmits++;
            c->high_rxt = seq + tcp_retransmit_at(c, seq, room);
            return 1;
        }
        if (SEQ_LT(seq, c->sacked[i].end))
            seq = c->sacked[i].end;
    }
    return 0;
}
