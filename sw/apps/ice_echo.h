/*
 * ice_echo.h - the serving loop of the IceNIC echo servers (ice_loopback.c, ice_stream.c;
 * docs/models/icenic.md).  Hart 0 keeps a receive buffer posted in each of the NIC's ten
 * receive request slots; every frame received is checked (IPv4/UDP to this node's MAC and
 * IP, lengths that agree), handed to the server's `work` (which may change its payload in
 * place), turned around (MACs, IP addresses and UDP ports swapped) in its buffer, sent back
 * from there, and the buffer is posted again once the send has completed.  A frame that
 * fails the check, or that `work` refuses, stops the program with exit code 2 and a message
 * naming it.
 *
 * Each frame lands ICE_RX_OFFSET bytes into its buffer, so that its payload (42 bytes in)
 * starts on an 8-byte boundary and the payload's words are aligned loads and stores: the
 * same idea as icenet's NET_IP_ALIGN, which shifts frames by 2 so that the IP header is
 * aligned (icenet's DMA engines take buffers at any byte address, DMA.scala's
 * StreamWriter/StreamReader: docs/models/icenic.md "Frames").
 *
 * Arguments (after program, MAC and IP): the number of frames to serve before exiting with
 * 0 (0: serve forever), then the wait mode: 0 polls the completion counts, 1 sleeps in wfi
 * with the receive-completion interrupt enabled in the NIC and in mie (not in mstatus: wfi
 * wakes on a pending enabled interrupt without trapping).  Other harts exit.
 */
#ifndef ICE_ECHO_H
#define ICE_ECHO_H

#include "icenic.h"

#define ICE_NBUF ICENIC_QUEUE_DEPTH
#define ICE_BUF_BYTES 1536
#define ICE_RX_OFFSET 6 /* (6 + ICE_FRAME_PAYLOAD) % 8 == 0 */

static uint8_t ice_bufs[ICE_NBUF][ICE_BUF_BYTES] __attribute__((aligned(64)));

/* 0 if `f` (of `len` bytes) is an IPv4/UDP frame to this node, else what is wrong. */
static const char *ice_check_frame(const uint8_t *f, uint32_t len, uint64_t mac, uint32_t ip)
{
    if (len < ICE_FRAME_PAYLOAD)
        return "shorter than its headers";
    for (int i = 0; i < 6; i++)
        if (f[ICE_FRAME_ETH_DST + i] != (uint8_t)(mac >> (8 * (5 - i))))
            return "not to this node's MAC";
    if (ice_get16(f, ICE_FRAME_ETH_TYPE) != 0x0800 || f[ICE_FRAME_IP] != 0x45 || f[ICE_FRAME_IP + 9] != 17)
        return "not IPv4 (no options) carrying UDP";
    uint32_t ip_len = ice_get16(f, ICE_FRAME_IP_LEN);
    if (ip_len + ICE_FRAME_IP != len || ice_get16(f, ICE_FRAME_UDP + 4) != ip_len - 20)
        return "lengths disagree (frame, IPv4 total length, UDP length)";
    if (ice_get32(f, ICE_FRAME_IP_DST) != ip)
        return "not to this node's IP";
    return 0;
}

static void ice_swap16(uint8_t *f, int a, int b)
{
    uint16_t t = *(uint16_t *)(f + a);
    *(uint16_t *)(f + a) = *(uint16_t *)(f + b);
    *(uint16_t *)(f + b) = t;
}

/* Send the frame back where it came from: swap MACs, IP addresses and UDP ports. */
static void ice_turn_around(uint8_t *f)
{
    for (int i = 0; i < 6; i += 2)
        ice_swap16(f, ICE_FRAME_ETH_DST + i, ICE_FRAME_ETH_SRC + i);
    ice_swap16(f, ICE_FRAME_IP_SRC, ICE_FRAME_IP_DST);
    ice_swap16(f, ICE_FRAME_IP_SRC + 2, ICE_FRAME_IP_DST + 2);
    ice_swap16(f, ICE_FRAME_UDP, ICE_FRAME_UDP + 2);
}

static uint32_t ice_wait_frame(int sleep)
{
    while (icenic_recv_comps() == 0)
        if (sleep)
            __asm__ volatile("wfi");
    return icenic_take_recv_comp();
}

/* Serve frames as the header comment says; `work` sees each checked frame (`len` bytes)
 * and returns 0, or what is wrong with it. Returns the program's exit code. */
static inline int ice_serve(int argc, char **argv, const char *name, const char *(*work)(uint8_t *f, uint32_t len))
{
    if (nanopu_core_id() != 0)
        return 0;
    uint64_t limit = nanopu_arg_u64(argc, argv, 0, 0);
    int sleep = nanopu_arg_u64(argc, argv, 1, 0) != 0;
    uint64_t mac = icenic_mac();
    uint32_t ip = nanopu_node_ip();
    if (sleep)
        icenic_irq_enable(2);
    for (int i = 0; i < ICE_NBUF; i++)
        icenic_post_recv(ice_bufs[i] + ICE_RX_OFFSET);
    for (uint64_t served = 0, i = 0; limit == 0 || served < limit; served++, i = (i + 1) % ICE_NBUF) {
        uint8_t *f = ice_bufs[i] + ICE_RX_OFFSET;
        uint32_t len = ice_wait_frame(sleep);
        const char *bad = ice_check_frame(f, len, mac, ip);
        if (!bad)
            bad = work(f, len);
        if (bad) {
            printf("%s: frame %lu (%u bytes): %s\n", name, (unsigned long)served, (unsigned)len, bad);
            return 2;
        }
        ice_turn_around(f);
        while (icenic_send_space() == 0) {
        }
        icenic_send(f, len);
        icenic_wait_send();
        icenic_post_recv(f);
    }
    return 0;
}

#endif
