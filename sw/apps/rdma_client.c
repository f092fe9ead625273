/*
 * rdma_client.c - a client of rdma.c on another node that times each one-sided operation
 * itself, end to end, as the nanoPU prototype's client does (tests-lnic/lnic-rdma-ops.c,
 * l-nic/chipyard branch lnic-sort; docs/apps/rdma.md "End to end from a client node").
 *
 * It waits until START_US of simulated time, when the server's region is filled (rdma.elf
 * takes 5 to 7 ms; the load generator's runs start at 8 ms likewise), then runs 5 tests, one per operation (READ, WRITE, CAS, fetch-and-add,
 * indirect READ), of 200 requests each, one request in flight at a time: read mcycle, write
 * the request into netTX, wait for the reply's first word in netRX, read mcycle again. The
 * prototype's tests are the same, its operations of one word and its arguments the ones
 * used here: WRITE and CAS store the word's address, the CAS compares with 0, the
 * fetch-and-add adds 0. Its addresses came from a table of uniform word indices; ours are
 * uniform too, drawn from SplitMix64 with the seed. Each reply is checked (op, status,
 * length); the latencies, in cycles, are printed in the prototype's CSV lines
 * (`&&CSV&&,READ,c1,c2,...`) so that one parser reads both programs' output.
 *
 * usage: rdma_client.elf SEED SERVER_NODE START_US. Core 0 only.
 */
#include "nanopu.h"
#include "rdma_wire.h"

#define TESTS    5
#define REQUESTS 200            /* per test, as the prototype's NUM_REQUESTS */
#define CYCLES_PER_US 3200      /* 3.2 GHz cores (docs/platform.md section 1) */

static uint64_t cycles[TESTS][REQUESTS];
static const char *const names[TESTS] = {"READ", "WRITE", "CAS", "FA", "INDIRECT_READ"};

/* SplitMix64's k-th output from state seed (Steele, Lea, Flood, OOPSLA 2014). */
static uint64_t splitmix(uint64_t seed, uint64_t k)
{
    uint64_t z = seed + (k + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The request's words after {op | n << 16, tag, address}: the prototype's arguments. */
static void send_request(uint32_t server, uint64_t op, uint64_t tag, uint64_t addr)
{
    uint64_t args = op == OP_WRITE ? 1 : op == OP_CAS ? 2 : op == OP_FAA ? 1 : 0;
    lnic_write_r(lnic_hdr(server, 0, (uint16_t)(8 * (3 + args))));
    lnic_write_r(op | 1ul << 16);
    lnic_write_r(tag);
    lnic_write_r(addr);
    if (op == OP_WRITE)
        lnic_write_r(addr);     /* new value */
    if (op == OP_CAS) {
        lnic_write_r(0);        /* compare */
        lnic_write_r(addr);     /* new value */
    }
    if (op == OP_FAA)
        lnic_write_r(0);        /* addend */
}

/* Read the reply; 0 if it answers `op` with status 0 and the expected data words. */
static int take_reply(uint64_t op)
{
    uint64_t words = lnic_hdr_words(lnic_read());
    uint64_t w0 = words ? lnic_read() : ~0ul;
    for (uint64_t i = 1; i < words; i++)
        lnic_read();
    lnic_msg_done();
    uint64_t data = op == OP_WRITE ? 0 : 1;
    return (w0 & 0xff) == op && ((w0 >> 8) & 0xff) == ST_OK && words == 2 + data ? 0 : 1;
}

/* One test: REQUESTS requests of `op`, each timed from before its first word is written
 * to when its reply's first word is ready. Returns the wrong replies. */
static int run_test(uint32_t server, uint64_t seed, uint64_t op)
{
    int wrong = 0;
    for (uint64_t i = 0; i < REQUESTS; i++) {
        uint64_t addr = 8 * (splitmix(seed, op * REQUESTS + i) % REGION_WORDS);
        uint64_t start = read_mcycle();
        send_request(server, op, start, addr);
        lnic_wait();
        cycles[op - 1][i] = read_mcycle() - start;
        wrong += take_reply(op);
    }
    return wrong;
}

static void print_test(int t)
{
    printf("&&CSV&&,%s", names[t]);
    for (int i = 0; i < REQUESTS; i++)
        printf(",%lu", (unsigned long)cycles[t][i]);
    printf("\n");
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    if (argc < 6) {
        printf("rdma_client: missing arguments\nusage: rdma_client.elf SEED SERVER_NODE START_US\n");
        return 2;
    }
    uint64_t seed = nanopu_arg_u64(argc, argv, 0, 0);
    uint32_t server = nanopu_ip_of_node(nanopu_arg_u64(argc, argv, 1, 0));
    uint64_t start = nanopu_arg_u64(argc, argv, 2, 0) * CYCLES_PER_US;
    lnic_add_context(0, 0);
    while (read_mcycle() < start) { }   /* the server fills its region meanwhile */
    int wrong = 0;
    for (uint64_t op = OP_READ; op <= OP_IREAD; op++)
        wrong += run_test(server, seed, op);
    for (int t = 0; t < TESTS; t++)
        print_test(t);
    printf("wrong replies: %d\nClient complete!\n", wrong);
    return wrong ? 1 : 0;
}
