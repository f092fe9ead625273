/*
 * nanokernel.c - thread table and start-up of the nanoPU nanokernel (docs/platform.md section 2,
 * "The NIC raises a machine-level interrupt ..."; section 3 "Hardware thread scheduler").
 * The switch itself is the trap handler in nanokernel_trap.S; this file creates threads,
 * registers their contexts with the NIC and performs the first switch.
 *
 * Per-hart state: nk_harts[mhartid] points at a struct nk_hart taken from the heap on the
 * first scheduler_init (not TLS: crt0 copies the TLS image byte by byte on every hart at
 * boot, and a 4 KiB table would slow every start).  While a thread runs, mscratch points
 * at its frame (see nanokernel_trap.S).
 */
#include <stddef.h>
#include "nanopu.h"
#include "nanokernel.h"

#define MSTATUS_MIE   (1ul << 3)
#define MSTATUS_MPIE  (1ul << 7)
#define MSTATUS_MPP_M (3ul << 11)

/* The C structs must match the offsets the trap handler uses. */
_Static_assert(offsetof(struct nk_frame, mepc) == NK_F_MEPC, "NK_F_MEPC");
_Static_assert(offsetof(struct nk_frame, hart) == NK_F_HART, "NK_F_HART");
_Static_assert(offsetof(struct nk_frame, context) == NK_F_CONTEXT, "NK_F_CONTEXT");
_Static_assert(offsetof(struct nk_frame, priority) == NK_F_PRIORITY, "NK_F_PRIORITY");
_Static_assert(sizeof(struct nk_frame) == NK_FRAME_SIZE, "NK_FRAME_SIZE");
_Static_assert(offsetof(struct nk_hart, nthreads) == NK_H_NTHREADS, "NK_H_NTHREADS");
_Static_assert(offsetof(struct nk_hart, period) == NK_H_PERIOD, "NK_H_PERIOD");
_Static_assert(offsetof(struct nk_hart, mtimecmp) == NK_H_MTIMECMP, "NK_H_MTIMECMP");
_Static_assert(offsetof(struct nk_hart, kstack) == NK_H_KSTACK, "NK_H_KSTACK");
_Static_assert(offsetof(struct nk_hart, switches) == NK_H_SWITCHES, "NK_H_SWITCHES");
_Static_assert(offsetof(struct nk_hart, boot) == NK_H_BOOT, "NK_H_BOOT");
_Static_assert(offsetof(struct nk_hart, threads) == NK_H_THREADS, "NK_H_THREADS");

void nk_trap_entry(void);
void nk_start(struct nk_frame *f) __attribute__((noreturn));
void nk_fatal(uint64_t mcause, uint64_t mepc, uint64_t mtval, struct nk_frame *f)
    __attribute__((noreturn));
void nk_no_thread(uint64_t context, uint64_t priority, struct nk_frame *f)
    __attribute__((noreturn));

static struct nk_hart *nk_harts[NK_MAX_HARTS];

static void __attribute__((noreturn)) nk_die(int code, const char *what)
{
    printf("nanokernel: core %lu: %s\n", (unsigned long)nanopu_core_id(), what);
    nanopu_exit(code);
}

/* This core's scheduler, or NULL before scheduler_init. */
static struct nk_hart *nk_self(void)
{
    uint64_t h = nanopu_core_id();
    return h < NK_MAX_HARTS ? nk_harts[h] : NULL;
}

void scheduler_init(void)
{
    uint64_t hart = nanopu_core_id();
    if (hart >= NK_MAX_HARTS)
        nk_die(NK_EXIT_SETUP, "hart id beyond NK_MAX_HARTS");
    struct nk_hart *h = nk_harts[hart];
    if (h == NULL) {
        h = nanopu_malloc(sizeof(*h));
        if (h == NULL)
            nk_die(NK_EXIT_SETUP, "no memory for the scheduler");
        nk_harts[hart] = h;
    }
    csr_clear(mstatus, MSTATUS_MIE);
    /* Clear only the table's header and the boot frame: thread frames are cleared by
     * start_thread and the report stack needs none.  Every cache line touched here is a
     * D-cache miss to fresh heap memory, which dominates the start-up time. */
    memset(h, 0, offsetof(struct nk_hart, threads));
    h->kstack = (uint64_t)(h->stack + NK_KSTACK_BYTES);
    h->boot.hart = h;
    /* Until the first switch a trap (necessarily an exception: interrupts are off)
     * saves into the boot frame and is reported by nk_fatal. */
    csr_write(mscratch, (uint64_t)&h->boot);
    csr_write(mtvec, (uint64_t)nk_trap_entry);
}

static struct nk_frame *nk_find(struct nk_hart *h, uint64_t context)
{
    for (uint64_t i = 0; i < h->nthreads; i++)
        if (h->threads[i].context == context)
            return &h->threads[i];
    return NULL;
}

/* Where a thread function that returns ends up (its initial ra). */
static void __attribute__((noreturn)) nk_thread_returned(void)
{
    printf("nanokernel: core %lu: the thread of context %lu returned; threads must loop forever\n",
           (unsigned long)nanopu_core_id(), (unsigned long)csr_read(LCURCONTEXT));
    nanopu_exit(NK_EXIT_RETURNED);
}

/* Register (context, priority) with the NIC without changing which context is current
 * (docs/platform.md section 2: lniccmd bit0 registers lcurcontext/lcurpriority). */
static void nk_register(uint16_t context, uint8_t priority)
{
    uint64_t cur = csr_read(LCURCONTEXT), prio = csr_read(LCURPRIORITY);
    lnic_add_context(context, priority);
    csr_write(LCURCONTEXT, cur);
    csr_write(LCURPRIORITY, prio);
}

int start_thread(void (*fn)(void), uint16_t context, uint8_t priority)
{
    struct nk_hart *h = nk_self();
    if (h == NULL || fn == NULL || h->nthreads >= NK_MAX_THREADS || nk_find(h, context))
        return -1;
    uint8_t *stack = nanopu_malloc(NK_STACK_BYTES);
    if (stack == NULL)
        return -1;
    struct nk_frame *f = &h->threads[h->nthreads];
    memset(f, 0, sizeof(*f));
    uint64_t gp, tp;
    __asm__("mv %0, gp" : "=r"(gp));
    __asm__("mv %0, tp" : "=r"(tp));
    f->x[1] = (uint64_t)nk_thread_returned;          /* ra */
    f->x[2] = (uint64_t)(stack + NK_STACK_BYTES);     /* sp, 16-byte aligned */
    f->x[3] = gp;
    f->x[4] = tp;                                     /* threads share the hart's TLS */
    f->mepc = (uint64_t)fn;
    f->hart = h;
    f->context = context;
    f->priority = priority;
    nk_register(context, priority);
    h->nthreads++;
    return 0;
}

/* The first thread to run: the NIC's target if it names an active context of this core.
 * When no context is active ltargetcontext reads lcurcontext, which is ambiguous, so
 * then the first thread started runs; if another context is active after all, the NIC
 * interrupts as soon as interrupts are on (docs/platform.md section 3). */
static struct nk_frame *nk_first(struct nk_hart *h)
{
    uint64_t target = csr_read(LTARGETCONTEXT);
    struct nk_frame *f = NULL;
    if (target != csr_read(LCURCONTEXT))
        f = nk_find(h, target);
    return f ? f : &h->threads[0];
}

/* Arm the CLINT timer of this hart one period (in cycles) from now.  mtime ticks at the
 * real-time-clock rate, so the period is kept in ticks, rounded, at least one. */
static void nk_arm_timer(struct nk_hart *h, uint64_t period)
{
    volatile uint64_t *mtime = (volatile uint64_t *)NK_CLINT_MTIME;
    uint64_t rtc = nanopu_rtc_cycles();
    period = (period + rtc / 2) / rtc;
    period = period ? period : 1;
    h->period = period;
    h->mtimecmp = (volatile uint64_t *)(NK_CLINT_MTIMECMP + 8 * nanopu_core_id());
    *h->mtimecmp = *mtime + period;
}

static void __attribute__((noreturn)) nk_run(uint64_t period)
{
    struct nk_hart *h = nk_self();
    if (h == NULL || h->nthreads == 0)
        nk_die(NK_EXIT_SETUP, "scheduler_run without scheduler_init and start_thread");
    csr_clear(mstatus, MSTATUS_MIE);
    if (period) {
        nk_arm_timer(h, period);
        csr_write(mie, 1ul << NK_IRQ_TIMER);
    } else {
        csr_write(mie, 1ul << NK_IRQ_NIC);
    }
    struct nk_frame *f = nk_first(h);
    csr_write(LCURCONTEXT, f->context);
    csr_write(LCURPRIORITY, f->priority);
    lnic_start_timer();
    /* mret enters the thread in M-mode with interrupts on. */
    csr_set(mstatus, MSTATUS_MPP_M | MSTATUS_MPIE);
    nk_start(f);
}

void scheduler_run(void)
{
    nk_run(nanopu_sched_timer_cycles());
}

void scheduler_run_timer(uint64_t period_cycles)
{
    if (period_cycles == 0)
        nk_die(NK_EXIT_SETUP, "scheduler_run_timer: the period must be at least 1 cycle");
    nk_run(period_cycles);
}

uint64_t scheduler_switches(void)
{
    struct nk_hart *h = nk_self();
    return h ? h->switches : 0;
}

/* Called by the trap handler, on the hart's report stack. */
void nk_fatal(uint64_t mcause, uint64_t mepc, uint64_t mtval, struct nk_frame *f)
{
    printf("nanokernel: core %lu: unexpected trap mcause=0x%lx mepc=0x%lx mtval=0x%lx "
           "(context %lu, sp 0x%lx)\n",
           (unsigned long)nanopu_core_id(), (unsigned long)mcause, (unsigned long)mepc,
           (unsigned long)mtval, (unsigned long)csr_read(LCURCONTEXT), (unsigned long)f->x[2]);
    nanopu_exit(NK_EXIT_TRAP);
}

void nk_no_thread(uint64_t context, uint64_t priority, struct nk_frame *f)
{
    printf("nanokernel: core %lu: the NIC's target context %lu (priority %lu) has no thread "
           "on this core (interrupted at mepc 0x%lx)\n",
           (unsigned long)nanopu_core_id(), (unsigned long)context, (unsigned long)priority,
           (unsigned long)f->mepc);
    nanopu_exit(NK_EXIT_TARGET);
}
