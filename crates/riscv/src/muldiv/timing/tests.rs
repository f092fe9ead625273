//! Cases traced by hand through `MulDiv` (Multiplier.scala at l-nic/rocket-chip 33813784;
//! "MS" line numbers as in the module's doc) with the prototype's parameters: mulUnroll 8,
//! both early outs. E is the cycle the instruction is in EX; the result is written at
//! max(E + busy + 1, E + 3) and a reader issues the cycle after, so latency = busy + 2, at
//! least 4.

use super::*;
use crate::op::Kind::*;

const P: MulDivParams = MulDivParams { mul_unroll: 8, mul_early_out: true, div_early_out: true };
/// A negative value's two's complement bits.
fn neg(v: i64) -> u64 {
    v as u64
}

fn lat(kind: Kind, a: u64, b: u64) -> u64 {
    latency(&P, kind, a, b).unwrap()
}

#[test]
fn the_defaults_are_the_prototypes_unit() {
    assert_eq!(MulDivParams::default(), P);
}

#[test]
fn multiply_by_zero_or_a_small_multiplier_ends_after_two_steps() {
    // s_mul at count 0 (no early out at 0), count 1: bits 8..63 of rs1 are zero, eOut.
    // s_done_mul at E + 3: latency 4. The multiplicand (rs2) does not matter.
    assert_eq!(lat(Mul, 0, u64::MAX), 4);
    assert_eq!(lat(Mul, 200, 12345), 4);
    // 0x1234: bits 8..63 hold 0x12, so count 1 goes on; count 2 sees zeros: 3 steps.
    assert_eq!(lat(Mul, 0x1234, 7), 5);
    // 48 significant bits: out at count 6 (7 steps); 49 bits: the full 8.
    assert_eq!(lat(Mul, (1 << 48) - 1, 3), 9);
    assert_eq!(lat(Mul, 1 << 48, 3), 10);
}

#[test]
fn a_negative_multiplier_takes_every_step() {
    // Two's complement: the high bits of -1 are ones, so no early out (counts 0..7).
    assert_eq!(lat(Mul, neg(-1), 2), 10);
    // rs2 negative, rs1 small: the early out looks at rs1 only.
    assert_eq!(lat(Mul, 2, neg(-1)), 4);
}

#[test]
fn high_halves_never_end_early() {
    // `!isHi` in the early-out condition (MS line 118): 8 steps whatever the operands.
    for k in [Mulh, Mulhu, Mulhsu] {
        assert_eq!(lat(k, 0, 0), 10, "{k:?}");
        assert_eq!(lat(k, neg(-1), neg(-1)), 10, "{k:?}");
    }
}

#[test]
fn mulw_starts_half_way_and_looks_at_the_low_word() {
    // fastMulW: count starts at 4 (MS line 168), the window is bits 0..31 of rs1.
    // Low word 0: out at count 4, s_done_mul at E + 2, held by the mulw's own WB: 4.
    assert_eq!(lat(Mulw, 0x1_0000_0000, 5), 4);
    // Low word 0xff with garbage above: count 4, out at count 5: 2 steps, 4.
    assert_eq!(lat(Mulw, 0xdead_beef_0000_00ff, 5), 4);
    // 0x1234: counts 4, 5 go on, out at 6: 3 steps, 5.
    assert_eq!(lat(Mulw, 0x1234, 5), 5);
    // -1 in 32 bits: counts 4..7, 6 (the fixed model's 32/8 + 2).
    assert_eq!(lat(Mulw, 0xffff_ffff, 5), 6);
}

#[test]
fn zero_divided_by_one_takes_three_steps_but_by_two_all() {
    // DIVU 0/1: both leading ones at bit 0 (Log2(0) = 0), eOutPos = ~0 = 63: count 0 jumps
    // to 63, then 63 and 64: 3 cycles in s_div, s_done_div at E + 4, latency 5.
    assert_eq!(lat(Divu, 0, 1), 5);
    // DIVU 0/2: 0 - 1 wraps to 63 in 6 bits, eOutPos = 0: no early out, counts 0..64.
    assert_eq!(lat(Divu, 0, 2), 67);
    // 0/8: 0 - 3 = 61, eOutPos 2: count 0, then 2..64 (63 cycles): 64 in s_div.
    assert_eq!(lat(Divu, 0, 8), 66);
}

#[test]
fn small_divided_by_large_skips_only_the_gap_minus_one() {
    // 3/4: leading ones 1 and 2, eOutPos 0: all 65 steps.
    assert_eq!(lat(Divu, 3, 4), 67);
    assert_eq!(lat(Remu, 3, 4), 67);
    // 1/2^63: 0 - 63 = 1 in 6 bits, eOutPos 62: counts 0, 62, 63, 64.
    assert_eq!(lat(Divu, 1, 1 << 63), 6);
    // 1/2^40: eOutPos 39: 1 + (64 - 39 + 1) = 27 steps.
    assert_eq!(lat(Divu, 1, 1 << 40), 29);
}

#[test]
fn large_divided_by_small_costs_the_quotient_bits() {
    // 1000/10: leading ones 9 and 3, eOutPos = 63 - 6 = 57: 1 + 8 = 9 steps.
    assert_eq!(lat(Divu, 1000, 10), 11);
    // Difference 61: eOutPos 2, 64 steps; 62: eOutPos 1, 65; 63: eOutPos 0, no early out, 65.
    assert_eq!(lat(Divu, 1 << 61, 1), 66);
    assert_eq!(lat(Divu, 1 << 62, 1), 67);
    assert_eq!(lat(Divu, u64::MAX, 1), 67);
}

#[test]
fn division_by_zero_takes_every_step() {
    // `divby0` blocks the early out (MS lines 146, 153): 65 steps.
    assert_eq!(lat(Divu, 5, 0), 67);
    assert_eq!(lat(Remu, 5, 0), 67);
    assert_eq!(lat(Divu, 0, 0), 67);
    // DIV -5/0: s_neg_inputs (the dividend is negative), and neg_out is cleared for a
    // quotient of a division by zero (line 159): 1 + 65.
    assert_eq!(lat(Div, neg(-5), 0), 68);
    // REM -5/0: the remainder keeps neg_out = the dividend's sign: 1 + 65 + 1.
    assert_eq!(lat(Rem, neg(-5), 0), 69);
}

#[test]
fn sign_fix_ups_add_a_cycle_each() {
    // s_neg_inputs if either operand is negative; s_neg_output if the quotient's sign
    // (signs differ) or the remainder's (the dividend's) is negative. Magnitudes 1000/10.
    assert_eq!(lat(Div, neg(-1000), 10), 13);
    assert_eq!(lat(Div, neg(-1000), neg(-10)), 12);
    assert_eq!(lat(Div, 1000, neg(-10)), 13);
    assert_eq!(lat(Rem, 1000, neg(-10)), 12);
    assert_eq!(lat(Rem, neg(-1000), 10), 13);
    // Unsigned forms never negate: 0xffff...fc18 is a large dividend (leading one 63),
    // difference 60, eOutPos 3: 1 + 62 steps.
    assert_eq!(lat(Divu, neg(-1000), 10), 65);
    // MIN / -1: magnitudes 2^63 and 1 (difference 63: no early out), same signs.
    assert_eq!(lat(Div, i64::MIN as u64, neg(-1)), 68);
}

#[test]
fn word_divisions_run_through_64_bits() {
    // The low words are extended to 64 bits (MS lines 78-86) and count still starts at 0:
    // DIVUW 0xffffffff/1 has a difference of 31, eOutPos 32: 1 + 33 steps.
    assert_eq!(lat(Divuw, 0xffff_ffff, 1), 36);
    // DIVW: 0xffffffff is -1: magnitude 1, 3 steps, both fix-ups.
    assert_eq!(lat(Divw, 0xffff_ffff, 1), 7);
    // Garbage above the low word is ignored.
    assert_eq!(lat(Divuw, 0xdead_0000_0000_0007, 7), 5);
    // A divisor whose low word is 0 divides by zero.
    assert_eq!(lat(Divw, 5, 0x1_0000_0000), 67);
    // REMW -7/2: fix-ups in and out, magnitudes 7/2 (difference 1, eOutPos 62): 4 steps.
    assert_eq!(lat(Remw, neg(-7), 2), 8);
    // Small by large as for 64 bits: 3/4 takes all 65 steps.
    assert_eq!(lat(Remuw, 3, 4), 67);
}

#[test]
fn without_early_outs_the_latencies_are_fixed() {
    let p = MulDivParams { mul_early_out: false, div_early_out: false, ..P };
    assert_eq!(latency(&p, Mul, 0, 0), Some(10));
    assert_eq!(latency(&p, Mulw, 0, 0), Some(6));
    assert_eq!(latency(&p, Divu, 1000, 10), Some(67));
    assert_eq!(latency(&p, Div, neg(-1000), 10), Some(69));
}

#[test]
fn other_unrolls_follow_the_same_counts() {
    // mulUnroll 4: 16 counts; mulw starts at 8. 0x1234 (13 bits) is out once 4 steps have
    // retired 16 bits: at count 4 (mul) or 12 (mulw), the fifth cycle either way.
    let p = MulDivParams { mul_unroll: 4, ..P };
    assert_eq!(mul_cycles(&p, Mul, u64::MAX), 16);
    assert_eq!(mul_cycles(&p, Mul, 0x1234), 5);
    assert_eq!(mul_cycles(&p, Mulw, 0x1234), 5);
    assert_eq!(mul_cycles(&p, Mulw, 0xf), 2);
    // mulUnroll 32: counts 0 and 1 only, which the early out never takes; no fastMulW.
    let p = MulDivParams { mul_unroll: 32, ..P };
    assert_eq!(mul_cycles(&p, Mul, 0), 2);
    assert_eq!(mul_cycles(&p, Mulw, 0), 2);
}

#[test]
fn only_m_instructions_have_a_latency() {
    assert_eq!(latency(&P, Add, 1, 2), None);
    assert_eq!(div_cycles(&P, Mul, 1, 2), None);
}

/// `s_div` bit by bit (MS lines 129-158, divUnroll 1) on non-negative operands: the
/// 129-bit `remainder` as (bits 128..64, bits 63..0). Returns (quotient, remainder).
fn s_div(dividend: u64, divisor: u64) -> (u64, u64) {
    let (mut hi, mut lo): (u128, u64) = (0, dividend);
    let mut count = 0;
    if divisor != 0 && P.div_early_out {
        let skipped = div_steps(&P, dividend, divisor);
        if skipped < W + 1 {
            let pos = W + 2 - skipped; // eOutPos: `remainder := remainder(w-1,0) << eOutPos`
            let wide = (dividend as u128) << pos;
            (hi, lo, count) = (wide >> 64, wide as u64, pos);
        }
    }
    while count <= W {
        let diff = hi as i128 - divisor as i128;
        let less = diff < 0;
        let keep = if less { hi as u64 } else { diff as u64 };
        hi = ((keep as u128) << 1) | (lo >> 63) as u128;
        lo = (lo << 1) | !less as u64;
        count += 1;
    }
    (lo, (hi >> 1) as u64)
}

#[test]
fn the_early_out_skips_only_zero_quotient_bits() {
    // Whatever jump the formula takes, the bit-level divider still divides: a formula that
    // skipped a step producing a quotient bit (eOutPos two larger, say) fails here.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..20_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (a, b) = (x >> (x % 64), (x.rotate_left(17)) >> ((x >> 6) % 63 + (i % 2) as u64));
        if b == 0 {
            continue;
        }
        assert_eq!(s_div(a, b), (a / b, a % b), "{a:#x} / {b:#x}");
    }
    for (a, b) in [(0, 2), (3, 4), (1, 1 << 63), (u64::MAX, 1), (1 << 62, 1), (0, 1)] {
        assert_eq!(s_div(a, b), (a / b, a % b), "{a:#x} / {b:#x}");
    }
}

#[test]
fn latencies_stay_within_the_units_bounds() {
    let kinds = [Mul, Mulh, Mulhsu, Mulhu, Mulw, Div, Divu, Rem, Remu, Divw, Divuw, Remw, Remuw];
    let vals = [0, 1, 2, 3, 0x7f, 0xffff_ffff, 1 << 31, 1 << 63, u64::MAX, neg(-2), 0x1234_5678_9abc];
    for k in kinds {
        for a in vals {
            for b in vals {
                let l = lat(k, a, b);
                assert!((4..=69).contains(&l), "{k:?} {a:#x} {b:#x}: {l}");
            }
        }
    }
}
