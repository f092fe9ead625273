/*
 * icenic.h - FireSim's IceNIC, the DMA NIC of the traditional baseline node, for
 * bare-metal C programs on a node run with `--nic icenic` (docs/models/icenic.md).
 *
 * The NIC is a block of memory-mapped registers at ICENIC_BASE: software writes send
 * requests (frame length and buffer address in one 64-bit word) and receive requests
 * (a buffer address) into two queues of ICENIC_QUEUE_DEPTH, and reads completions back.
 * Frames move between memory and the NIC by DMA, one frame per request, in request
 * order: the n-th receive completion is the frame written into the n-th receive buffer.
 * The NIC's two interrupt lines (send and receive completion), masked by ICENIC_INTMASK,
 * reach hart 0 as the machine external interrupt (mip.MEIP, cause 11).
 *
 * A frame is what the wire carries: the 14-byte Ethernet header from the buffer's first
 * byte (as the nanoPU artifact's IceNIC programs have it), then IPv4 and UDP headers and
 * the payload (ICE_FRAME_* offsets below). Header fields are big-endian; ice_bswap16/32 convert.
 * The nanoPU authors gave their IceNIC cores byte-swap instructions, which IceNIC nodes
 * have: build with -DICENIC_BSWAP_INSN to use them; without it the swaps below cost a few
 * shifts each (and the program also runs where the instructions are absent).
 */
#ifndef ICENIC_H
#define ICENIC_H

#include "nanopu.h"

/* ---- Registers (icenet IceNicControllerModule; docs/models/icenic.md) ------------ */
#define ICENIC_BASE        0x10016000ul
#define ICENIC_SEND_REQ    0x00 /* write 64: bits 47:0 address, 62:48 length */
#define ICENIC_RECV_REQ    0x08 /* write 64: buffer address */
#define ICENIC_SEND_COMP   0x10 /* read 8: 1 (one send completion taken) or 0 */
#define ICENIC_RECV_COMP   0x12 /* read 16: length of the oldest received frame, taken */
#define ICENIC_COUNTS      0x14 /* read 32: send space, recv space, send comps, recv comps */
#define ICENIC_MACADDR     0x18 /* read 64: the node's MAC (48 bits) */
#define ICENIC_INTMASK     0x20 /* read/write 8: bit 0 send, bit 1 receive completion */
/* The depth of the NIC's four control queues, which the programs' buffer rings mirror: 64,
 * the nanoPU artifact's IceNIC SoC's (`icenet.WithIceNIC`, l-nic/icenet 512c87e), as the
 * model's default; a node run with another --ice-queue-depth needs programs built with
 * EXTRA_CFLAGS=-DICENIC_QUEUE_DEPTH=N (icenet's own NICConfig has 10). */
#ifndef ICENIC_QUEUE_DEPTH
#define ICENIC_QUEUE_DEPTH 64
#endif
#define ICENIC_MAX_FRAME   1516
#define ICENIC_IRQ         11 /* mcause of its interrupt: machine external */

#define ICENIC_REG(off, type) (*(volatile type *)(ICENIC_BASE + (off)))

static inline uint32_t icenic_counts(void) { return ICENIC_REG(ICENIC_COUNTS, uint32_t); }
static inline uint32_t icenic_send_space(void) { return icenic_counts() & 0xff; }
static inline uint32_t icenic_recv_space(void) { return (icenic_counts() >> 8) & 0xff; }
static inline uint32_t icenic_send_comps(void) { return (icenic_counts() >> 16) & 0xff; }
static inline uint32_t icenic_recv_comps(void) { return icenic_counts() >> 24; }
static inline uint64_t icenic_mac(void) { return ICENIC_REG(ICENIC_MACADDR, uint64_t) & 0xffffffffffffull; }

/* Queue a frame of `len` bytes at `buf` for sending (check icenic_send_space first: a
 * request written to a full queue stops the program with an error). */
static inline void icenic_send(const void *buf, uint32_t len)
{
    ICENIC_REG(ICENIC_SEND_REQ, uint64_t) = ((uint64_t)len << 48) | ((uintptr_t)buf & 0xffffffffffffull);
}

/* Give the NIC a buffer of at least ICENIC_MAX_FRAME bytes for the next frame received. */
static inline void icenic_post_recv(void *buf)
{
    ICENIC_REG(ICENIC_RECV_REQ, uint64_t) = (uintptr_t)buf;
}

/* Take one send completion: 1, or 0 if none was pending. */
static inline int icenic_take_send_comp(void) { return ICENIC_REG(ICENIC_SEND_COMP, uint8_t); }

/* Take the oldest receive completion: the frame's length, or 0 if none was pending. */
static inline uint32_t icenic_take_recv_comp(void) { return ICENIC_REG(ICENIC_RECV_COMP, uint16_t); }

/* Busy-wait for and take a receive completion; returns the frame's length. */
static inline uint32_t icenic_wait_recv(void)
{
    while (icenic_recv_comps() == 0) {
    }
    return icenic_take_recv_comp();
}

/* Busy-wait for and take a send completion. */
static inline void icenic_wait_send(void)
{
    while (!icenic_take_send_comp()) {
    }
}

/* Enable the NIC's interrupts (bit 0 send, bit 1 receive completion) and the machine
 * external interrupt in mie. The program's trap handler sees mcause = ICENIC_IRQ and
 * takes completions until the counts are 0, which lowers the line. */
static inline void icenic_irq_enable(uint32_t mask)
{
    ICENIC_REG(ICENIC_INTMASK, uint8_t) = (uint8_t)mask;
    csr_set(mie, 1ul << ICENIC_IRQ);
}

/* ---- Frames: Ethernet, IPv4, UDP (docs/models/icenic.md "Frames") ------------------ */
#define ICE_FRAME_ETH_DST   0  /* 6 bytes */
#define ICE_FRAME_ETH_SRC   6  /* 6 bytes */
#define ICE_FRAME_ETH_TYPE  12 /* 0x0800: IPv4 */
#define ICE_FRAME_IP        14
#define ICE_FRAME_IP_LEN    (ICE_FRAME_IP + 2)
#define ICE_FRAME_IP_SRC    (ICE_FRAME_IP + 12)
#define ICE_FRAME_IP_DST    (ICE_FRAME_IP + 16)
#define ICE_FRAME_UDP       (ICE_FRAME_IP + 20)
#define ICE_FRAME_PAYLOAD   (ICE_FRAME_UDP + 8)

#ifdef ICENIC_BSWAP_INSN
/* The byte-swap instructions of the nanoPU artifact's IceNIC cores (funct7 0x2A under the
 * OP opcode; funct3 0, 1, 2 swap 2, 4, 8 bytes), present on IceNIC nodes only. */
static inline uint16_t ice_bswap16(uint16_t v)
{
    uint64_t r;
    __asm__(".insn r 0x33, 0, 0x2A, %0, %1, x0" : "=r"(r) : "r"((uint64_t)v));
    return (uint16_t)r;
}
static inline uint32_t ice_bswap32(uint32_t v)
{
    uint64_t r;
    __asm__(".insn r 0x33, 1, 0x2A, %0, %1, x0" : "=r"(r) : "r"((uint64_t)v));
    return (uint32_t)r;
}
#else
static inline uint16_t ice_bswap16(uint16_t v) { return (uint16_t)((v >> 8) | (v << 8)); }
static inline uint32_t ice_bswap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}
#endif

/* Big-endian fields of a frame, by byte offset (frames are 2-byte aligned there). */
static inline uint16_t ice_get16(const uint8_t *f, int off) { return ice_bswap16(*(const uint16_t *)(f + off)); }
static inline uint32_t ice_get32(const uint8_t *f, int off)
{
    return ((uint32_t)ice_get16(f, off) << 16) | ice_get16(f, off + 2);
}
static inline void ice_put16(uint8_t *f, int off, uint16_t v) { *(uint16_t *)(f + off) = ice_bswap16(v); }
static inline void ice_put32(uint8_t *f, int off, uint32_t v)
{
    ice_put16(f, off, (uint16_t)(v >> 16));
    ice_put16(f, off + 2, (uint16_t)v);
}

/* ---- Frames between the nodes of a cluster (docs/models/icenic.md "Clusters") ------- */
/* Node n is IPv4 10.0.0.(2+n) with MAC 02:00:0a:00:00:00 + 2 + n; switches route a frame
 * by its IPv4 destination (the test host is 10.0.0.1, NANOPU_HOST_IP). */
static inline uint32_t ice_node_ip(uint64_t n) { return NANOPU_IP(10, 0, 0, 2) + (uint32_t)n; }
static inline uint64_t ice_node_mac(uint64_t n) { return 0x02000a000000ull + 2 + n; }

/* The IPv4 header checksum (RFC 791) of the 20-byte header at `h`, its checksum field 0. */
static inline uint16_t ice_ip_checksum(const uint8_t *h)
{
    uint32_t s = 0;
    for (int i = 0; i < 20; i += 2)
        s += ice_get16(h, i);
    while (s > 0xffff)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

static inline void ice_put_mac(uint8_t *f, int off, uint64_t mac)
{
    for (int i = 0; i < 6; i++)
        f[off + i] = (uint8_t)(mac >> (8 * (5 - i)));
}

/* Write the Ethernet, IPv4 (no options, TTL 64) and UDP (checksum 0: none) headers of a
 * frame from this node to node `dst` with `payload_len` bytes of payload (which the caller
 * puts at f + ICE_FRAME_PAYLOAD); returns the frame's length. */
static inline uint32_t ice_udp_frame(uint8_t *f, uint64_t dst, uint16_t src_port, uint16_t dst_port,
                                     uint32_t payload_len)
{
    ice_put_mac(f, ICE_FRAME_ETH_DST, ice_node_mac(dst));
    ice_put_mac(f, ICE_FRAME_ETH_SRC, icenic_mac());
    ice_put16(f, ICE_FRAME_ETH_TYPE, 0x0800);
    uint8_t *ip = f + ICE_FRAME_IP;
    uint16_t ip_len = (uint16_t)(20 + 8 + payload_len);
    ice_put16(ip, 0, 0x4500);            /* version 4, 5 words, TOS 0 */
    ice_put16(ip, 2, ip_len);
    ice_put32(ip, 4, 0x00004000);        /* id 0, don't fragment */
    ice_put16(ip, 8, (64 << 8) | 17);    /* TTL 64, UDP */
    ice_put16(ip, 10, 0);
    ice_put32(ip, 12, nanopu_node_ip());
    ice_put32(ip, 16, ice_node_ip(dst));
    ice_put16(ip, 10, ice_ip_checksum(ip));
    ice_put16(f, ICE_FRAME_UDP, src_port);
    ice_put16(f, ICE_FRAME_UDP + 2, dst_port);
    ice_put16(f, ICE_FRAME_UDP + 4, (uint16_t)(ip_len - 20));
    ice_put16(f, ICE_FRAME_UDP + 6, 0);
    return ICE_FRAME_PAYLOAD + payload_len;
}

#endif /* ICENIC_H */
