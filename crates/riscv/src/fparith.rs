//! IEEE 754 binary32/binary64 arithmetic in integers, for the F and D extensions (RISC-V
//! unprivileged ISA, chapters "F" and "D"): every result is computed exactly (or with a
//! sticky bit below the rounding position) and rounded once by [`round_pack`], so all five
//! rounding modes and all five exception flags come out as the spec requires. Host floats
//! are never used: they know only round-to-nearest-even and report no flags.
//!
//! Values are raw encodings in the low bits of a `u64` (NaN boxing is `fpu.rs`'s business).
//! RISC-V specifics: every NaN result is the canonical NaN (spec "NaN Generation and
//! Propagation"), and tininess is detected after rounding (as Berkeley SoftFloat's RISC-V
//! specialization and Rocket's hardfloat do).

use std::cmp::Ordering;

/// Accrued exception flags, as in `fflags` (spec: "Floating-Point Control and Status").
pub const NX: u8 = 1;
pub const UF: u8 = 2;
pub const OF: u8 = 4;
pub const DZ: u8 = 8;
pub const NV: u8 = 16;

/// Rounding modes (spec table "Rounding mode encoding"); 5 and 6 are reserved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rm {
    Rne,
    Rtz,
    Rdn,
    Rup,
    Rmm,
}

impl Rm {
    pub fn from_bits(b: u32) -> Option<Rm> {
        [Rm::Rne, Rm::Rtz, Rm::Rdn, Rm::Rup, Rm::Rmm].get(b as usize).copied()
    }
}

/// A binary interchange format: exponent and trailing-significand widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fmt {
    pub ebits: u32,
    pub mbits: u32,
}

pub const S: Fmt = Fmt { ebits: 8, mbits: 23 };
pub const D: Fmt = Fmt { ebits: 11, mbits: 52 };

impl Fmt {
    pub fn bias(self) -> i32 {
        (1 << (self.ebits - 1)) - 1
    }
    fn emax_field(self) -> u64 {
        (1 << self.ebits) - 1
    }
    pub fn sign_bit(self) -> u64 {
        1 << (self.ebits + self.mbits)
    }
    fn mant(self, x: u64) -> u64 {
        x & ((1 << self.mbits) - 1)
    }
    fn exp_field(self, x: u64) -> u64 {
        (x >> self.mbits) & self.emax_field()
    }
    pub fn sign(self, x: u64) -> bool {
        x & self.sign_bit() != 0
    }
    /// The canonical NaN: positive, quiet bit only (spec "NaN Generation and Propagation").
    pub fn canonical_nan(self) -> u64 {
        (self.emax_field() << self.mbits) | (1 << (self.mbits - 1))
    }
    pub fn zero(self, sign: bool) -> u64 {
        if sign {
            self.sign_bit()
        } else {
            0
        }
    }
    pub fn inf(self, sign: bool) -> u64 {
        self.zero(sign) | (self.emax_field() << self.mbits)
    }
    fn max_finite(self, sign: bool) -> u64 {
        self.inf(sign) - 1
    }
    pub fn is_nan(self, x: u64) -> bool {
        self.exp_field(x) == self.emax_field() && self.mant(x) != 0
    }
    /// Signalling NaN: quiet bit (the top trailing-significand bit) clear.
    pub fn is_snan(self, x: u64) -> bool {
        self.is_nan(x) && x & (1 << (self.mbits - 1)) == 0
    }
}

/// An operand split into its class; finite nonzero values are `sig * 2^exp` exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val {
    Nan,
    Inf(bool),
    Zero(bool),
    Fin(Part),
}

/// A finite nonzero value `(-1)^sign * sig * 2^exp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    pub sign: bool,
    pub exp: i32,
    pub sig: u128,
}

pub fn unpack(f: Fmt, x: u64) -> Val {
    let (sign, e, m) = (f.sign(x), f.exp_field(x), f.mant(x));
    let min_exp = 1 - f.bias() - f.mbits as i32;
    match (e, m) {
        (0, 0) => Val::Zero(sign),
        (0, _) => Val::Fin(Part { sign, exp: min_exp, sig: m as u128 }),
        _ if e == f.emax_field() => {
            if m == 0 {
                Val::Inf(sign)
            } else {
                Val::Nan
            }
        }
        _ => Val::Fin(Part { sign, exp: min_exp + e as i32 - 1, sig: (m | 1 << f.mbits) as u128 }),
    }
}

/// NaN result of an operation on `ins`: the canonical NaN, NV if any input signals.
pub fn nan_result(f: Fmt, ins: &[u64], fl: &mut u8) -> u64 {
    if ins.iter().any(|&x| f.is_snan(x)) {
        *fl |= NV;
    }
    f.canonical_nan()
}

/// Invalid operation (e.g. inf - inf, 0 * inf): NV and the canonical NaN.
pub fn invalid(f: Fmt, fl: &mut u8) -> u64 {
    *fl |= NV;
    f.canonical_nan()
}

/// `sig >> sh` with every shifted-out bit ORed into bit 0 ("jamming"): enough to round
/// correctly as long as bit 0 stays below the rounding position's half bit.
pub fn shr_jam(sig: u128, sh: i32) -> u128 {
    match sh {
        i32::MIN..=0 => sig,
        1..=127 => (sig >> sh) | ((sig & ((1 << sh) - 1)) != 0) as u128,
        _ => (sig != 0) as u128,
    }
}

/// Split `sig` at bit `sh` (> 0): the integer part, how the remainder compares with one
/// half, and whether it is nonzero.
fn split(sig: u128, sh: i32) -> (u128, Ordering, bool) {
    match sh {
        1..=127 => {
            let rem = sig & ((1 << sh) - 1);
            (sig >> sh, rem.cmp(&(1 << (sh - 1))), rem != 0)
        }
        128 => (0, sig.cmp(&(1 << 127)), sig != 0),
        _ => (0, Ordering::Less, sig != 0),
    }
}

/// Whether rounding the magnitude away from truncation is required (spec table
/// "Rounding mode encoding"; RMM = ties away from zero).
fn round_up(rm: Rm, sign: bool, odd: bool, half: Ordering, inexact: bool) -> bool {
    match rm {
        Rm::Rne => half == Ordering::Greater || (half == Ordering::Equal && odd),
        Rm::Rtz => false,
        Rm::Rdn => inexact && sign,
        Rm::Rup => inexact && !sign,
        Rm::Rmm => half != Ordering::Less,
    }
}

/// `sig / 2^sh` rounded to an integer in mode `rm`; whether it was inexact. A negative
/// `sh` is an exact left shift (callers keep it in range).
pub fn round_shift(sig: u128, sh: i32, rm: Rm, sign: bool) -> (u128, bool) {
    if sh <= 0 {
        return (sig << -sh, false);
    }
    let (q, half, inexact) = split(sig, sh);
    (q + round_up(rm, sign, q & 1 == 1, half, inexact) as u128, inexact)
}

/// Overflow result (IEEE 754 7.4): infinity, or the largest finite value when the
/// rounding direction points back towards zero.
fn overflow(f: Fmt, sign: bool, rm: Rm, fl: &mut u8) -> u64 {
    *fl |= OF | NX;
    let to_inf = match rm {
        Rm::Rne | Rm::Rmm => true,
        Rm::Rtz => false,
        Rm::Rdn => sign,
        Rm::Rup => !sign,
    };
    if to_inf {
        f.inf(sign)
    } else {
        f.max_finite(sign)
    }
}

/// Tininess after rounding: would `p` rounded to the format's precision with an unbounded
/// exponent lie below the smallest normal? `lead` is the exponent of `p`'s top bit.
fn tiny_after_rounding(f: Fmt, p: Part, lead: i32, rm: Rm) -> bool {
    let (prec, emin) = (f.mbits as i32 + 1, 1 - f.bias());
    if lead != emin - 1 {
        return lead < emin;
    }
    let (q, _) = round_shift(p.sig, lead - (prec - 1) - p.exp, rm, p.sign);
    q >> prec == 0
}

/// Round the exact value `p` (or `p` with a sticky bit) to format `f`: the one place where
/// rounding, overflow, underflow and inexact are decided.
pub fn round_pack(f: Fmt, p: Part, rm: Rm, fl: &mut u8) -> u64 {
    if p.sig == 0 {
        return f.zero(p.sign);
    }
    let (prec, emin) = (f.mbits as i32 + 1, 1 - f.bias());
    let lead = p.exp + 127 - p.sig.leading_zeros() as i32;
    let mut lsb = (lead - (prec - 1)).max(emin - (prec - 1));
    let (mut q, inexact) = round_shift(p.sig, lsb - p.exp, rm, p.sign);
    if q >> prec != 0 {
        q >>= 1;
        lsb += 1;
    }
    if inexact {
        *fl |= NX;
        if lead < emin && tiny_after_rounding(f, p, lead, rm) {
            *fl |= UF;
        }
    }
    // A subnormal q (below 2^(prec-1)) has lsb = emin - prec + 1, so e = 1 and the sum
    // below is q itself; a q that rounded up to 2^(prec-1) lands in exponent field 1.
    let e = (lsb + prec - 1 + f.bias()) as u64;
    if q >> (prec - 1) != 0 && e >= f.emax_field() {
        return overflow(f, p.sign, rm, fl);
    }
    f.zero(p.sign) | (((e - 1) << f.mbits) + q as u64)
}

/// Move the top bit of a nonzero `p.sig` to bit 125, leaving headroom for one carry.
fn norm(p: Part) -> Part {
    let sh = p.sig.leading_zeros() as i32 - 2;
    Part { sign: p.sign, exp: p.exp - sh, sig: p.sig << sh }
}

/// Exact sum of two finite nonzero values, rounded once. Both are normalized to bit 125
/// and the smaller is shifted right with a sticky bit: when bits are lost (distance >= 2
/// here, since inputs have at most 106 significant bits), the sum keeps its top bit at
/// 124 or above, so the sticky bit stays far below the rounding position.
pub fn add_parts(f: Fmt, x: Part, y: Part, rm: Rm, fl: &mut u8) -> u64 {
    let (x, y) = (norm(x), norm(y));
    let (hi, lo) = if x.exp >= y.exp { (x, y) } else { (y, x) };
    let lo_sig = shr_jam(lo.sig, hi.exp - lo.exp);
    let sum = if hi.sign == lo.sign {
        Part { sign: hi.sign, exp: hi.exp, sig: hi.sig + lo_sig }
    } else if hi.sig >= lo_sig {
        Part { sign: hi.sign, exp: hi.exp, sig: hi.sig - lo_sig }
    } else {
        Part { sign: lo.sign, exp: hi.exp, sig: lo_sig - hi.sig }
    };
    if sum.sig == 0 {
        // Exact zero sum of opposite values: +0, or -0 when rounding down (IEEE 754 6.3).
        return f.zero(rm == Rm::Rdn);
    }
    round_pack(f, sum, rm, fl)
}

/// Sign of an exact zero sum of two zeros (IEEE 754 6.3).
fn zero_sum(f: Fmt, a: bool, b: bool, rm: Rm) -> u64 {
    f.zero(if a == b { a } else { rm == Rm::Rdn })
}

pub fn add(f: Fmt, a: u64, b: u64, rm: Rm, fl: &mut u8) -> u64 {
    match (unpack(f, a), unpack(f, b)) {
        (Val::Nan, _) | (_, Val::Nan) => nan_result(f, &[a, b], fl),
        (Val::Inf(x), Val::Inf(y)) if x != y => invalid(f, fl),
        (Val::Inf(s), _) | (_, Val::Inf(s)) => f.inf(s),
        (Val::Zero(x), Val::Zero(y)) => zero_sum(f, x, y, rm),
        (Val::Zero(_), _) => b,
        (_, Val::Zero(_)) => a,
        (Val::Fin(x), Val::Fin(y)) => add_parts(f, x, y, rm, fl),
    }
}

pub fn sub(f: Fmt, a: u64, b: u64, rm: Rm, fl: &mut u8) -> u64 {
    add(f, a, b ^ f.sign_bit(), rm, fl)
}

pub fn mul(f: Fmt, a: u64, b: u64, rm: Rm, fl: &mut u8) -> u64 {
    let sign = f.sign(a) != f.sign(b);
    match (unpack(f, a), unpack(f, b)) {
        (Val::Nan, _) | (_, Val::Nan) => nan_result(f, &[a, b], fl),
        (Val::Inf(_), Val::Zero(_)) | (Val::Zero(_), Val::Inf(_)) => invalid(f, fl),
        (Val::Inf(_), _) | (_, Val::Inf(_)) => f.inf(sign),
        (Val::Zero(_), _) | (_, Val::Zero(_)) => f.zero(sign),
        (Val::Fin(x), Val::Fin(y)) => round_pack(f, product(x, y), rm, fl),
    }
}

/// Exact product of two finite values (at most 2 x 53 = 106 bits).
fn product(x: Part, y: Part) -> Part {
    Part { sign: x.sign != y.sign, exp: x.exp + y.exp, sig: x.sig * y.sig }
}

/// Fused multiply-add `a * b + c` with one rounding (spec "Single-Precision Floating-Point
/// Computational Instructions"). `0 * inf + c` is invalid even when c is a quiet NaN, as
/// the spec requires.
pub fn fma(f: Fmt, a: u64, b: u64, c: u64, rm: Rm, fl: &mut u8) -> u64 {
    let (va, vb, vc) = (unpack(f, a), unpack(f, b), unpack(f, c));
    let inf_zero = matches!((va, vb), (Val::Inf(_), Val::Zero(_)) | (Val::Zero(_), Val::Inf(_)));
    if va == Val::Nan || vb == Val::Nan || inf_zero || vc == Val::Nan {
        let r = nan_result(f, &[a, b, c], fl);
        return if inf_zero { invalid(f, fl) } else { r };
    }
    let sp = f.sign(a) != f.sign(b);
    match (va, vb, vc) {
        (Val::Inf(_), _, _) | (_, Val::Inf(_), _) => inf_plus(f, sp, vc, fl),
        (_, _, Val::Inf(s)) => f.inf(s),
        (Val::Zero(_), _, _) | (_, Val::Zero(_), _) => add(f, f.zero(sp), c, rm, fl),
        (Val::Fin(x), Val::Fin(y), Val::Zero(_)) => round_pack(f, product(x, y), rm, fl),
        (Val::Fin(x), Val::Fin(y), Val::Fin(z)) => add_parts(f, product(x, y), z, rm, fl),
        _ => unreachable!("NaN operands handled above"),
    }
}

/// An infinite product plus `c`: invalid against the opposite infinity.
fn inf_plus(f: Fmt, sp: bool, c: Val, fl: &mut u8) -> u64 {
    match c {
        Val::Inf(s) if s != sp => invalid(f, fl),
        _ => f.inf(sp),
    }
}

pub fn div(f: Fmt, a: u64, b: u64, rm: Rm, fl: &mut u8) -> u64 {
    let sign = f.sign(a) != f.sign(b);
    match (unpack(f, a), unpack(f, b)) {
        (Val::Nan, _) | (_, Val::Nan) => nan_result(f, &[a, b], fl),
        (Val::Inf(_), Val::Inf(_)) | (Val::Zero(_), Val::Zero(_)) => invalid(f, fl),
        (Val::Inf(_), _) => f.inf(sign),
        (_, Val::Inf(_)) | (Val::Zero(_), _) => f.zero(sign),
        (Val::Fin(_), Val::Zero(_)) => {
            *fl |= DZ;
            f.inf(sign)
        }
        (Val::Fin(x), Val::Fin(y)) => round_pack(f, quotient(x, y), rm, fl),
    }
}

/// Quotient with at least 62 significant bits and a sticky bit for a nonzero remainder.
fn quotient(x: Part, y: Part) -> Part {
    let (x, y) = (norm(x), norm(y));
    let d = y.sig >> 62; // top bit at 63
    let (q, r) = (x.sig / d, x.sig % d);
    Part { sign: x.sign != y.sign, exp: x.exp - (y.exp + 62), sig: q | (r != 0) as u128 }
}

pub fn sqrt(f: Fmt, a: u64, rm: Rm, fl: &mut u8) -> u64 {
    match unpack(f, a) {
        Val::Nan => nan_result(f, &[a], fl),
        Val::Zero(_) => a, // sqrt(-0) = -0 (IEEE 754 5.4.1)
        Val::Inf(false) => a,
        Val::Inf(true) => invalid(f, fl),
        Val::Fin(x) if x.sign => invalid(f, fl),
        Val::Fin(x) => round_pack(f, root(x), rm, fl),
    }
}

/// Square root of a positive value: the radicand gets an even exponent and its top bit at
/// 124 or 125, so the integer root has 63 bits; a nonzero remainder becomes the sticky bit.
fn root(x: Part) -> Part {
    let x = norm(x);
    let (sig, exp) = if x.exp & 1 != 0 { (x.sig >> 1, x.exp + 1) } else { (x.sig, x.exp) };
    let r = isqrt(sig);
    Part { sign: false, exp: exp / 2, sig: r | (r * r != sig) as u128 }
}

/// Integer square root, one result bit per step (digit-by-digit method).
fn isqrt(n: u128) -> u128 {
    let (mut rem, mut root) = (n, 0u128);
    let mut bit = 1u128 << 126;
    while bit != 0 {
        if rem >= root + bit {
            rem -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    root
}
