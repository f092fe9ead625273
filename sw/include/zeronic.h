/*
 * zeronic.h - ZeroNIC's registers (docs/models/zeronic.md "Registers"): beside IceNIC's in
 * the same block (icenic.h; they are ZeroNIC's control queue), four 64-bit write-only
 * registers: two operands, a command, and the payload of the next send request.
 */
#ifndef ZERONIC_H
#define ZERONIC_H

#include "icenic.h"

#define ZN_ARG0       0x100
#define ZN_ARG1       0x108
#define ZN_CMD        0x110
#define ZN_TX_PAYLOAD 0x118 /* bits 15:0 length, 23:16 region, 63:24 offset */
#define ZN_CTRL_DEPTH 64    /* the control queues' depth (ZeroParams::ctrl_queue_depth) */

enum { ZN_OP_REGION = 1, ZN_OP_FLOW = 2, ZN_OP_PIECE = 3, ZN_OP_RETIRE = 4 };

/* The metadata after every header the control queue delivers (little-endian). */
struct zn_meta {
    uint16_t magic; /* ZN_MAGIC */
    uint8_t flags;  /* ZN_CSUM_OK, ZN_SPLIT */
    uint8_t flow;   /* the flow the segment matched, or 0xff */
    uint32_t seq;   /* first sequence number placed */
    uint16_t placed, payload; /* bytes placed; payload bytes the segment carried */
};
#define ZN_META     12
#define ZN_MAGIC    0x5a4e
#define ZN_CSUM_OK  1
#define ZN_SPLIT    2

static inline void zn_cmd(uint64_t op, uint64_t n, uint64_t a0, uint64_t a1)
{
    ICENIC_REG(ZN_ARG0, uint64_t) = a0;
    ICENIC_REG(ZN_ARG1, uint64_t) = a1;
    ICENIC_REG(ZN_CMD, uint64_t) = op | n << 8;
}

/* Register `len` bytes at `addr` as memory region `mr`. */
static inline void zn_region(uint32_t mr, const void *addr, uint64_t len)
{
    zn_cmd(ZN_OP_REGION, mr, (uintptr_t)addr, len);
}

/* The next send request's payload: `len` bytes at `offset` in region `mr`. */
static inline void zn_tx_payload(uint32_t mr, uint64_t offset, uint32_t len)
{
    ICENIC_REG(ZN_TX_PAYLOAD, uint64_t) = offset << 24 | (uint64_t)mr << 16 | len;
}

#endif /* ZERONIC_H */
