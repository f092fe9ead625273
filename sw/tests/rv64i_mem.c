/*
 * rv64i_mem.c - RV64I loads, stores and fences (RISC-V unprivileged spec 2.6,
 * 2.7, 5.3): lb lh lw ld lbu lhu lwu, sb sh sw sd, fence, fence.tso.
 * Loads sign- or zero-extend to 64 bits; memory is little-endian; offsets are
 * 12-bit signed.
 */
#include "testlib.h"

static uint64_t buf[8] __attribute__((aligned(64)));

#define LOAD(op, base, off) ({ uint64_t _r; \
    __asm__ volatile(op " %0, " #off "(%1)" : "=r"(_r) : "r"(base) : "memory"); _r; })
#define STORE(op, val, base, off) \
    __asm__ volatile(op " %0, " #off "(%1)" :: "r"((uint64_t)(val)), "r"(base) : "memory")

/* Hide a pointer from the optimizer: bases outside `buf` are intentional. */
static uintptr_t addr(const void *p, long delta)
{
    uintptr_t a = (uintptr_t)p;
    __asm__("" : "+r"(a));
    return a + delta;
}

static void fill(void)
{
    buf[0] = 0x8081828384858687;
    buf[1] = 0x7f7e7d7c7b7a7978;
    for (int i = 2; i < 8; i++) {
        buf[i] = 0;
    }
}

static void test_loads(void)
{
    uint8_t *p = (uint8_t *)buf;
    fill();
    CHECK("lb sext", LOAD("lb", p, 0), 0xffffffffffffff87);
    CHECK("lb pos", LOAD("lb", p, 8), 0x78);
    CHECK("lbu", LOAD("lbu", p, 7), 0x80);
    CHECK("lh sext", LOAD("lh", p, 6), 0xffffffffffff8081);
    CHECK("lh pos", LOAD("lh", p, 14), 0x7f7e);
    CHECK("lhu", LOAD("lhu", p, 0), 0x8687);
    CHECK("lw sext", LOAD("lw", p, 4), 0xffffffff80818283);
    CHECK("lw pos", LOAD("lw", p, 12), 0x7f7e7d7c);
    CHECK("lwu", LOAD("lwu", p, 4), 0x80818283);
    CHECK("ld", LOAD("ld", p, 0), 0x8081828384858687);
    CHECK("ld +8", LOAD("ld", p, 8), 0x7f7e7d7c7b7a7978);
    CHECK("lbu neg off", LOAD("lbu", p + 16, -1), 0x7f);
    CHECK("ld neg off", LOAD("ld", p + 16, -16), 0x8081828384858687);
    CHECK("lb max off", LOAD("lb", addr(p, -2032), 2047), 0x7f);
    CHECK("lb min off", LOAD("lb", addr(p, 2048), -2048), 0xffffffffffffff87);
}

static void test_stores(void)
{
    uint8_t *p = (uint8_t *)buf;
    fill();
    STORE("sb", 0x1234, p, 16);          /* stores the low byte only */
    CHECK("sb", buf[2], 0x34);
    STORE("sh", 0xabcdef, p, 18);
    CHECK("sh", buf[2], 0xcdef0034);
    STORE("sw", 0x1122334455667788, p, 20);
    CHECK("sw", buf[2], 0x55667788cdef0034);
    STORE("sd", 0x0123456789abcdef, p, 24);
    CHECK("sd", buf[3], 0x0123456789abcdef);
    STORE("sd", 0xfeedfacecafebeef, p + 48, -16);
    CHECK("sd neg off", buf[4], 0xfeedfacecafebeef);
    STORE("sb", 0xaa, p + 40, -1);
    CHECK("sb neg off", buf[4], 0xaaedfacecafebeef);
    CHECK("sb no spill", buf[5], 0);
    STORE("sw", 0xffffffff, p, 40);
    CHECK("sw keeps high", LOAD("ld", p, 40), 0xffffffff);
}

/* fence/fence.tso have no architectural result in one hart: check they execute
 * and keep program order of memory accesses (spec 2.7). */
static void test_fences(void)
{
    fill();
    buf[6] = 1;
    __asm__ volatile("fence" ::: "memory");
    __asm__ volatile("fence rw, rw" ::: "memory");
    __asm__ volatile("fence.tso" ::: "memory");
    __asm__ volatile("fence iorw, iorw" ::: "memory");
    buf[6] += 1;
    __asm__ volatile("fence w, r" ::: "memory");
    CHECK("fence order", buf[6], 2);
}

int main(void)
{
    test_loads();
    test_stores();
    test_fences();
    return test_finish("rv64i_mem");
}
