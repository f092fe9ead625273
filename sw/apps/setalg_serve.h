/*
 * setalg_serve.h - a query answered (setalg.c's wire format, docs/apps/setalg.md) with the
 * index and the intersection of setalg_index.h, shared by setalg.c and setalg_ice.c.  The
 * NIC layer is the including program's: five functions it defines before including this
 * header (after setalg_index.h):
 *   setalg_begin(&peer)             wait for the next query: its payload word count, and in
 *                                   *peer who to reply to (opaque here: the nanoPU header
 *                                   word, or IceNIC's address and port)
 *   setalg_in()                     the query's next word
 *   reply_hdr(peer, st, ids, tag)   start the reply to `peer`, carrying `ids` ids
 *   setalg_out(w)                   the reply's next word
 *   setalg_end()                    the query is read and its reply complete
 */
#ifndef SETALG_SERVE_H
#define SETALG_SERVE_H

#include "setalg_index.h"

/* Read the query's n words into lists; 0 if one is not in the vocabulary. */
static int read_query(struct list *l, uint64_t n)
{
    int ok = 1;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = setalg_in();
        ok &= r < vocab;
        r = r < vocab ? r : 0;
        l[i] = (struct list){ &post[off[r]], off[r + 1] - off[r], 0 };
    }
    return ok;
}

static void answer(uint64_t peer, uint64_t tag, struct list *l, uint64_t n)
{
    uint32_t ids[MAX_IDS];
    uint64_t count = intersect(l, n, ids), sent = count < MAX_IDS ? count : MAX_IDS;
    reply_hdr(peer, ST_OK, sent, tag);
    setalg_out(count);
    for (uint64_t i = 0; i < sent; i++)
        setalg_out(ids[i]);
}

/* Serve the next query: answer it, or reply that it is malformed. */
static void serve_one(void)
{
    uint64_t peer, words = setalg_begin(&peer);
    uint64_t w0 = words > 0 ? setalg_in() : 0, tag = words > 1 ? setalg_in() : 0;
    uint64_t n = w0 >> 16;
    struct list l[MAX_QUERY];
    int ok = (w0 & 0xff) == OP_QUERY && n >= 1 && n <= MAX_QUERY && words == 2 + n;
    if (ok)
        ok = read_query(l, n);          /* reads the query's words, all of them */
    else
        for (uint64_t i = 2; i < words; i++)
            setalg_in();
    if (ok)
        answer(peer, tag, l, n);
    else
        reply_hdr(peer, ST_BAD, 0, tag);
    setalg_end();
}

#endif
