/*
 * nbody.c - a Barnes-Hut tree node answering force requests, the paper's N-body application
 * (docs/apps/paper-apps.md).  Core 0 of each node serves context 0; the other cores exit.
 * Messages (payload words; doubles as their IEEE bits):
 *   CONFIG  [0, x, y, m, s]          the node's centre of mass, mass and side (nbody.h)
 *   REQUEST [1, id, bx, by, mb]      a body; answered to its sender with
 *   FORCE   [2, id, valid, fx, fy]   valid = 0 if the node is too close to stand for its
 *                                    bodies (the requester must open it), fx = fy = 0 then
 * A request before any CONFIG, or a malformed message, ends the core with exit 2.
 */
#include "appnet.h"
#include "nbody.h"

enum { CONFIG, REQUEST, FORCE };

static void answer(const struct nb_node *n, const uint64_t *m, struct appnet_peer from)
{
    struct nb_force f = nb_force(n, nb_double(m[2]), nb_double(m[3]), nb_double(m[4]));
    uint64_t r[5] = {FORCE, m[1], f.valid, nb_bits(f.fx), nb_bits(f.fy)};
    appnet_send(from, r, 5);
}

int main(void)
{
    struct nb_node node = {0.0, 0.0, 0.0, 0.0};
    int configured = 0;
    if (nanopu_core_id() != 0)
        return 0;
    appnet_init(0);
    for (;;) {
        uint64_t m[5];
        struct appnet_peer from;
        uint32_t n = appnet_recv(m, 5, &from);
        if (n == 5 && m[0] == CONFIG) {
            node = (struct nb_node){nb_double(m[1]), nb_double(m[2]), nb_double(m[3]), nb_double(m[4])};
            configured = 1;
        } else if (n == 5 && m[0] == REQUEST && configured) {
            answer(&node, m, from);
        } else {
            nanopu_exit(2);
        }
    }
}
