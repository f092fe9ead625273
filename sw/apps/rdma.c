/*
 * rdma.c - one-sided RDMA-like operations served by nanoPU cores: READ, WRITE,
 * compare-and-swap, fetch-and-add and indirect READ on a 4 MiB region (the nanoPU paper's
 * one-sided RDMA experiment; docs/apps/rdma.md has the wire format and what it follows).
 *
 * The region is shared by every core of the node: core 0 fills it from the seed (argv[3])
 * with SplitMix64's outputs from state seed, as the load generator
 * (crates/harness/src/workload/rdma.rs) computes them; then every core registers context 0 and the
 * NIC hands each request to a core by JBSQ.  CAS and FAA are atomic across cores (RV64A); a READ or WRITE is not atomic
 * against another core's WRITE of the same words, as one-sided RDMA's are not.  The region and
 * the operations are rdma_ops.h's, shared with rdma_ice.c (the same on an IceNIC node).
 */
#include "rdma_ops.h"               /* the region and the operations, shared with rdma_ice.c */

static volatile uint64_t filled;

/* rdma_ops.h's NIC layer: the nanoPU's registers. A reply's peer is the request's header. */
static inline uint64_t rdma_begin(uint64_t *hdr)
{
    *hdr = lnic_read();
    return lnic_hdr_words(*hdr);
}

static inline uint64_t rdma_in(void)
{
    return lnic_read();
}

static inline void rdma_out(uint64_t w)
{
    lnic_write_r(w);
}

static void reply_hdr(uint64_t hdr, uint64_t op, uint64_t st, uint64_t n, uint64_t tag)
{
    lnic_write_r(lnic_hdr(lnic_hdr_ip(hdr), lnic_hdr_context(hdr), (uint16_t)(16 + 8 * n)));
    lnic_write_r(op | st << 8 | n << 16);
    lnic_write_r(tag);
}

static inline void rdma_end(void)
{
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
