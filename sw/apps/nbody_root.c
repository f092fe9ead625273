/*
 * nbody_root.c - the root of a Barnes-Hut tree receiving one force request per body from
 * many senders: the paper's large-scale N-body estimate as an incast through the transport
 * (docs/apps/paper-apps.md).
 *
 * Arguments: senders S, bodies per sender M, seed.  Every core of node 0 serves context 0
 * as the root (nbody.h, the node NB_ROOT: the whole 1,000 m square), answering each REQUEST
 * [1, id, bx, by, mb] with FORCE [2, id, valid, fx, fy] (nbody.c's protocol).  Core 0 of
 * nodes 1..S sends its M bodies (body i of sender n is body n * M + i of the seeded set,
 * the host's nbody::body), then checks every answer against its own nb_force, bit for bit,
 * and exits 0 (1 on a wrong or unexpected answer).  Other cores exit 0.
 */
#include "appnet.h"
#include "nbody.h"
#include "nn.h"

enum { CONFIG, REQUEST, FORCE };

static const struct nb_node root = {500.0, 500.0, 5.0e9, 1000.0};

/* A uniform double in [lo, hi) from a hash (the host's nbody::uniform). */
static double uniform(uint64_t h, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(h >> 11) / 9007199254740992.0);
}

static void body(uint64_t seed, uint64_t i, double *b)
{
    b[0] = uniform(nn_mix(seed ^ (i << 2) ^ 0), 0.0, 1000.0);
    b[1] = uniform(nn_mix(seed ^ (i << 2) ^ 1), 0.0, 1000.0);
    b[2] = uniform(nn_mix(seed ^ (i << 2) ^ 2), 1.0, 100.0);
}

static void __attribute__((noreturn)) serve_root(void)
{
    appnet_init(0);
    for (;;) {
        uint64_t m[5];
        struct appnet_peer from;
        if (appnet_recv(m, 5, &from) != 5 || m[0] != REQUEST)
            nanopu_exit(2);
        struct nb_force f = nb_force(&root, nb_double(m[2]), nb_double(m[3]), nb_double(m[4]));
        uint64_t r[5] = {FORCE, m[1], f.valid, nb_bits(f.fx), nb_bits(f.fy)};
        appnet_send(from, r, 5);
    }
}

/* Is m the right answer for body `id` of this sender's range [first, first + count)? */
static int right(const uint64_t *m, uint64_t seed, uint64_t first, uint64_t count)
{
    if (m[0] != FORCE || m[1] < first || m[1] >= first + count)
        return 0;
    double b[3];
    body(seed, m[1], b);
    struct nb_force f = nb_force(&root, b[0], b[1], b[2]);
    return m[2] == f.valid && m[3] == nb_bits(f.fx) && m[4] == nb_bits(f.fy);
}

static int send_bodies(uint64_t node, uint64_t per, uint64_t seed)
{
    uint64_t first = (node - 1) * per;
    struct appnet_peer to = {appnet_node_ip(0), 0};
    appnet_init(0);
    for (uint64_t i = first; i < first + per; i++) {
        double b[3];
        body(seed, i, b);
        uint64_t m[5] = {REQUEST, i, nb_bits(b[0]), nb_bits(b[1]), nb_bits(b[2])};
        appnet_send(to, m, 5);
    }
    for (uint64_t k = 0; k < per; k++) {
        uint64_t m[5];
        struct appnet_peer from;
        if (appnet_recv(m, 5, &from) != 5 || !right(m, seed, first, per))
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t senders = nanopu_arg_u64(argc, argv, 0, 1);
    uint64_t per = nanopu_arg_u64(argc, argv, 1, 1);
    uint64_t seed = nanopu_arg_u64(argc, argv, 2, 1);
    uint64_t node = nanopu_node_index();
    if (node == 0)
        serve_root();
    if (node > senders || nanopu_core_id() != 0)
        return 0;
    return send_bodies(node, per, seed);
}
