/*
 * rv64f.c - the F extension (RISC-V unprivileged ISA, chapter "F"): every RV64F
 * instruction with expected bit patterns and accrued flags: flw fsw, fmadd.s fmsub.s
 * fnmsub.s fnmadd.s (one rounding), fadd.s fsub.s fmul.s fdiv.s fsqrt.s in the static
 * rounding modes, overflow/underflow, fsgnj.s fsgnjn.s fsgnjx.s, fmin.s fmax.s, feq.s
 * flt.s fle.s, fclass.s, fcvt.{w,wu,l,lu}.s, fcvt.s.{w,wu,l,lu}, fmv.x.w fmv.w.x, and
 * NaN boxing (spec "NaN Boxing of Narrower Values"): results are boxed, an improperly
 * boxed operand reads as the canonical NaN, and transfers out (fmv.x.w, fsw) move the
 * low 32 bits unchanged.  Operands below are 32-bit patterns boxed with BOX().
 */
#include "fptest.h"

#define ONE  0x3f800000u
#define TWO  0x40000000u
#define THR  0x40400000u
#define MAXS 0x7f7fffffu
#define INF  0x7f800000u
#define NINF 0xff800000u
#define QNAN 0x7fc00000u
#define SNAN 0x7f800001u
#define NEG0 0x80000000u
#define MINN 0x00800000u
#define TINY 0x33000000u /* 2^-25: under half an ulp of 1.0f */
#define HALF 0x33800000u /* 2^-24: half an ulp */

#define S2(insn, a, b) F2(insn, BOX(a), BOX(b))

static void test_arith(void)
{
    T("fadd.s rne", S2("fadd.s ft2, ft0, ft1, rne", ONE, TINY), BOX(ONE), NX);
    T("fadd.s rtz", S2("fadd.s ft2, ft0, ft1, rtz", ONE, TINY), BOX(ONE), NX);
    T("fadd.s rdn", S2("fadd.s ft2, ft0, ft1, rdn", ONE, TINY), BOX(ONE), NX);
    T("fadd.s rup", S2("fadd.s ft2, ft0, ft1, rup", ONE, TINY), BOX(ONE + 1), NX);
    T("fadd.s rmm", S2("fadd.s ft2, ft0, ft1, rmm", ONE, TINY), BOX(ONE), NX);
    T("fadd.s tie rne", S2("fadd.s ft2, ft0, ft1, rne", ONE, HALF), BOX(ONE), NX);
    T("fadd.s tie rmm", S2("fadd.s ft2, ft0, ft1, rmm", ONE, HALF), BOX(ONE + 1), NX);
    T("fsub.s x-x rdn", S2("fsub.s ft2, ft0, ft1, rdn", ONE, ONE), BOX(NEG0), 0);
    T("fsub.s", S2("fsub.s ft2, ft0, ft1", THR, ONE), BOX(TWO), 0);
    T("fmul.s overflow rne", S2("fmul.s ft2, ft0, ft1, rne", MAXS, MAXS), BOX(INF), OF | NX);
    T("fmul.s overflow rtz", S2("fmul.s ft2, ft0, ft1, rtz", MAXS, MAXS), BOX(MAXS), OF | NX);
    T("fmul.s underflow", S2("fmul.s ft2, ft0, ft1", 0x3f7fffffu, MINN), BOX(MINN), UF | NX);
    T("fmul.s inf*0", S2("fmul.s ft2, ft0, ft1", INF, 0), BOX(QNAN), NV);
    T("fdiv.s 1/3", S2("fdiv.s ft2, ft0, ft1", ONE, THR), BOX(0x3eaaaaab), NX);
    T("fdiv.s 1/3 rdn", S2("fdiv.s ft2, ft0, ft1, rdn", ONE, THR), BOX(0x3eaaaaaa), NX);
    T("fdiv.s 1/0", S2("fdiv.s ft2, ft0, ft1", ONE, 0), BOX(INF), DZ);
    T("fdiv.s 0/0", S2("fdiv.s ft2, ft0, ft1", 0, 0), BOX(QNAN), NV);
    T("fsqrt.s 2 rne", F1("fsqrt.s ft2, ft0, rne", BOX(TWO)), BOX(0x3fb504f3), NX);
    T("fsqrt.s 2 rup", F1("fsqrt.s ft2, ft0, rup", BOX(TWO)), BOX(0x3fb504f4), NX);
    T("fsqrt.s -1", F1("fsqrt.s ft2, ft0", BOX(ONE | NEG0)), BOX(QNAN), NV);
}

static void test_fma(void)
{
    /* (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46 exactly. */
    T("fmadd.s", F3("fmadd.s ft2, ft0, ft1, ft3", BOX(ONE + 1), BOX(ONE + 1), BOX(0xbf800002)), BOX(0x28800000), 0);
    T("fmsub.s", F3("fmsub.s ft2, ft0, ft1, ft3", BOX(ONE + 1), BOX(ONE + 1), BOX(0x3f800002)), BOX(0x28800000), 0);
    T("fnmsub.s", F3("fnmsub.s ft2, ft0, ft1, ft3", BOX(ONE + 1), BOX(ONE + 1), BOX(0x3f800002)), BOX(0xa8800000), 0);
    T("fnmadd.s", F3("fnmadd.s ft2, ft0, ft1, ft3", BOX(ONE + 1), BOX(ONE + 1), BOX(0xbf800002)), BOX(0xa8800000), 0);
    T("fmadd.s inf*0+qnan", F3("fmadd.s ft2, ft0, ft1, ft3", BOX(INF), BOX(0), BOX(QNAN)), BOX(QNAN), NV);
}

static void test_sign_minmax_compare_class(void)
{
    T("fsgnj.s", S2("fsgnj.s ft2, ft0, ft1", ONE, NEG0), BOX(ONE | NEG0), 0);
    T("fsgnjn.s", S2("fsgnjn.s ft2, ft0, ft1", ONE, NEG0), BOX(ONE), 0);
    T("fsgnjx.s", S2("fsgnjx.s ft2, ft0, ft1", ONE | NEG0, NEG0), BOX(ONE), 0);
    T("fmin.s -0 +0", S2("fmin.s ft2, ft0, ft1", 0, NEG0), BOX(NEG0), 0);
    T("fmax.s -0 +0", S2("fmax.s ft2, ft0, ft1", NEG0, 0), BOX(0), 0);
    T("fmin.s qnan x", S2("fmin.s ft2, ft0, ft1", QNAN, TWO), BOX(TWO), 0);
    T("fmax.s snan x", S2("fmax.s ft2, ft0, ft1", SNAN, ONE), BOX(ONE), NV);
    T("fmax.s nan nan", S2("fmax.s ft2, ft0, ft1", QNAN, QNAN), BOX(QNAN), 0);
    T("feq.s", X2("feq.s %0, ft0, ft1", BOX(NEG0), BOX(0)), 1, 0);
    T("feq.s qnan quiet", X2("feq.s %0, ft0, ft1", BOX(QNAN), BOX(ONE)), 0, 0);
    T("feq.s snan", X2("feq.s %0, ft0, ft1", BOX(SNAN), BOX(ONE)), 0, NV);
    T("flt.s", X2("flt.s %0, ft0, ft1", BOX(ONE), BOX(TWO)), 1, 0);
    T("flt.s qnan signals", X2("flt.s %0, ft0, ft1", BOX(QNAN), BOX(ONE)), 0, NV);
    T("fle.s", X2("fle.s %0, ft0, ft1", BOX(TWO), BOX(TWO)), 1, 0);
    T("fle.s snan", X2("fle.s %0, ft0, ft1", BOX(ONE), BOX(SNAN)), 0, NV);
    static const uint32_t in[10] = {NINF, ONE | NEG0, 1 | NEG0, NEG0, 0, 1, ONE, INF, SNAN, QNAN};
    for (int i = 0; i < 10; i++) {
        T("fclass.s", X1("fclass.s %0, ft0", BOX(in[i])), 1u << i, 0);
    }
}

static void test_conversions(void)
{
    T("fcvt.w.s nan", X1("fcvt.w.s %0, ft0", BOX(QNAN)), 0x7fffffff, NV);
    T("fcvt.w.s -inf", X1("fcvt.w.s %0, ft0", BOX(NINF)), SEXT32(0x80000000), NV);
    T("fcvt.w.s 2.5 rne", X1("fcvt.w.s %0, ft0, rne", BOX(0x40200000)), 2, NX);
    T("fcvt.w.s 2.5 rmm", X1("fcvt.w.s %0, ft0, rmm", BOX(0x40200000)), 3, NX);
    T("fcvt.w.s 2^31", X1("fcvt.w.s %0, ft0", BOX(0x4f000000)), 0x7fffffff, NV);
    T("fcvt.wu.s -1", X1("fcvt.wu.s %0, ft0", BOX(ONE | NEG0)), 0, NV);
    T("fcvt.wu.s nan", X1("fcvt.wu.s %0, ft0", BOX(QNAN)), ~0ull, NV);
    T("fcvt.wu.s -0.3 rtz", X1("fcvt.wu.s %0, ft0, rtz", BOX(0xbe99999a)), 0, NX);
    T("fcvt.l.s 2^63", X1("fcvt.l.s %0, ft0", BOX(0x5f000000)), 0x7fffffffffffffffull, NV);
    T("fcvt.l.s -2^63", X1("fcvt.l.s %0, ft0", BOX(0xdf000000)), 0x8000000000000000ull, 0);
    T("fcvt.lu.s 2^64", X1("fcvt.lu.s %0, ft0", BOX(0x5f800000)), ~0ull, NV);
    T("fcvt.lu.s 2.5 rup", X1("fcvt.lu.s %0, ft0, rup", BOX(0x40200000)), 3, NX);
    T("fcvt.s.w", FX("fcvt.s.w ft2, %1", (uint64_t)-5), BOX(0xc0a00000), 0);
    T("fcvt.s.wu", FX("fcvt.s.wu ft2, %1", ~0ull), BOX(0x4f800000), NX);
    T("fcvt.s.wu rtz", FX("fcvt.s.wu ft2, %1, rtz", ~0ull), BOX(0x4f7fffff), NX);
    T("fcvt.s.l", FX("fcvt.s.l ft2, %1", 0x7fffffffffffffffull), BOX(0x5f000000), NX);
    T("fcvt.s.l rtz", FX("fcvt.s.l ft2, %1, rtz", 0x7fffffffffffffffull), BOX(0x5effffff), NX);
    T("fcvt.s.lu", FX("fcvt.s.lu ft2, %1", ~0ull), BOX(0x5f800000), NX);
}

static volatile uint32_t mem[4] __attribute__((aligned(8)));

static void test_boxing_moves_memory(void)
{
    T("fmv.w.x boxes", FX("fmv.w.x ft2, %1", 0xdeadbeef3f800000ull), BOX(ONE), 0);
    T("fmv.x.w sign-extends", X1("fmv.x.w %0, ft0", BOX(0xbf800000)), SEXT32(0xbf800000), 0);
    T("fmv.x.w of unboxed: low bits", X1("fmv.x.w %0, ft0", 0x000000003f800000ull), 0x3f800000, 0);
    T("unboxed operand reads as NaN", F2("fadd.s ft2, ft0, ft1", 0x3f800000ull, BOX(ONE)), BOX(QNAN), 0);
    T("fsgnj.s of unboxed", F2("fsgnj.s ft2, ft0, ft1", 0x3f800000ull, BOX(NEG0)), BOX(QNAN | NEG0), 0);
    T("fclass.s of unboxed", X1("fclass.s %0, ft0", 0x7f800001ull), 0x200, 0);
    mem[0] = 0x40490fdb;
    uint64_t r;
    __asm__ volatile("flw ft0, 0(%1)\n fsw ft0, 4(%1)\n fmv.x.d %0, ft0" : "=r"(r) : "r"(mem) : "ft0", "memory");
    CHECK("flw boxes", r, BOX(0x40490fdb));
    CHECK("fsw", mem[1], 0x40490fdb);
    __asm__ volatile("fmv.d.x ft0, %1\n fsw ft0, 8(%0)" : : "r"(mem), "r"(0x1234567887654321ull) : "ft0", "memory");
    CHECK("fsw of unboxed: low 32 bits", mem[2], 0x87654321);
}

int main(void)
{
    test_arith();
    test_fma();
    test_sign_minmax_compare_class();
    test_conversions();
    test_boxing_moves_memory();
    return test_finish("rv64f");
}
