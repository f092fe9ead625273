/*
 * fptest.h - helpers for the F/D conformance programs (rv64f.c, rv64d.c), built with
 * -march=rv64imafdc -mabi=lp64d.  Operands and results travel as raw bit patterns
 * (fmv.d.x / fmv.x.d), so nothing is folded or converted by the compiler; every case
 * clears fflags first and checks the accrued flags after (RISC-V unprivileged ISA,
 * chapter "F", "Floating-Point Control and Status Register").
 */
#ifndef FPTEST_H
#define FPTEST_H

#include "testlib.h"

#define NX 0x01
#define UF 0x02
#define OF 0x04
#define DZ 0x08
#define NV 0x10

#define MSTATUS_FS (3ull << 13)

static inline void fflags_clear(void) { __asm__ volatile("csrw fflags, zero"); }
static inline uint64_t fflags_get(void)
{
    uint64_t v;
    __asm__ volatile("csrr %0, fflags" : "=r"(v));
    return v;
}

/* insn ft2, ft0[, ft1[, ft3]][, rm] on raw 64-bit register contents. */
#define F1(insn, a) ({ uint64_t _r; __asm__ volatile( \
    "fmv.d.x ft0, %1\n " insn "\n fmv.x.d %0, ft2" \
    : "=r"(_r) : "r"((uint64_t)(a)) : "ft0", "ft2"); _r; })
#define F2(insn, a, b) ({ uint64_t _r; __asm__ volatile( \
    "fmv.d.x ft0, %1\n fmv.d.x ft1, %2\n " insn "\n fmv.x.d %0, ft2" \
    : "=r"(_r) : "r"((uint64_t)(a)), "r"((uint64_t)(b)) : "ft0", "ft1", "ft2"); _r; })
#define F3(insn, a, b, c) ({ uint64_t _r; __asm__ volatile( \
    "fmv.d.x ft0, %1\n fmv.d.x ft1, %2\n fmv.d.x ft3, %3\n " insn "\n fmv.x.d %0, ft2" \
    : "=r"(_r) : "r"((uint64_t)(a)), "r"((uint64_t)(b)), "r"((uint64_t)(c)) \
    : "ft0", "ft1", "ft2", "ft3"); _r; })
/* Results in an integer register (compares, classify, conversions to integers). */
#define X1(insn, a) ({ uint64_t _r; __asm__ volatile( \
    "fmv.d.x ft0, %1\n " insn : "=r"(_r) : "r"((uint64_t)(a)) : "ft0"); _r; })
#define X2(insn, a, b) ({ uint64_t _r; __asm__ volatile( \
    "fmv.d.x ft0, %1\n fmv.d.x ft1, %2\n " insn \
    : "=r"(_r) : "r"((uint64_t)(a)), "r"((uint64_t)(b)) : "ft0", "ft1"); _r; })
/* Integer source (conversions from integers, fmv.w.x / fmv.d.x). */
#define FX(insn, a) ({ uint64_t _r; __asm__ volatile( \
    insn "\n fmv.x.d %0, ft2" : "=r"(_r) : "r"((uint64_t)(a)) : "ft2"); _r; })

/* Check a result and the flags it raised. */
#define T(name, expr, want, flags) do { \
    fflags_clear(); uint64_t _g = (expr); uint64_t _f = fflags_get(); \
    CHECK(name, _g, want); CHECK(name " (fflags)", _f, flags); } while (0)

/* A single result as it sits in a 64-bit register: NaN-boxed. */
#define BOX(x) (0xffffffff00000000ull | (uint32_t)(x))

/* Run `insn` expecting an illegal-instruction trap (trap_install() first). */
#define EXPECT_ILLEGAL(name, insn) do { trap_reset(); __asm__ volatile(insn ::: "memory"); \
    CHECK(name " traps", trap_rec.count, 1); CHECK(name " cause", trap_rec.mcause, CAUSE_ILLEGAL_INSN); \
    trap_reset(); } while (0)

#endif
