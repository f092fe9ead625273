/*
 * nanokernel_trap.S - the nanokernel's trap handler (docs/platform.md section 2: "The trap handler
 * (the nanokernel) saves x1..x29 and mepc of the current context, reads
 * ltargetcontext/ltargetpriority, writes them to lcurcontext/lcurpriority, restarts the
 * message timer, restores the target's registers and mrets").
 *
 * mscratch always holds the running thread's struct nk_frame (or the hart's boot frame
 * before the first switch), so the handler needs no free register to find where to save:
 * `csrrw sp, mscratch, sp` swaps the thread's sp out and the frame in.
 *
 * x30/x31 are netRX/netTX and are never touched: the queues are per context in hardware,
 * and reading x30 would pop a word.  Layout offsets come from nanokernel.h.
 *
 * Cost of one switch on the NIC interrupt, in instructions: 39 to save and decode the
 * cause (csrrw, 28 sd, 2 for sp, 2 for mepc, 6 for mcause), 3 to read the target, 5 to find
 * the first thread's frame (+6 per thread scanned before it), 7 to tell the NIC and count,
 * 33 to restore (mscratch, mepc, 28 ld, sp, mret): 87 for the first thread, 93 for the
 * second.  The timer interrupt adds 8 (a second cause test and re-arming mtimecmp).
 * apps/ctxswitch.c measures about 150 cycles from the interrupt to the target's first
 * instruction with warm caches (docs/platform.md section 2: 160 on the prototype).
 */
#include "nanokernel.h"

#define LCURCONTEXT     0x053
#define LNICCMD         0x054
#define LCURPRIORITY    0x055
#define LTARGETCONTEXT  0x058
#define LTARGETPRIORITY 0x059
#define LNICCMD_START_TIMER 4

/* Save/restore every general register but x0, sp (x2, handled apart) and x30/x31. */
.macro NK_REGS op
    \op x1,  NK_F_X(1)(sp)
    \op x3,  NK_F_X(3)(sp)
    \op x4,  NK_F_X(4)(sp)
    \op x5,  NK_F_X(5)(sp)
    \op x6,  NK_F_X(6)(sp)
    \op x7,  NK_F_X(7)(sp)
    \op x8,  NK_F_X(8)(sp)
    \op x9,  NK_F_X(9)(sp)
    \op x10, NK_F_X(10)(sp)
    \op x11, NK_F_X(11)(sp)
    \op x12, NK_F_X(12)(sp)
    \op x13, NK_F_X(13)(sp)
    \op x14, NK_F_X(14)(sp)
    \op x15, NK_F_X(15)(sp)
    \op x16, NK_F_X(16)(sp)
    \op x17, NK_F_X(17)(sp)
    \op x18, NK_F_X(18)(sp)
    \op x19, NK_F_X(19)(sp)
    \op x20, NK_F_X(20)(sp)
    \op x21, NK_F_X(21)(sp)
    \op x22, NK_F_X(22)(sp)
    \op x23, NK_F_X(23)(sp)
    \op x24, NK_F_X(24)(sp)
    \op x25, NK_F_X(25)(sp)
    \op x26, NK_F_X(26)(sp)
    \op x27, NK_F_X(27)(sp)
    \op x28, NK_F_X(28)(sp)
    \op x29, NK_F_X(29)(sp)
.endm

    .section .text.nanokernel, "ax", @progbits
    .globl nk_trap_entry
    .type nk_trap_entry, @function
    .balign 4                           /* mtvec direct mode: BASE is 4-byte aligned */
nk_trap_entry:
    csrrw   sp, mscratch, sp            /* sp = current frame, mscratch = thread's sp */
    NK_REGS sd
    csrr    t0, mscratch
    sd      t0, NK_F_X(2)(sp)
    csrr    t0, mepc
    sd      t0, NK_F_MEPC(sp)

    /* Only the NIC (16) and timer (7) interrupts switch; anything else is a bug. */
    csrr    t0, mcause
    bgez    t0, nk_fatal_trap           /* bit 63 clear: an exception */
    slli    t0, t0, 1
    srli    t0, t0, 1
    li      t1, NK_IRQ_NIC
    beq     t0, t1, nk_switch
    li      t1, NK_IRQ_TIMER
    bne     t0, t1, nk_fatal_trap

    /* Timer: next tick one period after the previous deadline, not after now, so the
     * period does not drift by the handler's latency. */
    ld      t1, NK_F_HART(sp)
    ld      t2, NK_H_MTIMECMP(t1)
    ld      t3, NK_H_PERIOD(t1)
    ld      t4, 0(t2)
    add     t4, t4, t3
    sd      t4, 0(t2)

nk_switch:
    /* Restart the NIC's message timer before switching, as the prototype's handler does
     * (crt.S: csrwi 0x54, 0x4 first): the bound of the context switched in counts from
     * here, not from whenever the previous restart was. */
    csrwi   LNICCMD, LNICCMD_START_TIMER
    ld      t1, NK_F_HART(sp)
    csrr    t2, LTARGETCONTEXT
    csrr    t3, LTARGETPRIORITY

    /* Find the target's frame: a linear scan of at most NK_MAX_THREADS entries. */
    ld      t4, NK_H_NTHREADS(t1)
    addi    a0, t1, NK_H_THREADS
1:  beqz    t4, nk_bad_target
    ld      a1, NK_F_CONTEXT(a0)
    beq     a1, t2, 2f
    addi    a0, a0, NK_FRAME_SIZE
    addi    t4, t4, -1
    j       1b

2:  csrw    LCURCONTEXT, t2             /* the NIC now serves netRX/netTX of the target */
    csrw    LCURPRIORITY, t3
    ld      t4, NK_H_SWITCHES(t1)
    addi    t4, t4, 1
    sd      t4, NK_H_SWITCHES(t1)
    mv      sp, a0

/* Load the thread whose frame is in sp and mret to it.  Also the first switch
 * (nk_start, called from scheduler_run with mstatus.MPP/MPIE already set). */
    .globl nk_restore
nk_restore:
    csrw    mscratch, sp
    ld      t0, NK_F_MEPC(sp)
    csrw    mepc, t0
    NK_REGS ld
    ld      sp, NK_F_X(2)(sp)           /* last: sp was the frame pointer */
    mret
    .size nk_trap_entry, . - nk_trap_entry

/* void nk_start(struct nk_frame *f): the first switch on this core. */
    .globl nk_start
    .type nk_start, @function
nk_start:
    mv      sp, a0
    j       nk_restore
    .size nk_start, . - nk_start

/* Loud failures: report from the hart's own small stack (the thread's may be the
 * problem), in C.  The interrupted state is already in the frame at sp. */
nk_fatal_trap:
    mv      a3, sp                      /* the frame */
    ld      t1, NK_F_HART(sp)
    ld      sp, NK_H_KSTACK(t1)
    csrr    a0, mcause
    csrr    a1, mepc
    csrr    a2, mtval
    call    nk_fatal                    /* noreturn */
3:  j       3b

nk_bad_target:
    mv      a0, t2                      /* target context */
    mv      a1, t3                      /* target priority */
    mv      a2, sp                      /* the interrupted frame */
    ld      sp, NK_H_KSTACK(t1)
    call    nk_no_thread                /* noreturn */
4:  j       4b
