/*
 * trap.c - a recording machine-mode trap handler for the tests.
 * RISC-V privileged spec 3.1.7 (mtvec), 3.3.1 (trap entry), 3.1.15 (mepc).
 */
#include "testlib.h"

volatile struct trap_record trap_rec;
void (*volatile trap_irq_hook)(uint64_t cause);

/* Length of the instruction at pc: 2 if the low two bits are not 11 (RVC). */
static uint64_t insn_length(uint64_t pc)
{
    return (*(volatile uint16_t *)pc & 3) == 3 ? 4 : 2;
}

void trap_record_c(void);
/* mtvec needs a 4-byte aligned base (privileged spec 3.1.7). */
TRAP_ENTRY(trap_handler, trap_record_c);

void trap_record_c(void)
{
    uint64_t cause = csr_read(mcause);
    trap_rec.count++;
    trap_rec.mcause = cause;
    trap_rec.mepc = csr_read(mepc);
    trap_rec.mtval = csr_read(mtval);
    trap_rec.mstatus = csr_read(mstatus);
    if (cause & MCAUSE_INTERRUPT) {
        if (trap_irq_hook) {
            trap_irq_hook(cause & ~MCAUSE_INTERRUPT);
        }
        return;
    }
    csr_write(mepc, trap_rec.mepc + insn_length(trap_rec.mepc));
}

void trap_reset(void)
{
    trap_rec.count = 0;
    trap_rec.mcause = 0;
    trap_rec.mepc = 0;
    trap_rec.mtval = 0;
    trap_rec.mstatus = 0;
}

void trap_install(void)
{
    trap_reset();
    csr_write(mtvec, (uint64_t)&trap_handler);
}
