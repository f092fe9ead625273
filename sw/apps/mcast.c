/*
 * mcast.c - one multicast message from node 0 to nodes [0, N) (issue:
 * datacenter network). Args: N (argv[3], default 1024), B bytes (argv[4],
 * default 64). Core 0 of node 0 sends it (word i = 0xC0FFEE00 + i); core 0 of
 * every other member receives exactly one message and checks its source,
 * length and words. Other cores exit at once. The simulator's per-node message
 * counts show that nothing arrived twice.
 */
#include "nanopu.h"

int main(int argc, char **argv)
{
    uint64_t n = nanopu_arg_u64(argc, argv, 0, 1024), bytes = nanopu_arg_u64(argc, argv, 1, 64);
    uint64_t me = nanopu_node_index(), words = bytes / 8;
    if (nanopu_core_id() != 0 || me >= n)
        return 0;
    if (me == 0) {
        lnic_write_multicast_hdr(0, (uint32_t)n, 0, (uint16_t)bytes);
        for (uint64_t i = 0; i < words; i++)
            lnic_write_r(0xC0FFEE00ull + i);
        return 0;
    }
    lnic_add_context(0, 0);
    lnic_wait();
    uint64_t hdr = lnic_read();
    int bad = nanopu_node_of_ip(lnic_hdr_ip(hdr)) != 0 || lnic_hdr_len(hdr) != bytes;
    for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++)
        bad |= lnic_read() != 0xC0FFEE00ull + i;
    lnic_msg_done();
    if (bad)
        printf("mcast: node %lu got a bad message (header %lx)\n", me, hdr);
    return bad;
}
