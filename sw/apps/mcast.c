/*
 * mcast.c - one multicast message from node 0 to nodes [0, N) (issue:
 * datacenter network). Args: N (argv[3], default 1024), B bytes (argv[4],
 * default 64, a multiple of 8). Core 0 of node 0 sends it (word i =
 * 0xC0FFEE00 + i) with a multicast header (nanopu.h: the network delivers it
 * once to every member except the sender); core 0 of every other member
 * receives exactly one message and checks its source, length and words,
 * silently on success. Other cores exit at once. The simulator's per-node
 * message counts show that nothing arrived twice.
 */
#include "nanopu.h"

static uint64_t word(uint64_t i) { return 0xC0FFEE00ull + i; }

static void send_group(uint64_t n, uint64_t bytes)
{
    lnic_write_multicast_hdr(0, (uint32_t)n, 0, (uint16_t)bytes);
    for (uint64_t i = 0; i < bytes / LNIC_WORD_BYTES; i++)
        lnic_write_r(word(i));
}

/* Read the one message (all of it); 0 if it is node 0's, `bytes` long and intact. */
static int check_one(uint64_t me, uint64_t bytes)
{
    uint64_t hdr = lnic_read();
    int bad = nanopu_node_of_ip(lnic_hdr_ip(hdr)) != 0 || lnic_hdr_len(hdr) != bytes;
    uint32_t first_bad = 0;
    for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++) {
        uint64_t w = lnic_read();
        if (w != word(i) && !bad) {
            first_bad = i;
            bad = 2;
        }
    }
    lnic_msg_done();
    if (bad == 1)
        printf("mcast: node %lu: wrong header %lx (expected node 0, %lu bytes)\n", me, hdr, bytes);
    else if (bad)
        printf("mcast: node %lu: word %u is wrong\n", me, first_bad);
    return bad != 0;
}

int main(int argc, char **argv)
{
    uint64_t n = nanopu_arg_u64(argc, argv, 0, 1024), bytes = nanopu_arg_u64(argc, argv, 1, 64);
    uint64_t me = nanopu_node_index();
    if (nanopu_core_id() != 0 || me >= n)
        return 0;
    if (bytes % LNIC_WORD_BYTES != 0 || bytes > LNIC_LEN_MASK) {
        if (me == 0)
            printf("mcast: B must be a multiple of 8, < 65536 (B=%lu)\n", bytes);
        return 1;
    }
    if (me == 0) {
        send_group(n, bytes);
        return 0;
    }
    lnic_add_context(0, 0);
    lnic_wait();
    return check_one(me, bytes);
}
