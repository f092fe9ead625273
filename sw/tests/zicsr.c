/*
 * zicsr.c - the Zicsr extension (RISC-V unprivileged spec chapter 9,
 * privileged spec 3.1): csrrw csrrs csrrc csrrwi csrrsi csrrci on mscratch,
 * the rd=x0 / rs1=x0 / uimm=0 rules, read-only counters, mcycle/minstret
 * increasing, misa reporting RV64 with I, M, A, C, mhartid.
 */
#include "testlib.h"

#define CSRRW(csr, v) ({ uint64_t _o; __asm__ volatile("csrrw %0, " #csr ", %1" : "=r"(_o) : "r"((uint64_t)(v))); _o; })
#define CSRRS(csr, v) ({ uint64_t _o; __asm__ volatile("csrrs %0, " #csr ", %1" : "=r"(_o) : "r"((uint64_t)(v))); _o; })
#define CSRRC(csr, v) ({ uint64_t _o; __asm__ volatile("csrrc %0, " #csr ", %1" : "=r"(_o) : "r"((uint64_t)(v))); _o; })
#define CSRRI(op, csr, imm) ({ uint64_t _o; __asm__ volatile(op " %0, " #csr ", %1" : "=r"(_o) : "i"(imm)); _o; })

static void test_register_forms(void)
{
    csr_write(mscratch, 0x1111);
    CHECK("csrrw old", CSRRW(mscratch, 0xf0f0f0f0f0f0f0f0), 0x1111);
    CHECK("csrrw new", csr_read(mscratch), 0xf0f0f0f0f0f0f0f0);
    CHECK("csrrs old", CSRRS(mscratch, 0x0f), 0xf0f0f0f0f0f0f0f0);
    CHECK("csrrs new", csr_read(mscratch), 0xf0f0f0f0f0f0f0ff);
    CHECK("csrrc old", CSRRC(mscratch, 0xf00000000000000f), 0xf0f0f0f0f0f0f0ff);
    CHECK("csrrc new", csr_read(mscratch), 0x00f0f0f0f0f0f0f0);
}

/* The 5-bit immediate is zero-extended (spec 9.1). */
static void test_immediate_forms(void)
{
    csr_write(mscratch, 0xff00);
    CHECK("csrrwi old", CSRRI("csrrwi", mscratch, 31), 0xff00);
    CHECK("csrrwi zext", csr_read(mscratch), 31);
    CHECK("csrrci old", CSRRI("csrrci", mscratch, 0x11), 31);
    CHECK("csrrci new", csr_read(mscratch), 0x0e);
    CHECK("csrrsi old", CSRRI("csrrsi", mscratch, 0x10), 0x0e);
    CHECK("csrrsi new", csr_read(mscratch), 0x1e);
}

/* rd = x0: csrrw still writes (spec 9.1: it just does not read). rs1 = x0 or
 * uimm = 0 in csrrs/csrrc/csrrsi/csrrci: no write at all, so even read-only
 * CSRs (cycle, instret, mhartid) may be read that way without a trap. */
static void test_x0_rules(void)
{
    uint64_t v;
    trap_install();
    __asm__ volatile("csrrw x0, mscratch, %0" :: "r"(0x5a5a));
    CHECK("csrrw rd=x0 writes", csr_read(mscratch), 0x5a5a);
    __asm__ volatile("csrrs %0, mscratch, x0" : "=r"(v));
    CHECK("csrrs rs1=x0 reads", v, 0x5a5a);
    __asm__ volatile("csrrc %0, mscratch, x0" : "=r"(v));
    CHECK("csrrc rs1=x0 no write", csr_read(mscratch), 0x5a5a);
    __asm__ volatile("csrrs %0, cycle, x0" : "=r"(v));
    __asm__ volatile("csrrc %0, instret, x0" : "=r"(v));
    __asm__ volatile("csrrsi %0, cycle, 0" : "=r"(v));
    __asm__ volatile("csrrci %0, mhartid, 0" : "=r"(v));
    CHECK("read-only CSRs read without trap", trap_rec.count, 0);
    __asm__ volatile("csrrw x0, cycle, x0");          /* writes: illegal */
    CHECK("write to read-only CSR traps", trap_rec.count, 1);
    CHECK("write to read-only CSR mcause", trap_rec.mcause, CAUSE_ILLEGAL_INSN);
    csr_write(mtvec, 0);
}

static uint64_t __attribute__((noinline)) busy(uint64_t n)
{
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++) {
        __asm__ volatile("" : "+r"(acc));
        acc += i;
    }
    return acc;
}

static void test_counters(void)
{
    uint64_t c0 = csr_read(mcycle), i0 = csr_read(minstret);
    uint64_t u0 = csr_read(cycle), r0 = csr_read(instret);
    CHECK("busy", busy(100), 4950);
    uint64_t c1 = csr_read(mcycle), i1 = csr_read(minstret);
    uint64_t u1 = csr_read(cycle), r1 = csr_read(instret);
    CHECK_TRUE("mcycle increases", c1 > c0);
    CHECK_TRUE("minstret increases by >= 300", i1 - i0 >= 300);
    CHECK_TRUE("cycle increases", u1 > u0);
    CHECK_TRUE("instret increases", r1 > r0);
}

/* misa: MXL (bits 63:62) = 2 for RV64; extension bits 'A'=0 'C'=2 'I'=8 'M'=12
 * (privileged spec 3.1.1). */
static void test_misa(void)
{
    uint64_t misa = csr_read(misa);
    CHECK("misa MXL=2", misa >> 62, 2);
    CHECK("misa I", (misa >> ('I' - 'A')) & 1, 1);
    CHECK("misa M", (misa >> ('M' - 'A')) & 1, 1);
    CHECK("misa A", (misa >> ('A' - 'A')) & 1, 1);
    CHECK("misa C", (misa >> ('C' - 'A')) & 1, 1);
    CHECK("mhartid = a0 at reset (0 here)", csr_read(mhartid), nanopu_core_id());
}

int main(void)
{
    test_register_forms();
    test_immediate_forms();
    test_x0_rules();
    test_counters();
    test_misa();
    return test_finish("zicsr");
}
