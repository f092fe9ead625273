/*
 * rdma_app.h - what the programs on the RDMA NIC share (rdma_bulk.c, rdma_allreduce.c,
 * rdma_kv.c, rdma_kv_client.c; docs/models/rdma-nic.md): waiting for the next completion,
 * decimal arguments.
 * Written against rdmanic.h and the platform (nanopu.h) only; every includer waits for
 * completions, so rdma_next_wc is a plain static function (one copy, as each program had).
 */
#ifndef RDMA_APP_H
#define RDMA_APP_H

#include "nanopu.h"
#include "rdmanic.h"

/* What a program counts of its completions: cycles asleep in wfi waiting for them, and
 * how many it took. */
struct rdma_app_counts {
    uint64_t idle, cqes;
};

/* The next completion, sleeping in wfi while there is none; a failed one stops the program
 * with exit code 2, naming the node, the status (RDMA_WC_*) and the work request. */
static void rdma_next_wc(struct rdma_wc *wc, struct rdma_app_counts *n)
{
    while (!rdma_poll_cq(wc))
        n->idle += rdma_sleep_cq();
    n->cqes++;
    if (wc->status != RDMA_WC_SUCCESS) {
        printf("rdma: node %u: a work request failed (status %u, wr_id %u, qp %u)\n",
               (unsigned)nanopu_node_index(), wc->status, wc->wr_id, wc->qp);
        nanopu_exit(2);
    }
}

/* argv[i] (argv[3] is the first user argument, after program, MAC and IP) as a decimal
 * number; a missing or malformed one stops the program with exit code 1, naming it. */
static inline uint64_t rdma_arg(int argc, char **argv, int i, const char *name)
{
    uint64_t v = 0;
    const char *p = i < argc ? argv[i] : "";
    for (const char *q = p; *q || q == p; q++) {
        if (*q < '0' || *q > '9') {
            printf("argument %d (%s) is missing or not a number: '%s'\n", i - 2, name, p);
            nanopu_exit(1);
        }
        v = v * 10 + (uint64_t)(*q - '0');
    }
    return v;
}

#endif /* RDMA_APP_H */
