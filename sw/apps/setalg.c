/*
 * setalg.c - set algebra (document search) served by nanoPU cores: an inverted index (word
 * -> sorted ids of the documents holding it) over a corpus generated from a seed, queries of
 * 1-4 words answered by intersecting their posting lists. docs/apps/setalg.md has the corpus
 * generator's specification (crates/harness/src/workload/setalg.rs implements the same one for the
 * load generator's check), the wire format and the parameters.
 *
 * Core 0 builds the index at start-up and prints its size and checksum; then every core
 * registers context 0 and the NIC hands each query to a core by JBSQ. The index is
 * read-only once built, so the cores share it without locks.  The index and the intersection
 * are setalg_index.h's, shared with setalg_ice.c (the same on an IceNIC node).
 *
 * Arguments (after program, MAC and IP): SEED DOCUMENTS VOCABULARY WORDS_PER_DOCUMENT.
 *
 * Measurement builds (experiments/setalg/prototype-corpus): -DSETALG_MERGE intersects as the
 * prototype's server does (setalg_index.h); -DSETALG_FIXED_INDEX serves a given index.
 */
#include "setalg_index.h"          /* the index and the intersection, shared with setalg_ice.c */

static volatile uint64_t built;

/* setalg_serve.h's NIC layer: the nanoPU's registers. A reply's peer is the query's header. */
static inline uint64_t setalg_begin(uint64_t *hdr)
{
    *hdr = lnic_read();
    return lnic_hdr_words(*hdr);
}

static inline uint64_t setalg_in(void)
{
    return lnic_read();
}

static inline void setalg_out(uint64_t w)
{
    lnic_write_r(w);
}

static void reply_hdr(uint64_t hdr, uint64_t st, uint64_t ids, uint64_t tag)
{
    uint64_t words = st == ST_OK ? 3 + ids : 2;
    lnic_write_r(lnic_hdr(lnic_hdr_ip(hdr), lnic_hdr_context(hdr), (uint16_t)(8 * words)));
    lnic_write_r(OP_QUERY | st << 8 | ids << 16);
    lnic_write_r(tag);
}

static inline void setalg_end(void)
{
    lnic_msg_done();
}

#include "setalg_serve.h"          /* queries answered, shared with setalg_ice.c */

int main(int argc, char **argv)
{
    if (argc < 7) {
        if (nanopu_core_id() == 0)
            printf("setalg: missing arguments\nusage: setalg.elf SEED DOCUMENTS VOCABULARY WORDS_PER_DOCUMENT\n");
        return 2;
    }
    if (nanopu_core_id() == 0) {
        vocab = nanopu_arg_u64(argc, argv, 2, 0);
#ifdef SETALG_FIXED_INDEX
        int err = build_fixed();
#else
        int err = build(nanopu_arg_u64(argc, argv, 0, 0), nanopu_arg_u64(argc, argv, 1, 0),
                        nanopu_arg_u64(argc, argv, 3, 0));
#endif
        __atomic_store_n(&built, err ? 2 : 1, __ATOMIC_SEQ_CST);
    }
    while (!built) { }
    if (built != 1)
        return 2;
    lnic_add_context(0, 0);
    lnic_boot_msg();
    for (;;)
        serve_one(); /* blocks in its first read of x30: idle time is netRX stall */
}
