/*
 * rxcount.c - receive-path microbenchmark (nanoPU paper, "receiving N messages").
 * Core 0 registers context 0, consumes one warm-up message (so code and stack
 * are cached, as in a running server), then reads K messages (K = argv[3],
 * default 1) word by word from netRX, marks each done, prints the mcycle value
 * at which the last one was consumed ("end_cycle=...") and exits 0. The other
 * cores exit at once. `nanopu bench rx` compares end_cycle with the arrival of
 * the first timed message.
 */
#include "nanopu.h"

int printf(const char *fmt, ...);

static uint64_t parse_count(int argc, char **argv)
{
    uint64_t k = 0;
    if (argc < 4)
        return 1;
    for (const char *p = argv[3]; *p >= '0' && *p <= '9'; p++)
        k = k * 10 + (uint64_t)(*p - '0');
    return k ? k : 1;
}

static void consume_one(void)
{
    uint64_t hdr = lnic_read();
    for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++)
        (void)lnic_read();
    lnic_msg_done();
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    uint64_t k = parse_count(argc, argv);
    lnic_add_context(0, 0);
    for (uint64_t i = 0; i < k + 1; i++) {
        lnic_wait();
        consume_one();
    }
    uint64_t end = read_mcycle();
    printf("end_cycle=%lu\n", end);
    return 0;
}
