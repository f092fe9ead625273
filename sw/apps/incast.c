/*
 * incast.c - N-to-1 incast (issue: datacenter network). Args: S senders
 * (argv[3], default 80), B bytes per message (argv[4], default 1024, a
 * multiple of 8, at most 2048 = the NIC's default nic.max_msg_bytes).
 * Core 0 of node 0 receives S messages and checks every word (word i of the
 * message from node n is (n << 32) | i) and that each sender 1..S appears
 * exactly once; core 0 of nodes 1..S sends one message. Other cores exit.
 */
#include "nanopu.h"

#define MAX_SENDERS 4096
#define MAX_BYTES   2048

static uint8_t seen[MAX_SENDERS + 1];

static uint64_t word(uint64_t node, uint64_t i) { return (node << 32) | i; }

/* Node n's one message to node 0, context 0 (nodes are 10.0.0.(2+n), docs/platform.md section 2). */
static void send_one(uint64_t node, uint64_t words)
{
    lnic_write_r(lnic_hdr(NANOPU_IP(10, 0, 0, 2), 0, (uint16_t)(LNIC_WORD_BYTES * words)));
    for (uint64_t i = 0; i < words; i++)
        lnic_write_r(word(node, i));
}

/* The header's problem, or NULL if it comes from a new sender in 1..s with the right length. */
static const char *check_hdr(uint64_t hdr, uint32_t from, uint64_t s, uint64_t words)
{
    if (lnic_hdr_words(hdr) != words)
        return "wrong length";
    if (from == 0 || from > s)
        return "sender out of range";
    if (seen[from]++)
        return "duplicate sender";
    return NULL;
}

/* Read one message (always all of it); 0 if intact and from a new sender in 1..s. */
static int check_one(uint64_t s, uint64_t words)
{
    uint64_t hdr = lnic_read();
    uint32_t from = nanopu_node_of_ip(lnic_hdr_ip(hdr));
    const char *err = check_hdr(hdr, from, s, words);
    int bad = err != NULL;
    if (err)
        printf("incast: message from node %u (%u bytes): %s\n", from, lnic_hdr_len(hdr), err);
    for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++) {
        uint64_t w = lnic_read();
        if (w != word(from, i) && !bad) {
            printf("incast: word %u from node %u is %lx, expected %lx\n", i, from, w, word(from, i));
            bad = 1;
        }
    }
    lnic_msg_done();
    return bad;
}

int main(int argc, char **argv)
{
    uint64_t s = nanopu_arg_u64(argc, argv, 0, 80), bytes = nanopu_arg_u64(argc, argv, 1, 1024);
    uint64_t node = nanopu_node_index(), words = bytes / LNIC_WORD_BYTES;
    if (nanopu_core_id() != 0 || node > s)
        return 0;
    if (s > MAX_SENDERS || bytes % LNIC_WORD_BYTES != 0 || bytes > MAX_BYTES) {
        printf("incast: need S <= %d and B a multiple of 8, <= %d (S=%lu, B=%lu)\n",
               MAX_SENDERS, MAX_BYTES, s, bytes);
        return 1;
    }
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
