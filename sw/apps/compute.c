// compute: a compute-bound workload for `nanopu bench iss` (simulator speed).
// Repeatedly fills an array from a xorshift generator, sorts it with quicksort and folds it
// into a checksum with multiplies and divides: loads, stores, branches, M-extension ops.
#include <stdint.h>

#define N 2048
#define ROUNDS 400

static uint64_t keys[N];
volatile uint64_t checksum_out;

static uint64_t xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void quicksort(uint64_t *a, long lo, long hi) {
  while (lo < hi) {
    uint64_t p = a[(lo + hi) / 2];
    long i = lo, j = hi;
    while (i <= j) {
      while (a[i] < p) i++;
      while (a[j] > p) j--;
      if (i <= j) { uint64_t t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
    }
    if (j - lo < hi - i) { quicksort(a, lo, j); lo = i; }
    else { quicksort(a, i, hi); hi = j; }
  }
}

static uint64_t fold(const uint64_t *a) {
  uint64_t c = 0;
  for (long i = 0; i < N; i++) c = c * 31 + a[i] / (uint64_t)(i + 1);
  return c;
}

int main(int argc, char **argv) {
  (void)argc; (void)argv;
  uint64_t seed = 88172645463325252ull, sum = 0;
  for (int r = 0; r < ROUNDS; r++) {
    for (long i = 0; i < N; i++) keys[i] = xorshift(&seed);
    quicksort(keys, 0, N - 1);
    for (long i = 1; i < N; i++)
      if (keys[i - 1] > keys[i]) return 1;
    sum ^= fold(keys);
  }
  checksum_out = sum;
  return 0;
}
