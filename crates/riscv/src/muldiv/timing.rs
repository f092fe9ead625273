//! How long Rocket's iterative multiply/divide unit (`MulDiv`) takes for given operands, as
//! the nanoPU prototype's cores configure it: a pure function of the instruction and its two
//! source values, so that any executor (the interpreter's `Core::muldiv`, a block engine)
//! can call it as a hook.
//!
//! Source, cited by line below: l-nic/rocket-chip at 33813784 (the `generators/rocket-chip`
//! submodule of l-nic/chipyard branch `lnic-dev`), `src/main/scala/rocket/Multiplier.scala`
//! ("MS") and `src/main/scala/rocket/RocketCore.scala` ("RC"). The prototype's
//! `LNICQuadRocketConfig` builds its cores with `WithNBigCores(4)` (chipyard
//! `generators/chipyard/src/main/scala/config/RocketConfigs.scala` line 407), whose
//! `MulDivParams(mulUnroll = 8, mulEarlyOut = true, divEarlyOut = true)` (rocket-chip
//! `src/main/scala/subsystem/Configs.scala` lines 52-55) are [`MulDivParams`]' defaults.
//! Every M instruction goes through this unit: with `mulUnroll` below 64 there is no
//! pipelined multiplier (RC line 157, `MDecode` in `IDecode.scala` lines 190-203).
//!
//! Cycle by cycle, for an M instruction in EX at cycle E (RC lines 422-428: `in1` = rs1,
//! `in2` = rs2):
//! - E: the request fires (MS lines 164-173) if the unit is in `s_ready`; the state becomes
//!   `s_mul`, or `s_neg_inputs` for a division with a negative signed operand, else `s_div`.
//! - `s_neg_inputs` (MS 92-100), one cycle: negates the negative operands.
//! - `s_mul` (MS 106-128) or `s_div` (MS 129-160): [`mul_cycles`], [`div_cycles`].
//! - `s_neg_output` (MS 101-105), one cycle: negates a quotient or remainder whose sign
//!   differs from the magnitudes'.
//! - `s_done_mul`/`s_done_div` (MS 180): the response is valid and is written to the
//!   register file in the first such cycle in which the instruction in WB writes no integer
//!   register (`div.io.resp.ready := !wb_wxd`, RC lines 651, 665-668). The M instruction
//!   itself is in WB at E + 2, so the write is at E + 3 at the earliest. That cycle the unit
//!   returns to `s_ready` (MS 161-163), a waiting M instruction leaves ID (RC 792), and a
//!   reader of the result in ID takes the value from the register file's write bypass (RC
//!   lines 1041-1043; the scoreboard is cleared the same cycle, RC 737-741): it issues the
//!   cycle after the write.
//!
//! Other instructions holding the write port later than E + 2 are the caller's business
//! (`Core::muldiv_port_taken`): they depend on what else is in the pipeline.

use crate::op::Kind;
use crate::params::MulDivParams;

/// The unit's operand width on RV64 (`w` in MS line 46).
const W: u64 = 64;
/// Quotient bits per `s_div` cycle (`divUnroll`): 1, the `MulDivParams` default (MS line
/// 34) that `WithNBigCores` leaves; `divEarlyOutGranularity` likewise 1 (MS line 37).
const DIV_UNROLL: u64 = 1;
/// Cycles from EX to the M instruction's own WB stage (Rocket's five stages), when its
/// `wb_wxd` keeps the unit's response from being written (RC lines 651, 665).
const OWN_WB: u64 = 2;

/// Cycles from an M instruction's issue (EX) until an instruction reading its result can
/// issue, when nothing else holds the write port; `None` if `kind` is not an M instruction.
/// `a`, `b` are the values of rs1 and rs2.
pub fn latency(p: &MulDivParams, kind: Kind, a: u64, b: u64) -> Option<u64> {
    let busy = match kind {
        Kind::Mul | Kind::Mulh | Kind::Mulhsu | Kind::Mulhu | Kind::Mulw => mul_cycles(p, kind, a),
        _ => div_cycles(p, kind, a, b)?,
    };
    // Done state at E + busy + 1, written at E + 3 at the earliest, read the cycle after.
    Some((busy + 1).max(OWN_WB + 1) + 1)
}

/// Cycles in `s_mul` (MS lines 106-128). `count` starts at 0, or at half its range for
/// `mulw` (`fastMulW`, MS lines 48, 168); each cycle retires `mul_unroll` bits of the
/// multiplier (rs1) and the last count ends it (line 124). The early out (lines 116-118)
/// ends it at a count other than 0 and the last when the multiplier bits not yet retired
/// are all zero; never for the high halves (`!isHi`), whose sign handling needs every step
/// (the sign enters as a ninth bit in the last step, lines 112-114: no extra cycle).
pub fn mul_cycles(p: &MulDivParams, kind: Kind, a: u64) -> u64 {
    let u = p.mul_unroll as u64;
    let last = W / u - 1;
    let fast_w = W / 2 > u && W.is_multiple_of(2 * u);
    let first = if kind == Kind::Mulw && fast_w { W / u / 2 } else { 0 };
    let high = matches!(kind, Kind::Mulh | Kind::Mulhsu | Kind::Mulhu);
    let exit = if p.mul_early_out && !high { early_mul_exit(u, first, last, a) } else { last };
    exit - first + 1
}

/// The count at which the early out fires: the multiplier's bits below `W - first * u` (the
/// window `eOutMask` leaves) are retired `u` at a time; once the rest are zero it stops.
fn early_mul_exit(u: u64, first: u64, last: u64, a: u64) -> u64 {
    let window = W - first * u;
    let v = if window == W { a } else { a & ((1 << window) - 1) };
    let bits = W - v.leading_zeros() as u64;
    (first + bits.div_ceil(u)).max(1).min(last)
}

/// Cycles from `s_neg_inputs` to the last cycle before `s_done_div`; `None` if `kind` is not
/// a division or remainder.
pub fn div_cycles(p: &MulDivParams, kind: Kind, a: u64, b: u64) -> Option<u64> {
    use Kind::*;
    let (half, signed, rem) = match kind {
        Div => (false, true, false),
        Divu => (false, false, false),
        Rem => (false, true, true),
        Remu => (false, false, true),
        Divw => (true, true, false),
        Divuw => (true, false, false),
        Remw => (true, true, true),
        Remuw => (true, false, true),
        _ => return None,
    };
    let (lhs, lhs_neg) = extend(a, half, signed);
    let (rhs, rhs_neg) = extend(b, half, signed);
    let by_zero = rhs == 0;
    // `neg_out` (MS line 169): the remainder takes the dividend's sign, the quotient the
    // product of both; a quotient of a division by zero is all ones and stays so (line 159).
    let neg_out = if rem { lhs_neg } else { lhs_neg != rhs_neg && !by_zero };
    let dividend = if lhs_neg { lhs.wrapping_neg() } else { lhs };
    let divisor = if rhs_neg { rhs.wrapping_neg() } else { rhs };
    let neg_in = (lhs_neg || rhs_neg) as u64;
    Some(neg_in + div_steps(p, dividend, divisor) + neg_out as u64)
}

/// The operand as the unit takes it (`sext`, MS lines 78-86): a W form's low half sign- or
/// zero-extended, so that a W division runs through all 64 bits like a 64-bit one; and
/// whether it is negative.
fn extend(x: u64, half: bool, signed: bool) -> (u64, bool) {
    if half {
        let neg = signed && (x as i32) < 0;
        (if neg { x as i32 as i64 as u64 } else { x as u32 as u64 }, neg)
    } else {
        (x, signed && (x as i64) < 0)
    }
}

/// Cycles in `s_div` (MS lines 129-160) for non-negative operands: `count` runs from 0 to
/// `W / DIV_UNROLL`, one cycle each (lines 138-144). At count 0 the early out (lines 147-158)
/// moves straight to count `eOutPos`, the complement of the 6-bit difference of the
/// dividend's and the divisor's leading one (`Log2`, 0 for 0): the quotient bits the
/// leading zeros rule out. The difference wraps when the divisor's leading one is the
/// higher, so such a division skips only `msb(divisor) - msb(dividend) - 1` steps (3 / 4
/// and 0 / 2 skip none; rocket-chip issue 3727 reports the same). Never for a division by
/// zero (`divby0`, line 146).
pub fn div_steps(p: &MulDivParams, dividend: u64, divisor: u64) -> u64 {
    let full = W / DIV_UNROLL + 1;
    if !p.div_early_out || divisor == 0 {
        return full;
    }
    let msb = |x: u64| (W - 1).saturating_sub(x.leading_zeros() as u64);
    let pos = !msb(dividend).wrapping_sub(msb(divisor)) & (W - 1);
    if pos >= DIV_UNROLL {
        1 + (W / DIV_UNROLL - pos / DIV_UNROLL + 1)
    } else {
        full
    }
}

#[cfg(test)]
mod tests;
