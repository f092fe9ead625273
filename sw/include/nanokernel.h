/*
 * nanokernel.h - the nanoPU's thread scheduler on the core side (docs/platform.md section 2,
 * "The NIC raises a machine-level interrupt ..."; section 3 "Hardware thread scheduler").
 *
 * The NIC decides which thread context should run (ltargetcontext/ltargetpriority) and
 * interrupts the core (mip/mie bit 16) when that changes; the nanokernel only saves the
 * interrupted thread, loads the target and mrets.  x30/x31 are never saved: the netRX/netTX
 * queues are per context in hardware, so switching lcurcontext switches them.
 *
 * Usage, on every core that serves (names follow the nanoPU prototype):
 *
 *     scheduler_init();
 *     start_thread(high, 0, 0);      // context 0, priority 0 (highest)
 *     start_thread(low, 1, 1);       // context 1, priority 1
 *     scheduler_run();               // never returns
 *
 * Each thread is a C function that loops forever:
 *     for (;;) { lnic_wait(); ...read request...; ...reply...; lnic_msg_done(); }
 * A thread function that returns ends the run with an error (exit code NK_EXIT_RETURNED).
 *
 * This header is shared with nanokernel_trap.S: the NK_* offsets below are the layout of
 * the structures the trap handler walks (checked against the C structs in nanokernel.c).
 */
#ifndef NANOKERNEL_H
#define NANOKERNEL_H

/* ---- Limits ------------------------------------------------------------- */
#define NK_MAX_THREADS   4      /* contexts per core (docs/platform.md section 2) */
#define NK_MAX_HARTS     64     /* cores per node the simulator accepts (nic.cores) */
#define NK_STACK_BYTES   (16 * 1024)  /* each thread's stack, from nanopu_malloc */
#define NK_KSTACK_BYTES  2048   /* per-hart stack of the fatal-trap report only */

/* ---- Exit codes of the loud failures ------------------------------------ */
#define NK_EXIT_TRAP      90    /* exception or unexpected interrupt cause */
#define NK_EXIT_TARGET    91    /* ltargetcontext names no thread of this core */
#define NK_EXIT_RETURNED  92    /* a thread function returned */
#define NK_EXIT_SETUP     93    /* scheduler_run without threads, bad period, hart id */

/* ---- Interrupt causes and enables (RISC-V privileged spec 3.1.9) -------- */
#define NK_IRQ_TIMER     7      /* machine timer, CLINT mtimecmp */
#define NK_IRQ_NIC       16     /* the NIC's scheduler interrupt (docs/platform.md section 2) */

/* CLINT (docs/abi.md memory map); mtime counts real-time-clock ticks of
 * nanopu_rtc_cycles() core cycles (1 MHz on the prototype). */
#define NK_CLINT_MTIMECMP 0x2004000
#define NK_CLINT_MTIME    0x200bff8

/* ---- Layout shared with the trap handler -------------------------------- */
/* struct nk_frame: one thread's saved state */
#define NK_F_X(i)        (8 * (i))  /* x1..x29 at 8*i; slots 0, 30, 31 unused */
#define NK_F_MEPC        256
#define NK_F_HART        264        /* back pointer to the owning struct nk_hart */
#define NK_F_CONTEXT     272
#define NK_F_PRIORITY    280
#define NK_FRAME_SIZE    288
/* struct nk_hart: one core's scheduler */
#define NK_H_NTHREADS    0
#define NK_H_PERIOD      8          /* timer period in mtime ticks, 0 = NIC-driven */
#define NK_H_MTIMECMP    16         /* address of this hart's mtimecmp */
#define NK_H_KSTACK      24         /* top of the fatal-report stack */
#define NK_H_SWITCHES    32         /* trap-handler passes that loaded a thread */
#define NK_H_BOOT        40         /* frame for traps taken before the first switch */
#define NK_H_THREADS     (NK_H_BOOT + NK_FRAME_SIZE)

#ifndef __ASSEMBLER__
#include <stdint.h>

struct nk_hart;

struct nk_frame {
    uint64_t x[32];
    uint64_t mepc;
    struct nk_hart *hart;
    uint64_t context;
    uint64_t priority;
};

struct nk_hart {
    uint64_t nthreads;
    uint64_t period;
    volatile uint64_t *mtimecmp;
    uint64_t kstack;
    uint64_t switches;
    struct nk_frame boot;
    struct nk_frame threads[NK_MAX_THREADS];
    uint8_t stack[NK_KSTACK_BYTES] __attribute__((aligned(16)));
};

/* Per core: point mtvec at the nanokernel's trap handler and clear this core's thread
 * table.  Call before start_thread. */
void scheduler_init(void);

/* On the calling core: create a thread running fn (own stack, mepc = fn) and register its
 * context with the NIC (lcurcontext/lcurpriority, lniccmd bit0), then put lcurcontext and
 * lcurpriority back.  0 on success; -1 for a 5th thread, a context already used on this
 * core, a NULL fn, no scheduler_init, or no memory for the stack. */
int start_thread(void (*fn)(void), uint16_t context, uint8_t priority);

/* Never returns.  Boot word nanopu_sched_timer_cycles() == 0: NIC-driven (mie bit 16);
 * otherwise scheduler_run_timer(that period).  Starts the thread the NIC names, or the
 * first thread started if none is active. */
void scheduler_run(void) __attribute__((noreturn));

/* Never returns.  The timer-driven baseline (docs/platform.md section 3): the NIC interrupt stays
 * disabled and threads switch only on the CLINT timer every period_cycles, rounded to
 * whole mtime ticks (at least one). */
void scheduler_run_timer(uint64_t period_cycles) __attribute__((noreturn));

/* Trap-handler passes on this core that loaded a thread (NIC or timer interrupts). */
uint64_t scheduler_switches(void);

#endif /* __ASSEMBLER__ */
#endif /* NANOKERNEL_H */
