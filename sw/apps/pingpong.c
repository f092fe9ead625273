/*
 * pingpong.c - two-node smoke test of the network: core 0 of node 0 sends a
 * message of K words (K = argv[3], default 4) to node 1, which sends it back
 * with every word incremented; node 0 checks the reply and prints the round
 * trip in cycles. Every other core (and every other node) exits at once.
 */
#include "nanopu.h"

static uint64_t arg_or(int argc, char **argv, uint64_t fallback)
{
    uint64_t k = 0;
    if (argc < 4)
        return fallback;
    for (const char *p = argv[3]; *p >= '0' && *p <= '9'; p++)
        k = k * 10 + (uint64_t)(*p - '0');
    return k ? k : fallback;
}

static int ping(uint64_t k)
{
    uint64_t t0 = read_mcycle();
    lnic_write_r(lnic_hdr(NANOPU_IP(10, 0, 0, 3), 0, (uint16_t)(8 * k)));
    for (uint64_t i = 0; i < k; i++)
        lnic_write_r(0x1000 + i);
    lnic_wait();
    uint64_t hdr = lnic_read();
    int bad = lnic_hdr_len(hdr) != 8 * k;
    for (uint64_t i = 0; i < lnic_hdr_words(hdr); i++)
        bad |= lnic_read() != 0x1001 + i;
    lnic_msg_done();
    printf("pingpong: %lu words, round trip %lu cycles, %s\n", k, read_mcycle() - t0, bad ? "BAD" : "ok");
    return bad;
}

static void pong(void)
{
    lnic_wait();
    uint64_t hdr = lnic_read();
    lnic_write_r(hdr);
    for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++)
        lnic_add_int_i(1);
    lnic_msg_done();
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0 || nanopu_node_index() > 1)
        return 0;
    lnic_add_context(0, 0);
    if (nanopu_node_index() == 1) {
        pong();
        return 0;
    }
    return ping(arg_or(argc, argv, 4));
}
