/*
 * ctxswitch.c - the nanokernel's context switch, from the NIC interrupt to the target's
 * first instruction (docs/platform.md section 2: the prototype measured 160 cycles).
 *
 * Method (core 0 only; the other cores exit 0 at once):
 *   - Context 1, priority 1, gets a message and spins storing mcycle into `spin_last`
 *     until context 0 has taken a measurement, then replies (echoes its words) and
 *     reports done.
 *   - A message for context 0, priority 0, arrives while context 1 spins: the NIC
 *     interrupts, the nanokernel switches.  Context 0 reads mcycle on its first
 *     instruction after the switch and replies to the sender with one word,
 *     (that mcycle) - spin_last, and prints it.
 *   - Context 1 is started first, so it runs first and context 0's very first instruction
 *     is `csrr a0, mcycle` (ctx0_entry below).  For later measurements context 0 is parked
 *     in wait_switched_back(), an mcycle loop that notices the jump in mcycle when it is
 *     switched out and back in; the first mcycle read after the jump is the resume time.
 * The client sends pairs: a message to context 1, then (about 1 us later) one to context 0.
 *
 * Error margin: the interrupt lands somewhere in context 1's spin loop (csrr, sd, ld,
 * branch), so the figure includes 0..1 iteration of it after the last store (a few cycles);
 * for the second and later measurements the resume point may also be one iteration of
 * wait_switched_back() before its mcycle read (a few cycles).  A measurement taken while
 * context 1 was not spinning (messages sent in the wrong order) would be meaningless: the
 * reply is then 0 and the console says so.
 */
#include "nanopu.h"
#include "nanokernel.h"

#define GAP_CYCLES 64  /* an mcycle step this large means we were switched out */

static volatile uint64_t spin_last;   /* context 1's latest mcycle */
static volatile uint64_t spinning;    /* context 1 is in its spin loop */
static volatile uint64_t measured;    /* measurements context 0 has taken */

void ctx0_entry(void);
void ctx0_main(uint64_t first_mcycle) __attribute__((noreturn));

/* Context 0's entry point: its first instruction reads mcycle. */
__asm__(".section .text\n"
        ".globl ctx0_entry\n"
        ".type ctx0_entry, @function\n"
        "ctx0_entry:\n"
        "  csrr a0, mcycle\n"
        "  tail ctx0_main\n"
        ".size ctx0_entry, . - ctx0_entry\n");

/* Spin on mcycle until a jump shows we were switched out and back; the resume time.
 * `prev` is read before the lnic_msg_done that makes the NIC switch us out: the interrupt
 * may be taken right after that csrw, before this loop's first mcycle read. */
static uint64_t wait_switched_back(uint64_t prev)
{
    for (;;) {
        uint64_t now = read_mcycle();
        if (now - prev >= GAP_CYCLES)
            return now;
        prev = now;
    }
}

/* Consume the rest of the current message (its payload words). */
static void drain(uint64_t hdr)
{
    for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++)
        (void)lnic_read();
}

void ctx0_main(uint64_t resumed)
{
    for (;;) {
        lnic_wait();
        uint64_t hdr = lnic_read();
        drain(hdr);
        uint64_t cycles = spinning ? resumed - spin_last : 0;
        lnic_write_r(lnic_hdr(lnic_hdr_ip(hdr), lnic_hdr_context(hdr), 8));
        lnic_write_r(cycles);
        if (cycles)
            printf("ctxswitch: %lu cycles from interrupt to first instruction\n",
                   (unsigned long)cycles);
        else
            printf("ctxswitch: context 1 was not spinning; send to context 1 first\n");
        measured++;
        uint64_t before = read_mcycle();
        lnic_msg_done();
        resumed = wait_switched_back(before);
    }
}

static void ctx1_thread(void)
{
    for (;;) {
        lnic_wait();
        uint64_t hdr = lnic_read();
        uint64_t seen = measured;
        spinning = 1;
        while (measured == seen)
            spin_last = read_mcycle();
        spinning = 0;
        /* Echo the request so the client sees when context 1 finished. */
        lnic_write_r(hdr);
        for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++)
            lnic_copy();
        lnic_msg_done();
    }
}

int main(void)
{
    if (nanopu_core_id() != 0)
        return 0;
    scheduler_init();
    /* Context 1 first: it runs first, so context 0 is entered fresh at ctx0_entry. */
    if (start_thread(ctx1_thread, 1, 1) || start_thread(ctx0_entry, 0, 0)) {
        printf("ctxswitch: start_thread failed\n");
        return 1;
    }
    scheduler_run();
}
