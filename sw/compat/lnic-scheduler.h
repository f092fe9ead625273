/* lnic-scheduler.h - several threads on hart 0, each its own LNIC context, switched by the
   NIC's interrupt, in the shape of the prototype's scheduler header (written for nanopu,
   not the prototype's code). The hardware it drives is documented in docs/models/node.md:
   the NIC raises mip bit 16 when its target context should run; the handler saves the
   running thread, reads ltargetcontext/ltargetpriority, writes them to
   lcurcontext/lcurpriority, restarts the message timer and resumes the target.

   Use: sched_add_thread(fn, context, priority) for each thread, then sched_run(), which
   never returns. Threads loop forever. x30/x31 are never saved: the queues are per context
   in the NIC, and reading x30 would pop a word. Only hart 0 runs main in this runtime, so
   the tables are plain statics. */
#ifndef COMPAT_LNIC_SCHEDULER_H
#define COMPAT_LNIC_SCHEDULER_H
#include <stdint.h>
#include "lnic.h"

#define LTARGETCONTEXT  0x058
#define LTARGETPRIORITY 0x059
#define SCHED_MAX_THREADS 4
#define SCHED_STACK_WORDS 1024
#define SCHED_IRQ_NIC 16

/* Saved state of a thread: x0..x31 by number (x0, x30, x31 unused), then mepc. The trap
   entry below relies on this layout: x[i] at 8*i, mepc at 256. */
struct sched_frame {
    uint64_t x[32];
    uint64_t mepc;
    uint64_t context, priority;
};

static struct sched_frame sched_threads[SCHED_MAX_THREADS];
static struct sched_frame sched_boot;        /* main's frame; traps before the first switch */
static uint64_t sched_stacks[SCHED_MAX_THREADS][SCHED_STACK_WORDS] __attribute__((aligned(16)));
static uint64_t sched_trap_stack[512] __attribute__((aligned(16)));
static int sched_nthreads;
uint64_t sched_trap_sp = (uint64_t)(uintptr_t)&sched_trap_stack[512];

void sched_trap_entry(void);
void sched_enter(struct sched_frame *f) __attribute__((noreturn));

/* The trap entry: mscratch holds the running frame. Save x1..x29 (the thread's sp comes
   from mscratch after the swap) and mepc, call sched_next on the trap stack, then restore
   the frame it returns and mret into it. */
__asm__(
    "  .text\n  .balign 4\n  .globl sched_trap_entry\n"
    "sched_trap_entry:\n"
    "  csrrw sp, mscratch, sp\n"
    "  .irp r,1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29\n"
    "  sd x\\r, 8*\\r(sp)\n"
    "  .endr\n"
    "  csrr t0, mscratch\n  sd t0, 16(sp)\n"
    "  csrr t0, mepc\n  sd t0, 256(sp)\n"
    "  mv a0, sp\n  ld sp, sched_trap_sp\n"
    "  call sched_next\n"
    "  .globl sched_enter\n"
    "sched_enter:\n"
    "  mv sp, a0\n  csrw mscratch, a0\n"
    "  ld t0, 256(sp)\n  csrw mepc, t0\n"
    "  .irp r,1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29\n"
    "  ld x\\r, 8*\\r(sp)\n"
    "  .endr\n"
    "  ld sp, 16(sp)\n"
    "  mret\n");

void exit(int code) __attribute__((noreturn));

static void sched_die(const char *why)
{
    printstr("lnic-scheduler: ");
    printstr(why);
    printstr("\n");
    exit(3);
}

static struct sched_frame *sched_find(uint64_t context)
{
    for (int i = 0; i < sched_nthreads; i++)
        if (sched_threads[i].context == context)
            return &sched_threads[i];
    return 0;
}

/* Make frame f the running context for the NIC and restart its message timer. */
static struct sched_frame *sched_switch_to(struct sched_frame *f)
{
    lnic_csr_write(0x053, f->context);
    lnic_csr_write(0x055, f->priority);
    lnic_csr_write(0x054, 4);
    return f;
}

/* Called by the trap entry with the interrupted frame: only the NIC interrupt may come. */
struct sched_frame *sched_next(struct sched_frame *cur)
{
    uint64_t cause;
    __asm__ volatile("csrr %0, mcause" : "=r"(cause));
    if (cause != ((1ul << 63) | SCHED_IRQ_NIC))
        sched_die(cur == &sched_boot ? "trap before sched_run" : "unexpected trap");
    struct sched_frame *f = sched_find(lnic_csr_read(0x058));
    if (!f)
        sched_die("the NIC's target context has no thread");
    return sched_switch_to(f);
}

static void sched_returned(void)
{
    sched_die("a thread returned; threads must loop forever");
}

/* Register `context` at `priority` with the NIC and give it a thread running fn. */
static void sched_add_thread(void (*fn)(void), uint16_t context, uint8_t priority)
{
    if (sched_nthreads == SCHED_MAX_THREADS || sched_find(context))
        sched_die("too many threads, or a context twice");
    int i = sched_nthreads++;
    struct sched_frame *f = &sched_threads[i];
    uint64_t gp;
    __asm__("mv %0, gp" : "=r"(gp));
    f->x[1] = (uint64_t)(uintptr_t)sched_returned;
    f->x[2] = (uint64_t)(uintptr_t)&sched_stacks[i][SCHED_STACK_WORDS]; /* top of its stack */
    f->x[3] = gp;
    f->mepc = (uint64_t)(uintptr_t)fn;
    f->context = context;
    f->priority = priority;
    lnic_add_context(context, priority);
}

/* Take NIC interrupts and run the first thread (the NIC's target if it has one). */
static void __attribute__((noreturn)) sched_run(void)
{
    if (sched_nthreads == 0)
        sched_die("sched_run without threads");
    __asm__ volatile("csrw mscratch, %0" :: "r"(&sched_boot));
    __asm__ volatile("csrw mtvec, %0" :: "r"(sched_trap_entry));
    __asm__ volatile("csrw mie, %0" :: "r"(1ul << SCHED_IRQ_NIC));
    struct sched_frame *f = sched_find(lnic_csr_read(0x058));
    /* mret enters the thread in M-mode (MPP = 3) with interrupts on (MPIE). */
    __asm__ volatile("csrs mstatus, %0" :: "r"((3ul << 11) | (1ul << 7)));
    sched_enter(sched_switch_to(f ? f : &sched_threads[0]));
}
#endif
