/*
 * nn_net.c - a multi-layer neural network spread over the cores of a cluster, one neuron
 * per core, the paper's NN inference application (docs/apps/paper-apps.md).
 *
 * Arguments: seed, inferences K, layer count L (2..8), then the L layer sizes s0..s(L-1).
 * Neuron g (0-based over layers 0, 1, ...) runs on core g % C of node g / C (C cores per
 * node) and serves context g.  Layer 0 is the input layer: each of its neurons receives
 * one message [k, i, x] from the host and sends x on.  A neuron j of layer l >= 1 waits
 * for one message [k, i, x] from each neuron i of layer l-1, accumulates its weights
 * (nn.h, from the seed) and sends [k, j, y] to every neuron of layer l+1, or, in the last
 * layer, to the host (10.0.0.1, context 0).  It does this for inferences k = 0..K-1 in
 * order, then exits 0.  A message of another inference, from a neuron out of range or
 * twice from the same neuron is an error: exit 2, 3 or 4.  Cores without a neuron exit 0.
 */
#include "appnet.h"
#include "nn.h"

#define NN_MAX_LAYERS 8

struct net {
    uint64_t seed, inferences, layers;
    uint64_t size[NN_MAX_LAYERS], first[NN_MAX_LAYERS + 1];
    uint64_t cores;
};

struct neuron {
    uint64_t layer, j, inputs;
    int64_t w[NN_MAX_INPUTS + 1]; /* w[inputs] is the bias */
    uint8_t got[NN_MAX_INPUTS];
};

static void parse(struct net *n, int argc, char **argv)
{
    n->seed = nanopu_arg_u64(argc, argv, 0, 1);
    n->inferences = nanopu_arg_u64(argc, argv, 1, 1);
    n->layers = nanopu_arg_u64(argc, argv, 2, 0);
    if (n->layers < 2 || n->layers > NN_MAX_LAYERS)
        nanopu_exit(1);
    n->first[0] = 0;
    for (uint64_t l = 0; l < n->layers; l++) {
        n->size[l] = nanopu_arg_u64(argc, argv, 3 + (int)l, 0);
        if (n->size[l] == 0 || n->size[l] > NN_MAX_INPUTS)
            nanopu_exit(1);
        n->first[l + 1] = n->first[l] + n->size[l];
    }
    n->cores = nanopu_num_cores();
}

/* The address of neuron g. */
static struct appnet_peer neuron_at(const struct net *n, uint64_t g)
{
    struct appnet_peer p = {appnet_node_ip(g / n->cores), (uint16_t)g};
    return p;
}

/* Place neuron g: its layer, index and weights. */
static void place(const struct net *n, struct neuron *u, uint64_t g)
{
    u->layer = 0;
    while (g >= n->first[u->layer + 1])
        u->layer++;
    u->j = g - n->first[u->layer];
    u->inputs = u->layer ? n->size[u->layer - 1] : 1;
    for (uint64_t i = 0; i <= u->inputs; i++)
        u->w[i] = u->layer ? nn_weight(n->seed, u->layer, u->j, i) : 0;
}

/* Receive inference k's inputs; the accumulator (Q16), or the input itself in layer 0. */
static int64_t gather(struct neuron *u, uint64_t k)
{
    memset(u->got, 0, u->inputs);
    int64_t acc = u->w[u->inputs] << NN_FRAC_BITS;
    for (uint64_t left = u->inputs; left > 0; left--) {
        uint64_t m[3];
        struct appnet_peer from;
        if (appnet_recv(m, 3, &from) != 3 || m[0] != k)
            nanopu_exit(2);
        if (m[1] >= u->inputs || u->got[m[1]]++)
            nanopu_exit(m[1] >= u->inputs ? 3 : 4);
        if (u->layer == 0)
            return (int64_t)m[2];
        acc += u->w[m[1]] * (int64_t)m[2];
    }
    return acc;
}

/* Send inference k's activation y on: to layer l+1, or from the last layer to the host. */
static void fan_out(const struct net *n, const struct neuron *u, uint64_t k, int64_t y)
{
    uint64_t m[3] = {k, u->j, (uint64_t)y};
    if (u->layer + 1 == n->layers) {
        struct appnet_peer host = {NANOPU_HOST_IP, 0};
        appnet_send(host, m, 3);
        return;
    }
    for (uint64_t g = n->first[u->layer + 1]; g < n->first[u->layer + 2]; g++)
        appnet_send(neuron_at(n, g), m, 3);
}

int main(int argc, char **argv)
{
    struct net n;
    struct neuron unit, *u = &unit;
    parse(&n, argc, argv); /* every core: argv is the same on each */
    uint64_t g = nanopu_node_index() * n.cores + nanopu_core_id();
    if (g >= n.first[n.layers])
        return 0;
    place(&n, u, g);
    appnet_init((uint16_t)g);
    int output = u->layer + 1 == n.layers;
    for (uint64_t k = 0; k < n.inferences; k++) {
        int64_t acc = gather(u, k);
        fan_out(&n, u, k, u->layer ? nn_activate(acc, output) : acc);
    }
    return 0;
}
