/*
 * rdma.c - one-sided RDMA-like operations served by nanoPU cores: READ, WRITE,
 * compare-and-swap, fetch-and-add and indirect READ on a 4 MiB region (the nanoPU paper's
 * one-sided RDMA experiment; docs/apps/rdma.md has the wire format and what it follows).
 *
 * The region is shared by every core of the node: core 0 fills it from the seed (argv[3])
 * with SplitMix64's outputs from state seed, as the load generator
 * (crates/cluster/src/rdma.rs) computes them; then every core registers context 0 and the
 * NIC hands each request to a core by JBSQ.  CAS and FAA are atomic across cores (RV64A); a READ or WRITE is not atomic
 * against another core's WRITE of the same words, as one-sided RDMA's are not.
 */
#include "nanopu.h"

#define REGION_BYTES (4ul << 20)
#define REGION_WORDS (REGION_BYTES / 8)
#define MAX_WORDS    64                 /* one 512-byte transfer at most */

enum { OP_READ = 1, OP_WRITE = 2, OP_CAS = 3, OP_FAA = 4, OP_IREAD = 5 };
enum { ST_OK = 0, ST_BAD = 3 };

static uint64_t region[REGION_WORDS] __attribute__((aligned(64)));
static volatile uint64_t filled;

/* The 64-bit finalizer of SplitMix64 (Steele, Lea, Flood, OOPSLA 2014), as mica.c has it. */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fill(uint64_t seed)
{
    for (uint64_t i = 0; i < REGION_WORDS; i++)
        region[i] = mix(seed + (i + 1) * 0x9e3779b97f4a7c15ull);
}

static void reply_hdr(uint64_t hdr, uint64_t op, uint64_t st, uint64_t n, uint64_t tag)
{
    lnic_write_r(lnic_hdr(lnic_hdr_ip(hdr), lnic_hdr_context(hdr), (uint16_t)(16 + 8 * n)));
    lnic_write_r(op | st << 8 | n << 16);
    lnic_write_r(tag);
}

static void skip(uint64_t words)
{
    while (words--)
        lnic_read();
}

/* n words from word index w, wrapping at the region's end (only an indirect READ's
 * pointer may land near it). */
static void send_words(uint64_t w, uint64_t n)
{
    for (uint64_t j = 0; j < n; j++)
        lnic_write_r(region[(w + j) % REGION_WORDS]);
}

/* The request's arguments after {op word, tag, address}, by op; ~0 for an unknown op. */
static uint64_t arg_words(uint64_t op, uint64_t n)
{
    switch (op) {
    case OP_READ: case OP_IREAD: return 0;
    case OP_WRITE: return n;
    case OP_CAS: return 2;
    case OP_FAA: return 1;
    }
    return ~0ul;
}

/* Whether the request is well formed: its length, size and address (in bytes, aligned,
 * within the region; READ and WRITE wholly within it). */
static int valid(uint64_t op, uint64_t n, uint64_t addr, uint64_t words)
{
    uint64_t span = (op == OP_READ || op == OP_WRITE) ? 8 * n : 8;
    int sized = (op == OP_CAS || op == OP_FAA) || (n >= 1 && n <= MAX_WORDS);
    return words == 3 + arg_words(op, n) && sized && addr % 8 == 0 && addr + span <= REGION_BYTES;
}

static void serve(uint64_t hdr, uint64_t op, uint64_t n, uint64_t tag, uint64_t w)
{
    switch (op) {
    case OP_READ:
        reply_hdr(hdr, op, ST_OK, n, tag);
        send_words(w, n);
        break;
    case OP_WRITE:
        for (uint64_t j = 0; j < n; j++)
            region[w + j] = lnic_read();
        reply_hdr(hdr, op, ST_OK, 0, tag);
        break;
    case OP_CAS: {
        uint64_t expect = lnic_read(), desired = lnic_read();
        __atomic_compare_exchange_n(&region[w], &expect, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        reply_hdr(hdr, op, ST_OK, 1, tag);
        lnic_write_r(expect);           /* the old value, whether it matched or not */
        break;
    }
    case OP_FAA: {
        uint64_t old = __atomic_fetch_add(&region[w], lnic_read(), __ATOMIC_SEQ_CST);
        reply_hdr(hdr, op, ST_OK, 1, tag);
        lnic_write_r(old);
        break;
    }
    case OP_IREAD:
        reply_hdr(hdr, op, ST_OK, n, tag);
        send_words((region[w] % REGION_BYTES) / 8, n);
        break;
    }
}

static void serve_one(void)
{
    uint64_t hdr = lnic_read(), words = lnic_hdr_words(hdr);
    if (words < 3) {
        skip(words);
        reply_hdr(hdr, 0, ST_BAD, 0, 0);
    } else {
        uint64_t w0 = lnic_read(), tag = lnic_read(), addr = lnic_read();
        uint64_t op = w0 & 0xff, n = w0 >> 16;
        if (valid(op, n, addr, words)) {
            serve(hdr, op, n, tag, addr / 8);
        } else {
            skip(words - 3);
            reply_hdr(hdr, op, ST_BAD, 0, tag);
        }
    }
    lnic_msg_done();
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        if (nanopu_core_id() == 0)
            printf("rdma: missing arguments\nusage: rdma.elf SEED\n");
        return 2;
    }
    if (nanopu_core_id() == 0) {
        fill(nanopu_arg_u64(argc, argv, 0, 0));
        __atomic_store_n(&filled, 1, __ATOMIC_SEQ_CST);
    }
    while (!filled) { }
    lnic_add_context(0, 0);
    lnic_boot_msg();
    for (;;)
        serve_one(); /* blocks in its first read of x30: idle time is netRX stall */
}
