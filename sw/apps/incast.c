/*
 * incast.c - N-to-1 incast (issue: datacenter network). Args: S senders
 * (argv[3], default 80), B bytes per message (argv[4], default 1024).
 * Core 0 of node 0 receives S messages and checks every word (word i of the
 * message from node n is (n << 32) | i) and that each sender 1..S appears
 * exactly once; core 0 of nodes 1..S sends one message. Other cores exit.
 */
#include "nanopu.h"

#define MAX_SENDERS 4096

static uint8_t seen[MAX_SENDERS + 1];

static void send_one(uint64_t node, uint64_t words)
{
    lnic_write_r(lnic_hdr(NANOPU_IP(10, 0, 0, 2), 0, (uint16_t)(8 * words)));
    for (uint64_t i = 0; i < words; i++)
        lnic_write_r((node << 32) | i);
}

/* Read one message; 0 if it is intact and from a new sender in 1..s. */
static int check_one(uint64_t s, uint64_t words)
{
    uint64_t hdr = lnic_read();
    uint32_t from = nanopu_node_of_ip(lnic_hdr_ip(hdr));
    int bad = lnic_hdr_words(hdr) != words || from == 0 || from > s || seen[from]++;
    for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++) {
        uint64_t w = lnic_read();
        if (w != (((uint64_t)from << 32) | i) && !bad) {
            printf("incast: word %u from node %u is %lx\n", i, from, w);
            bad = 1;
        }
    }
    lnic_msg_done();
    if (bad)
        printf("incast: bad message from node %u (%u words)\n", from, lnic_hdr_words(hdr));
    return bad;
}

int main(int argc, char **argv)
{
    uint64_t s = nanopu_arg_u64(argc, argv, 0, 80), bytes = nanopu_arg_u64(argc, argv, 1, 1024);
    uint64_t node = nanopu_node_index(), words = bytes / 8;
    if (nanopu_core_id() != 0 || node > s || s > MAX_SENDERS)
        return 0;
    if (node != 0) {
        send_one(node, words);
        return 0;
    }
    lnic_add_context(0, 0);
    int bad = 0;
    for (uint64_t k = 0; k < s; k++) {
        lnic_wait();
        bad |= check_one(s, words);
    }
    if (!bad)
        printf("incast: received %lu messages of %lu bytes, all intact\n", s, bytes);
    return bad;
}
