/*
 * misaligned.c - misaligned loads and stores (RISC-V unprivileged spec 2.6:
 * an EEI may support them; docs/abi.md: our simulator does, as QEMU does).
 * Every width at every offset 1..7 of a 16-byte window, plus accesses that
 * cross an 8-byte, a 64-byte line and a 4 KiB page boundary.  No trap handler
 * is installed: a trap ends the run with an error.
 */
#include "testlib.h"

static uint8_t area[3 * 4096] __attribute__((aligned(4096)));

#define LOAD(op, p) ({ uint64_t _r; \
    __asm__ volatile(op " %0, 0(%1)" : "=r"(_r) : "r"(p) : "memory"); _r; })
#define STORE(op, v, p) \
    __asm__ volatile(op " %0, 0(%1)" :: "r"((uint64_t)(v)), "r"(p) : "memory")

/* Little-endian value of n bytes at p, read one byte at a time. */
static uint64_t bytes_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static uint64_t sext(uint64_t v, int bytes)
{
    int shift = 64 - 8 * bytes;
    return (uint64_t)((int64_t)(v << shift) >> shift);
}

static void fill_pattern(uint8_t *p, int n)
{
    for (int i = 0; i < n; i++) {
        p[i] = (uint8_t)(0x81 + 0x1d * i);
    }
}

static void check_loads_at(const char *where, uint8_t *p)
{
    CHECK(where, LOAD("lh", p), sext(bytes_le(p, 2), 2));
    CHECK(where, LOAD("lhu", p), bytes_le(p, 2));
    CHECK(where, LOAD("lw", p), sext(bytes_le(p, 4), 4));
    CHECK(where, LOAD("lwu", p), bytes_le(p, 4));
    CHECK(where, LOAD("ld", p), bytes_le(p, 8));
}

static void check_stores_at(const char *where, uint8_t *p)
{
    fill_pattern(p - 8, 24);
    STORE("sh", 0xa1b2, p);
    CHECK(where, bytes_le(p, 2), 0xa1b2);
    STORE("sw", 0xc3d4e5f6, p);
    CHECK(where, bytes_le(p, 4), 0xc3d4e5f6);
    STORE("sd", 0x0102030405060708, p);
    CHECK(where, bytes_le(p, 8), 0x0102030405060708);
    CHECK(where, p[-1], (uint8_t)(0x81 + 0x1d * 7));   /* neighbours untouched */
    CHECK(where, p[8], (uint8_t)(0x81 + 0x1d * 16));
}

int main(void)
{
    uint8_t *base = area + 64;
    for (int off = 1; off < 8; off++) {
        fill_pattern(base, 32);
        check_loads_at("load offset", base + off);
        check_stores_at("store offset", base + off + 8);
    }
    uint8_t *line = area + 128 - 3;        /* crosses a 64-byte line */
    fill_pattern(line - 8, 24);
    check_loads_at("load across line", line);
    check_stores_at("store across line", line);
    uint8_t *page = area + 4096 - 5;       /* crosses a 4 KiB page */
    fill_pattern(page - 8, 24);
    check_loads_at("load across page", page);
    check_stores_at("store across page", page);
    return test_finish("misaligned");
}
