/*
 * service.c - the service-time server of the nanoPU paper's scheduling experiments
 * (docs/platform.md section 3: JBSQ vs RSS core selection, the hardware thread scheduler, bounded
 * processing time), on top of the nanokernel (nanokernel.h).
 *
 * Request payload, 2 words: w0 = service time in cycles, w1 = the client's send time
 * (opaque).  A thread spins for w0 cycles of its own execution, then replies to the
 * request's source (IP and context of the received header) with the same 2 words, then
 * reports the message done.
 *
 * "Its own execution": cycles while the thread is switched out (another context, the
 * nanokernel) do not count, so a preempted request is delayed by the preemption, as work
 * on a real core would be.  Switched-out time shows up as a jump in mcycle between two
 * iterations of the spin loop (GAP_CYCLES; one iteration is a handful of cycles, a switch
 * out and back in well over a hundred).
 *
 * Test type, argv[3]:
 *   jbsq       every core: context 0, priority 0
 *   rss        core i: context i, priority 0 (requests name the core by context)
 *   preempt    every core: context 0 at priority 0 and context 1 at priority 1
 *   two        core 0: context 0 at priority 0 and context 1 at priority 1; the other
 *              cores exit 0 at once (nothing registered there, nothing to simulate)
 *   misbehave  core 0: contexts 0 and 1, both priority 0; context 1 stretches every 100th
 *              request it serves to 10x its service time (exceeds lmsgcycles, so the NIC
 *              demotes it, docs/platform.md section 3); the other cores exit 0
 * Anything else: usage on core 0's console, exit 2 on every core.
 */
#include "nanopu.h"
#include "nanokernel.h"

#define REQ_BYTES     16
#define GAP_CYCLES    64   /* an mcycle step this large means we were switched out */
#define STRETCH_EVERY 100
#define STRETCH       10

/* Spin until this thread has executed `cycles` cycles, excluding switched-out time. */
static void spin_own_cycles(uint64_t cycles)
{
    uint64_t done = 0, prev = read_mcycle();
    while (done < cycles) {
        uint64_t now = read_mcycle();
        if (now - prev < GAP_CYCLES)
            done += now - prev;
        prev = now;
    }
}

/* A request of the wrong length is a client bug: say so and stop the run. */
static void __attribute__((noreturn)) bad_request(uint64_t hdr)
{
    printf("service: core %lu context %lu: request header 0x%lx: payload must be %d bytes\n",
           (unsigned long)nanopu_core_id(), (unsigned long)csr_read(LCURCONTEXT),
           (unsigned long)hdr, REQ_BYTES);
    nanopu_exit(3);
}

/* Serve one request; `stretch` multiplies its service time. */
static void serve_one(uint64_t stretch)
{
    uint64_t hdr = lnic_read();
    if (lnic_hdr_len(hdr) != REQ_BYTES)
        bad_request(hdr);
    uint64_t service = lnic_read();
    uint64_t sent = lnic_read();
    spin_own_cycles(service * stretch);
    lnic_write_r(lnic_hdr(lnic_hdr_ip(hdr), lnic_hdr_context(hdr), REQ_BYTES));
    lnic_write_r(service);
    lnic_write_r(sent);
    lnic_msg_done();
}

static void server_thread(void)
{
    for (;;) {
        lnic_wait();
        serve_one(1);
    }
}

/* Only context 1 on core 0 runs this (misbehave), so a plain static counter is per thread. */
static void misbehaving_thread(void)
{
    uint64_t served = 0;
    for (;;) {
        lnic_wait();
        served++;
        serve_one(served % STRETCH_EVERY == 0 ? STRETCH : 1);
    }
}

static void start_or_die(void (*fn)(void), uint16_t context, uint8_t priority)
{
    if (start_thread(fn, context, priority) != 0) {
        printf("service: core %lu: start_thread(context %u, priority %u) failed\n",
               (unsigned long)nanopu_core_id(), context, priority);
        nanopu_exit(4);
    }
}

static int usage(void)
{
    if (nanopu_core_id() == 0)
        printf("usage: service.elf jbsq|rss|preempt|two|misbehave\n"
               "  request: 2 words (service cycles, send time); reply: the same 2 words\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return usage();
    const char *type = argv[3];
    uint64_t core = nanopu_core_id();
    int only_core0 = !strcmp(type, "two") || !strcmp(type, "misbehave");
    if (strcmp(type, "jbsq") && strcmp(type, "rss") && strcmp(type, "preempt") && !only_core0)
        return usage();
    if (only_core0 && core != 0)
        return 0;

    scheduler_init();
    if (!strcmp(type, "jbsq")) {
        start_or_die(server_thread, 0, 0);
    } else if (!strcmp(type, "rss")) {
        start_or_die(server_thread, (uint16_t)core, 0);
    } else if (!strcmp(type, "misbehave")) {
        start_or_die(server_thread, 0, 0);
        start_or_die(misbehaving_thread, 1, 0);
    } else { /* preempt, two */
        start_or_die(server_thread, 0, 0);
        start_or_die(server_thread, 1, 1);
    }
    scheduler_run();
}
