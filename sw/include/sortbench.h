/*
 * sortbench.h - the sort benchmark harness, C side (docs/sort-harness.md).
 *
 * Before the run the simulator pre-loads every sorter (one per core) with its input
 * records: an 8-byte key and a 96-byte value each, from a seeded generator.  After the run
 * it reads back what each sorter left in its output region and validates the whole: global
 * order across sorters, record count, and a checksum of the multiset of records.  Programs
 * also log their stages (start/end cycle and cycles spent idle waiting) for the trace.
 *
 * Sorter numbering: sorter s runs on node s / C, core s % C, where C = cores per node; it is
 * reached at (that node's IP, context s % C): core c registers context c.
 */
#ifndef SORTBENCH_H
#define SORTBENCH_H

#include "nanopu.h"

#define SORT_DIR_ADDR     0x88000000ul  /* per node: the directory of the cores' areas */
#define SORT_DIR_MAGIC    0x5249445452534e50ull /* "PNSRTDIR" little-endian */
#define SORT_AREA_MAGIC   0x41455241_54524f53ull /* "SORTAREA" little-endian */
#define SORT_VALUE_WORDS  12                  /* 96-byte values */
#define SORT_MAX_STAGES   32

/* Stage ids; the simulator names them in traces and tables (docs/sort-harness.md). */
enum sort_stage_id {
    STAGE_LOCAL_SORT = 0,  /* sort the keys a core holds */
    STAGE_SHUFFLE = 1,     /* NanoSort step 0 */
    STAGE_LEVEL = 2,       /* NanoSort recursion level k is STAGE_LEVEL + k - 1, k = 1..30 */
    STAGE_FETCH = 32,      /* final value fetch */
    STAGE_PIVOTS = 33,     /* MilliSort: gather and sort pivots */
    STAGE_SPLITTERS = 34,  /* MilliSort: super-pivots, splitters, broadcasts */
    STAGE_RECORDS = 35,    /* MilliSort: shuffle records to their owners */
    STAGE_MERGE = 36,      /* merge what arrived */
    STAGE_LOCAL_MIN = 37,  /* MergeMin: local minimum */
    STAGE_MERGE_TREE = 38, /* MergeMin: merge up the tree */
};

struct sort_stage {
    uint64_t id;
    uint64_t start, end;   /* mcycle */
    uint64_t idle;         /* cycles spent waiting for messages inside the stage */
};

/* One sorter's area, written by the simulator before the run (inputs, capacities) and by
 * the program during it (outputs, stages). */
struct sort_area {
    uint64_t magic;
    uint64_t sorter, sorters;   /* this sorter's id, and how many there are */
    uint64_t n_in;              /* input records */
    uint64_t *in_keys;          /* n_in keys */
    uint64_t *in_values;        /* n_in values of SORT_VALUE_WORDS words */
    uint64_t out_cap;           /* room in the output arrays, records */
    uint64_t *out_keys;
    uint64_t *out_values;
    uint64_t n_out;             /* program: records in the output arrays */
    uint64_t done;              /* program: 1 once the output is in place */
    uint64_t n_stages;          /* program: entries used in stages[] */
    uint64_t result;            /* program: a scalar answer (MergeMin's minimum at the root) */
    uint64_t reserved[3];       /* unused; keeps stages[] where it was (the messages and
                                   bytes sent are the NIC's counts, docs/sort-harness.md) */
    struct sort_stage stages[SORT_MAX_STAGES];
};

struct sort_dir {
    uint64_t magic;
    uint64_t ncores;
    struct sort_area *area[64];
};

/* This core's area, or 0 when the simulator loaded no sort input. */
static inline struct sort_area *sort_area(void)
{
    struct sort_dir *d = (struct sort_dir *)SORT_DIR_ADDR;
    if (d->magic != SORT_DIR_MAGIC || nanopu_core_id() >= d->ncores)
        return 0;
    return d->area[nanopu_core_id()];
}

/* ---- stage log ------------------------------------------------------------------------ */

static inline void sort_stage_begin(struct sort_area *a, uint64_t id)
{
    if (a->n_stages < SORT_MAX_STAGES) {
        struct sort_stage *s = &a->stages[a->n_stages];
        s->id = id;
        s->start = read_mcycle();
        s->end = 0;
        s->idle = 0;
    }
}

static inline void sort_stage_end(struct sort_area *a)
{
    if (a->n_stages < SORT_MAX_STAGES)
        a->stages[a->n_stages++].end = read_mcycle();
}

/* Wait for a message, charging the wait to the open stage's idle time. */
static inline void sort_wait(struct sort_area *a)
{
    if (lnic_ready())
        return;
    uint64_t t0 = read_mcycle();
    lnic_wait();
    if (a->n_stages < SORT_MAX_STAGES)
        a->stages[a->n_stages].idle += read_mcycle() - t0;
}

/* ---- addressing ------------------------------------------------------------------------ */

/* Application header of a message to sorter s (C = cores per node). */
static inline uint64_t sort_hdr(uint64_t s, uint64_t cores_per_node, uint64_t len)
{
    uint32_t ip = NANOPU_IP(10, 0, 0, 2) + (uint32_t)(s / cores_per_node);
    return lnic_hdr(ip, (uint16_t)(s % cores_per_node), len);
}

/* The sorter a received header word came from. */
static inline uint64_t sort_src(uint64_t hdr, uint64_t cores_per_node)
{
    uint32_t ip = (uint32_t)(hdr >> 32);
    return (uint64_t)(ip - NANOPU_IP(10, 0, 0, 2)) * cores_per_node + ((hdr >> 16) & 0xffff);
}

#endif
