/*
 * ice_pingpong.c - two IceNIC nodes of a cluster exchange UDP frames through the network
 * (docs/models/icenic.md "Clusters"). Arguments (after program, MAC and IP): the number
 * of rounds (default 10), the frame's length in bytes (58 to 1,516, default 64) and the
 * peer's node index (default: this index with bit 0 flipped, so that `--nodes 2` pairs
 * nodes 0 and 1). The node with the lower index pings: each round it builds a frame
 * to the peer (payload: the round, the cycle it is sent at, then bytes derived from the
 * round), sends it and waits for the reply, which must be the frame turned around (MACs,
 * IP addresses and UDP ports swapped, payload unchanged). The peer pongs: it checks each
 * frame (to it, from the peer, the expected round) and sends it back turned around.
 * Cycles are the cluster's shared clock, so the pong side measures the one-way latency
 * (send request written to receive completion taken) and the ping side the round trip;
 * each prints its least over the rounds. A wrong frame exits with 2 naming what is wrong.
 * Other cores exit at once.
 */
#include "icenic.h"

#define PORT 9000
#define BUF_BYTES 1536
#define HDR ICE_FRAME_PAYLOAD

static uint8_t tx[BUF_BYTES] __attribute__((aligned(64)));
static uint8_t rx[BUF_BYTES] __attribute__((aligned(64)));

static void put64(uint8_t *f, int off, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        f[off + i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *f, int off)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)f[off + i] << (8 * i);
    return v;
}

static int fail(uint64_t round, const char *why)
{
    printf("ice_pingpong: node %lu round %lu: %s\n", (unsigned long)nanopu_node_index(), (unsigned long)round, why);
    return 2;
}

/* The reply must be `sent` (of `len` bytes) turned around. */
static const char *check_reply(const uint8_t *got, uint32_t got_len, const uint8_t *sent, uint32_t len)
{
    if (got_len != len)
        return "reply of another length";
    for (int i = 0; i < 6; i++)
        if (got[ICE_FRAME_ETH_DST + i] != sent[ICE_FRAME_ETH_SRC + i] || got[ICE_FRAME_ETH_SRC + i] != sent[ICE_FRAME_ETH_DST + i])
            return "MAC addresses not swapped";
    if (ice_get32(got, ICE_FRAME_IP_SRC) != ice_get32(sent, ICE_FRAME_IP_DST) || ice_get32(got, ICE_FRAME_IP_DST) != ice_get32(sent, ICE_FRAME_IP_SRC))
        return "IP addresses not swapped";
    for (uint32_t i = HDR; i < len; i++)
        if (got[i] != sent[i])
            return "payload changed";
    return 0;
}

static int ping(uint64_t peer, uint64_t rounds, uint32_t len)
{
    uint64_t best = ~0ull;
    for (uint64_t r = 0; r < rounds; r++) {
        ice_udp_frame(tx, peer, PORT, PORT, len - HDR);
        for (uint32_t i = HDR + 16; i < len; i++)
            tx[i] = (uint8_t)(r * 7 + i);
        put64(tx, HDR, r);
        icenic_post_recv(rx);
        uint64_t t0 = read_mcycle();
        put64(tx, HDR + 8, t0);
        icenic_send(tx, len);
        icenic_wait_send();
        uint32_t got = icenic_wait_recv();
        uint64_t rtt = read_mcycle() - t0;
        const char *bad = check_reply(rx, got, tx, len);
        if (bad)
            return fail(r, bad);
        best = rtt < best ? rtt : best;
    }
    printf("ice_pingpong: %lu rounds of %u-byte frames, round trip %lu cycles (least)\n", (unsigned long)rounds,
           (unsigned)len, (unsigned long)best);
    return 0;
}

static void swap_bytes(uint8_t *f, int a, int b, int n)
{
    for (int i = 0; i < n; i++) {
        uint8_t t = f[a + i];
        f[a + i] = f[b + i];
        f[b + i] = t;
    }
}

static int pong(uint64_t peer, uint64_t rounds, uint32_t len)
{
    uint64_t best = ~0ull;
    for (uint64_t r = 0; r < rounds; r++) {
        icenic_post_recv(rx);
        uint32_t got = icenic_wait_recv();
        uint64_t one_way = read_mcycle() - get64(rx, HDR + 8);
        if (got != len || ice_get32(rx, ICE_FRAME_IP_DST) != nanopu_node_ip() || ice_get32(rx, ICE_FRAME_IP_SRC) != ice_node_ip(peer))
            return fail(r, "frame not from the peer to this node, or of another length");
        if (get64(rx, HDR) != r)
            return fail(r, "frame of another round");
        swap_bytes(rx, ICE_FRAME_ETH_DST, ICE_FRAME_ETH_SRC, 6);
        swap_bytes(rx, ICE_FRAME_IP_SRC, ICE_FRAME_IP_DST, 4);
        swap_bytes(rx, ICE_FRAME_UDP, ICE_FRAME_UDP + 2, 2);
        icenic_send(rx, got);
        icenic_wait_send();
        best = one_way < best ? one_way : best;
    }
    printf("ice_pingpong: one way %lu cycles (least)\n", (unsigned long)best);
    return 0;
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    uint64_t rounds = nanopu_arg_u64(argc, argv, 0, 10);
    uint64_t len = nanopu_arg_u64(argc, argv, 1, 64);
    uint64_t peer = nanopu_arg_u64(argc, argv, 2, nanopu_node_index() ^ 1);
    if (len < HDR + 16 || len > ICENIC_MAX_FRAME)
        return fail(0, "frame length out of range (58 to 1,516 bytes)");
    if (peer == nanopu_node_index())
        return fail(0, "the peer is this node");
    return peer > nanopu_node_index() ? ping(peer, rounds, (uint32_t)len) : pong(peer, rounds, (uint32_t)len);
}
