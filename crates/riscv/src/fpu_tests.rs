//! Tests of the F/D semantics: the soft-float arithmetic against the host's (correctly
//! rounded, round-to-nearest-even) IEEE operations on many operands, directed cases for the
//! other rounding modes, flags, conversions and NaN rules, and whole instructions on a core.

use crate::asm::{self, reg::*};
use crate::fparith::{self as fa, Fmt, Rm, D, DZ, NV, NX, OF, S, UF};
use crate::fpconv::{self as fc, IntTy};
use crate::testing::Bench;
use crate::Exit;

/// Deterministic operand generator biased towards interesting exponents and significands.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 ^ (self.0 >> 29)
    }
    fn operand(&mut self, f: Fmt) -> u64 {
        let r = self.next();
        let emax = (1u64 << f.ebits) - 1;
        let e = match r % 8 {
            0 => 0,
            1 => emax,
            2 => 1 + (r >> 8) % 3,
            3 => emax - 1 - (r >> 8) % 3,
            _ => (f.bias() as u64 - 30) + (r >> 8) % 60,
        };
        let m = match (r >> 20) % 4 {
            0 => 0,
            1 => (1 << f.mbits) - 1 - (r >> 24) % 4,
            _ => (r >> 11) & ((1 << f.mbits) - 1),
        };
        (((r >> 63) << (f.ebits + f.mbits)) | (e << f.mbits) | m) & (u64::MAX >> (63 - f.ebits - f.mbits))
    }
}

fn same(f: Fmt, got: u64, want: u64, what: &str) {
    if f.is_nan(want) {
        assert_eq!(got, f.canonical_nan(), "{what}: NaN results are canonical");
    } else {
        assert_eq!(got, want, "{what}: got {got:#x} want {want:#x}");
    }
}

#[test]
fn double_arithmetic_matches_the_host_in_rne() {
    let mut g = Gen(1);
    for _ in 0..200_000 {
        let (a, b, c) = (g.operand(D), g.operand(D), g.operand(D));
        let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
        let fl = &mut 0;
        same(D, fa::add(D, a, b, Rm::Rne, fl), (x + y).to_bits(), &format!("{x:e} + {y:e}"));
        same(D, fa::sub(D, a, b, Rm::Rne, fl), (x - y).to_bits(), &format!("{x:e} - {y:e}"));
        same(D, fa::mul(D, a, b, Rm::Rne, fl), (x * y).to_bits(), &format!("{x:e} * {y:e}"));
        same(D, fa::div(D, a, b, Rm::Rne, fl), (x / y).to_bits(), &format!("{x:e} / {y:e}"));
        same(D, fa::sqrt(D, a, Rm::Rne, fl), x.sqrt().to_bits(), &format!("sqrt {x:e}"));
        let want = x.mul_add(y, z).to_bits();
        same(D, fa::fma(D, a, b, c, Rm::Rne, fl), want, &format!("fma {x:e} {y:e} {z:e}"));
    }
}

#[test]
fn single_arithmetic_matches_the_host_in_rne() {
    let mut g = Gen(2);
    for _ in 0..200_000 {
        let (a, b, c) = (g.operand(S), g.operand(S), g.operand(S));
        let (x, y, z) = (f32::from_bits(a as u32), f32::from_bits(b as u32), f32::from_bits(c as u32));
        let fl = &mut 0;
        let h = |v: f32| v.to_bits() as u64;
        same(S, fa::add(S, a, b, Rm::Rne, fl), h(x + y), "add.s");
        same(S, fa::mul(S, a, b, Rm::Rne, fl), h(x * y), "mul.s");
        same(S, fa::div(S, a, b, Rm::Rne, fl), h(x / y), "div.s");
        same(S, fa::sqrt(S, a, Rm::Rne, fl), h(x.sqrt()), "sqrt.s");
        same(S, fa::fma(S, a, b, c, Rm::Rne, fl), h(x.mul_add(y, z)), "fma.s");
        let wide = fc::convert(D, S, (x as f64 * y as f64).to_bits(), Rm::Rne, fl);
        same(S, wide, h((x as f64 * y as f64) as f32), "fcvt.s.d");
    }
}

/// A result and its flags.
fn with_flags(op: impl FnOnce(&mut u8) -> u64) -> (u64, u8) {
    let mut fl = 0;
    (op(&mut fl), fl)
}

const ONE: u64 = 0x3ff0_0000_0000_0000;
const TINY: u64 = 0x3c90_0000_0000_0000; // 2^-54: below half an ulp of 1.0

#[test]
fn directed_rounding_of_a_sum() {
    let cases = [
        (Rm::Rne, ONE, ONE + 1, false),
        (Rm::Rtz, ONE, ONE, false),
        (Rm::Rdn, ONE, ONE, false),
        (Rm::Rup, ONE + 1, ONE, true),
        (Rm::Rmm, ONE, ONE, false),
    ];
    for (rm, pos, _, _) in cases {
        assert_eq!(with_flags(|f| fa::add(D, ONE, TINY, rm, f)), (pos, NX), "{rm:?}");
    }
    // Negative: directed modes mirror.
    let neg = |x: u64| x | D.sign_bit();
    assert_eq!(fa::add(D, neg(ONE), neg(TINY), Rm::Rdn, &mut 0), neg(ONE + 1));
    assert_eq!(fa::add(D, neg(ONE), neg(TINY), Rm::Rup, &mut 0), neg(ONE));
    // Ties: 1 + 2^-53 is halfway: RNE to even (1.0), RMM away (1 + ulp).
    let half = 0x3ca0_0000_0000_0000;
    assert_eq!(fa::add(D, ONE, half, Rm::Rne, &mut 0), ONE);
    assert_eq!(fa::add(D, ONE, half, Rm::Rmm, &mut 0), ONE + 1);
    // x - x is +0, except -0 when rounding down.
    assert_eq!(fa::sub(D, ONE, ONE, Rm::Rne, &mut 0), 0);
    assert_eq!(fa::sub(D, ONE, ONE, Rm::Rdn, &mut 0), D.sign_bit());
}

#[test]
fn overflow_follows_the_rounding_direction() {
    let max = 0x7fef_ffff_ffff_ffff;
    let inf = 0x7ff0_0000_0000_0000;
    assert_eq!(with_flags(|f| fa::mul(D, max, max, Rm::Rne, f)), (inf, OF | NX));
    assert_eq!(with_flags(|f| fa::mul(D, max, max, Rm::Rtz, f)), (max, OF | NX));
    assert_eq!(fa::mul(D, max, max | D.sign_bit(), Rm::Rup, &mut 0), max | D.sign_bit());
    assert_eq!(fa::mul(D, max, max | D.sign_bit(), Rm::Rdn, &mut 0), inf | D.sign_bit());
}

#[test]
fn underflow_is_detected_after_rounding() {
    let min_normal = 0x0010_0000_0000_0000;
    // (1 - 2^-53) * 2^-1022: exact at 53 bits (so tiny), halfway in the subnormal grid.
    let r = with_flags(|f| fa::mul(D, 0x3fef_ffff_ffff_ffff, min_normal, Rm::Rne, f));
    assert_eq!(r, (min_normal, UF | NX));
    // (1 + 2^-52)(1 - 2^-52) 2^-1022 = (1 - 2^-104) 2^-1022 rounds to 2^-1022 even with an
    // unbounded exponent: not tiny, so inexact without underflow; RTZ keeps it tiny.
    let (a, b) = (0x3ff0_0000_0000_0001, 0x000f_ffff_ffff_ffff);
    assert_eq!(with_flags(|f| fa::mul(D, a, b, Rm::Rne, f)), (min_normal, NX));
    assert_eq!(with_flags(|f| fa::mul(D, a, b, Rm::Rtz, f)), (b, UF | NX));
    // An exact subnormal result raises nothing.
    assert_eq!(with_flags(|f| fa::mul(D, 0x3fe0_0000_0000_0000, min_normal, Rm::Rne, f)).1, 0);
}

#[test]
fn invalid_and_divide_by_zero() {
    let inf = 0x7ff0_0000_0000_0000;
    let qnan = D.canonical_nan();
    let snan = 0x7ff0_0000_0000_0001;
    assert_eq!(with_flags(|f| fa::div(D, ONE, 0, Rm::Rne, f)), (inf, DZ));
    assert_eq!(with_flags(|f| fa::div(D, 0, 0, Rm::Rne, f)), (qnan, NV));
    assert_eq!(with_flags(|f| fa::sub(D, inf, inf, Rm::Rne, f)), (qnan, NV));
    assert_eq!(with_flags(|f| fa::sqrt(D, ONE | D.sign_bit(), Rm::Rne, f)), (qnan, NV));
    assert_eq!(with_flags(|f| fa::sqrt(D, D.sign_bit(), Rm::Rne, f)), (D.sign_bit(), 0));
    assert_eq!(with_flags(|f| fa::add(D, qnan | 5, ONE, Rm::Rne, f)), (qnan, 0));
    assert_eq!(with_flags(|f| fa::add(D, snan, ONE, Rm::Rne, f)), (qnan, NV));
    // 0 * inf + qNaN is invalid (spec: FMA with infinity and zero multiplicands).
    assert_eq!(with_flags(|f| fa::fma(D, 0, inf, qnan, Rm::Rne, f)), (qnan, NV));
    assert_eq!(with_flags(|f| fa::fma(D, ONE, inf, inf | D.sign_bit(), Rm::Rne, f)), (qnan, NV));
}

#[test]
fn fma_rounds_once() {
    // (1 + 2^-52)^2 - (1 + 2^-51) = 2^-104 exactly; a separate multiply would give 0.
    let a = ONE + 1;
    let c = (ONE + 2) | D.sign_bit();
    assert_eq!(with_flags(|f| fa::fma(D, a, a, c, Rm::Rne, f)), (0x3970_0000_0000_0000, 0));
    assert_eq!(fa::add(D, fa::mul(D, a, a, Rm::Rne, &mut 0), c, Rm::Rne, &mut 0), 0);
}

#[test]
fn float_to_int_saturates_with_invalid() {
    let w = IntTy { signed: true, wide: false };
    let wu = IntTy { signed: false, wide: false };
    let lu = IntTy { signed: false, wide: true };
    let inf = 0x7f80_0000;
    let cvt = |x: u64, ty, rm| with_flags(|f| fc::to_int(S, x, ty, rm, f));
    assert_eq!(cvt(S.canonical_nan(), w, Rm::Rne), (0x7fff_ffff, NV));
    assert_eq!(cvt(inf, w, Rm::Rne), (0x7fff_ffff, NV));
    assert_eq!(cvt(inf | S.sign_bit(), w, Rm::Rne), (0xffff_ffff_8000_0000, NV));
    assert_eq!(cvt(0x4f00_0000, w, Rm::Rne), (0x7fff_ffff, NV)); // 2^31
    assert_eq!(cvt(0xcf00_0000, w, Rm::Rne), (0xffff_ffff_8000_0000, 0)); // -2^31 exact
    assert_eq!(cvt(S.canonical_nan(), wu, Rm::Rne), (u64::MAX, NV)); // 2^32-1, sign-extended
    assert_eq!(cvt(0xbf80_0000, wu, Rm::Rne), (0, NV)); // -1.0
    assert_eq!(cvt(0xbe99_999a, wu, Rm::Rtz), (0, NX)); // -0.3 truncates to 0: in range
    assert_eq!(cvt(0x3fc0_0000, w, Rm::Rne), (2, NX)); // 1.5 ties to even
    assert_eq!(cvt(0x4020_0000, w, Rm::Rne), (2, NX)); // 2.5 ties to even
    assert_eq!(cvt(0x4020_0000, w, Rm::Rmm), (3, NX));
    assert_eq!(cvt(0xc020_0000, w, Rm::Rdn), ((-3i64) as u64, NX));
    assert_eq!(cvt(0x5f80_0000, lu, Rm::Rne), (u64::MAX, NV)); // 2^64
}

#[test]
fn int_to_float_rounds() {
    let l = IntTy { signed: true, wide: true };
    let wu = IntTy { signed: false, wide: false };
    let r = |v: u64, ty, rm| with_flags(|f| fc::from_int(S, v, ty, rm, f));
    assert_eq!(r(i64::MAX as u64, l, Rm::Rne), (0x5f00_0000, NX));
    assert_eq!(r(i64::MAX as u64, l, Rm::Rtz), (0x5eff_ffff, NX));
    assert_eq!(r(i64::MIN as u64, l, Rm::Rne), (0xdf00_0000, 0));
    assert_eq!(r(0xffff_ffff_ffff_ffff, wu, Rm::Rne), (0x4f80_0000, NX)); // low 32 bits only
    assert_eq!(r(0, l, Rm::Rdn), (0, 0)); // +0 in every mode
}

#[test]
fn compares_min_max_and_class() {
    let snan = 0x7f80_0001;
    let qnan = S.canonical_nan();
    let neg0 = S.sign_bit();
    let one = 0x3f80_0000;
    let fl = &mut 0;
    assert!(fc::feq(S, 0, neg0, fl) && *fl == 0);
    assert!(!fc::feq(S, qnan, qnan, fl) && *fl == 0, "feq is quiet");
    assert!(!fc::feq(S, snan, one, fl) && *fl == NV);
    *fl = 0;
    assert!(!fc::flt_le(S, qnan, one, false, fl) && *fl == NV, "flt signals");
    assert!(fc::flt_le(S, neg0, 0, true, &mut 0) && !fc::flt_le(S, neg0, 0, false, &mut 0));
    assert_eq!(with_flags(|f| fc::min_max(S, neg0, 0, false, f)), (neg0, 0));
    assert_eq!(with_flags(|f| fc::min_max(S, neg0, 0, true, f)), (0, 0));
    assert_eq!(with_flags(|f| fc::min_max(S, qnan, one, false, f)), (one, 0));
    assert_eq!(with_flags(|f| fc::min_max(S, snan, one, true, f)), (one, NV));
    assert_eq!(with_flags(|f| fc::min_max(S, snan, qnan, true, f)), (qnan, NV));
    let classes = [0xff80_0000, 0xbf80_0000, 0x8000_0001, neg0, 0, 1, one, 0x7f80_0000, snan, qnan];
    for (i, x) in classes.into_iter().enumerate() {
        assert_eq!(fc::fclass(S, x), 1 << i, "{x:#x}");
    }
}

// ---- whole instructions on a core ----

const MSTATUS: u32 = 0x300;
const FCSR: u32 = 0x003;

/// Turn FS on (Initial), then `code`, then exit with a0.
fn run_fp(code: &[u32]) -> (Bench, Exit) {
    let mut all = vec![asm::lui(T0, 2), asm::csrrs(ZERO, MSTATUS, T0)]; // 1 << 13
    all.extend(code);
    all.extend(asm::exit_with(A0));
    let mut b = Bench::new(&all, false);
    let e = b.run(1_000_000);
    (b, e)
}

/// `fmv.d.x fd, xs` after loading `v` into `xs`.
fn set_f(fd: u32, v: u64) -> Vec<u32> {
    let mut c = asm::li64(T1, v);
    c.push(asm::fop(0x1e, 1, fd, T1, 0, 0));
    c
}

#[test]
fn fs_off_makes_fp_instructions_and_csrs_illegal() {
    for insn in [asm::fop(0, 0, 1, 2, 3, 0), asm::csrrs(A1, FCSR, ZERO), asm::fload(true, 1, SP, 0)] {
        let mut b = Bench::new(&[insn], false);
        let Exit::Error(e) = b.run(1000) else { panic!("FS = Off must trap") };
        assert!(e.to_string().contains("illegal instruction"), "{e}");
    }
}

#[test]
fn instructions_compute_flag_and_set_fs_dirty() {
    let mut c = set_f(1, ONE);
    c.extend(set_f(2, 0x4008_0000_0000_0000)); // 3.0
    c.extend([
        asm::fop(3, 1, 3, 1, 2, 7),     // fdiv.d f3, f1, f2 (dyn rm = RNE): 1/3, inexact
        asm::fop(0x1c, 1, A2, 3, 0, 0), // fmv.x.d a2, f3
        asm::csrrs(A3, FCSR, ZERO),
        asm::csrrs(A4, MSTATUS, ZERO),
        asm::fop(0x18, 1, A5, 2, 0, 1), // fcvt.w.d a5, f2, rtz
        asm::addi(A0, ZERO, 0),
    ]);
    let (b, e) = run_fp(&c);
    assert_eq!(e, Exit::Halted(0));
    assert_eq!(b.core.reg(12), (1.0f64 / 3.0).to_bits());
    assert_eq!(b.core.reg(13), NX as u64);
    assert_eq!(b.core.reg(14) >> 13 & 3, 3, "FS = Dirty");
    assert!(b.core.reg(14) >> 63 == 1, "SD");
    assert_eq!(b.core.reg(15), 3);
}

#[test]
fn single_values_must_be_nan_boxed() {
    let mut c = set_f(1, 0x0000_0000_3f80_0000); // 1.0f, not boxed
    c.extend(set_f(2, 0xffff_ffff_3f80_0000)); // 1.0f, boxed
    c.extend([
        asm::fop(0, 0, 3, 1, 2, 0), // fadd.s f3, f1, f2 -> canonical NaN (f1 reads as NaN)
        asm::fop(0, 0, 4, 2, 2, 0), // fadd.s f4, f2, f2 = 2.0f
        asm::fop(0x1c, 0, A1, 1, 0, 0), // fmv.x.w a1, f1: low bits, no unboxing
        asm::fop(0x1e, 0, 5, A1, 0, 0), // fmv.w.x f5, a1: boxed
        asm::addi(A0, ZERO, 0),
    ]);
    let (b, e) = run_fp(&c);
    assert_eq!(e, Exit::Halted(0));
    assert_eq!(b.core.freg(3), 0xffff_ffff_7fc0_0000);
    assert_eq!(b.core.freg(4), 0xffff_ffff_4000_0000);
    assert_eq!(b.core.reg(11), 0x3f80_0000);
    assert_eq!(b.core.freg(5), 0xffff_ffff_3f80_0000);
}

#[test]
fn reserved_rounding_modes_are_illegal() {
    // Static rm 5 is rejected by the decoder; dynamic rm with frm = 5 when executed.
    let (_, e) = run_fp(&[asm::fop(0, 1, 1, 2, 3, 5)]);
    assert!(matches!(e, Exit::Error(_)), "{e:?}");
    let (_, e) = run_fp(&[asm::csrrwi(ZERO, 2, 5), asm::fop(0, 1, 1, 2, 3, 7)]);
    assert!(matches!(e, Exit::Error(_)), "{e:?}");
    let (_, e) = run_fp(&[asm::csrrwi(ZERO, 2, 4), asm::fop(0, 1, 1, 2, 3, 7), asm::addi(A0, ZERO, 0)]);
    assert_eq!(e, Exit::Halted(0), "RMM is valid");
}

#[test]
fn loads_stores_and_compressed_forms() {
    let mut c = asm::la_dram(A1, 0x8000_f100);
    c.extend(set_f(1, 0x4000_0000_0000_0000));
    c.extend([
        asm::fstore(true, 1, A1, 8),
        asm::fload(false, 2, A1, 12), // high word of 2.0 as a single, boxed
        asm::fload(true, 3, A1, 8),
    ]);
    let mut code: Vec<u32> = c;
    code.push(asm::fop(4, 1, 8, 3, 3, 0)); // fmv.d f8, f3 (fsgnj.d)
                                           // c.fsd f8, 16(a1) ; c.fld f9, 16(a1) (two parcels in one word; f8..f15 only)
    code.push(0xa980 | (0x2984 << 16));
    code.push(asm::addi(A0, ZERO, 0));
    let (b, e) = run_fp(&code);
    assert_eq!(e, Exit::Halted(0));
    assert_eq!(b.core.freg(2), 0xffff_ffff_4000_0000);
    assert_eq!(b.core.freg(3), 0x4000_0000_0000_0000);
    assert_eq!(b.core.freg(9), 0x4000_0000_0000_0000);
}

#[test]
fn dependent_fp_ops_wait_for_the_pipelines() {
    let mut c = set_f(1, ONE);
    c.extend([
        asm::fop(3, 1, 2, 1, 1, 0), // fdiv.d f2, f1, f1
        asm::fop(0, 1, 3, 2, 2, 0), // fadd.d f3, f2, f2 waits for the divider
        asm::fop(0, 1, 4, 3, 3, 0), // fadd.d waits for the FMA pipeline
        asm::addi(A0, ZERO, 0),
    ]);
    let (b, _) = run_fp(&c);
    let t = crate::TimingParams::default();
    assert!(b.core.stats().stall_muldiv >= t.fp_ddivsqrt_latency - 1 + t.fp_dfma_latency - 1);
    assert_eq!(b.core.freg(4), 0x4010_0000_0000_0000);
}
