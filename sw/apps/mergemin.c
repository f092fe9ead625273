/*
 * mergemin.c - MergeMin (docs/nanosort.md "MergeMin"): W workers (one per core, the sorters of
 * the sort harness, sortbench.h) each hold V values (their input keys); each finds its local
 * minimum, then the minimums are merged up a tree in which every merger receives `incast`
 * values and forwards their minimum. The root, worker 0, stores the global minimum in
 * a->result. Argument: incast (argv[3], default 4).
 *
 * The tree is a complete `incast`-ary heap over the worker ids: the children of worker i are
 * i*incast+1 .. i*incast+incast (those below W), its parent (i-1)/incast. So incast 1 is a
 * chain (W-1 -> W-2 -> ... -> 0) and incast >= W-1 a single star into worker 0, the two ends
 * docs/nanosort.md names; in between every merger has exactly `incast` senders except at the
 * ragged last level. A merger folds its own local minimum into the children's.
 *
 * Message: one word of payload, the sender's subtree minimum. Fire and forget
 * (docs/nanosort.md "Design principles"): a merger proceeds once it has heard from each of its
 * children; the only message a worker ever receives is a child's minimum, so counting
 * messages is the whole protocol and no reorder buffer is needed.
 *
 * Stages: STAGE_LOCAL_MIN (the scan), STAGE_MERGE_TREE (waiting for the children, forwarding).
 * Every worker sets n_out = 0 and done = 1; the driver validates a->result of worker 0
 * against the minimum of all inputs (validate_min).
 */
#include "nanopu.h"
#include "sortbench.h"

/* Minimum of the worker's V values; all-ones for V = 0 so that it never wins. */
static uint64_t local_min(const struct sort_area *a)
{
    uint64_t m = UINT64_MAX;
    for (uint64_t i = 0; i < a->n_in; i++)
        if (a->in_keys[i] < m)
            m = a->in_keys[i];
    return m;
}

/* Number of children of worker w in the incast-ary heap over W workers. */
static uint64_t children(uint64_t w, uint64_t workers, uint64_t incast)
{
    uint64_t first = w * incast + 1;
    if (first >= workers)
        return 0;
    uint64_t last = first + incast; /* one past */
    return (last > workers ? workers : last) - first;
}

/* Wait for `n` child minimums and fold them into m. */
static uint64_t gather_children(struct sort_area *a, uint64_t n, uint64_t m)
{
    for (uint64_t k = 0; k < n; k++) {
        sort_wait(a);
        uint64_t hdr = lnic_read();
        uint64_t v = lnic_read();
        for (uint32_t i = 1; i < lnic_hdr_words(hdr); i++) /* tolerate (and drop) extra words */
            (void)lnic_read();
        lnic_msg_done();
        if (v < m)
            m = v;
    }
    return m;
}

/* The simulator counts messages and bytes at the NIC (docs/sort-harness.md "Figures"). */
static void send_min(uint64_t parent, uint64_t cores, uint64_t m)
{
    lnic_write_r(sort_hdr(parent, cores, LNIC_WORD_BYTES));
    lnic_write_r(m);
}

int main(int argc, char **argv)
{
    struct sort_area *a = sort_area();
    uint64_t core = nanopu_core_id(), cores = nanopu_num_cores();
    if (a == 0) {
        if (core == 0)
            printf("mergemin: needs the sort harness (nanopu sort --algorithm mergemin)\n");
        return 2;
    }
    /* Register before anything else, so a fast child's message finds the context. */
    lnic_add_context(core, 0);
    uint64_t incast = nanopu_arg_u64(argc, argv, 0, 4);
    if (incast == 0)
        incast = 1;
    uint64_t me = a->sorter, workers = a->sorters;

    sort_stage_begin(a, STAGE_LOCAL_MIN);
    uint64_t m = local_min(a);
    sort_stage_end(a);

    sort_stage_begin(a, STAGE_MERGE_TREE);
    m = gather_children(a, children(me, workers, incast), m);
    if (me == 0)
        a->result = m;
    else
        send_min((me - 1) / incast, cores, m);
    sort_stage_end(a);

    a->n_out = 0;
    a->done = 1;
    return 0;
}
