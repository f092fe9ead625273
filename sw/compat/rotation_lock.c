/* rotation_lock.c - two threads on hart 0 under the prototype-style scheduler header
   (lnic-scheduler.h), neither ever given a message. Context 0 runs first: it takes a
   spinlock and computes, holding it, for four idle timeouts (lidlecycles, 3,000 cycles by
   default). To the NIC it holds no message, so it is idle: the idle timeout switches it
   out, as the prototype's printf is switched out holding its lock. Context 1 then spins on
   the lock. Only a timeout that switches context 0 back in lets it finish and release the
   lock; context 1 then prints "rotation: got the lock" and exits 0. With argument "wait"
   it waits on netRX instead: both threads then wait with nothing pending, and the run ends
   there, with nothing left to simulate.

   With argument "masked", context 1 instead turns interrupts off and waits on netRX for a
   message that never comes: the core can no longer take the NIC's interrupt, context 0 is
   never switched back in, and the run ends with nothing left to simulate, reporting
   context 0 as switched out with work left. */
#include "lnic-scheduler.h"

#define HOLD_CYCLES 12000

static volatile uint32_t lock;
static int masked, wait;

static void spin(uint64_t cycles)
{
    uint64_t start = lnic_csr_read(mcycle);
    while (lnic_csr_read(mcycle) - start < cycles) {
    }
}

static void holder(void)
{
    while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE) != 0) {
    }
    spin(HOLD_CYCLES);
    __atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
    for (;;) {
        lnic_wait();
        sched_die("no message was sent to context 0");
    }
}

static void waiter(void)
{
    if (masked) {
        __asm__ volatile("csrc mstatus, %0" :: "r"(1ul << 3));
        lnic_wait();
        sched_die("no message was sent to context 1");
    }
    while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE) != 0) {
    }
    printstr("rotation: got the lock\n");
    if (wait) {
        lnic_wait();
        sched_die("no message was sent to context 1");
    }
    exit(0);
}

int main(int argc, char **argv)
{
    masked = argc > 3 && argv[3][0] == 'm';
    wait = argc > 3 && argv[3][0] == 'w';
    /* The last context registered is the current one, which sched_run starts. */
    sched_add_thread(waiter, 1, 0);
    sched_add_thread(holder, 0, 0);
    sched_run();
}
