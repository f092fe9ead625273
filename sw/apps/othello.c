/*
 * othello.c - distributed minimax over Othello bitboards with map and reduce messages, the
 * paper's Othello application (docs/apps/paper-apps.md).
 *
 * Arguments: nodes N (the cluster's size), local depth L (default 1).  Core c of node n is
 * worker g = n * C + c (C cores per node) and serves context g.  Messages (payload words):
 *   MAP    [0, p, o, depth, parent, move]  search board (p, o), reached by `move`, to
 *                                          `depth` plies; `parent` names the sender's state
 *   REDUCE [1, parent, value, move, best]  the value of that board for its side to move, and
 *                                          the best move found there (OTH_PASS if none)
 * A board of depth <= L (or a finished game) is searched here and reduced at once; a deeper
 * one is mapped: each child board goes to another worker, round robin, and the reduce
 * messages coming back are combined (negamax; ties to the lowest square, as the host's
 * sequential search) until the last, which is reduced to the parent.  Workers serve
 * forever; a malformed message or a full state table ends the worker with exit 2 or 3.
 */
#include "appnet.h"
#include "othello.h"

enum { MAP, REDUCE };
#define STATES 256

/* A mapped board waiting for its children's reduce messages. */
struct state {
    struct appnet_peer parent;
    uint64_t parent_state, move;
    uint64_t children, replies;
    int64_t best;
    uint64_t best_move;
};

struct worker {
    uint64_t g, cores, workers, local_depth, next;
    uint64_t free[STATES], nfree;
    struct state st[STATES];
};

static struct appnet_peer worker_at(const struct worker *w, uint64_t g)
{
    struct appnet_peer p = {appnet_node_ip(g / w->cores), (uint16_t)g};
    return p;
}

static void reduce(struct appnet_peer to, uint64_t parent, int64_t value, uint64_t move, uint64_t best)
{
    uint64_t m[5] = {REDUCE, parent, (uint64_t)value, move, best};
    appnet_send(to, m, 5);
}

/* Send child boards of (p, o) as MAP messages for state s: every legal move, or a pass. */
static uint64_t map_children(struct worker *w, uint64_t p, uint64_t o, uint64_t depth, uint64_t s)
{
    uint64_t moves = oth_moves(p, o), n = 0;
    for (uint64_t m = moves ? moves : 1; m; m &= m - 1, n++) {
        int sq = moves ? oth_lowest(m) : OTH_PASS;
        uint64_t cp = p, co = o;
        oth_play(&cp, &co, sq);
        uint64_t msg[6] = {MAP, cp, co, depth - 1, s, (uint64_t)sq};
        appnet_send(worker_at(w, w->next++ % w->workers), msg, 6);
    }
    return n;
}

static void on_map(struct worker *w, const uint64_t *m, struct appnet_peer from)
{
    uint64_t p = m[1], o = m[2], depth = m[3];
    int finished = oth_moves(p, o) == 0 && oth_moves(o, p) == 0;
    if (depth <= w->local_depth || finished) {
        reduce(from, m[4], oth_value(p, o, (int)depth), m[5], OTH_PASS);
        return;
    }
    if (w->nfree == 0)
        nanopu_exit(3);
    uint64_t s = w->free[--w->nfree];
    struct state *st = &w->st[s];
    st->parent = from;
    st->parent_state = m[4];
    st->move = m[5];
    st->replies = 0;
    st->best = -OTH_INF;
    st->best_move = OTH_PASS;
    st->children = map_children(w, p, o, depth, s);
}

static void on_reduce(struct worker *w, const uint64_t *m)
{
    if (m[1] >= STATES)
        nanopu_exit(2);
    struct state *st = &w->st[m[1]];
    int64_t v = -(int64_t)m[2];
    if (v > st->best || (v == st->best && m[3] < st->best_move)) {
        st->best = v;
        st->best_move = m[3];
    }
    if (++st->replies < st->children)
        return;
    reduce(st->parent, st->parent_state, st->best, st->move, st->best_move);
    w->free[w->nfree++] = m[1];
}

int main(int argc, char **argv)
{
    static struct worker workers[16];
    uint64_t core = nanopu_core_id();
    if (core >= 16)
        return 0;
    struct worker *w = &workers[core];
    w->cores = nanopu_num_cores();
    w->g = nanopu_node_index() * w->cores + core;
    w->workers = nanopu_arg_u64(argc, argv, 0, 1) * w->cores;
    w->local_depth = nanopu_arg_u64(argc, argv, 1, 1);
    w->next = w->g + 1;
    for (w->nfree = 0; w->nfree < STATES; w->nfree++)
        w->free[w->nfree] = STATES - 1 - w->nfree;
    appnet_init((uint16_t)w->g);
    for (;;) {
        uint64_t m[6];
        struct appnet_peer from;
        uint32_t n = appnet_recv(m, 6, &from);
        if (n == 6 && m[0] == MAP)
            on_map(w, m, from);
        else if (n == 5 && m[0] == REDUCE)
            on_reduce(w, m);
        else
            nanopu_exit(2);
    }
}
