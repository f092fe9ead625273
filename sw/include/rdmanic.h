/*
 * rdmanic.h - a verbs-like interface to the RDMA NIC of nodes run with nic = "rdma"
 * (docs/models/rdma-nic.md; the model is crates/nic/src/rdma).
 *
 * The NIC runs the InfiniBand reliable-connection transport in hardware: software
 * registers memory regions, connects queue pairs (QPs) and posts work requests (WRs);
 * the NIC moves the bytes by DMA straight from and to the registered buffers (zero copy),
 * retransmits what the network loses (go-back-N), and reports each finished WR as a
 * completion in one completion queue (CQ) that the program polls, or sleeps on with wfi.
 *
 * A WR is posted with four 64-bit stores: its id, local address and remote address into
 * this hart's staging registers, then the doorbell word (length, remote key, operation,
 * QP), which posts it (the WQE written straight into the doorbell page, as mlx5's
 * BlueFlame does). A SEND consumes the peer's oldest RECV on that QP; an RDMA WRITE puts
 * the bytes at the remote address, which must lie in a region the peer registered under
 * the key given, and completes nothing at the peer. Within a QP everything is delivered
 * once and in order: a SEND posted after WRITEs completes at the peer after their bytes
 * are in its memory.
 *
 * The names follow libibverbs (ibv_post_send, ibv_poll_cq, ibv_wc), simplified: no
 * protection domains, no scatter lists, one CQ, QPs numbered 0..63 and connected by the
 * program (no connection manager), both ends starting at PSN 0.
 */
#ifndef RDMANIC_H
#define RDMANIC_H

#include "nanopu.h"

/* ---- Registers (crates/nic/src/rdma/regs.rs) --------------------------------------- */
#define RDMA_BASE       0x10020000ul
#define RDMA_WQE_ID     0x00 /* write 64: the WR's id (low 32 bits come back) */
#define RDMA_WQE_LADDR  0x08 /* write 64: local buffer address */
#define RDMA_WQE_RADDR  0x10 /* write 64: remote address (WRITE) */
#define RDMA_DOORBELL   0x18 /* write 64: len 31:0, rkey 47:32, op 55:48, qp 63:56; posts */
#define RDMA_CQ_POP     0x20 /* read 64: a completion, taken (bit 63 set), or 0 */
#define RDMA_CQ_LEN     0x28 /* read 32: byte count of the completion taken last */
#define RDMA_CQ_COUNT   0x30 /* read 32: completions waiting */
#define RDMA_QP_CONNECT 0x38 /* write 64: qp 7:0, remote qp 15:8, remote IPv4 63:32 */
#define RDMA_MR_BASE    0x40 /* write 64: region base, then ... */
#define RDMA_MR_LEN     0x48 /* write 64: ... its length, then ... */
#define RDMA_MR_REG     0x50 /* write 64: ... its key: registers it */
#define RDMA_INTMASK    0x58 /* write 64: 1 raises hart 0's external interrupt while a completion waits */
#define RDMA_IRQ        11   /* mcause of that interrupt: machine external */
#define RDMA_MSTATUS_MIE (1ul << 3) /* mstatus.MIE (RISC-V privileged spec 3.1.6.1) */

/* Operations (the doorbell's bits 55:48, and a completion's opcode). */
#define RDMA_OP_SEND  0
#define RDMA_OP_WRITE 1
#define RDMA_OP_RECV  3

/* Completion status (ibv_wc_status). */
#define RDMA_WC_SUCCESS        0
#define RDMA_WC_REM_ACCESS_ERR 1
#define RDMA_WC_RETRY_EXC_ERR  2
#define RDMA_WC_WR_FLUSH_ERR   3
#define RDMA_WC_REM_INV_REQ    4

#define RDMA_REG(off) (*(volatile uint64_t *)(RDMA_BASE + (off)))
#define RDMA_REG32(off) (*(volatile uint32_t *)(RDMA_BASE + (off)))

/* A completion (ibv_wc). */
struct rdma_wc {
    uint32_t wr_id;
    uint32_t byte_len;
    uint16_t qp;
    uint8_t opcode;
    uint8_t status;
};

/* Register [addr, addr + len) under `key`: the NIC reads and writes only registered
 * memory, and a peer's WRITE names the key of the region it targets. */
static inline void rdma_reg_mr(const void *addr, uint64_t len, uint16_t key)
{
    RDMA_REG(RDMA_MR_BASE) = (uintptr_t)addr;
    RDMA_REG(RDMA_MR_LEN) = len;
    RDMA_REG(RDMA_MR_REG) = key;
}

/* Connect QP `qp` to QP `remote_qp` of the node at IPv4 address `remote_ip`. */
static inline void rdma_connect(uint8_t qp, uint8_t remote_qp, uint32_t remote_ip)
{
    RDMA_REG(RDMA_QP_CONNECT) = (uint64_t)qp | (uint64_t)remote_qp << 8 | (uint64_t)remote_ip << 32;
}

static inline void rdma_post(uint8_t qp, uint8_t op, uint64_t wr_id, const void *buf, uint32_t len,
                             uint64_t raddr, uint16_t rkey)
{
    RDMA_REG(RDMA_WQE_ID) = wr_id;
    RDMA_REG(RDMA_WQE_LADDR) = (uintptr_t)buf;
    RDMA_REG(RDMA_WQE_RADDR) = raddr;
    RDMA_REG(RDMA_DOORBELL) = (uint64_t)len | (uint64_t)rkey << 32 | (uint64_t)op << 48 | (uint64_t)qp << 56;
}

/* ibv_post_send with IBV_WR_SEND: `len` bytes at `buf` into the peer's next RECV. */
static inline void rdma_post_send(uint8_t qp, uint64_t wr_id, const void *buf, uint32_t len)
{
    rdma_post(qp, RDMA_OP_SEND, wr_id, buf, len, 0, 0);
}

/* ibv_post_send with IBV_WR_RDMA_WRITE: `len` bytes at `buf` to the peer's `raddr`. */
static inline void rdma_post_write(uint8_t qp, uint64_t wr_id, const void *buf, uint32_t len,
                                   uint64_t raddr, uint16_t rkey)
{
    rdma_post(qp, RDMA_OP_WRITE, wr_id, buf, len, raddr, rkey);
}

/* ibv_post_recv: a buffer of `len` bytes for the next SEND on `qp`. */
static inline void rdma_post_recv(uint8_t qp, uint64_t wr_id, void *buf, uint32_t len)
{
    rdma_post(qp, RDMA_OP_RECV, wr_id, buf, len, 0, 0);
}

static inline uint32_t rdma_cq_count(void) { return RDMA_REG32(RDMA_CQ_COUNT); }

/* ibv_poll_cq for one entry: 1 and `*wc` filled, or 0 when the CQ is empty. */
static inline int rdma_poll_cq(struct rdma_wc *wc)
{
    uint64_t w = RDMA_REG(RDMA_CQ_POP);
    if (!(w >> 63))
        return 0;
    wc->wr_id = (uint32_t)w;
    wc->qp = (uint16_t)(w >> 32);
    wc->opcode = (uint8_t)(w >> 48);
    wc->status = (uint8_t)((w >> 56) & 0x7f);
    wc->byte_len = RDMA_REG32(RDMA_CQ_LEN);
    return 1;
}

/* Sleep in wfi until a completion waits (ibv_req_notify_cq and a completion channel,
 * without the kernel); returns the cycles slept. Interrupts only wake wfi: mstatus.MIE is
 * off meanwhile. */
static inline uint64_t rdma_sleep_cq(void)
{
    if (rdma_cq_count())
        return 0;
    uint64_t mstatus_mie = csr_read(mstatus) & RDMA_MSTATUS_MIE, slept = 0;
    csr_clear(mstatus, RDMA_MSTATUS_MIE);
    RDMA_REG(RDMA_INTMASK) = 1;
    csr_set(mie, 1ul << RDMA_IRQ);
    if (!rdma_cq_count()) {
        uint64_t t0 = read_mcycle();
        __asm__ volatile("wfi");
        slept = read_mcycle() - t0;
    }
    csr_clear(mie, 1ul << RDMA_IRQ);
    RDMA_REG(RDMA_INTMASK) = 0;
    csr_set(mstatus, mstatus_mie);
    return slept;
}

#endif
