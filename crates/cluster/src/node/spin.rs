//! Recognising `lnic_wait()`'s spin loop, so an idle core can park instead of spinning.
//!
//! The loops are found once, when the program is loaded; a read of `lmsgsrdy` that returns
//! 0 from one of them makes the core yield (see `platform`) and the event loop parks it.
//! `while (lmsgsrdy == 0) {}` compiles to `csrr rd, lmsgsrdy; beqz rd, <the csrr>`. Such a
//! loop has no effect but time passing, so parking the core until a word is readable in its
//! current context, then resuming at the `csrr` (which now reads non-zero), gives the same
//! architectural result and the same time the loop would exit, without simulating the
//! iterations. The cycles are charged as netRX stall; the skipped iterations are not counted
//! as retired instructions. Any other polling loop is simulated as written.

use nanopu_riscv::{NodeMem, Program};

const LMSGSRDY: u32 = 0x052;

fn read_u32(mem: &NodeMem, addr: u64) -> Option<u32> {
    let mut b = [0u8; 4];
    mem.read(addr, &mut b).ok()?;
    Some(u32::from_le_bytes(b))
}

/// `csrrs rd, lmsgsrdy, x0` (the `csrr` pseudo-instruction): its rd, if `insn` is one.
fn csrr_lmsgsrdy(insn: u32) -> Option<u32> {
    let rd = (insn >> 7) & 31;
    let is = insn & 0x7f == 0x73 && (insn >> 12) & 7 == 2 && (insn >> 15) & 31 == 0 && insn >> 20 == LMSGSRDY;
    (is && rd != 0).then_some(rd)
}

/// Offset of `beq rd, x0` / `beq x0, rd` (RISC-V unprivileged spec 2.5, B-type immediate).
fn beqz_offset(insn: u32, rd: u32) -> Option<i64> {
    let (rs1, rs2) = ((insn >> 15) & 31, (insn >> 20) & 31);
    if insn & 0x7f != 0x63 || (insn >> 12) & 7 != 0 || !((rs1 == rd && rs2 == 0) || (rs1 == 0 && rs2 == rd)) {
        return None;
    }
    let imm = ((insn >> 31) & 1) << 12
        | ((insn >> 7) & 1) << 11
        | ((insn >> 25) & 0x3f) << 5
        | ((insn >> 8) & 0xf) << 1;
    Some(((imm << 19) as i32 >> 19) as i64)
}

/// Offset of `c.beqz rd'` (RISC-V unprivileged spec 16.6, CB format).
fn c_beqz_offset(insn: u16, rd: u32) -> Option<i64> {
    let i = insn as u32;
    if i & 3 != 1 || i >> 13 != 6 || !(8..16).contains(&rd) || ((i >> 7) & 7) + 8 != rd {
        return None;
    }
    let imm = ((i >> 12) & 1) << 8
        | ((i >> 5) & 3) << 6
        | ((i >> 2) & 1) << 5
        | ((i >> 10) & 3) << 3
        | ((i >> 3) & 3) << 1;
    Some(((imm << 23) as i32 >> 23) as i64)
}

/// Is the instruction at `pc` the `csrr` of a pure `lmsgsrdy` spin loop?
pub fn is_ready_spin(mem: &NodeMem, pc: u64) -> bool {
    let Some(rd) = read_u32(mem, pc).and_then(csrr_lmsgsrdy) else {
        return false;
    };
    let Some(next) = read_u32(mem, pc + 4) else {
        return false;
    };
    let off = if next & 3 == 3 { beqz_offset(next, rd) } else { c_beqz_offset(next as u16, rd) };
    off == Some(-4)
}

/// Every `lnic_wait()` spin `csrr` in the program's code, sorted (found once at load).
pub fn spin_pcs(mem: &NodeMem, program: &Program) -> Vec<u64> {
    let code = program.code_ranges().flat_map(|(base, len)| (base..base + len).step_by(2));
    code.filter(|&pc| is_ready_spin(mem, pc)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_spin_idiom() {
        // csrr a5, 0x052 ; beqz a5, -4 ; c.beqz a5, -4 (as assembled by GNU as)
        assert_eq!(csrr_lmsgsrdy(0x052027f3), Some(15));
        assert_eq!(beqz_offset(0xfe078ee3, 15), Some(-4));
        assert_eq!(c_beqz_offset(0xdff5, 15), Some(-4));
        assert_eq!(beqz_offset(0xfe078ee3, 14), None);
        assert_eq!(csrr_lmsgsrdy(0x053027f3), None);
    }
}
