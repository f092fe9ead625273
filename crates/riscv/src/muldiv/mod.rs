//! M extension (RISC-V unprivileged spec chapter 13) and the timing of Rocket's iterative,
//! unpipelined multiply/divide unit: a result is ready after its operand-dependent latency
//! (`muldiv/timing.rs`), later if other instructions hold the register file's write port
//! then, and the next M instruction waits until the unit is free.

use crate::core::Core;
pub mod timing;

use crate::op::{Kind, Op};
use timing::latency;

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

/// Whether `kind` is an M-extension instruction (one `compute` gives a value for).
pub fn is_muldiv(kind: Kind) -> bool {
    use Kind::*;
    matches!(kind, Mul | Mulh | Mulhsu | Mulhu | Div | Divu | Rem | Remu | Mulw | Divw | Divuw | Remw | Remuw)
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
    /// Execute an M instruction (value and timing); `None` if `op` is not one.
    pub(crate) fn muldiv(&mut self, op: Op, a: u64, b: u64) -> Option<u64> {
        let v = compute(op.kind(), a, b)?;
        let lat = latency(&self.t.muldiv, op.kind(), a, b)?;
        let issue = self.cycle - 1;
        if self.muldiv_free > issue {
            self.stats.stall_muldiv += self.muldiv_free - issue;
            self.cycle = self.muldiv_free + 1;
        }
        let ready = self.cycle - 1 + lat;
        self.muldiv_watch = ready - 2;
        self.muldiv_free = ready;
        self.muldiv_rd = op.rd;
        self.ready[op.rd as usize] = ready;
        self.ready_muldiv[op.rd as usize] = true;
        Some(v)
    }

    /// `op`, issuing now, is in WB two cycles later, when the unit's result is due: if it
    /// writes an integer register the result waits a cycle (`div.io.resp.ready :=
    /// !wb_wxd`, RocketCore.scala lines 651, 665 at l-nic/rocket-chip 33813784), and with it
    /// its readers and the next M instruction (line 792).
    #[cold]
    pub(crate) fn muldiv_port_taken(&mut self, op: Op) {
        if !holds_write_port(op) {
            return;
        }
        let rd = self.muldiv_rd as usize;
        if self.ready[rd] == self.muldiv_free {
            self.ready[rd] += 1;
        }
        self.muldiv_watch += 1;
        self.muldiv_free += 1;
    }
}

/// Whether `op` occupies the write port in WB (Rocket's decode bit `wxd`): everything but
/// branches, stores, fences, `ecall`/`ebreak`/`mret`/`wfi` and F/D instructions with no
/// integer result. An M instruction never gets there while the unit is busy (it waits in
/// ID); a `Net` op is judged when `exec_net` runs the instruction it stands for. An F/D
/// instruction is judged before it waits for its f-register operands (a cycle early if it
/// does).
fn holds_write_port(op: Op) -> bool {
    use Kind::*;
    match op.kind() {
        Beq | Bne | Blt | Bge | Bltu | Bgeu | Sb | Sh | Sw | Sd => false,
        Fence | FenceI | Ecall | Ebreak | Mret | Wfi | Illegal | FetchFault | Net => false,
        k if is_muldiv(k) => false,
        Fp => op.rd != crate::op::SINK,
        _ => true,
    }
}

#[cfg(test)]
mod core_tests {
    use crate::asm::{self, reg::*};
    use crate::testing::Bench;
    use crate::Exit;

    const FENCE: u32 = 0x0ff0_000f;

    fn mul(rd: u32, rs1: u32, rs2: u32) -> u32 {
        asm::r(1, rs2, rs1, 0, rd, 0x33)
    }

    /// Cycles the M-result stalls cost when `window` runs with a1 = `a`, a2 = `b`. The
    /// window starts a fresh 64-byte line and fits in it, so no fetch miss falls inside.
    fn muldiv_stalls(a: u64, b: u64, window: &[u32]) -> u64 {
        let mut code = asm::li64(A1, a);
        code.extend(asm::li64(A2, b));
        while !code.len().is_multiple_of(16) {
            code.push(asm::addi(ZERO, ZERO, 0));
        }
        assert!(window.len() <= 16);
        code.extend(window);
        code.extend(asm::exit_with(A0));
        let mut bench = Bench::new(&code, false);
        assert!(matches!(bench.run(1_000_000), Exit::Halted(_)));
        bench.core.stats().stall_muldiv
    }

    #[test]
    fn a_reader_waits_for_the_operand_dependent_latency() {
        let use_it = asm::add(A4, A3, A3);
        // mul with a multiplier of -1: 8 steps, latency 10; of 3: latency 4.
        assert_eq!(muldiv_stalls(u64::MAX, 3, &[mul(A3, A1, A2), use_it]), 9);
        assert_eq!(muldiv_stalls(3, u64::MAX, &[mul(A3, A1, A2), use_it]), 3);
        // divu 1000 / 10: latency 11 (muldiv/timing tests).
        let divu = asm::r(1, A2, A1, 5, A3, 0x33);
        assert_eq!(muldiv_stalls(1000, 10, &[divu, use_it]), 10);
        // The next M instruction waits for the unit the same way.
        assert_eq!(muldiv_stalls(u64::MAX, 3, &[mul(A3, A1, A2), mul(A5, A2, A2)]), 9);
    }

    #[test]
    fn instructions_writing_registers_in_wb_hold_the_result_back() {
        // mul (latency 10) at E: its result is due in the register file at E + 9. The
        // instructions issued at E + 7 and E + 8 are in WB at E + 9 and E + 10: each that
        // writes a register pushes the result a cycle. The reader issues at E + 9.
        let mut window = vec![mul(A3, A1, A2)];
        window.extend((0..8).map(|_| asm::addi(T0, T0, 1)));
        window.push(asm::add(A4, A3, A3));
        assert_eq!(muldiv_stalls(u64::MAX, 3, &window), 3);
        // A fence (no register written) in the second slot: one push.
        window[8] = FENCE;
        assert_eq!(muldiv_stalls(u64::MAX, 3, &window), 2);
        // Fences in both: the result comes at E + 9, the reader waits one cycle.
        window[7] = FENCE;
        assert_eq!(muldiv_stalls(u64::MAX, 3, &window), 1);
    }
}

#[cfg(test)]
mod tests {
    use super::compute;
    use crate::op::Kind::*;

    const MIN: u64 = i64::MIN as u64;
    const M1: u64 = u64::MAX; // -1

    /// `Kind::is_muldiv` (which `exec_other` asks before `muldiv`) names exactly the kinds
    /// `compute` has a value for.
    #[test]
    fn is_muldiv_names_the_kinds_compute_takes() {
        for code in 0..=crate::op::Kind::Fp as u8 {
            // SAFETY: `Kind` is repr(u8) with variants numbered 0 to `Fp` in a row.
            let k = unsafe { std::mem::transmute::<u8, crate::op::Kind>(code) };
            assert_eq!(k.is_muldiv(), compute(k, 6, 3).is_some(), "{k:?}");
        }
    }

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
