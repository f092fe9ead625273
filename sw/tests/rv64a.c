/*
 * rv64a.c - the A extension (RISC-V unprivileged spec chapter 8):
 * lr.w sc.w lr.d sc.d and every AMO in .w and .d form (swap add xor and or
 * min max minu maxu).  AMOs return the old memory value in rd; .w forms
 * sign-extend that 32-bit value (spec 8.4).  SC writes 0 on success, non-zero
 * on failure, and fails without a valid reservation on its address (spec 8.2).
 */
#include "testlib.h"

static volatile uint64_t mem[4] __attribute__((aligned(64)));

#define AMO(op, addr, val) ({ uint64_t _old; __asm__ volatile( \
    op " %0, %2, (%1)" : "=r"(_old) : "r"(addr), "r"((uint64_t)(val)) : "memory"); _old; })

struct amo_case {
    const char *name;
    uint64_t (*fn)(volatile void *, uint64_t);
    uint64_t init, operand, want_old, want_mem;
};

#define DEF_AMO(fname, op) \
    static uint64_t fname(volatile void *p, uint64_t v) { return AMO(op, p, v); }
DEF_AMO(swap_w, "amoswap.w") DEF_AMO(add_w, "amoadd.w")   DEF_AMO(xor_w, "amoxor.w")
DEF_AMO(and_w, "amoand.w")   DEF_AMO(or_w, "amoor.w")     DEF_AMO(min_w, "amomin.w")
DEF_AMO(max_w, "amomax.w")   DEF_AMO(minu_w, "amominu.w") DEF_AMO(maxu_w, "amomaxu.w")
DEF_AMO(swap_d, "amoswap.d") DEF_AMO(add_d, "amoadd.d")   DEF_AMO(xor_d, "amoxor.d")
DEF_AMO(and_d, "amoand.d")   DEF_AMO(or_d, "amoor.d")     DEF_AMO(min_d, "amomin.d")
DEF_AMO(max_d, "amomax.d")   DEF_AMO(minu_d, "amominu.d") DEF_AMO(maxu_d, "amomaxu.d")
DEF_AMO(add_w_aqrl, "amoadd.w.aqrl") DEF_AMO(swap_d_aq, "amoswap.d.aq")
DEF_AMO(or_d_rl, "amoor.d.rl")

/* .w cases: memory holds 32 bits; the high word of mem[0] is a guard that the
 * AMO must not touch; want_old is the sign-extended old word. */
static const struct amo_case w_cases[] = {
    { "amoswap.w", swap_w, 0x80000001, 0x12345678, 0xffffffff80000001, 0x12345678 },
    { "amoadd.w", add_w, 0x7fffffff, 1, 0x7fffffff, 0x80000000 },
    { "amoadd.w wrap", add_w, 0xffffffff, 2, 0xffffffffffffffff, 1 },
    { "amoxor.w", xor_w, 0xf0f0f0f0, 0xffff0000, 0xfffffffff0f0f0f0, 0x0f0ff0f0 },
    { "amoand.w", and_w, 0xff00ff00, 0x0ff00ff0, 0xffffffffff00ff00, 0x0f000f00 },
    { "amoor.w", or_w, 0x80000000, 0x1, 0xffffffff80000000, 0x80000001 },
    { "amomin.w signed", min_w, 0x00000001, 0xfffffffe, 1, 0xfffffffe },
    { "amomin.w keep", min_w, 0x80000000, 0x7fffffff, 0xffffffff80000000, 0x80000000 },
    { "amomax.w signed", max_w, 0xffffffff, 0x00000001, 0xffffffffffffffff, 1 },
    { "amomax.w keep", max_w, 0x7fffffff, 0x80000000, 0x7fffffff, 0x7fffffff },
    { "amominu.w", minu_w, 0x00000001, 0xfffffffe, 1, 1 },
    { "amomaxu.w", maxu_w, 0x00000001, 0xfffffffe, 1, 0xfffffffe },
    /* rs2's upper 32 bits are ignored by .w forms */
    { "amominu.w rs2 high", minu_w, 0x10, 0xffffffff00000005, 0x10, 5 },
    { "amoadd.w.aqrl", add_w_aqrl, 5, 7, 5, 12 },
};

static const struct amo_case d_cases[] = {
    { "amoswap.d", swap_d, 0x8000000000000001, 42, 0x8000000000000001, 42 },
    { "amoadd.d", add_d, 0x00000000ffffffff, 1, 0xffffffff, 0x100000000 },
    { "amoxor.d", xor_d, 0xff00ff00ff00ff00, 0xffffffff00000000, 0xff00ff00ff00ff00, 0x00ff00ffff00ff00 },
    { "amoand.d", and_d, 0xf0f0f0f0f0f0f0f0, 0x0ff00ff00ff00ff0, 0xf0f0f0f0f0f0f0f0, 0x00f000f000f000f0 },
    { "amoor.d", or_d, 0x8000000000000000, 1, 0x8000000000000000, 0x8000000000000001 },
    { "amomin.d", min_d, 1, 0xffffffffffffffff, 1, 0xffffffffffffffff },
    { "amomax.d", max_d, 0x8000000000000000, 0x7fffffffffffffff, 0x8000000000000000, 0x7fffffffffffffff },
    { "amominu.d", minu_d, 1, 0xffffffffffffffff, 1, 1 },
    { "amomaxu.d", maxu_d, 1, 0xffffffffffffffff, 1, 0xffffffffffffffff },
    { "amoswap.d.aq", swap_d_aq, 3, 4, 3, 4 },
    { "amoor.d.rl", or_d_rl, 0x10, 0x01, 0x10, 0x11 },
};

#define GUARD 0xa5a5a5a5u

static void run_w(const struct amo_case *c)
{
    mem[0] = ((uint64_t)GUARD << 32) | (uint32_t)c->init;
    CHECK(c->name, c->fn(&mem[0], c->operand), c->want_old);
    CHECK(c->name, mem[0], ((uint64_t)GUARD << 32) | (uint32_t)c->want_mem);
}

static void run_d(const struct amo_case *c)
{
    mem[1] = c->init;
    CHECK(c->name, c->fn(&mem[1], c->operand), c->want_old);
    CHECK(c->name, mem[1], c->want_mem);
}

/* The upper word of a doubleword is reachable by .w AMOs at offset 4. */
static void test_amo_w_high_half(void)
{
    mem[2] = 0x8000000000000007;
    CHECK("amoadd.w high half old", add_w((volatile uint8_t *)&mem[2] + 4, 1), 0xffffffff80000000);
    CHECK("amoadd.w high half mem", mem[2], 0x8000000100000007);
}

#define LR(op, addr) ({ uint64_t _v; \
    __asm__ volatile(op " %0, (%1)" : "=r"(_v) : "r"(addr) : "memory"); _v; })
#define SC(op, addr, val) ({ uint64_t _f; \
    __asm__ volatile(op " %0, %2, (%1)" : "=&r"(_f) : "r"(addr), "r"((uint64_t)(val)) : "memory"); _f; })

static void test_lr_sc(void)
{
    mem[0] = 0x00000000fffffff0;
    CHECK("lr.w sext", LR("lr.w", &mem[0]), 0xfffffffffffffff0);
    CHECK("sc.w success", SC("sc.w", &mem[0], 0x11), 0);
    CHECK("sc.w stored", mem[0], 0x11);
    /* the reservation is consumed by the first SC: a second one must fail */
    CHECK_TRUE("sc.w again fails", SC("sc.w", &mem[0], 0x22) != 0);
    CHECK("sc.w fail no store", mem[0], 0x11);

    mem[1] = 0x8000000000000000;
    CHECK("lr.d", LR("lr.d", &mem[1]), 0x8000000000000000);
    CHECK("sc.d success", SC("sc.d", &mem[1], 0x1234), 0);
    CHECK("sc.d stored", mem[1], 0x1234);
    CHECK_TRUE("sc.d again fails", SC("sc.d", &mem[1], 0x5678) != 0);
    CHECK("sc.d fail no store", mem[1], 0x1234);

    /* SC to an address outside the reservation set fails (spec 8.2) */
    mem[3] = 77;
    (void)LR("lr.d", &mem[1]);
    CHECK_TRUE("sc.d other address fails", SC("sc.d", &mem[3], 99) != 0);
    CHECK("sc.d other address no store", mem[3], 77);

    /* aq/rl variants and a classic LR/SC increment loop */
    uint64_t old, fail;
    __asm__ volatile("1: lr.d.aq %0, (%2)\n addi %0, %0, 1\n sc.d.rl %1, %0, (%2)\n bnez %1, 1b"
                     : "=&r"(old), "=&r"(fail) : "r"(&mem[3]) : "memory");
    CHECK("lr/sc loop", mem[3], 78);
    __asm__ volatile("1: lr.w.aqrl %0, (%2)\n addiw %0, %0, 2\n sc.w.aqrl %1, %0, (%2)\n bnez %1, 1b"
                     : "=&r"(old), "=&r"(fail) : "r"(&mem[3]) : "memory");
    CHECK("lr/sc.w loop", mem[3], 80);
}

int main(void)
{
    for (unsigned i = 0; i < sizeof(w_cases) / sizeof(w_cases[0]); i++) {
        run_w(&w_cases[i]);
    }
    for (unsigned i = 0; i < sizeof(d_cases) / sizeof(d_cases[0]); i++) {
        run_d(&d_cases[i]);
    }
    test_amo_w_high_half();
    test_lr_sc();
    return test_finish("rv64a");
}
