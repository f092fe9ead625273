/*
 * testlib.h - helpers for the self-checking test programs in sw/tests.
 *
 * A test calls CHECK(name, got, want) for every case; failures are printed with
 * the case name and counted, and test_finish() returns the exit code:
 * 0 when every case passed, else the number of failures (at most 255).
 */
#ifndef TESTLIB_H
#define TESTLIB_H

#include <stdint.h>
#include "nanopu.h"

void check_eq(const char *name, uint64_t got, uint64_t want);
#define CHECK(name, got, want) check_eq((name), (uint64_t)(got), (uint64_t)(want))
/* Passes when `cond` is true. */
#define CHECK_TRUE(name, cond) check_eq((name), !!(cond), 1)
int test_finish(const char *suite);

/* Run one instruction on registers/immediates, so the compiler cannot fold it. */
#define OP_RR(op, a, b) ({ uint64_t _r; \
    __asm__ volatile(op " %0, %1, %2" : "=r"(_r) : "r"((uint64_t)(a)), "r"((uint64_t)(b))); _r; })
#define OP_RI(op, a, imm) ({ uint64_t _r; \
    __asm__ volatile(op " %0, %1, %2" : "=r"(_r) : "r"((uint64_t)(a)), "i"(imm)); _r; })

/* 32-bit result sign-extended to 64 bits (RISC-V unprivileged spec 5.3: *W ops). */
#define SEXT32(x) ((uint64_t)(int64_t)(int32_t)(uint32_t)(x))

/* ---- traps (trap.c) ------------------------------------------------------ */
#define MCAUSE_INTERRUPT    (1ull << 63)
#define CAUSE_MISALIGNED_LOAD   4
#define CAUSE_ILLEGAL_INSN      2
#define CAUSE_BREAKPOINT        3
#define CAUSE_LOAD_ACCESS       5
#define CAUSE_STORE_MISALIGNED  6
#define CAUSE_STORE_ACCESS      7
#define CAUSE_ECALL_M           11
#define IRQ_MSI                 3
#define IRQ_MTI                 7

#define MSTATUS_MIE   (1ull << 3)
#define MSTATUS_MPIE  (1ull << 7)
#define MSTATUS_MPP   (3ull << 11)
#define MIE_MSIE      (1ull << IRQ_MSI)
#define MIE_MTIE      (1ull << IRQ_MTI)

/* CLINT (docs/abi.md memory map) */
#define CLINT_MSIP(h)     ((volatile uint32_t *)(0x2000000ul + 4 * (h)))
#define CLINT_MTIMECMP(h) ((volatile uint64_t *)(0x2004000ul + 8 * (h)))
#define CLINT_MTIME       ((volatile uint64_t *)0x200bff8ul)

struct trap_record {
    uint64_t count;    /* traps taken since trap_reset() */
    uint64_t mcause;
    uint64_t mepc;
    uint64_t mtval;
    uint64_t mstatus;  /* mstatus as seen inside the handler */
};
extern volatile struct trap_record trap_rec;

/* Called by the recording handler for interrupts, to silence the source. */
extern void (*volatile trap_irq_hook)(uint64_t cause);

/* TRAP_ENTRY(name, cfunc): an assembly trap entry calling `void cfunc(void)` that never
 * touches x30/x31 (nanopu.h, NANOPU_TRAP_ENTRY). */
#define TRAP_ENTRY(name, cfunc) NANOPU_TRAP_ENTRY(name, cfunc)

/* Direct-mode handler: records the trap; for exceptions, resumes after the
 * faulting instruction (2 or 4 bytes); for interrupts calls trap_irq_hook. */
void trap_handler(void);
void trap_install(void);
void trap_reset(void);

#endif
