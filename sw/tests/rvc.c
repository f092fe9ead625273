/*
 * rvc.c - every RV64C instruction without floating point (RISC-V unprivileged
 * spec chapter 16, "C" extension), written with explicit c.* mnemonics so the
 * assembler must emit the 16-bit encoding:
 * c.addi4spn c.lw c.ld c.sw c.sd c.nop c.addi c.addiw c.li c.addi16sp c.lui
 * c.srli c.srai c.andi c.sub c.xor c.or c.and c.subw c.addw c.j c.beqz c.bnez
 * c.slli c.lwsp c.ldsp c.swsp c.sdsp c.jr c.jalr c.mv c.add.
 * c.ebreak is covered by traps.c.  c.fld/c.fsd/c.fldsp/c.fsdsp need the D
 * extension, which the nanoPU cores (rv64imac) do not have.
 * Operands live in a0/a1 (x10/x11): the 3-bit register fields of CIW/CL/CS/CA/CB
 * forms reach only x8..x15.
 */
#include "testlib.h"

/* a0 = a, a1 = b; run `insn`; return a0. */
#define C2(insn, a, b) ({ \
    register uint64_t _x __asm__("a0") = (uint64_t)(a); \
    register uint64_t _y __asm__("a1") = (uint64_t)(b); \
    __asm__ volatile(insn : "+r"(_x) : "r"(_y) : "memory"); _x; })
#define C1(insn, a) C2(insn, a, 0)

static void test_arith(void)
{
    CHECK("c.addi", C1("c.addi a0, -5", 3), -2);
    CHECK("c.addi +31", C1("c.addi a0, 31", 1), 32);
    CHECK("c.addiw sext", C1("c.addiw a0, 1", 0x7fffffff), 0xffffffff80000000);
    CHECK("c.addiw 0 sext.w", C1("c.addiw a0, 0", 0x1ffffffff), 0xffffffffffffffff);
    CHECK("c.li", C1("c.li a0, -32", 99), -32);
    CHECK("c.li +31", C1("c.li a0, 31", 99), 31);
    CHECK("c.lui", C1("c.lui a0, 0x1f", 0), 0x1f000);
    CHECK("c.lui neg", C1("c.lui a0, 0xfffff", 0), 0xfffffffffffff000);
    CHECK("c.lui min", C1("c.lui a0, 0xfffe0", 0), 0xfffffffffffe0000);
    CHECK("c.srli 1", C1("c.srli a0, 1", 0x8000000000000000), 0x4000000000000000);
    CHECK("c.srli 63", C1("c.srli a0, 63", 0x8000000000000000), 1);
    CHECK("c.srai 1", C1("c.srai a0, 1", 0x8000000000000000), 0xc000000000000000);
    CHECK("c.srai 32", C1("c.srai a0, 32", 0x8000000000000000), 0xffffffff80000000);
    CHECK("c.srai 63", C1("c.srai a0, 63", 0x8000000000000000), 0xffffffffffffffff);
    CHECK("c.andi", C1("c.andi a0, 0x1f", 0xfff), 0x1f);
    CHECK("c.andi neg", C1("c.andi a0, -16", 0xfff), 0xff0);
    CHECK("c.slli 1", C1("c.slli a0, 1", 0x4000000000000001), 0x8000000000000002);
    CHECK("c.slli 32", C1("c.slli a0, 32", 0x80000001), 0x8000000100000000);
    CHECK("c.slli 63", C1("c.slli a0, 63", 3), 0x8000000000000000);
    CHECK("c.sub", C2("c.sub a0, a1", 5, 7), -2);
    CHECK("c.xor", C2("c.xor a0, a1", 0xff00, 0x0ff0), 0xf0f0);
    CHECK("c.or", C2("c.or a0, a1", 0xff00, 0x0ff0), 0xfff0);
    CHECK("c.and", C2("c.and a0, a1", 0xff00, 0x0ff0), 0x0f00);
    CHECK("c.subw sext", C2("c.subw a0, a1", 0x80000000, 1), 0x7fffffff);
    CHECK("c.subw neg", C2("c.subw a0, a1", 0x100000000, 1), 0xffffffffffffffff);
    CHECK("c.addw sext", C2("c.addw a0, a1", 0x7fffffff, 1), 0xffffffff80000000);
    CHECK("c.mv", C2("c.mv a0, a1", 1, 0xdeadbeefcafe), 0xdeadbeefcafe);
    CHECK("c.add", C2("c.add a0, a1", 0xffffffff, 1), 0x100000000);
    CHECK("c.nop", C1("c.nop", 17), 17);
}

static uint64_t mem[4] __attribute__((aligned(16)));

static void test_loads_stores(void)
{
    mem[0] = 0x8000000180000002;
    mem[1] = 0x1122334455667788;
    CHECK("c.lw sext", C2("c.lw a0, 4(a1)", 0, mem), 0xffffffff80000001);
    CHECK("c.lw 0", C2("c.lw a0, 0(a1)", 0, mem), 0xffffffff80000002);
    CHECK("c.ld", C2("c.ld a0, 8(a1)", 0, mem), 0x1122334455667788);
    (void)C2("c.sw a0, 4(a1)", 0xaaaabbbbccccdddd, mem);
    CHECK("c.sw", mem[0], 0xccccdddd80000002);
    (void)C2("c.sd a0, 16(a1)", 0xaaaabbbbccccdddd, mem);
    CHECK("c.sd", mem[2], 0xaaaabbbbccccdddd);
}

/* Stack-pointer forms: open a 64-byte frame, use it, close it. */
static void test_sp_forms(void)
{
    uint64_t got, sp_before, sp_after, spn;
    __asm__ volatile("mv %1, sp\n c.addi16sp sp, -64\n mv %2, sp\n c.addi16sp sp, 64\n"
                     "mv %0, sp" : "=r"(got), "=&r"(sp_before), "=&r"(sp_after));
    CHECK("c.addi16sp down", sp_after, sp_before - 64);
    CHECK("c.addi16sp up", got, sp_before);
    __asm__ volatile("c.addi4spn a0, sp, 16\n mv %0, a0\n mv %1, sp"
                     : "=r"(spn), "=r"(sp_before) :: "a0");
    CHECK("c.addi4spn", spn, sp_before + 16);

    uint64_t w, d;
    __asm__ volatile("c.addi16sp sp, -32\n"
                     "li a0, -1\n c.sdsp a0, 8(sp)\n"
                     "li a0, 0x12345678\n c.swsp a0, 8(sp)\n"
                     "c.ldsp a0, 8(sp)\n mv %1, a0\n"
                     "li a0, 0x87654321\n c.swsp a0, 16(sp)\n"
                     "c.lwsp a0, 16(sp)\n mv %0, a0\n"
                     "c.addi16sp sp, 32"
                     : "=r"(w), "=r"(d) :: "a0", "memory");
    CHECK("c.swsp/c.sdsp/c.ldsp", d, 0xffffffff12345678);
    CHECK("c.lwsp sext", w, 0xffffffff87654321);
}

static void test_jumps(void)
{
    uint64_t r;
    r = C1("c.j 1f\n c.li a0, 1\n1:", 0);
    CHECK("c.j", r, 0);
    r = C1("c.j 2f\n1: c.addi a0, 2\n c.j 3f\n2: c.addi a0, 1\n c.j 1b\n3:", 0);
    CHECK("c.j backward", r, 3);
    CHECK("c.beqz taken", C1("c.beqz a0, 1f\n c.li a0, 9\n1:", 0), 0);
    CHECK("c.beqz not", C1("c.beqz a0, 1f\n c.li a0, 9\n1:", 5), 9);
    CHECK("c.bnez taken", C1("c.bnez a0, 1f\n c.li a0, 9\n1:", 5), 5);
    CHECK("c.bnez not", C1("c.bnez a0, 1f\n c.li a0, 9\n1:", 0), 9);
    CHECK("c.bnez loop", C1("c.li a1, 4\n1: c.addi a0, 3\n c.addi a1, -1\n c.bnez a1, 1b", 0), 12);
    CHECK("c.jr", C2("lla a1, 1f\n c.jr a1\n c.li a0, 9\n1:", 0, 0), 0);

    uint64_t link, expect;
    __asm__ volatile("li a0, 0\n lla a1, 2f\n c.jalr a1\n"
                     "3: c.j 4f\n"
                     "2: mv a0, ra\n lla %1, 3b\n"
                     "4: mv %0, a0"
                     : "=r"(link), "=&r"(expect) :: "a0", "a1", "ra");
    CHECK("c.jalr link = pc+2", link, expect);
}

int main(void)
{
    test_arith();
    test_loads_stores();
    test_sp_forms();
    test_jumps();
    return test_finish("rvc");
}
