//! The F/D operations that do not round a sum or product: conversions to and from
//! integers and between formats, comparisons, min/max, sign injection and classification
//! (RISC-V unprivileged ISA, chapter "F": "Floating-Point Conversion and Move
//! Instructions", "Floating-Point Compare Instructions", "Floating-Point Classify
//! Instruction"; chapter "D" for the double forms and FCVT.S.D/FCVT.D.S).

use crate::fparith::{nan_result, round_pack, round_shift, unpack, Fmt, Part, Rm, Val, NV, NX};

/// An integer conversion target or source: 32 (W) or 64 (L) bits, signed or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntTy {
    pub signed: bool,
    pub wide: bool,
}

impl IntTy {
    /// From the rs2 field of FCVT.int.fmt / FCVT.fmt.int: 0 W, 1 WU, 2 L, 3 LU.
    pub fn from_rs2(rs2: u32) -> IntTy {
        IntTy { signed: rs2 & 1 == 0, wide: rs2 & 2 != 0 }
    }
    fn bits(self) -> u32 {
        if self.wide {
            64
        } else {
            32
        }
    }
    /// Largest value, as a magnitude.
    fn max(self) -> u128 {
        (1u128 << (self.bits() - self.signed as u32)) - 1
    }
    /// Magnitude of the most negative value.
    fn min_mag(self) -> u128 {
        if self.signed {
            1 << (self.bits() - 1)
        } else {
            0
        }
    }
    /// 32-bit results are sign-extended into the 64-bit register, unsigned ones included
    /// (spec: "FCVT.WU.S ... sign-extends the 32-bit result").
    fn to_reg(self, v: u64) -> u64 {
        if self.wide {
            v
        } else {
            v as i32 as i64 as u64
        }
    }
    /// Saturated result of an invalid conversion (spec table "Domains of float-to-integer
    /// conversions"): NaN and too-large values give the maximum, too-negative the minimum.
    fn saturate(self, negative: bool) -> u64 {
        let v = if negative { (self.min_mag() as u64).wrapping_neg() } else { self.max() as u64 };
        self.to_reg(v)
    }
}

/// FCVT.{W,WU,L,LU}.{S,D}: round to an integer in mode `rm`; out-of-range values and NaN
/// raise NV (and not NX) and saturate.
pub fn to_int(f: Fmt, x: u64, ty: IntTy, rm: Rm, fl: &mut u8) -> u64 {
    match unpack(f, x) {
        Val::Nan => invalid_to_int(ty, false, fl),
        Val::Inf(s) => invalid_to_int(ty, s, fl),
        Val::Zero(_) => 0,
        Val::Fin(p) => fin_to_int(p, ty, rm, fl),
    }
}

fn invalid_to_int(ty: IntTy, negative: bool, fl: &mut u8) -> u64 {
    *fl |= NV;
    ty.saturate(negative)
}

fn fin_to_int(p: Part, ty: IntTy, rm: Rm, fl: &mut u8) -> u64 {
    // Beyond 2^65 every value is out of range; stopping there keeps the shift in a u128.
    if p.exp > 65 {
        return invalid_to_int(ty, p.sign, fl);
    }
    let (mag, inexact) = round_shift(p.sig, -p.exp, rm, p.sign);
    let limit = if p.sign { ty.min_mag() } else { ty.max() };
    if mag > limit {
        return invalid_to_int(ty, p.sign, fl);
    }
    if inexact {
        *fl |= NX;
    }
    let v = mag as u64;
    ty.to_reg(if p.sign { v.wrapping_neg() } else { v })
}

/// FCVT.{S,D}.{W,WU,L,LU}: the integer (low 32 bits of `v` for W forms) rounded to `f`.
pub fn from_int(f: Fmt, v: u64, ty: IntTy, rm: Rm, fl: &mut u8) -> u64 {
    let v = match (ty.wide, ty.signed) {
        (false, true) => v as i32 as i64 as u64,
        (false, false) => v as u32 as u64,
        _ => v,
    };
    let negative = ty.signed && (v as i64) < 0;
    let mag = if negative { v.wrapping_neg() } else { v };
    round_pack(f, Part { sign: negative, exp: 0, sig: mag as u128 }, rm, fl)
}

/// FCVT.S.D and FCVT.D.S: NaNs become the canonical NaN of `to` (NV if signalling).
pub fn convert(from: Fmt, to: Fmt, x: u64, rm: Rm, fl: &mut u8) -> u64 {
    match unpack(from, x) {
        Val::Nan => {
            nan_result(from, &[x], fl);
            to.canonical_nan()
        }
        Val::Inf(s) => to.inf(s),
        Val::Zero(s) => to.zero(s),
        Val::Fin(p) => round_pack(to, p, rm, fl),
    }
}

/// Ordering key of a non-NaN value: both zeros map to 0.
fn key(f: Fmt, x: u64) -> i64 {
    let mag = (x & (f.sign_bit() - 1)) as i64;
    if f.sign(x) {
        -mag
    } else {
        mag
    }
}

/// FEQ: quiet comparison, NV only for signalling NaNs.
pub fn feq(f: Fmt, a: u64, b: u64, fl: &mut u8) -> bool {
    if f.is_nan(a) || f.is_nan(b) {
        nan_result(f, &[a, b], fl);
        return false;
    }
    key(f, a) == key(f, b)
}

/// FLT (`le` false) and FLE (`le` true): signalling comparisons, NV for any NaN.
pub fn flt_le(f: Fmt, a: u64, b: u64, le: bool, fl: &mut u8) -> bool {
    if f.is_nan(a) || f.is_nan(b) {
        *fl |= NV;
        return false;
    }
    let (ka, kb) = (key(f, a), key(f, b));
    ka < kb || (le && ka == kb)
}

/// FMIN/FMAX as specified since version 2.2 of F (IEEE 754-2019 minimumNumber /
/// maximumNumber): a NaN operand is ignored unless both are NaN (then the canonical NaN),
/// signalling NaNs raise NV, and -0 is below +0.
pub fn min_max(f: Fmt, a: u64, b: u64, max: bool, fl: &mut u8) -> u64 {
    if f.is_snan(a) || f.is_snan(b) {
        *fl |= NV;
    }
    match (f.is_nan(a), f.is_nan(b)) {
        (true, true) => f.canonical_nan(),
        (true, false) => b,
        (false, true) => a,
        _ => pick(f, a, b, max),
    }
}

/// Total order on non-NaN values with -0 < +0.
fn pick(f: Fmt, a: u64, b: u64, max: bool) -> u64 {
    let k = |x: u64| key(f, x) - f.sign(x) as i64;
    let a_less = k(a) < k(b);
    if a_less != max {
        a
    } else {
        b
    }
}

/// FSGNJ (`mode` 0), FSGNJN (1), FSGNJX (2): `a` with a sign from `b`.
pub fn sgnj(f: Fmt, a: u64, b: u64, mode: u32) -> u64 {
    let sb = f.sign_bit();
    let sign = match mode {
        0 => b & sb,
        1 => !b & sb,
        _ => (a ^ b) & sb,
    };
    (a & !sb) | sign
}

/// FCLASS: one bit of the ten classes (spec table "Format of result of FCLASS").
pub fn fclass(f: Fmt, x: u64) -> u64 {
    let s = f.sign(x);
    let bit = match unpack(f, x) {
        Val::Nan if f.is_snan(x) => 8,
        Val::Nan => 9,
        Val::Inf(_) => {
            if s {
                0
            } else {
                7
            }
        }
        Val::Zero(_) => {
            if s {
                3
            } else {
                4
            }
        }
        Val::Fin(p) if p.sig >> f.mbits == 0 => {
            if s {
                2
            } else {
                5
            }
        }
        Val::Fin(_) => {
            if s {
                1
            } else {
                6
            }
        }
    };
    1 << bit
}
