/*
 * rv64m.c - the M extension (RISC-V unprivileged spec chapter 7 / 13 in newer
 * editions): mul mulh mulhsu mulhu div divu rem remu, mulw divw divuw remw remuw.
 * Spec 7.2 table: division by zero gives quotient all ones and remainder = the
 * dividend; signed overflow (-2^(XLEN-1) / -1) gives quotient = dividend and
 * remainder 0.  W forms operate on the low 32 bits and sign-extend the result.
 */
#include "testlib.h"

struct rr_case {
    uint64_t a, b, want;
};

#define I64(x) ((int64_t)(x))
#define I32(x) ((int32_t)(uint32_t)(x))
#define U32(x) ((uint32_t)(x))
#define MIN64 0x8000000000000000ull
#define REF_MUL(a, b)    ((a) * (b))
#define REF_MULH(a, b)   ((uint64_t)(((__int128)I64(a) * (__int128)I64(b)) >> 64))
#define REF_MULHU(a, b)  ((uint64_t)(((unsigned __int128)(a) * (b)) >> 64))
#define REF_MULHSU(a, b) ((uint64_t)(((__int128)I64(a) * (__int128)(unsigned __int128)(b)) >> 64))
#define REF_DIV(a, b)  ((b) == 0 ? ~0ull : ((a) == MIN64 && I64(b) == -1) ? (a) \
                        : (uint64_t)(I64(a) / ((b) == 0 ? 1 : I64(b))))
#define REF_DIVU(a, b) ((b) == 0 ? ~0ull : (a) / ((b) == 0 ? 1 : (b)))
#define REF_REM(a, b)  ((b) == 0 ? (a) : ((a) == MIN64 && I64(b) == -1) ? 0 \
                        : (uint64_t)(I64(a) % ((b) == 0 ? 1 : I64(b))))
#define REF_REMU(a, b) ((b) == 0 ? (a) : (a) % ((b) == 0 ? 1 : (b)))
#define REF_MULW(a, b) SEXT32(U32(a) * U32(b))
#define W_OVF(a, b)    (U32(a) == 0x80000000u && I32(b) == -1)
#define REF_DIVW(a, b)  (U32(b) == 0 ? ~0ull : W_OVF(a, b) ? SEXT32(a) \
                         : SEXT32(I32(a) / (U32(b) == 0 ? 1 : I32(b))))
#define REF_DIVUW(a, b) (U32(b) == 0 ? ~0ull : SEXT32(U32(a) / (U32(b) == 0 ? 1 : U32(b))))
#define REF_REMW(a, b)  (U32(b) == 0 ? SEXT32(a) : W_OVF(a, b) ? 0 \
                         : SEXT32(I32(a) % (U32(b) == 0 ? 1 : I32(b))))
#define REF_REMUW(a, b) (U32(b) == 0 ? SEXT32(a) : SEXT32(U32(a) % (U32(b) == 0 ? 1 : U32(b))))

#define PAIRS(X, F) \
    X(F, 0, 0) X(F, 7, 0) X(F, -7, 0) X(F, 7, 2) X(F, -7, 2) X(F, 7, -2) X(F, -7, -2) \
    X(F, 0x8000000000000000, -1) X(F, 0x8000000000000000, 1) X(F, -1, -1) \
    X(F, 0xffffffffffffffff, 0xffffffffffffffff) X(F, 0x7fffffffffffffff, 0x7fffffffffffffff) \
    X(F, 0x8000000000000000, 0x8000000000000000) X(F, 0x123456789abcdef0, 0xfedcba9876543210) \
    X(F, 0x80000000, 0xffffffff) X(F, 0xffffffff80000000, 0xffffffffffffffff) \
    X(F, 0x100000007, 0x100000000) X(F, 0x0000000500000000, 3) X(F, 0xffffffff, 0xffffffff) \
    X(F, 0x7fffffff, 0x7fffffff) X(F, 12345, 678)
#define ENTRY(F, a, b) { (uint64_t)(a), (uint64_t)(b), F((uint64_t)(a), (uint64_t)(b)) },
#define TABLE(name, F) static const struct rr_case name[] = { PAIRS(ENTRY, F) }
#define NCASES (sizeof(mul_cases) / sizeof(mul_cases[0]))

TABLE(mul_cases, REF_MUL);     TABLE(mulh_cases, REF_MULH);   TABLE(mulhu_cases, REF_MULHU);
TABLE(mulhsu_cases, REF_MULHSU); TABLE(div_cases, REF_DIV);   TABLE(divu_cases, REF_DIVU);
TABLE(rem_cases, REF_REM);     TABLE(remu_cases, REF_REMU);   TABLE(mulw_cases, REF_MULW);
TABLE(divw_cases, REF_DIVW);   TABLE(divuw_cases, REF_DIVUW); TABLE(remw_cases, REF_REMW);
TABLE(remuw_cases, REF_REMUW);

#define DEF_RR(op) static uint64_t do_##op(uint64_t a, uint64_t b) { return OP_RR(#op, a, b); }
DEF_RR(mul) DEF_RR(mulh) DEF_RR(mulhu) DEF_RR(mulhsu) DEF_RR(div) DEF_RR(divu) DEF_RR(rem)
DEF_RR(remu) DEF_RR(mulw) DEF_RR(divw) DEF_RR(divuw) DEF_RR(remw) DEF_RR(remuw)

static void run_rr(const char *name, const struct rr_case *c, uint64_t (*fn)(uint64_t, uint64_t))
{
    for (unsigned i = 0; i < NCASES; i++) {
        if (fn(c[i].a, c[i].b) != c[i].want) {
            printf("  %s case %u: a=0x%lx b=0x%lx\n", name, i, c[i].a, c[i].b);
        }
        CHECK(name, fn(c[i].a, c[i].b), c[i].want);
    }
}

/* The spec 7.2 table spelled out, independent of the reference macros. */
static void test_spec_edge_cases(void)
{
    CHECK("div by 0 = -1", do_div(42, 0), 0xffffffffffffffff);
    CHECK("divu by 0 = max", do_divu(42, 0), 0xffffffffffffffff);
    CHECK("rem by 0 = x", do_rem(-42, 0), -42);
    CHECK("remu by 0 = x", do_remu(42, 0), 42);
    CHECK("div overflow", do_div(MIN64, -1), MIN64);
    CHECK("rem overflow", do_rem(MIN64, -1), 0);
    CHECK("divw by 0", do_divw(42, 0x100000000), 0xffffffffffffffff);
    CHECK("divuw by 0", do_divuw(42, 0), 0xffffffffffffffff);
    CHECK("remw by 0 sext", do_remw(0x80000000, 0), 0xffffffff80000000);
    CHECK("remuw by 0 sext", do_remuw(0xfffffffe, 0), 0xfffffffffffffffe);
    CHECK("divw overflow", do_divw(0x80000000, 0xffffffff), 0xffffffff80000000);
    CHECK("remw overflow", do_remw(0x80000000, -1), 0);
    CHECK("div rounds to 0", do_div(-7, 2), -3);
    CHECK("rem sign of dividend", do_rem(-7, 2), -1);
    CHECK("mulh -1*-1", do_mulh(-1, -1), 0);
    CHECK("mulhu max*max", do_mulhu(-1, -1), 0xfffffffffffffffe);
    CHECK("mulhsu -1*max", do_mulhsu(-1, -1), 0xffffffffffffffff);
    CHECK("mulw sext", do_mulw(0x10000, 0x8000), 0xffffffff80000000);
}

int main(void)
{
    run_rr("mul", mul_cases, do_mul);        run_rr("mulh", mulh_cases, do_mulh);
    run_rr("mulhu", mulhu_cases, do_mulhu);  run_rr("mulhsu", mulhsu_cases, do_mulhsu);
    run_rr("div", div_cases, do_div);        run_rr("divu", divu_cases, do_divu);
    run_rr("rem", rem_cases, do_rem);        run_rr("remu", remu_cases, do_remu);
    run_rr("mulw", mulw_cases, do_mulw);     run_rr("divw", divw_cases, do_divw);
    run_rr("divuw", divuw_cases, do_divuw);  run_rr("remw", remw_cases, do_remw);
    run_rr("remuw", remuw_cases, do_remuw);
    test_spec_edge_cases();
    return test_finish("rv64m");
}
