/*
 * c1stall.c - the server of the nanoPU prototype's bounded-processing experiment, its
 * HIGH_PRIORITY_C1_STALL test (l-nic/chipyard `tests-lnic/lnic-evaluation.c`, tag
 * nanoPU-artifact-v1.0), on the nanokernel (nanokernel.h): core 0 runs contexts 0 and 1,
 * both at priority 0; the other cores exit 0 at once.
 *
 * Each thread first sends the prototype's start-up message, {core, context}, to the test
 * host (its load generator sends nothing before both have), then serves requests of 2 words
 * (w0 = service time in cycles, w1 = the client's send time, opaque): it spins until mcycle
 * has advanced w0 cycles, wall clock, so time switched out counts as on the prototype
 * (`while (mcycle < start + service_time)`), replies {w0, w1} to the request's source
 * (IP and context of its header) and reports the message done.
 *
 * Context 1 misbehaves as the prototype's thread counts: after STALL_FREQ plain requests
 * the next one (the 101st, 202nd, ...) takes STALL_FACTOR times its service time, beyond
 * lmsgcycles, so the NIC demotes it (docs/platform.md section 3); its reply echoes the
 * stretched time, as the prototype's does. A request of another length prints its header
 * and exits 3.
 */
#include "nanopu.h"
#include "nanokernel.h"

#define REQ_BYTES    16
#define STALL_FREQ   100 /* the prototype's c1_stall_freq */
#define STALL_FACTOR 10  /* the prototype's c1_stall_factor */

static void spin_wall_cycles(uint64_t cycles)
{
    uint64_t start = read_mcycle();
    while (read_mcycle() - start < cycles)
        ;
}

static void announce(uint64_t context)
{
    lnic_write_r(lnic_hdr(NANOPU_HOST_IP, 0, REQ_BYTES));
    lnic_write_r(nanopu_core_id());
    lnic_write_r(context);
}

static void __attribute__((noreturn)) bad_request(uint64_t hdr)
{
    printf("c1stall: context %lu: request header 0x%lx: payload must be %d bytes\n",
           (unsigned long)csr_read(LCURCONTEXT), (unsigned long)hdr, REQ_BYTES);
    nanopu_exit(3);
}

/* The service time of context 1's next request, stretched when its turn comes. */
static uint64_t stall(uint64_t context, uint64_t service, uint64_t *since_stall)
{
    if (context != 1)
        return service;
    if (*since_stall >= STALL_FREQ) {
        *since_stall = 0;
        return service * STALL_FACTOR;
    }
    (*since_stall)++;
    return service;
}

static void thread(void)
{
    uint64_t since_stall = 0, context = csr_read(LCURCONTEXT);
    announce(context);
    for (;;) {
        lnic_wait();
        uint64_t hdr = lnic_read();
        if (lnic_hdr_len(hdr) != REQ_BYTES)
            bad_request(hdr);
        uint64_t service = stall(context, lnic_read(), &since_stall);
        uint64_t sent = lnic_read();
        spin_wall_cycles(service);
        lnic_write_r(lnic_hdr(lnic_hdr_ip(hdr), lnic_hdr_context(hdr), REQ_BYTES));
        lnic_write_r(service);
        lnic_write_r(sent);
        lnic_msg_done();
    }
}

int main(void)
{
    if (nanopu_core_id() != 0)
        return 0;
    scheduler_init();
    for (uint16_t context = 0; context < 2; context++) {
        if (start_thread(thread, context, 0) != 0) {
            printf("c1stall: start_thread(context %u, priority 0) failed\n", context);
            return 4;
        }
    }
    scheduler_run();
}
