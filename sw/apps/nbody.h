/*
 * nbody.h - the force a Barnes-Hut tree node's mass exerts on a body, in double precision
 * (docs/apps/paper-apps.md).  The host's copy is crates/harness/src/apps/nbody.rs: the
 * same IEEE operations in the same order (built with -ffp-contract=off, so no fused
 * multiply-add), hence the same bits.
 *
 * 2-D, as the prototype's N-body node: a tree node has a centre of mass (x, y), a mass m and
 * a side s.  For a body at (bx, by) of mass mb: dx = x - bx, dy = y - by,
 * r2 = dx*dx + dy*dy + eps2 (Plummer softening), and the node may stand for its bodies when
 * s*s < theta2 * r2 (the Barnes-Hut opening criterion s/d < theta); then the force on the
 * body is f = G*m*mb / (r2*sqrt(r2)) times (dx, dy).
 */
#ifndef NBODY_H
#define NBODY_H

#include <stdint.h>

#define NB_G      6.674e-11  /* gravitational constant, m^3 kg^-1 s^-2 (CODATA 2018) */
#define NB_THETA2 0.25       /* theta = 0.5, the usual Barnes-Hut accuracy */
#define NB_EPS2   1.0e-6     /* softening length squared */

struct nb_node {
    double x, y, m, s;
};

struct nb_force {
    uint64_t valid;
    double fx, fy;
};

static inline double nb_sqrt(double x)
{
    double r;
    __asm__("fsqrt.d %0, %1" : "=f"(r) : "f"(x));
    return r;
}

static inline struct nb_force nb_force(const struct nb_node *n, double bx, double by, double mb)
{
    struct nb_force f = {0, 0.0, 0.0};
    double dx = n->x - bx, dy = n->y - by;
    double r2 = dx * dx + dy * dy + NB_EPS2;
    if (!(n->s * n->s < NB_THETA2 * r2))
        return f;
    double k = NB_G * n->m * mb / (r2 * nb_sqrt(r2));
    f.valid = 1;
    f.fx = k * dx;
    f.fy = k * dy;
    return f;
}

static inline uint64_t nb_bits(double d)
{
    union { double d; uint64_t u; } v = {.d = d};
    return v.u;
}

static inline double nb_double(uint64_t u)
{
    union { double d; uint64_t u; } v = {.u = u};
    return v.d;
}

#endif
