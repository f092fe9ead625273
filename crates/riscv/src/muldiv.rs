//! M extension (RISC-V unprivileged spec chapter 13) and the timing of Rocket's iterative,
//! unpipelined multiply/divide unit: results are ready after a fixed latency and the next
//! M instruction waits until the unit is free.

use crate::core::Core;
use crate::op::{Kind, Op};

fn sext32(v: u64) -> u64 {
    v as i32 as i64 as u64
}

/// Division per spec 13.2: x/0 = all ones, x%0 = x, MIN/-1 = MIN, MIN%-1 = 0.
pub fn div(a: u64, b: u64) -> u64 {
    if b == 0 {
        u64::MAX
    } else {
        (a as i64).wrapping_div(b as i64) as u64
    }
}

pub fn rem(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        (a as i64).wrapping_rem(b as i64) as u64
    }
}

pub fn divw(a: u64, b: u64) -> u64 {
    if b as i32 == 0 {
        u64::MAX
    } else {
        (a as i32).wrapping_div(b as i32) as i64 as u64
    }
}

pub fn remw(a: u64, b: u64) -> u64 {
    if b as i32 == 0 {
        sext32(a)
    } else {
        (a as i32).wrapping_rem(b as i32) as i64 as u64
    }
}

/// Compute an M-extension result; `None` if `op` is not one.
pub fn compute(kind: Kind, a: u64, b: u64) -> Option<u64> {
    Some(match kind {
        Kind::Mul => a.wrapping_mul(b),
        Kind::Mulh => ((a as i64 as i128 * b as i64 as i128) >> 64) as u64,
        Kind::Mulhsu => ((a as i64 as i128).wrapping_mul(b as i128) >> 64) as u64,
        Kind::Mulhu => ((a as u128 * b as u128) >> 64) as u64,
        Kind::Div => div(a, b),
        Kind::Divu => a.checked_div(b).unwrap_or(u64::MAX),
        Kind::Rem => rem(a, b),
        Kind::Remu => a.checked_rem(b).unwrap_or(a),
        Kind::Mulw => sext32((a as u32).wrapping_mul(b as u32) as u64),
        Kind::Divw => divw(a, b),
        Kind::Divuw => sext32((a as u32).checked_div(b as u32).unwrap_or(u32::MAX) as u64),
        Kind::Remw => remw(a, b),
        Kind::Remuw => sext32((a as u32).checked_rem(b as u32).unwrap_or(a as u32) as u64),
        _ => return None,
    })
}

impl Core {
    fn muldiv_latency(&self, kind: Kind) -> u64 {
        match kind {
            Kind::Mul | Kind::Mulh | Kind::Mulhsu | Kind::Mulhu => self.t.mul_latency,
            Kind::Mulw => self.t.mulw_latency,
            Kind::Divw | Kind::Divuw | Kind::Remw | Kind::Remuw => self.t.divw_latency,
            _ => self.t.div_latency,
        }
    }

    /// Execute an M instruction (value and timing); `None` if `op` is not one.
    pub(crate) fn muldiv(&mut self, op: Op, a: u64, b: u64) -> Option<u64> {
        let v = compute(op.kind(), a, b)?;
        let issue = self.cycle - 1;
        if self.muldiv_free > issue {
            self.stats.stall_muldiv += self.muldiv_free - issue;
            self.cycle = self.muldiv_free + 1;
        }
        let done = self.cycle - 1 + self.muldiv_latency(op.kind());
        self.muldiv_free = done;
        self.ready[op.rd as usize] = done;
        self.ready_muldiv[op.rd as usize] = true;
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::compute;
    use crate::op::Kind::*;

    const MIN: u64 = i64::MIN as u64;
    const M1: u64 = u64::MAX; // -1

    #[test]
    fn division_edge_cases_follow_the_spec_table() {
        // Unprivileged spec 13.2, table 13.1.
        assert_eq!(compute(Div, 7, 0), Some(M1));
        assert_eq!(compute(Divu, 7, 0), Some(M1));
        assert_eq!(compute(Rem, 7, 0), Some(7));
        assert_eq!(compute(Remu, 7, 0), Some(7));
        assert_eq!(compute(Div, MIN, M1), Some(MIN));
        assert_eq!(compute(Rem, MIN, M1), Some(0));
        assert_eq!(compute(Div, (-7i64) as u64, 2), Some((-3i64) as u64));
        assert_eq!(compute(Rem, (-7i64) as u64, 2), Some((-1i64) as u64));
    }

    #[test]
    fn word_division_edge_cases() {
        let min32 = i32::MIN as u32 as u64;
        assert_eq!(compute(Divw, 5, 0), Some(M1));
        assert_eq!(compute(Divuw, 5, 0), Some(M1));
        assert_eq!(compute(Remw, 0xffff_ffff, 0), Some(M1)); // sign-extended dividend
        assert_eq!(compute(Remuw, 0x8000_0000, 0), Some(0xffff_ffff_8000_0000));
        assert_eq!(compute(Divw, min32, 0xffff_ffff), Some(i32::MIN as i64 as u64));
        assert_eq!(compute(Remw, min32, 0xffff_ffff), Some(0));
        assert_eq!(compute(Divuw, 0xffff_fffe, 2), Some(0x7fff_ffff));
    }

    #[test]
    fn high_multiplies() {
        assert_eq!(compute(Mulh, M1, M1), Some(0));
        assert_eq!(compute(Mulhu, M1, M1), Some(M1 - 1));
        assert_eq!(compute(Mulhsu, M1, M1), Some(M1));
        assert_eq!(compute(Mulw, 0x8000_0000, 2), Some(0));
        assert_eq!(compute(Mulw, 0x4000_0000, 2), Some(0xffff_ffff_8000_0000));
    }
}
