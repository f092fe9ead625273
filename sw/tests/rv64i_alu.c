/*
 * rv64i_alu.c - RV64I integer computational instructions
 * (RISC-V unprivileged spec chapters 2.4 and 5.2):
 * add sub sll slt sltu xor srl sra or and, addw subw sllw srlw sraw,
 * addi slti sltiu xori ori andi, slli srli srai, addiw slliw srliw sraiw, lui auipc.
 *
 * Register-register cases are tables whose expected values the compiler folds
 * at build time (on the host), so a broken instruction cannot compute its own
 * reference at run time.
 */
#include "testlib.h"

struct rr_case {
    uint64_t a, b, want;
};

#define SH64(b) ((b) & 63)   /* spec 2.4.2 / 5.2: RV64 shifts use rs2[5:0] */
#define SH32(b) ((b) & 31)   /* W shifts use rs2[4:0] */
#define REF_ADD(a, b)  ((a) + (b))
#define REF_SUB(a, b)  ((a) - (b))
#define REF_SLL(a, b)  ((a) << SH64(b))
#define REF_SLT(a, b)  ((uint64_t)((int64_t)(a) < (int64_t)(b)))
#define REF_SLTU(a, b) ((uint64_t)((a) < (b)))
#define REF_XOR(a, b)  ((a) ^ (b))
#define REF_SRL(a, b)  ((a) >> SH64(b))
#define REF_SRA(a, b)  ((uint64_t)((int64_t)(a) >> SH64(b)))
#define REF_OR(a, b)   ((a) | (b))
#define REF_AND(a, b)  ((a) & (b))
#define REF_ADDW(a, b) SEXT32((a) + (b))
#define REF_SUBW(a, b) SEXT32((a) - (b))
#define REF_SLLW(a, b) SEXT32((uint32_t)(a) << SH32(b))
#define REF_SRLW(a, b) SEXT32((uint32_t)(a) >> SH32(b))
#define REF_SRAW(a, b) SEXT32((int32_t)(uint32_t)(a) >> SH32(b))

/* Operand pairs: signs, 32-bit boundaries, shift amounts 0/1/31/32/63 and
 * amounts above the field width (masked). */
#define PAIRS(X, F) \
    X(F, 0, 0) X(F, 1, 1) X(F, 3, 7) X(F, -1, 1) X(F, 1, -1) X(F, -1, -1) \
    X(F, 0x7fffffffffffffff, 1) X(F, 0x8000000000000000, -1) \
    X(F, 0x8000000000000000, 0x7fffffffffffffff) X(F, 0x7fffffff, 1) \
    X(F, 0xffffffff, 1) X(F, 0x80000000, 0x80000000) X(F, 0x123456789abcdef0, 0) \
    X(F, 0x123456789abcdef0, 4) X(F, 0xfedcba9876543210, 31) X(F, 0xfedcba9876543210, 32) \
    X(F, 0xfedcba9876543210, 63) X(F, 0x80000001, 31) X(F, 0x80000001, 32) \
    X(F, 0x80000001, 33) X(F, 0xf0f0f0f0f0f0f0f0, 64) X(F, 0xf0f0f0f0f0f0f0f0, 95)
#define ENTRY(F, a, b) { (uint64_t)(a), (uint64_t)(b), F((uint64_t)(a), (uint64_t)(b)) },
#define TABLE(name, F) static const struct rr_case name[] = { PAIRS(ENTRY, F) }
#define NCASES (sizeof(add_cases) / sizeof(add_cases[0]))

TABLE(add_cases, REF_ADD);   TABLE(sub_cases, REF_SUB);   TABLE(sll_cases, REF_SLL);
TABLE(slt_cases, REF_SLT);   TABLE(sltu_cases, REF_SLTU); TABLE(xor_cases, REF_XOR);
TABLE(srl_cases, REF_SRL);   TABLE(sra_cases, REF_SRA);   TABLE(or_cases, REF_OR);
TABLE(and_cases, REF_AND);   TABLE(addw_cases, REF_ADDW); TABLE(subw_cases, REF_SUBW);
TABLE(sllw_cases, REF_SLLW); TABLE(srlw_cases, REF_SRLW); TABLE(sraw_cases, REF_SRAW);

#define DEF_RR(op) static uint64_t do_##op(uint64_t a, uint64_t b) { return OP_RR(#op, a, b); }
DEF_RR(add) DEF_RR(sub) DEF_RR(sll) DEF_RR(slt) DEF_RR(sltu) DEF_RR(xor) DEF_RR(srl)
DEF_RR(sra) DEF_RR(or) DEF_RR(and) DEF_RR(addw) DEF_RR(subw) DEF_RR(sllw) DEF_RR(srlw)
DEF_RR(sraw)

static void run_rr(const char *name, const struct rr_case *c, uint64_t (*fn)(uint64_t, uint64_t))
{
    for (unsigned i = 0; i < NCASES; i++) {
        if (fn(c[i].a, c[i].b) != c[i].want) {
            printf("  %s case %u: a=0x%lx b=0x%lx\n", name, i, c[i].a, c[i].b);
        }
        CHECK(name, fn(c[i].a, c[i].b), c[i].want);
    }
}

static void test_register_ops(void)
{
    run_rr("add", add_cases, do_add);    run_rr("sub", sub_cases, do_sub);
    run_rr("sll", sll_cases, do_sll);    run_rr("slt", slt_cases, do_slt);
    run_rr("sltu", sltu_cases, do_sltu); run_rr("xor", xor_cases, do_xor);
    run_rr("srl", srl_cases, do_srl);    run_rr("sra", sra_cases, do_sra);
    run_rr("or", or_cases, do_or);       run_rr("and", and_cases, do_and);
    run_rr("addw", addw_cases, do_addw); run_rr("subw", subw_cases, do_subw);
    run_rr("sllw", sllw_cases, do_sllw); run_rr("srlw", srlw_cases, do_srlw);
    run_rr("sraw", sraw_cases, do_sraw);
}

/* Immediates are 12-bit signed, sign-extended (spec 2.4.1). */
static void test_immediate_ops(void)
{
    CHECK("addi +2047", OP_RI("addi", 1, 2047), 2048);
    CHECK("addi -2048", OP_RI("addi", 0, -2048), -2048);
    CHECK("addi wrap", OP_RI("addi", -1, 1), 0);
    CHECK("slti lt", OP_RI("slti", -5, -4), 1);
    CHECK("slti ge", OP_RI("slti", 5, -4), 0);
    CHECK("sltiu imm -1 is max", OP_RI("sltiu", 0xfffffffffffffffe, -1), 1);
    CHECK("sltiu seqz", OP_RI("sltiu", 0, 1), 1);
    CHECK("sltiu not less", OP_RI("sltiu", 5, 1), 0);
    CHECK("xori -1 is not", OP_RI("xori", 0x00ff00ff00ff00ff, -1), 0xff00ff00ff00ff00);
    CHECK("xori", OP_RI("xori", 0x0f, 0x7f0), 0x7ff);
    CHECK("ori sext", OP_RI("ori", 0x1, -2048), 0xfffffffffffff801);
    CHECK("andi sext", OP_RI("andi", 0x123456789abcdef0, -16), 0x123456789abcdef0);
    CHECK("andi", OP_RI("andi", 0x123456789abcdef0, 0x7ff), 0x6f0);
    CHECK("addiw sext", OP_RI("addiw", 0x7fffffff, 1), 0xffffffff80000000);
    CHECK("addiw drops high", OP_RI("addiw", 0x1234567800000005, -6), 0xffffffffffffffff);
    CHECK("addiw sext.w", OP_RI("addiw", 0xffffffff, 0), 0xffffffffffffffff);
}

static void test_shift_immediates(void)
{
    const uint64_t v = 0x8000000180000001;
    CHECK("slli 0", OP_RI("slli", v, 0), v);
    CHECK("slli 31", OP_RI("slli", v, 31), 0xc000000080000000);
    CHECK("slli 32", OP_RI("slli", v, 32), 0x8000000100000000);
    CHECK("slli 63", OP_RI("slli", v, 63), 0x8000000000000000);
    CHECK("srli 0", OP_RI("srli", v, 0), v);
    CHECK("srli 31", OP_RI("srli", v, 31), 0x100000003);
    CHECK("srli 32", OP_RI("srli", v, 32), 0x80000001);
    CHECK("srli 63", OP_RI("srli", v, 63), 1);
    CHECK("srai 0", OP_RI("srai", v, 0), v);
    CHECK("srai 31", OP_RI("srai", v, 31), 0xffffffff00000003);
    CHECK("srai 32", OP_RI("srai", v, 32), 0xffffffff80000001);
    CHECK("srai 63", OP_RI("srai", v, 63), 0xffffffffffffffff);
    CHECK("slliw 0 sext", OP_RI("slliw", v, 0), 0xffffffff80000001);
    CHECK("slliw 1", OP_RI("slliw", v, 1), 2);
    CHECK("slliw 31", OP_RI("slliw", 3, 31), 0xffffffff80000000);
    CHECK("srliw 0 sext", OP_RI("srliw", v, 0), 0xffffffff80000001);
    CHECK("srliw 1", OP_RI("srliw", v, 1), 0x40000000);
    CHECK("srliw 31", OP_RI("srliw", v, 31), 1);
    CHECK("sraiw 0", OP_RI("sraiw", v, 0), 0xffffffff80000001);
    CHECK("sraiw 1", OP_RI("sraiw", v, 1), 0xffffffffc0000000);
    CHECK("sraiw 31", OP_RI("sraiw", v, 31), 0xffffffffffffffff);
    CHECK("sraiw 31 pos", OP_RI("sraiw", 0xffffffff7fffffff, 31), 0);
}

static uint64_t do_lui_low(void)  { uint64_t r; __asm__ volatile("lui %0, 0x12345" : "=r"(r)); return r; }
static uint64_t do_lui_high(void) { uint64_t r; __asm__ volatile("lui %0, 0x80000" : "=r"(r)); return r; }
static uint64_t do_lui_max(void)  { uint64_t r; __asm__ volatile("lui %0, 0xfffff" : "=r"(r)); return r; }

/* auipc adds its immediate << 12 to its own address (spec 2.4.1). */
static void test_upper_immediates(void)
{
    uint64_t here, got;
    CHECK("lui", do_lui_low(), 0x12345000);
    CHECK("lui sext", do_lui_high(), 0xffffffff80000000);
    CHECK("lui -1", do_lui_max(), 0xfffffffffffff000);
    __asm__ volatile(".option push\n.option norvc\n"
                     "1: auipc %0, 0\n lla %1, 1b\n.option pop" : "=r"(got), "=r"(here));
    CHECK("auipc 0", got, here);
    __asm__ volatile(".option push\n.option norvc\n"
                     "1: auipc %0, 1\n lla %1, 1b\n.option pop" : "=r"(got), "=r"(here));
    CHECK("auipc 1", got, here + 0x1000);
    __asm__ volatile(".option push\n.option norvc\n"
                     "1: auipc %0, 0xfffff\n lla %1, 1b\n.option pop" : "=r"(got), "=r"(here));
    CHECK("auipc -1", got, here - 0x1000);
}

int main(void)
{
    test_register_ops();
    test_immediate_ops();
    test_shift_immediates();
    test_upper_immediates();
    return test_finish("rv64i_alu");
}
