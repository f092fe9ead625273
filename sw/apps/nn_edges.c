/*
 * nn_edges.c - one neuron with N input edges, the paper's NN inference microbenchmark
 * (docs/apps/paper-apps.md).  Core 0 serves context 0; the other cores exit (one neuron
 * has one accumulator).  Messages (payload words):
 *   CONFIG [0, N]                 start a neuron with N edges (N <= NN_MAX_INPUTS)
 *   WEIGHT [1, index, weight]     a Q8 weight of edge `index`
 *   DATA   [2, index, x]          the Q8 input on edge `index`; after the N-th, the neuron
 *                                 sends its activation on: [3, y, N] to the last sender
 *                                 (y = the accumulator >> 8, no ReLU: nn.h)
 * Every edge must bring exactly one DATA message; anything else is an error (exit 1..4).
 */
#include "appnet.h"
#include "nn.h"

enum { CONFIG, WEIGHT, DATA, RESULT };

struct neuron {
    uint64_t edges, seen;
    int64_t acc;
    int64_t w[NN_MAX_INPUTS];
    uint8_t got[NN_MAX_INPUTS];
};

static void configure(struct neuron *n, uint64_t edges)
{
    if (edges == 0 || edges > NN_MAX_INPUTS)
        nanopu_exit(1);
    n->edges = edges;
    n->seen = 0;
    n->acc = 0;
    memset(n->got, 0, sizeof n->got);
}

/* One DATA message: multiply-accumulate; true once every edge has brought its input. */
static int accumulate(struct neuron *n, uint64_t index, int64_t x)
{
    if (index >= n->edges || n->got[index]++)
        nanopu_exit(2);
    n->acc += n->w[index] * x;
    return ++n->seen == n->edges;
}

static void serve(struct neuron *n)
{
    uint64_t m[3];
    struct appnet_peer from;
    uint32_t words = appnet_recv(m, 3, &from);
    if (m[0] == CONFIG && words == 2) {
        configure(n, m[1]);
    } else if (m[0] == WEIGHT && words == 3 && m[1] < n->edges) {
        n->w[m[1]] = (int64_t)m[2];
    } else if (m[0] == DATA && words == 3) {
        if (accumulate(n, m[1], (int64_t)m[2])) {
            uint64_t r[3] = {RESULT, (uint64_t)nn_activate(n->acc, 1), n->edges};
            appnet_send(from, r, 3);
            n->seen = 0;
            n->acc = 0;
            memset(n->got, 0, sizeof n->got);
        }
    } else {
        nanopu_exit(3);
    }
}

int main(void)
{
    static struct neuron n;
    if (nanopu_core_id() != 0)
        return 0;
    appnet_init(0);
    for (;;)
        serve(&n);
}
