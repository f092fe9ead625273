/*
 * alltoall.c - every node sends one message to every other node (issue:
 * datacenter network). Args: N nodes (argv[3], default 64), B bytes per message
 * (argv[4], default 256). Word i of the message from src to dst is
 * (src << 40) | (dst << 20) | i. Core 0 of each node registers context 0,
 * sends its N-1 messages, then receives N-1, checking every word and that each
 * sender appears exactly once; other cores exit at once.
 */
#include "nanopu.h"

#define MAX_NODES 4096

static uint8_t seen[MAX_NODES];

static uint64_t word(uint64_t src, uint64_t dst, uint64_t i) { return (src << 40) | (dst << 20) | i; }

static void send_all(uint64_t me, uint64_t n, uint64_t words)
{
    for (uint64_t d = 0; d < n; d++) {
        if (d == me)
            continue;
        lnic_write_r(lnic_hdr(NANOPU_IP(10, 0, 0, 2) + (uint32_t)d, 0, (uint16_t)(8 * words)));
        for (uint64_t i = 0; i < words; i++)
            lnic_write_r(word(me, d, i));
    }
}

/* Read one message; 0 if intact and from a sender not seen before. */
static int check_one(uint64_t me, uint64_t n, uint64_t words)
{
    uint64_t hdr = lnic_read();
    uint32_t from = nanopu_node_of_ip(lnic_hdr_ip(hdr));
    int bad = lnic_hdr_words(hdr) != words || from >= n || from == me || seen[from]++;
    for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++)
        bad |= lnic_read() != word(from, me, i);
    lnic_msg_done();
    if (bad)
        printf("alltoall: node %lu: bad message from node %u\n", me, from);
    return bad;
}

int main(int argc, char **argv)
{
    uint64_t n = nanopu_arg_u64(argc, argv, 0, 64), bytes = nanopu_arg_u64(argc, argv, 1, 256);
    uint64_t me = nanopu_node_index(), words = bytes / 8;
    if (nanopu_core_id() != 0 || me >= n || n > MAX_NODES)
        return 0;
    lnic_add_context(0, 0);
    send_all(me, n, words);
    int bad = 0;
    for (uint64_t k = 0; k + 1 < n; k++) {
        lnic_wait();
        bad |= check_one(me, n, words);
    }
    return bad;
}
