/*
 * mincalc.c - calibration microbenchmark (no NIC): the minimum of 8,192 u64
 * values from a seeded generator, timed with mcycle over the scan only, twice:
 * with a cold L1 (values still in the L2, as after a program produced them:
 * evict_l1()) and with cold caches (evict_caches(): values in DRAM).  Prints
 * cycles and D-cache misses (mhpmcounter3) of each; exits 0 if both minimums
 * match the one tracked while generating.  Only core 0 runs it; others exit 0.
 */
#include "calib.h"

#define NVALUES 8192

static uint64_t values[NVALUES];

static uint64_t generate(void)
{
    uint64_t s = CALIB_SEED, min = ~0ull;
    for (int i = 0; i < NVALUES; i++) {
        values[i] = xorshift64s(&s);
        min = values[i] < min ? values[i] : min;
    }
    return min;
}

static uint64_t __attribute__((noinline)) scan_min(const uint64_t *v, int n)
{
    uint64_t min = ~0ull;
    for (int i = 0; i < n; i++) {
        min = v[i] < min ? v[i] : min;
    }
    return min;
}

/* Time one scan; print its cycles and misses; 1 if it found the right minimum. */
static int timed_scan(const char *label, uint64_t expect)
{
    uint64_t m0 = read_dcache_misses(), c0 = read_mcycle();
    uint64_t min = scan_min(values, NVALUES);
    uint64_t c1 = read_mcycle(), m1 = read_dcache_misses();
    printf("mincalc %s: n=%d min=0x%016lx cycles=%lu dcache_misses=%lu\n", label, NVALUES, min,
           c1 - c0, m1 - m0);
    return min == expect;
}

int main(void)
{
    if (nanopu_core_id() != 0) {
        return 0;
    }
    uint64_t expect = generate();
    evict_l1();
    int ok = timed_scan("l1_cold", expect);
    evict_caches();
    ok &= timed_scan("dram_cold", expect);
    return ok ? 0 : 1;
}
