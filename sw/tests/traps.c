/*
 * traps.c - synchronous exceptions and trap CSRs (RISC-V privileged spec
 * 3.1.7 mtvec, 3.1.15 mepc, 3.1.16 mcause, 3.1.17 mtval, 3.3.1 trap entry,
 * 3.3.2 mret): ecall (cause 11), ebreak and c.ebreak (3), illegal instruction
 * (2, mtval = encoding or 0), misaligned AMO (6), load/store access fault
 * outside memory (5/7), mepc = faulting pc, mstatus MIE->MPIE on entry and
 * MPIE->MIE on mret, vectored mtvec (exceptions go to base).
 */
#include "testlib.h"

/* Run `insn` at a known label; return its address. */
#define TRAP_AT(insn) ({ uint64_t _pc; __asm__ volatile( \
    "lla %0, 1f\n1: " insn : "=&r"(_pc) :: "memory"); _pc; })

static void expect_trap(const char *name, uint64_t pc, uint64_t cause)
{
    CHECK(name, trap_rec.count, 1);
    CHECK(name, trap_rec.mcause, cause);
    CHECK(name, trap_rec.mepc, pc);
    trap_reset();
}

static void test_ecall_ebreak(void)
{
    uint64_t pc = TRAP_AT("ecall");
    expect_trap("ecall", pc, CAUSE_ECALL_M);
    pc = TRAP_AT(".option push\n.option norvc\n ebreak\n.option pop");
    expect_trap("ebreak", pc, CAUSE_BREAKPOINT);
    pc = TRAP_AT("c.ebreak");
    expect_trap("c.ebreak (resumes at pc+2)", pc, CAUSE_BREAKPOINT);
}

/* mtval holds the faulting instruction bits, or 0 (privileged spec 3.1.17). */
static void check_illegal(const char *name, uint64_t pc, uint32_t encoding)
{
    uint64_t tval = trap_rec.mtval;
    CHECK_TRUE(name, tval == encoding || tval == 0);
    expect_trap(name, pc, CAUSE_ILLEGAL_INSN);
}

static void test_illegal(void)
{
    /* major opcode 1101011 is reserved in the base opcode map */
    uint64_t pc = TRAP_AT(".4byte 0x0000006b");
    check_illegal("reserved opcode", pc, 0x0000006b);
    /* csrrw x0, cycle, x0: writing a read-only CSR (privileged spec 2.1) */
    pc = TRAP_AT(".4byte 0xc0001073");
    check_illegal("write read-only CSR", pc, 0xc0001073);
    /* mret is fine, but an unknown SYSTEM funct12 is not: 0x7ff00073 */
    pc = TRAP_AT(".4byte 0x7ff00073");
    check_illegal("unknown SYSTEM insn", pc, 0x7ff00073);
}

static uint64_t words[2] __attribute__((aligned(16)));

/* AMOs must be naturally aligned (unprivileged spec 8.4); the fault is a
 * store/AMO address-misaligned exception, cause 6 (privileged spec 3.1.16).
 * QEMU 7.2 reports cause 4 (load misaligned) instead; it is the only machine
 * without nanoPU boot info we validate on, so only there is 4 tolerated. */
static uint64_t amo_misaligned_cause(void)
{
    if (!nanopu_has_boot_info() && trap_rec.mcause == CAUSE_MISALIGNED_LOAD) {
        return CAUSE_MISALIGNED_LOAD;
    }
    return CAUSE_STORE_MISALIGNED;
}

static void test_misaligned_amo(void)
{
    uint64_t addr = (uint64_t)&words[0] + 2, old = 0;
    uint64_t pc;
    __asm__ volatile("lla %0, 1f\n1: amoadd.w %1, %3, (%2)"
                     : "=&r"(pc), "+r"(old) : "r"(addr), "r"(1ull) : "memory");
    CHECK_TRUE("misaligned amo mtval", trap_rec.mtval == addr || trap_rec.mtval == 0);
    expect_trap("misaligned amoadd.w", pc, amo_misaligned_cause());
    CHECK("misaligned amo no write", words[0], 0);
    addr = (uint64_t)&words[0] + 4;
    __asm__ volatile("lla %0, 1f\n1: amoswap.d %1, %3, (%2)"
                     : "=&r"(pc), "+r"(old) : "r"(addr), "r"(1ull) : "memory");
    expect_trap("misaligned amoswap.d", pc, amo_misaligned_cause());
}

/* 0x4000_0000 is neither boot info, CLINT nor DRAM (docs/abi.md memory map). */
#define HOLE 0x40000000ull

static void test_access_faults(void)
{
    uint64_t pc, v = 0;
    __asm__ volatile("lla %0, 1f\n1: ld %1, 0(%2)" : "=&r"(pc), "+r"(v) : "r"(HOLE) : "memory");
    CHECK_TRUE("load fault mtval", trap_rec.mtval == HOLE || trap_rec.mtval == 0);
    expect_trap("load access fault", pc, CAUSE_LOAD_ACCESS);
    __asm__ volatile("lla %0, 1f\n1: sd %1, 8(%2)" : "=&r"(pc) : "r"(v), "r"(HOLE) : "memory");
    CHECK_TRUE("store fault mtval", trap_rec.mtval == HOLE + 8 || trap_rec.mtval == 0);
    expect_trap("store access fault", pc, CAUSE_STORE_ACCESS);
}

/* Trap entry: MPIE <- MIE, MIE <- 0, MPP <- M (privileged spec 3.1.6.1). */
static void test_trap_entry_mstatus(void)
{
    csr_write(mie, 0);              /* no interrupt sources: MIE=1 is harmless */
    csr_set(mstatus, MSTATUS_MIE);
    __asm__ volatile("ecall" ::: "memory");
    uint64_t seen = trap_rec.mstatus;
    CHECK("entry clears MIE", seen & MSTATUS_MIE, 0);
    CHECK("entry saves MIE in MPIE", seen & MSTATUS_MPIE, MSTATUS_MPIE);
    CHECK("entry sets MPP=M", seen & MSTATUS_MPP, MSTATUS_MPP);
    CHECK("mret restores MIE", csr_read(mstatus) & MSTATUS_MIE, MSTATUS_MIE);
    csr_clear(mstatus, MSTATUS_MIE);
    trap_reset();
}

/* mret: MIE <- MPIE, MPIE <- 1, pc <- mepc (privileged spec 3.3.2). */
static uint64_t do_mret(uint64_t mpie)
{
    csr_clear(mstatus, MSTATUS_MIE | MSTATUS_MPIE);
    csr_set(mstatus, MSTATUS_MPP | mpie);
    uint64_t landed = 0;
    __asm__ volatile("lla t0, 1f\n csrw mepc, t0\n mret\n li %0, 2\n1: addi %0, %0, 1"
                     : "+r"(landed) :: "t0", "memory");
    CHECK("mret jumps to mepc", landed, 1);
    uint64_t st = csr_read(mstatus);
    csr_clear(mstatus, MSTATUS_MIE);
    return st;
}

static void test_mret(void)
{
    csr_write(mie, 0);
    uint64_t st = do_mret(MSTATUS_MPIE);
    CHECK("mret MIE <- MPIE=1", st & MSTATUS_MIE, MSTATUS_MIE);
    CHECK("mret sets MPIE", st & MSTATUS_MPIE, MSTATUS_MPIE);
    st = do_mret(0);
    CHECK("mret MIE <- MPIE=0", st & MSTATUS_MIE, 0);
    CHECK("mret sets MPIE (2)", st & MSTATUS_MPIE, MSTATUS_MPIE);
    CHECK("no trap during mret tests", trap_rec.count, 0);
}

/* Vectored mode: synchronous exceptions still go to BASE (privileged 3.1.7).
 * Entries are uncompressed 4-byte jumps. */
static volatile uint64_t vec_hits[8];
void vec_sync_c(void);
void vec_other_c(void);
TRAP_ENTRY(vec_sync, vec_sync_c);
TRAP_ENTRY(vec_other, vec_other_c);

void vec_sync_c(void)
{
    vec_hits[0]++;
    csr_write(mepc, csr_read(mepc) + 4);
}
void vec_other_c(void) { vec_hits[1]++; }

__asm__(".section .text\n.balign 256\n.option push\n.option norvc\n"
        "trap_vector_table:\n j vec_sync\n"
        ".rept 15\n j vec_other\n.endr\n.option pop\n");
extern char trap_vector_table[];

static void test_vectored(void)
{
    csr_write(mtvec, (uint64_t)trap_vector_table | 1);
    CHECK("mtvec vectored readback", csr_read(mtvec), (uint64_t)trap_vector_table | 1);
    __asm__ volatile(".option push\n.option norvc\n ecall\n.option pop" ::: "memory");
    CHECK("vectored ecall -> base", vec_hits[0], 1);
    CHECK("vectored no other entry", vec_hits[1], 0);
    trap_install();
    CHECK("mtvec direct readback", csr_read(mtvec), (uint64_t)&trap_handler);
}

int main(void)
{
    trap_install();
    test_ecall_ebreak();
    test_illegal();
    test_misaligned_amo();
    test_access_faults();
    test_trap_entry_mstatus();
    test_mret();
    test_vectored();
    csr_write(mtvec, 0);
    return test_finish("traps");
}
