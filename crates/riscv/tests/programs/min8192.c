/* Calibration: minimum of 8,192 u64 values from a cold L1 D-cache (the data was written
 * earlier, so it sits in the L2). Prototype target: about 18 us at 3.2 GHz.
 * Prints the measured cycles; exits with 0 if the minimum is right. */
#include "common.h"
#define N 8192
static uint64_t data[N];
static uint64_t scratch[4096]; /* 32 KiB, twice the L1 D-cache, to evict `data` */

static uint64_t lcg(uint64_t *s) { *s = *s * 6364136223846793005ULL + 1442695040888963407ULL; return *s >> 11; }

int main(void) {
    uint64_t s = 42, expect = ~0ULL, sink = 0;
    for (int i = 0; i < N; i++) { data[i] = lcg(&s); if (data[i] < expect) expect = data[i]; }
    for (int i = 0; i < 4096; i++) sink += scratch[i];
    uint64_t t0 = rdcycle();
    uint64_t m = ~0ULL;
    for (int i = 0; i < N; i++) if (data[i] < m) m = data[i];
    uint64_t t1 = rdcycle();
    puts_("min8192 cycles "); putdec(t1 - t0); putch('\n');
    return (m != expect) + (int)(sink & 0);
}
