/*
 * sort1024.c - calibration microbenchmark (no NIC): sort 1,024 u64 keys from a
 * seeded generator in place (quicksort, median-of-three, insertion sort below
 * 16 keys), timed with mcycle.  Prints cycles; exits 0 if the result is sorted
 * and holds the same multiset (sum and xor unchanged).  Only core 0 runs it.
 * The keys are evicted from the L1 and the L2 before the sort (a 1 MiB sweep,
 * calib.h), so it starts with cold private caches as the paper's figure did; the
 * 4 MiB LLC of the prototype's FireSim build still holds them.
 */
#include "calib.h"

#define NKEYS 1024
#define SMALL 16

static uint64_t keys[NKEYS];

static void swap(uint64_t *a, uint64_t *b)
{
    uint64_t t = *a;
    *a = *b;
    *b = t;
}

static void insertion_sort(uint64_t *a, long n)
{
    for (long i = 1; i < n; i++) {
        uint64_t k = a[i];
        long j = i - 1;
        for (; j >= 0 && a[j] > k; j--) {
            a[j + 1] = a[j];
        }
        a[j + 1] = k;
    }
}

/* Median of a[0], a[mid], a[n-1] moved to a[n-1] as the pivot. */
static uint64_t median_pivot(uint64_t *a, long n)
{
    long mid = n / 2;
    if (a[mid] < a[0]) swap(&a[mid], &a[0]);
    if (a[n - 1] < a[0]) swap(&a[n - 1], &a[0]);
    if (a[mid] < a[n - 1]) swap(&a[mid], &a[n - 1]);
    return a[n - 1];
}

/* Lomuto partition around a[n-1]; returns the pivot's final index. */
static long partition(uint64_t *a, long n)
{
    uint64_t p = median_pivot(a, n);
    long store = 0;
    for (long i = 0; i < n - 1; i++) {
        if (a[i] < p) {
            swap(&a[i], &a[store++]);
        }
    }
    swap(&a[store], &a[n - 1]);
    return store;
}

/* Recurse on the smaller side, loop on the larger: O(log n) stack. */
static void quicksort(uint64_t *a, long n)
{
    while (n > SMALL) {
        long p = partition(a, n);
        if (p < n - p - 1) {
            quicksort(a, p);
            a += p + 1;
            n -= p + 1;
        } else {
            quicksort(a + p + 1, n - p - 1);
            n = p;
        }
    }
    insertion_sort(a, n);
}

static int is_sorted(const uint64_t *a, long n)
{
    for (long i = 1; i < n; i++) {
        if (a[i - 1] > a[i]) {
            return 0;
        }
    }
    return 1;
}

static void digest(const uint64_t *a, long n, uint64_t *sum, uint64_t *x)
{
    *sum = 0;
    *x = 0;
    for (long i = 0; i < n; i++) {
        *sum += a[i];
        *x ^= a[i];
    }
}

int main(void)
{
    if (nanopu_core_id() != 0) {
        return 0;
    }
    uint64_t s = CALIB_SEED, sum0, x0, sum1, x1;
    for (int i = 0; i < NKEYS; i++) {
        keys[i] = xorshift64s(&s);
    }
    digest(keys, NKEYS, &sum0, &x0);
    evict_caches();
    uint64_t c0 = read_mcycle(), m0 = read_dcache_misses();
    quicksort(keys, NKEYS);
    uint64_t c1 = read_mcycle(), m1 = read_dcache_misses();
    digest(keys, NKEYS, &sum1, &x1);
    int ok = is_sorted(keys, NKEYS) && sum0 == sum1 && x0 == x1;
    printf("sort1024: n=%d cycles=%lu dcache_misses=%lu sorted=%s\n", NKEYS, c1 - c0, m1 - m0,
           ok ? "yes" : "NO");
    return ok ? 0 : 1;
}
