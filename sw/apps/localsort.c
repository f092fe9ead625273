/*
 * localsort.c - the local-sort benchmark (docs/nanosort.md "Tiny tasks"): one core sorts the
 * records the sort harness gave it (sortbench.h) and writes them, keys and values in
 * separate contiguous arrays, to its output region.  Caches are cold: the simulator wrote
 * the inputs straight into memory.
 *
 * Keys are sorted as (key, input index) pairs by a bottom-up merge sort (insertion sort on
 * runs of 8 first), STAGE_LOCAL_SORT; then records are written out with their values gathered
 * by index, STAGE_FETCH.
 * Sorting across cores needs communication: with more than one sorter this program refuses.
 */
#include "nanopu.h"
#include "sortbench.h"

struct pair { uint64_t key, idx; };

static void insertion_sort(struct pair *p, uint64_t n)
{
    for (uint64_t i = 1; i < n; i++) {
        struct pair x = p[i];
        uint64_t j = i;
        for (; j > 0 && p[j - 1].key > x.key; j--)
            p[j] = p[j - 1];
        p[j] = x;
    }
}

/* Merge the sorted runs a[0..na) and b[0..nb) into out. */
static void merge(const struct pair *a, uint64_t na, const struct pair *b, uint64_t nb, struct pair *out)
{
    uint64_t i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        out[k++] = b[j].key < a[i].key ? b[j++] : a[i++];
    while (i < na)
        out[k++] = a[i++];
    while (j < nb)
        out[k++] = b[j++];
}

/* Sort p[0..n) using tmp[0..n); returns whichever holds the result. */
static struct pair *merge_sort(struct pair *p, struct pair *tmp, uint64_t n)
{
    for (uint64_t i = 0; i < n; i += 8)
        insertion_sort(p + i, n - i < 8 ? n - i : 8);
    for (uint64_t w = 8; w < n; w *= 2) {
        for (uint64_t i = 0; i < n; i += 2 * w) {
            uint64_t na = n - i < w ? n - i : w;
            uint64_t nb = n - i - na < w ? n - i - na : w;
            merge(p + i, na, p + i + na, nb, tmp + i);
        }
        struct pair *t = p; p = tmp; tmp = t;
    }
    return p;
}

static void write_output(struct sort_area *a, const struct pair *p)
{
    for (uint64_t i = 0; i < a->n_in; i++) {
        a->out_keys[i] = p[i].key;
        const uint64_t *v = a->in_values + p[i].idx * SORT_VALUE_WORDS;
        for (int w = 0; w < SORT_VALUE_WORDS; w++)
            a->out_values[i * SORT_VALUE_WORDS + w] = v[w];
    }
    a->n_out = a->n_in;
}

int main(void)
{
    struct sort_area *a = sort_area();
    if (a == 0 || a->sorters != 1) {
        if (nanopu_core_id() == 0)
            printf("localsort: needs the sort harness and exactly one sorter (nanopu sort --algorithm local --cores 1)\n");
        return 2;
    }
    struct pair *p = nanopu_malloc(a->n_in * sizeof *p), *tmp = nanopu_malloc(a->n_in * sizeof *p);
    sort_stage_begin(a, STAGE_LOCAL_SORT);
    for (uint64_t i = 0; i < a->n_in; i++)
        p[i] = (struct pair){ a->in_keys[i], i };
    struct pair *sorted = merge_sort(p, tmp, a->n_in);
    sort_stage_end(a);
    sort_stage_begin(a, STAGE_FETCH);
    write_output(a, sorted);
    sort_stage_end(a);
    a->done = 1;
    return 0;
}
