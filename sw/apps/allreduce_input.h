/*
 * allreduce_input.h - the inputs every ring all-reduce program reduces (tcp_allreduce.c on
 * the C TCP, rdma_allreduce.c on the RDMA NIC; docs/apps/tcp-workloads.md), one definition so
 * that each stack sums the same numbers and checks the same answer. tcp_allreduce.c still
 * holds an identical copy of tapp_input: moving it here shifts that program's code layout and
 * its published cycles by about 0.1%, so the move waits for the next regeneration of
 * experiments/tcp-workloads.
 */
#ifndef ALLREDUCE_INPUT_H
#define ALLREDUCE_INPUT_H

#include <stdint.h>

/* Input element k of rank h: SplitMix64's finaliser (Steele, Lea and Flood, OOPSLA 2014)
 * of both, a well-mixed input. */
static inline uint64_t tapp_input(uint32_t h, uint32_t k)
{
    uint64_t z = ((uint64_t)h << 32 | k) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The expected element k: the wrapping sum of every rank's input. */
static inline uint64_t tapp_sum(uint32_t hosts, uint32_t k)
{
    uint64_t want = 0;
    for (uint32_t h = 0; h < hosts; h++)
        want += tapp_input(h, k);
    return want;
}

#endif /* ALLREDUCE_INPUT_H */
