/* sched_server.c - two threads on hart 0 under the prototype-style scheduler header
   (lnic-scheduler.h): context 0 at priority 0 and context 1 at priority 1. Each thread
   first sends a start-up message (one word, its context) to the host at 10.0.0.1, as the
   prototype's servers announce themselves, then serves the load generator's requests:
   2 words {service cycles, send time}; it spins for the service time and echoes both
   words to the request's source. Never exits: run it under `nanopu load`. */
#include "lnic-scheduler.h"

#define HOST_HDR(context, len) ((0x0a000001ull << 32) | ((uint64_t)(context) << 16) | (len))

static void spin(uint64_t cycles)
{
    uint64_t start = lnic_csr_read(mcycle);
    while (lnic_csr_read(mcycle) - start < cycles) {
    }
}

static void serve(uint64_t context)
{
    lnic_write_r(HOST_HDR(0, 8));
    lnic_write_r(context);
    for (;;) {
        lnic_wait();
        uint64_t hdr = lnic_read();
        if ((hdr & 0xffff) != 16)
            sched_die("a request must be 16 bytes");
        uint64_t service = lnic_read(), sent = lnic_read();
        spin(service);
        lnic_write_r((hdr & ~0xffffull) | 16);
        lnic_write_r(service);
        lnic_write_r(sent);
        lnic_msg_done();
    }
}

static void thread0(void) { serve(0); }
static void thread1(void) { serve(1); }

int main(void)
{
    sched_add_thread(thread0, 0, 0);
    sched_add_thread(thread1, 1, 1);
    sched_run();
}
