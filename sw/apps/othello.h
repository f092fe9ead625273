/*
 * othello.h - Othello on bitboards (docs/apps/paper-apps.md): legal moves, flips, an
 * evaluation and a sequential negamax.  Bit r*8+c is row r, column c (bit 0 = a1); a board
 * is (p, o): the discs of the side to move and of its opponent.  The host's copy of these
 * rules is crates/harness/src/apps/othello.rs; both must give the same values.
 */
#ifndef OTHELLO_H
#define OTHELLO_H

#include <stdint.h>

#define OTH_PASS 64               /* the "move" of a side that has none */
#define OTH_INF  (1ll << 40)
#define OTH_NOT_A 0xfefefefefefefefeull /* every column but a (0) */
#define OTH_NOT_H 0x7f7f7f7f7f7f7f7full /* every column but h (7) */
#define OTH_CORNERS 0x8100000000000081ull

/* Move every disc one step in direction d (0..7: N, S, E, W, NE, NW, SE, SW), dropping
 * those that leave the board. */
static inline uint64_t oth_shift(uint64_t b, int d)
{
    switch (d) {
    case 0: return b << 8;
    case 1: return b >> 8;
    case 2: return (b << 1) & OTH_NOT_A;
    case 3: return (b >> 1) & OTH_NOT_H;
    case 4: return (b << 9) & OTH_NOT_A;
    case 5: return (b << 7) & OTH_NOT_H;
    case 6: return (b >> 7) & OTH_NOT_A;
    default: return (b >> 9) & OTH_NOT_H;
    }
}

/* Squares where the side to move may play: empty, next to a line of opponent discs that
 * ends in one of its own. */
static inline uint64_t oth_moves(uint64_t p, uint64_t o)
{
    uint64_t empty = ~(p | o), m = 0;
    for (int d = 0; d < 8; d++) {
        uint64_t x = oth_shift(p, d) & o;
        for (int i = 0; i < 5; i++)
            x |= oth_shift(x, d) & o;
        m |= oth_shift(x, d) & empty;
    }
    return m;
}

/* The opponent discs a move at `sq` turns over. */
static inline uint64_t oth_flips(uint64_t p, uint64_t o, int sq)
{
    uint64_t f = 0;
    for (int d = 0; d < 8; d++) {
        uint64_t x = 0, b = oth_shift(1ull << sq, d);
        while (b & o) {
            x |= b;
            b = oth_shift(b, d);
        }
        if (b & p)
            f |= x;
    }
    return f;
}

/* Play `sq` (or OTH_PASS): the board for the other side, to move next. */
static inline void oth_play(uint64_t *p, uint64_t *o, int sq)
{
    uint64_t np = *p, no = *o;
    if (sq != OTH_PASS) {
        uint64_t f = oth_flips(np, no, sq);
        np |= f | (1ull << sq);
        no &= ~f;
    }
    *p = no;
    *o = np;
}

/* Population count, SWAR (libgcc's __popcountdi2 is not in the soft-float multilib). */
static inline int64_t oth_count(uint64_t b)
{
    b -= (b >> 1) & 0x5555555555555555ull;
    b = (b & 0x3333333333333333ull) + ((b >> 2) & 0x3333333333333333ull);
    b = (b + (b >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (int64_t)((b * 0x0101010101010101ull) >> 56);
}

/* Index of the lowest set bit of a non-zero b. */
static inline int oth_lowest(uint64_t b) { return (int)oth_count((b & -b) - 1); }

/* Heuristic value for the side to move: corners, mobility, discs. */
static inline int64_t oth_eval(uint64_t p, uint64_t o)
{
    int64_t corners = oth_count(p & OTH_CORNERS) - oth_count(o & OTH_CORNERS);
    int64_t mobility = oth_count(oth_moves(p, o)) - oth_count(oth_moves(o, p));
    return 16 * corners + 2 * mobility + (oth_count(p) - oth_count(o));
}

/* A finished game (neither side can move): the disc difference, weighted beyond any
 * heuristic value. */
static inline int64_t oth_final(uint64_t p, uint64_t o)
{
    return 1000 * (oth_count(p) - oth_count(o));
}

/* Negamax to `depth` plies: a side without moves passes (a ply); the value is for the side
 * to move. */
static int64_t oth_value(uint64_t p, uint64_t o, int depth)
{
    uint64_t m = oth_moves(p, o);
    if (depth == 0)
        return oth_eval(p, o);
    if (m == 0) {
        if (oth_moves(o, p) == 0)
            return oth_final(p, o);
        return -oth_value(o, p, depth - 1);
    }
    int64_t best = -OTH_INF;
    for (; m; m &= m - 1) {
        uint64_t cp = p, co = o;
        oth_play(&cp, &co, oth_lowest(m));
        int64_t v = -oth_value(cp, co, depth - 1);
        if (v > best)
            best = v;
    }
    return best;
}

#endif
