/*
 * calib.h - shared parts of the one-shot calibration programs (no NIC):
 * a seeded xorshift64* generator and a cache-eviction sweep.
 */
#ifndef CALIB_H
#define CALIB_H

#include "nanopu.h"

#define CALIB_SEED 0x9e3779b97f4a7c15ull

/* xorshift64* (Vigna 2016): small, deterministic, good enough for keys. */
static inline uint64_t xorshift64s(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Evict the data from L1 and L2 (prototype: 16 KiB L1D, 512 KiB L2,
 * docs/platform.md section 1) by streaming through 1 MiB, twice the L2, one load per 64-byte line. */
#define EVICT_BYTES (1u << 20)
static uint8_t evict_buf[EVICT_BYTES] __attribute__((aligned(64)));

static inline void evict_caches(void)
{
    for (uint32_t i = 0; i < EVICT_BYTES; i += 64) {
        ((volatile uint8_t *)evict_buf)[i] = (uint8_t)i;
    }
    __asm__ volatile("fence" ::: "memory");
}

/* Evict the L1 D-cache (16 KiB) by streaming through 32 KiB of evict_buf, twice its size:
 * data written earlier stays in the 512 KiB L2, but for lines the random L2
 * replacement happens to evict. */
static inline void evict_l1(void)
{
    for (uint32_t i = 0; i < EVICT_BYTES / 32; i += 64) {
        ((volatile uint8_t *)evict_buf)[i] = (uint8_t)i;
    }
    __asm__ volatile("fence" ::: "memory");
}

#endif
