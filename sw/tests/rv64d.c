/*
 * rv64d.c - the D extension (RISC-V unprivileged ISA, chapter "D"): every RV64D
 * instruction with expected bit patterns and accrued flags: fld fsd (and c.fld c.fsd
 * c.fldsp c.fsdsp), fmadd fmsub fnmsub fnmadd (one rounding), fadd fsub fmul fdiv fsqrt
 * in all five static rounding modes and the dynamic one (frm), overflow/underflow
 * (tininess after rounding), fsgnj fsgnjn fsgnjx, fmin fmax (NaN and signed-zero rules),
 * feq (quiet) flt fle (signalling), fclass, fcvt.{w,wu,l,lu}.d (saturation, NV vs NX),
 * fcvt.d.{w,wu,l,lu}, fcvt.s.d fcvt.d.s (NaN boxing), fmv.x.d fmv.d.x, fcsr/frm/fflags,
 * reserved rounding modes and mstatus.FS = Off (illegal instruction).
 */
#include "fptest.h"

#define ONE   0x3ff0000000000000ull
#define TWO   0x4000000000000000ull
#define THREE 0x4008000000000000ull
#define MAXD  0x7fefffffffffffffull
#define INF   0x7ff0000000000000ull
#define NINF  0xfff0000000000000ull
#define QNAN  0x7ff8000000000000ull
#define SNAN  0x7ff0000000000001ull
#define NEG0  0x8000000000000000ull
#define MINN  0x0010000000000000ull
#define TINY  0x3c90000000000000ull /* 2^-54: under half an ulp of 1.0 */
#define HALF  0x3ca0000000000000ull /* 2^-53: exactly half an ulp of 1.0 */

static void test_add_sub_rounding(void)
{
    T("fadd.d rne", F2("fadd.d ft2, ft0, ft1, rne", ONE, TINY), ONE, NX);
    T("fadd.d rtz", F2("fadd.d ft2, ft0, ft1, rtz", ONE, TINY), ONE, NX);
    T("fadd.d rdn", F2("fadd.d ft2, ft0, ft1, rdn", ONE, TINY), ONE, NX);
    T("fadd.d rup", F2("fadd.d ft2, ft0, ft1, rup", ONE, TINY), ONE + 1, NX);
    T("fadd.d rmm", F2("fadd.d ft2, ft0, ft1, rmm", ONE, TINY), ONE, NX);
    T("fadd.d -x rdn", F2("fadd.d ft2, ft0, ft1, rdn", ONE | NEG0, TINY | NEG0), (ONE + 1) | NEG0, NX);
    T("fadd.d tie rne", F2("fadd.d ft2, ft0, ft1, rne", ONE, HALF), ONE, NX);
    T("fadd.d tie rmm", F2("fadd.d ft2, ft0, ft1, rmm", ONE, HALF), ONE + 1, NX);
    T("fadd.d exact", F2("fadd.d ft2, ft0, ft1", ONE, TWO), THREE, 0);
    T("fadd.d inf-inf", F2("fadd.d ft2, ft0, ft1", INF, NINF), QNAN, NV);
    T("fadd.d snan", F2("fadd.d ft2, ft0, ft1", SNAN, ONE), QNAN, NV);
    T("fadd.d qnan payload dropped", F2("fadd.d ft2, ft0, ft1", QNAN | 5, ONE), QNAN, 0);
    T("fsub.d x-x rne", F2("fsub.d ft2, ft0, ft1, rne", ONE, ONE), 0, 0);
    T("fsub.d x-x rdn", F2("fsub.d ft2, ft0, ft1, rdn", ONE, ONE), NEG0, 0);
    T("fsub.d", F2("fsub.d ft2, ft0, ft1", THREE, ONE), TWO, 0);
}

static void test_mul_div_sqrt(void)
{
    T("fmul.d overflow rne", F2("fmul.d ft2, ft0, ft1, rne", MAXD, MAXD), INF, OF | NX);
    T("fmul.d overflow rtz", F2("fmul.d ft2, ft0, ft1, rtz", MAXD, MAXD), MAXD, OF | NX);
    T("fmul.d overflow -rup", F2("fmul.d ft2, ft0, ft1, rup", MAXD, MAXD | NEG0), MAXD | NEG0, OF | NX);
    T("fmul.d overflow -rdn", F2("fmul.d ft2, ft0, ft1, rdn", MAXD, MAXD | NEG0), NINF, OF | NX);
    /* (1 - 2^-53) 2^-1022: tiny (exact at 53 bits), rounds up to the smallest normal. */
    T("fmul.d underflow", F2("fmul.d ft2, ft0, ft1", 0x3fefffffffffffffull, MINN), MINN, UF | NX);
    /* (1 - 2^-104) 2^-1022 rounds to 2^-1022 at 53 bits: not tiny after rounding. */
    T("fmul.d tiny before only", F2("fmul.d ft2, ft0, ft1", ONE + 1, 0x000fffffffffffffull), MINN, NX);
    T("fmul.d tiny rtz", F2("fmul.d ft2, ft0, ft1, rtz", ONE + 1, 0x000fffffffffffffull),
      0x000fffffffffffffull, UF | NX);
    T("fmul.d exact subnormal", F2("fmul.d ft2, ft0, ft1", 0x3fe0000000000000ull, MINN), MINN >> 1, 0);
    T("fmul.d 0*inf", F2("fmul.d ft2, ft0, ft1", 0, INF), QNAN, NV);
    T("fdiv.d 1/3 rne", F2("fdiv.d ft2, ft0, ft1, rne", ONE, THREE), 0x3fd5555555555555ull, NX);
    T("fdiv.d 1/3 rup", F2("fdiv.d ft2, ft0, ft1, rup", ONE, THREE), 0x3fd5555555555556ull, NX);
    T("fdiv.d 1/0", F2("fdiv.d ft2, ft0, ft1", ONE, 0), INF, DZ);
    T("fdiv.d -1/0", F2("fdiv.d ft2, ft0, ft1", ONE | NEG0, 0), NINF, DZ);
    T("fdiv.d 0/0", F2("fdiv.d ft2, ft0, ft1", 0, 0), QNAN, NV);
    T("fsqrt.d 2 rne", F1("fsqrt.d ft2, ft0, rne", TWO), 0x3ff6a09e667f3bcdull, NX);
    T("fsqrt.d 2 rdn", F1("fsqrt.d ft2, ft0, rdn", TWO), 0x3ff6a09e667f3bccull, NX);
    T("fsqrt.d 4", F1("fsqrt.d ft2, ft0", 0x4010000000000000ull), TWO, 0);
    T("fsqrt.d -1", F1("fsqrt.d ft2, ft0", ONE | NEG0), QNAN, NV);
    T("fsqrt.d -0", F1("fsqrt.d ft2, ft0", NEG0), NEG0, 0);
}

static void test_fma(void)
{
    /* (1 + 2^-52)^2 - (1 + 2^-51) = 2^-104 exactly: a separate multiply would give 0. */
    T("fmadd.d", F3("fmadd.d ft2, ft0, ft1, ft3", ONE + 1, ONE + 1, (ONE + 2) | NEG0), 0x3970000000000000ull, 0);
    T("fmsub.d", F3("fmsub.d ft2, ft0, ft1, ft3", ONE + 1, ONE + 1, ONE + 2), 0x3970000000000000ull, 0);
    T("fnmsub.d", F3("fnmsub.d ft2, ft0, ft1, ft3", ONE + 1, ONE + 1, ONE + 2), 0xb970000000000000ull, 0);
    T("fnmadd.d", F3("fnmadd.d ft2, ft0, ft1, ft3", ONE + 1, ONE + 1, (ONE + 2) | NEG0),
      0xb970000000000000ull, 0);
    T("fmadd.d rup", F3("fmadd.d ft2, ft0, ft1, ft3, rup", ONE, ONE, TINY), ONE + 1, NX);
    T("fmadd.d 0*inf+qnan", F3("fmadd.d ft2, ft0, ft1, ft3", 0, INF, QNAN), QNAN, NV);
    T("fmadd.d inf-inf", F3("fmadd.d ft2, ft0, ft1, ft3", INF, ONE, NINF), QNAN, NV);
    T("fmadd.d x*0 + -0 rdn", F3("fmadd.d ft2, ft0, ft1, ft3, rdn", ONE, 0, NEG0), NEG0, 0);
}

static void test_sign_minmax_compare(void)
{
    T("fsgnj.d", F2("fsgnj.d ft2, ft0, ft1", ONE, NEG0), ONE | NEG0, 0);
    T("fsgnjn.d", F2("fsgnjn.d ft2, ft0, ft1", ONE, NEG0), ONE, 0);
    T("fsgnjx.d", F2("fsgnjx.d ft2, ft0, ft1", ONE | NEG0, NEG0), ONE, 0);
    T("fsgnj.d keeps NaN payload", F2("fsgnj.d ft2, ft0, ft1", SNAN, NEG0), SNAN | NEG0, 0);
    T("fmin.d -0 +0", F2("fmin.d ft2, ft0, ft1", 0, NEG0), NEG0, 0);
    T("fmax.d -0 +0", F2("fmax.d ft2, ft0, ft1", NEG0, 0), 0, 0);
    T("fmin.d qnan x", F2("fmin.d ft2, ft0, ft1", QNAN, TWO), TWO, 0);
    T("fmax.d snan x", F2("fmax.d ft2, ft0, ft1", ONE, SNAN), ONE, NV);
    T("fmin.d nan nan", F2("fmin.d ft2, ft0, ft1", SNAN, QNAN), QNAN, NV);
    T("fmax.d", F2("fmax.d ft2, ft0, ft1", ONE, NINF), ONE, 0);
    T("feq.d -0 +0", X2("feq.d %0, ft0, ft1", NEG0, 0), 1, 0);
    T("feq.d qnan quiet", X2("feq.d %0, ft0, ft1", QNAN, QNAN), 0, 0);
    T("feq.d snan", X2("feq.d %0, ft0, ft1", SNAN, ONE), 0, NV);
    T("flt.d qnan signals", X2("flt.d %0, ft0, ft1", QNAN, ONE), 0, NV);
    T("flt.d", X2("flt.d %0, ft0, ft1", NINF, ONE), 1, 0);
    T("flt.d -0 +0", X2("flt.d %0, ft0, ft1", NEG0, 0), 0, 0);
    T("fle.d -0 +0", X2("fle.d %0, ft0, ft1", NEG0, 0), 1, 0);
    T("fle.d qnan signals", X2("fle.d %0, ft0, ft1", ONE, QNAN), 0, NV);
}

static void test_class(void)
{
    static const uint64_t in[10] = {NINF, ONE | NEG0, 1 | NEG0, NEG0, 0, 1, ONE, INF, SNAN, QNAN};
    for (int i = 0; i < 10; i++) {
        T("fclass.d", X1("fclass.d %0, ft0", in[i]), 1u << i, 0);
    }
}

static void test_to_int(void)
{
    T("fcvt.w.d nan", X1("fcvt.w.d %0, ft0", QNAN), 0x7fffffff, NV);
    T("fcvt.w.d -inf", X1("fcvt.w.d %0, ft0", NINF), SEXT32(0x80000000), NV);
    T("fcvt.w.d 2^31", X1("fcvt.w.d %0, ft0", 0x41e0000000000000ull), 0x7fffffff, NV);
    T("fcvt.w.d -2^31", X1("fcvt.w.d %0, ft0", 0xc1e0000000000000ull), SEXT32(0x80000000), 0);
    T("fcvt.w.d 2.5 rne", X1("fcvt.w.d %0, ft0, rne", 0x4004000000000000ull), 2, NX);
    T("fcvt.w.d 2.5 rmm", X1("fcvt.w.d %0, ft0, rmm", 0x4004000000000000ull), 3, NX);
    T("fcvt.w.d -2.5 rdn", X1("fcvt.w.d %0, ft0, rdn", 0xc004000000000000ull), (uint64_t)-3, NX);
    T("fcvt.w.d -2.5 rup", X1("fcvt.w.d %0, ft0, rup", 0xc004000000000000ull), (uint64_t)-2, NX);
    T("fcvt.wu.d -1", X1("fcvt.wu.d %0, ft0", ONE | NEG0), 0, NV);
    T("fcvt.wu.d nan", X1("fcvt.wu.d %0, ft0", QNAN), ~0ull, NV);
    T("fcvt.wu.d -0.3 rtz", X1("fcvt.wu.d %0, ft0, rtz", 0xbfd3333333333333ull), 0, NX);
    T("fcvt.wu.d 3e9 sign-extends", X1("fcvt.wu.d %0, ft0", 0x41e65a0bc0000000ull), SEXT32(3000000000u), 0);
    T("fcvt.l.d 2^63", X1("fcvt.l.d %0, ft0", 0x43e0000000000000ull), 0x7fffffffffffffffull, NV);
    T("fcvt.l.d -2^63", X1("fcvt.l.d %0, ft0", 0xc3e0000000000000ull), 0x8000000000000000ull, 0);
    T("fcvt.l.d -inf", X1("fcvt.l.d %0, ft0", NINF), 0x8000000000000000ull, NV);
    T("fcvt.lu.d 2^64", X1("fcvt.lu.d %0, ft0", 0x43f0000000000000ull), ~0ull, NV);
    T("fcvt.lu.d 1.5 rtz", X1("fcvt.lu.d %0, ft0, rtz", 0x3ff8000000000000ull), 1, NX);
    T("fcvt.lu.d -inf", X1("fcvt.lu.d %0, ft0", NINF), 0, NV);
}

static void test_from_int_and_formats(void)
{
    T("fcvt.d.w", FX("fcvt.d.w ft2, %1", (uint64_t)-5), 0xc014000000000000ull, 0);
    T("fcvt.d.w uses low 32 bits", FX("fcvt.d.w ft2, %1", 0x1234567800000001ull), ONE, 0);
    T("fcvt.d.wu", FX("fcvt.d.wu ft2, %1", ~0ull), 0x41efffffffe00000ull, 0);
    T("fcvt.d.l rne", FX("fcvt.d.l ft2, %1, rne", 0x7fffffffffffffffull), 0x43e0000000000000ull, NX);
    T("fcvt.d.l rtz", FX("fcvt.d.l ft2, %1, rtz", 0x7fffffffffffffffull), 0x43dfffffffffffffull, NX);
    T("fcvt.d.lu", FX("fcvt.d.lu ft2, %1", ~0ull), 0x43f0000000000000ull, NX);
    T("fcvt.d.l 0", FX("fcvt.d.l ft2, %1, rdn", 0), 0, 0);
    T("fcvt.s.d rne", F1("fcvt.s.d ft2, ft0, rne", 0x3fd5555555555555ull), BOX(0x3eaaaaab), NX);
    T("fcvt.s.d rtz", F1("fcvt.s.d ft2, ft0, rtz", 0x3fd5555555555555ull), BOX(0x3eaaaaaa), NX);
    T("fcvt.s.d overflow", F1("fcvt.s.d ft2, ft0", 0x7e37e43c8800759cull), BOX(0x7f800000), OF | NX);
    T("fcvt.s.d snan", F1("fcvt.s.d ft2, ft0", SNAN), BOX(0x7fc00000), NV);
    T("fcvt.d.s", F1("fcvt.d.s ft2, ft0", BOX(0x3eaaaaab)), 0x3fd5555560000000ull, 0);
    T("fcvt.d.s unboxed input", F1("fcvt.d.s ft2, ft0", 0x3f800000), QNAN, 0);
    T("fcvt.d.s snan", F1("fcvt.d.s ft2, ft0", BOX(0x7f800001)), QNAN, NV);
    T("fmv.d.x / fmv.x.d", FX("fmv.d.x ft2, %1", 0x123456789abcdef0ull), 0x123456789abcdef0ull, 0);
}

static volatile uint64_t mem[4] __attribute__((aligned(8)));

static void test_loads_stores(void)
{
    mem[0] = 0x400921fb54442d18ull;
    uint64_t r;
    __asm__ volatile("fld ft0, 0(%1)\n fsd ft0, 8(%1)\n fmv.x.d %0, ft0" : "=r"(r) : "r"(mem) : "ft0", "memory");
    CHECK("fld", r, 0x400921fb54442d18ull);
    CHECK("fsd", mem[1], 0x400921fb54442d18ull);
    /* Compressed forms use f8..f15 (fs0, fs1) and x8..x15 / sp. */
    register volatile uint64_t *p __asm__("a0") = mem;
    __asm__ volatile("c.fld fs0, 0(%1)\n c.fsd fs0, 16(%1)\n"
                     "addi sp, sp, -16\n c.fsdsp fs0, 8(sp)\n c.fldsp fs1, 8(sp)\n addi sp, sp, 16\n"
                     "fmv.x.d %0, fs1" : "=r"(r) : "r"(p) : "fs0", "fs1", "memory");
    CHECK("c.fld / c.fsd", mem[2], 0x400921fb54442d18ull);
    CHECK("c.fsdsp / c.fldsp", r, 0x400921fb54442d18ull);
}

static void test_fcsr(void)
{
    __asm__ volatile("csrwi frm, 3");                /* RUP */
    T("dynamic rm = frm", F2("fadd.d ft2, ft0, ft1, dyn", ONE, TINY), ONE + 1, NX);
    __asm__ volatile("csrwi frm, 0");
    uint64_t v;
    __asm__ volatile("csrw fcsr, %1\n csrr %0, frm" : "=r"(v) : "r"((2ull << 5) | 0x1f));
    CHECK("fcsr sets frm", v, 2);
    CHECK("fcsr sets fflags", fflags_get(), 0x1f);
    __asm__ volatile("csrw fcsr, %1\n csrr %0, fcsr" : "=r"(v) : "r"(~0ull));
    CHECK("fcsr keeps 8 bits", v, 0xff);
    __asm__ volatile("csrw fcsr, zero");
}

static void test_illegal(void)
{
    trap_install();
    __asm__ volatile("csrwi frm, 5");
    EXPECT_ILLEGAL("dynamic rm with frm = 5", "fadd.d ft0, ft0, ft0, dyn");
    __asm__ volatile("csrwi frm, 0");
    EXPECT_ILLEGAL("static rm 5", ".4byte 0x02005053");  /* fadd.d ft0, ft0, ft0, rm=5 */
    EXPECT_ILLEGAL("fmt 2 (H) not implemented", ".4byte 0x04000053");
    csr_clear(mstatus, MSTATUS_FS);
    CHECK("FS off reads back", csr_read(mstatus) & MSTATUS_FS, 0);
    CHECK("SD clear with FS off", csr_read(mstatus) >> 63, 0);
    EXPECT_ILLEGAL("fadd.d with FS off", "fadd.d ft0, ft0, ft0");
    EXPECT_ILLEGAL("fld with FS off", "fld ft0, 0(sp)");
    EXPECT_ILLEGAL("c.fldsp with FS off", "c.fldsp ft0, 0(sp)");
    EXPECT_ILLEGAL("fcsr with FS off", "csrr t0, fcsr");
    csr_set(mstatus, 1ull << 13);                  /* Initial */
    __asm__ volatile("fmv.d.x ft0, zero" ::: "ft0");
    CHECK("an FP write makes FS dirty", csr_read(mstatus) & MSTATUS_FS, MSTATUS_FS);
    CHECK("SD set", csr_read(mstatus) >> 63, 1);
    CHECK("misa F", (csr_read(misa) >> ('F' - 'A')) & 1, 1);
    CHECK("misa D", (csr_read(misa) >> ('D' - 'A')) & 1, 1);
}

int main(void)
{
    CHECK("FS on at boot (crt0)", (csr_read(mstatus) & MSTATUS_FS) != 0, 1);
    test_add_sub_rounding();
    test_mul_div_sqrt();
    test_fma();
    test_sign_minmax_compare();
    test_class();
    test_to_int();
    test_from_int_and_formats();
    test_loads_stores();
    test_fcsr();
    test_illegal();
    return test_finish("rv64d");
}
