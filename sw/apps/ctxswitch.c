/*
 * ctxswitch.c - the nanokernel's context switch, from the NIC interrupt to the target's
 * first instruction (docs/platform.md section 2: the prototype measured 160 cycles).
 *
 * Method (core 0 only; the other cores exit 0 at once):
 *   - Context 1, priority 1, gets a message and spins storing mcycle into `spin_last`
 *     until context 0 has taken a measurement, then replies (echoes its words) and
 *     reports done.
 *   - A message for context 0, priority 0, arrives while context 1 spins: the NIC
 *     interrupts, the nanokernel switches.  Context 0, switched out while it waited in
 *     lnic_wait(), resumes there, reads mcycle as soon as the wait ends and replies to the
 *     sender with one word, (that mcycle) - spin_last, and prints it.
 *   - Context 0 waits in lnic_wait() between messages, so that the NIC's idle timeout,
 *     which switches in every thread that is not waiting on netRX (docs/models/node.md),
 *     leaves it there, and a run whose threads all wait ends.  Both threads first run
 *     when the idle timeout starts them, before any message; the first measurement is
 *     the first switch in a message's interrupt, with the caches as the start left them.
 * The client sends pairs: a message to context 1, then (about 1 us later) one to context 0.
 *
 * Error margin: the interrupt lands somewhere in context 1's spin loop (csrr, sd, ld,
 * branch), so the figure includes 0..1 iteration of it after the last store (a few cycles),
 * and the end of lnic_wait() before the mcycle read (its csrr and branch, a few cycles).
 * A measurement taken while context 1 was not spinning (messages sent in the wrong order)
 * would be meaningless: the reply is then 0 and the console says so.
 */
#include "nanopu.h"
#include "nanokernel.h"


static volatile uint64_t spin_last;   /* context 1's latest mcycle */
static volatile uint64_t spinning;    /* context 1 is in its spin loop */
static volatile uint64_t measured;    /* measurements context 0 has taken */

/* Consume the rest of the current message (its payload words). */
static void drain(uint64_t hdr)
{
    for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++)
        (void)lnic_read();
}

static void ctx0_thread(void)
{
    for (;;) {
        lnic_wait();
        uint64_t resumed = read_mcycle();
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
        lnic_msg_done();
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
    if (start_thread(ctx1_thread, 1, 1) || start_thread(ctx0_thread, 0, 0)) {
        printf("ctxswitch: start_thread failed\n");
        return 1;
    }
    scheduler_run();
}
