/*
 * interrupts.c - machine interrupts from the CLINT (docs/abi.md memory map;
 * RISC-V privileged spec 3.1.9 mip/mie, 3.2.1 mtime/mtimecmp, 3.3.3 wfi):
 * software interrupt via msip (cause 3), timer interrupt via mtimecmp (cause 7)
 * with wfi, masking by mie and by mstatus.MIE, wfi waking with MIE=0, and
 * vectored mtvec (interrupt i goes to BASE + 4*i).
 */
#include "testlib.h"

#define MIP_MSIP (1ull << IRQ_MSI)
#define MIP_MTIP (1ull << IRQ_MTI)
#define SPIN_LIMIT 1000000

static uint64_t hart;

/* Silence the interrupt source so mret does not re-enter the handler. */
static void silence(uint64_t cause)
{
    if (cause == IRQ_MSI) {
        *CLINT_MSIP(hart) = 0;
    } else if (cause == IRQ_MTI) {
        *CLINT_MTIMECMP(hart) = ~0ull;
    }
}

/* Wait until the handler has run `n` times; 0 if it never did. */
static int wait_traps(uint64_t n)
{
    for (int i = 0; i < SPIN_LIMIT; i++) {
        if (trap_rec.count >= n) {
            return 1;
        }
    }
    return 0;
}

static void test_software_interrupt(void)
{
    trap_install();
    csr_write(mie, MIE_MSIE);
    csr_set(mstatus, MSTATUS_MIE);
    *CLINT_MSIP(hart) = 1;
    CHECK("msi taken", wait_traps(1), 1);
    csr_clear(mstatus, MSTATUS_MIE);
    CHECK("msi mcause", trap_rec.mcause, MCAUSE_INTERRUPT | IRQ_MSI);
    CHECK("msi cleared", csr_read(mip) & MIP_MSIP, 0);
    CHECK("msi count", trap_rec.count, 1);
}

static void test_masked_software_interrupt(void)
{
    trap_install();
    csr_write(mie, 0);
    csr_set(mstatus, MSTATUS_MIE);
    *CLINT_MSIP(hart) = 1;
    for (volatile int i = 0; i < 1000; i++) {
    }
    CHECK("mie masks msi", trap_rec.count, 0);
    CHECK("msip pending in mip", csr_read(mip) & MIP_MSIP, MIP_MSIP);
    csr_clear(mstatus, MSTATUS_MIE);
    csr_write(mie, MIE_MSIE);          /* enabled in mie but MIE=0: still masked */
    for (volatile int i = 0; i < 1000; i++) {
    }
    CHECK("mstatus.MIE masks msi", trap_rec.count, 0);
    *CLINT_MSIP(hart) = 0;
    CHECK("msip cleared in mip", csr_read(mip) & MIP_MSIP, 0);
    csr_write(mie, 0);
}

static void arm_timer(uint64_t delta)
{
    *CLINT_MTIMECMP(hart) = *CLINT_MTIME + delta;
}

static void test_timer_wfi(void)
{
    trap_install();
    uint64_t t0 = *CLINT_MTIME;
    csr_write(mie, MIE_MTIE);
    arm_timer(500);
    csr_set(mstatus, MSTATUS_MIE);
    for (int i = 0; i < SPIN_LIMIT && trap_rec.count == 0; i++) {
        __asm__ volatile("wfi");
    }
    csr_clear(mstatus, MSTATUS_MIE);
    CHECK("timer taken", trap_rec.count, 1);
    CHECK("timer mcause", trap_rec.mcause, MCAUSE_INTERRUPT | IRQ_MTI);
    CHECK_TRUE("mtime advanced", *CLINT_MTIME >= t0 + 500);
    CHECK("mtip cleared", csr_read(mip) & MIP_MTIP, 0);
    csr_write(mie, 0);
}

/* wfi resumes when an enabled interrupt is pending even with mstatus.MIE = 0,
 * and no trap is taken (privileged spec 3.3.3). */
static void test_wfi_without_mie(void)
{
    trap_install();
    csr_clear(mstatus, MSTATUS_MIE);
    csr_write(mie, MIE_MTIE);
    arm_timer(300);
    for (int i = 0; i < SPIN_LIMIT && !(csr_read(mip) & MIP_MTIP); i++) {
        __asm__ volatile("wfi");
    }
    CHECK("mtip pending", csr_read(mip) & MIP_MTIP, MIP_MTIP);
    CHECK("no trap with MIE=0", trap_rec.count, 0);
    *CLINT_MTIMECMP(hart) = ~0ull;
    CHECK("mtip cleared by mtimecmp", csr_read(mip) & MIP_MTIP, 0);
    csr_write(mie, 0);
}

/* Vectored mode: interrupt cause i enters at BASE + 4*i (privileged 3.1.7). */
static volatile uint64_t entry_hits[16];
#define VEC_ENTRY(n) \
    void vec_entry_##n##_c(void); \
    TRAP_ENTRY(vec_entry_##n, vec_entry_##n##_c); \
    void vec_entry_##n##_c(void) { entry_hits[n]++; trap_rec.count++; silence(n); }
VEC_ENTRY(0) VEC_ENTRY(3) VEC_ENTRY(7) VEC_ENTRY(15)

__asm__(".section .text\n.balign 256\n.option push\n.option norvc\n"
        "irq_vector_table:\n"
        " j vec_entry_0\n j vec_entry_15\n j vec_entry_15\n j vec_entry_3\n"
        " j vec_entry_15\n j vec_entry_15\n j vec_entry_15\n j vec_entry_7\n"
        ".rept 8\n j vec_entry_15\n.endr\n.option pop\n");
extern char irq_vector_table[];

static void test_vectored(void)
{
    trap_reset();
    csr_write(mtvec, (uint64_t)irq_vector_table | 1);
    csr_write(mie, MIE_MSIE | MIE_MTIE);
    csr_set(mstatus, MSTATUS_MIE);
    *CLINT_MSIP(hart) = 1;
    wait_traps(1);
    arm_timer(200);
    for (int i = 0; i < SPIN_LIMIT && trap_rec.count < 2; i++) {
        __asm__ volatile("wfi");
    }
    csr_clear(mstatus, MSTATUS_MIE);
    csr_write(mie, 0);
    CHECK("vectored msi -> entry 3", entry_hits[3], 1);
    CHECK("vectored mti -> entry 7", entry_hits[7], 1);
    CHECK("vectored base unused", entry_hits[0], 0);
    CHECK("vectored no stray entry", entry_hits[15], 0);
}

int main(void)
{
    hart = nanopu_core_id();
    trap_irq_hook = silence;
    *CLINT_MTIMECMP(hart) = ~0ull;
    test_software_interrupt();
    test_masked_software_interrupt();
    test_timer_wfi();
    test_wfi_without_mie();
    test_vectored();
    csr_write(mtvec, 0);
    return test_finish("interrupts");
}
