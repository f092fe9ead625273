/*
 * rv64i_ctrl.c - RV64I control transfer (RISC-V unprivileged spec 2.5):
 * jal, jalr (target bit 0 cleared, rd == rs1), and beq bne blt bge bltu bgeu
 * taken and not taken, forward and backward.
 */
#include "testlib.h"

/* 1 if `op a, b` branches forward, else 0.  Uncompressed so the form is fixed. */
#define BR(op, a, b) ({ uint64_t _t; __asm__ volatile( \
    ".option push\n.option norvc\n" \
    "li %0, 1\n" op " %1, %2, 1f\nli %0, 0\n1:\n.option pop" \
    : "=&r"(_t) : "r"((uint64_t)(a)), "r"((uint64_t)(b))); _t; })

/* Number of iterations of a loop closed by a backward `op`. */
#define BR_BACK(op, start, limit) ({ uint64_t _i = (start), _n = 0; __asm__ volatile( \
    ".option push\n.option norvc\n" \
    "1: addi %0, %0, 1\naddi %1, %1, 1\n" op " %0, %2, 1b\n.option pop" \
    : "+r"(_i), "+r"(_n) : "r"((uint64_t)(limit))); _n; })

static void test_branches(void)
{
    CHECK("beq taken", BR("beq", 5, 5), 1);
    CHECK("beq not", BR("beq", 5, 6), 0);
    CHECK("bne taken", BR("bne", 0, 0x100000000), 1);
    CHECK("bne not", BR("bne", -1, -1), 0);
    CHECK("blt signed taken", BR("blt", -1, 1), 1);
    CHECK("blt not", BR("blt", 1, -1), 0);
    CHECK("blt equal", BR("blt", 7, 7), 0);
    CHECK("bge taken", BR("bge", 1, -1), 1);
    CHECK("bge equal", BR("bge", 7, 7), 1);
    CHECK("bge not", BR("bge", 0x8000000000000000, 0), 0);
    CHECK("bltu taken", BR("bltu", 1, -1), 1);
    CHECK("bltu not", BR("bltu", -1, 1), 0);
    CHECK("bltu equal", BR("bltu", 3, 3), 0);
    CHECK("bgeu taken", BR("bgeu", -1, 1), 1);
    CHECK("bgeu equal", BR("bgeu", 3, 3), 1);
    CHECK("bgeu not", BR("bgeu", 1, 0x8000000000000000), 0);
    CHECK("bne backward", BR_BACK("bne", 0, 10), 10);
    CHECK("blt backward", BR_BACK("blt", -5, 5), 10);
    CHECK("bltu backward", BR_BACK("bltu", 0, 3), 3);
    CHECK("bge backward once", BR_BACK("bge", 0, 5), 1);
}

/* jal writes pc+4 to rd and skips the instruction after it. */
static void test_jal(void)
{
    uint64_t link, expect, skipped = 0;
    __asm__ volatile(".option push\n.option norvc\n"
                     "jal %0, 1f\n"
                     "2: li %2, 1\n"
                     "1: lla %1, 2b\n.option pop"
                     : "=&r"(link), "=&r"(expect), "+r"(skipped));
    CHECK("jal link", link, expect);
    CHECK("jal skips", skipped, 0);
    __asm__ volatile(".option push\n.option norvc\n"
                     "j 1f\n li %0, 1\n1:\n.option pop" : "+r"(skipped));
    CHECK("jal x0", skipped, 0);
    /* backward jal: jump over, then back, then out */
    __asm__ volatile(".option push\n.option norvc\n"
                     "j 2f\n"
                     "1: addi %0, %0, 2\n j 3f\n"
                     "2: addi %0, %0, 1\n jal x0, 1b\n"
                     "3:\n.option pop" : "+r"(skipped));
    CHECK("jal backward", skipped, 3);
}

/* jalr: target = (rs1 + imm) & ~1, rd = pc + 4; rs1 is read before rd is written. */
static void test_jalr(void)
{
    uint64_t link, expect, tmp, marker = 0;
    __asm__ volatile(".option push\n.option norvc\n"
                     "lla %2, 1f\n"
                     "jalr %0, 1(%2)\n"       /* odd target: bit 0 is cleared */
                     "2: li %3, 1\n"
                     "1: lla %1, 2b\n.option pop"
                     : "=&r"(link), "=&r"(expect), "=&r"(tmp), "+r"(marker));
    CHECK("jalr link", link, expect);
    CHECK("jalr clears bit0", marker, 0);
    __asm__ volatile(".option push\n.option norvc\n"
                     "lla %0, 1f + 8\n"
                     "jalr %0, -8(%0)\n"      /* rd == rs1, negative offset */
                     "2: li %2, 1\n"
                     "1: lla %1, 2b\n.option pop"
                     : "=&r"(link), "=&r"(expect), "+r"(marker));
    CHECK("jalr rd==rs1 link", link, expect);
    CHECK("jalr rd==rs1 target", marker, 0);
}

static uint64_t __attribute__((noinline)) callee(uint64_t x) { return x * 3 + 1; }

int main(void)
{
    test_branches();
    test_jal();
    test_jalr();
    CHECK("call/ret", callee(14), 43);
    return test_finish("rv64i_ctrl");
}
