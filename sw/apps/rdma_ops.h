/*
 * rdma_ops.h - the one-sided RDMA-like operations of rdma.c (READ, WRITE, compare-and-swap,
 * fetch-and-add, indirect READ on a 4 MiB region; docs/apps/rdma.md), shared by the programs
 * that serve them: rdma.c (nanoPU cores, netRX/netTX) and rdma_ice.c (one IceNIC core, UDP
 * frames through appnet; docs/apps/rdma.md "On IceNIC").
 *
 * The region, its contents, the request checks and the operations are here; the NIC layer is
 * the including program's, five functions it defines (after including this header):
 *   rdma_begin(&peer)               wait for the next request: its payload word count, and
 *                                   in *peer who to reply to (opaque here: the nanoPU header
 *                                   word, or IceNIC's address and port)
 *   rdma_in()                       the request's next word
 *   reply_hdr(peer, op, st, n, tag) start the reply to `peer`, of n data words
 *   rdma_out(w)                     the reply's next word
 *   rdma_end()                      the request is read and its reply complete
 */
#ifndef RDMA_OPS_H
#define RDMA_OPS_H

#include "nanopu.h"
#include "rdma_wire.h"              /* the region's size, op codes and statuses */

static uint64_t region[REGION_WORDS] __attribute__((aligned(64)));

static inline uint64_t rdma_begin(uint64_t *peer);
static inline uint64_t rdma_in(void);
static void reply_hdr(uint64_t peer, uint64_t op, uint64_t st, uint64_t n, uint64_t tag);
static inline void rdma_out(uint64_t w);
static inline void rdma_end(void);

/* The 64-bit finalizer of SplitMix64 (Steele, Lea, Flood, OOPSLA 2014), as mica.c has it. */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fill(uint64_t seed)
{
    for (uint64_t i = 0; i < REGION_WORDS; i++)
        region[i] = mix(seed + (i + 1) * 0x9e3779b97f4a7c15ull);
}

static void skip(uint64_t words)
{
    while (words--)
        rdma_in();
}

/* n words from word index w, wrapping at the region's end (only an indirect READ's
 * pointer may land near it). */
static void send_words(uint64_t w, uint64_t n)
{
    for (uint64_t j = 0; j < n; j++)
        rdma_out(region[(w + j) % REGION_WORDS]);
}

/* The request's arguments after {op word, tag, address}, by op; ~0 for an unknown op. */
static uint64_t arg_words(uint64_t op, uint64_t n)
{
    switch (op) {
    case OP_READ: case OP_IREAD: return 0;
    case OP_WRITE: return n;
    case OP_CAS: return 2;
    case OP_FAA: return 1;
    }
    return ~0ul;
}

/* Whether the request is well formed: its length, size and address (in bytes, aligned,
 * within the region; READ and WRITE wholly within it). */
static int valid(uint64_t op, uint64_t n, uint64_t addr, uint64_t words)
{
    uint64_t span = (op == OP_READ || op == OP_WRITE) ? 8 * n : 8;
    int sized = (op == OP_CAS || op == OP_FAA) || (n >= 1 && n <= MAX_WORDS);
    return words == 3 + arg_words(op, n) && sized && addr % 8 == 0 && addr + span <= REGION_BYTES;
}

static void serve(uint64_t peer, uint64_t op, uint64_t n, uint64_t tag, uint64_t w)
{
    switch (op) {
    case OP_READ:
        reply_hdr(peer, op, ST_OK, n, tag);
        send_words(w, n);
        break;
    case OP_WRITE:
        for (uint64_t j = 0; j < n; j++)
            region[w + j] = rdma_in();
        reply_hdr(peer, op, ST_OK, 0, tag);
        break;
    case OP_CAS: {
        uint64_t expect = rdma_in(), desired = rdma_in();
        __atomic_compare_exchange_n(&region[w], &expect, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        reply_hdr(peer, op, ST_OK, 1, tag);
        rdma_out(expect);               /* the old value, whether it matched or not */
        break;
    }
    case OP_FAA: {
        uint64_t old = __atomic_fetch_add(&region[w], rdma_in(), __ATOMIC_SEQ_CST);
        reply_hdr(peer, op, ST_OK, 1, tag);
        rdma_out(old);
        break;
    }
    case OP_IREAD:
        reply_hdr(peer, op, ST_OK, n, tag);
        send_words((region[w] % REGION_BYTES) / 8, n);
        break;
    }
}

/* Serve the next request: check it, do it and reply, or reply that it is malformed. */
static void serve_one(void)
{
    uint64_t peer, words = rdma_begin(&peer);
    if (words < 3) {
        skip(words);
        reply_hdr(peer, 0, ST_BAD, 0, 0);
    } else {
        uint64_t w0 = rdma_in(), tag = rdma_in(), addr = rdma_in();
        uint64_t op = w0 & 0xff, n = w0 >> 16;
        if (valid(op, n, addr, words)) {
            serve(peer, op, n, tag, addr / 8);
        } else {
            skip(words - 3);
            reply_hdr(peer, op, ST_BAD, 0, tag);
        }
    }
    rdma_end();
}

#endif
