//! The executor: one `match` over decoded ops (RISC-V unprivileged spec chapters 2 "RV32I",
//! 4 "RV64I", 7 "M"; F/D in `fpu.rs`), with the timing of an in-order single-issue pipeline folded in:
//! one cycle per instruction, scoreboard stalls for load-use and mul/div results, branch
//! mispredict penalties and cache-miss stalls (charged in `lsu.rs` and `fetch.rs`).

use crate::core::{Core, Ex};
use crate::mem::NodeMem;
use crate::op::{Kind, Op, NREGS, SINK};
use crate::platform::Platform;

const ECALL_M: u64 = 11;
const BREAKPOINT: u64 = 3;

fn sext32(v: u64) -> u64 {
    v as i32 as i64 as u64
}

/// The IceNIC cores' byte swap of the low 2, 4 or 8 bytes (`width` 0, 1, 2), zero-extended.
fn bswap(width: i32, v: u64) -> u64 {
    match width {
        0 => (v as u16).swap_bytes() as u64,
        1 => (v as u32).swap_bytes() as u64,
        _ => v.swap_bytes(),
    }
}

/// Is `kind` one `alu` computes? (RV64I's OP, OP-IMM, OP-32, OP-IMM-32, LUI, AUIPC: two
/// runs of `Kind`.)
#[inline(always)]
pub(crate) fn is_alu(kind: Kind) -> bool {
    let k = kind as u8;
    (Kind::Lui as u8..=Kind::Auipc as u8).contains(&k) || (Kind::Addi as u8..=Kind::Sraw as u8).contains(&k)
}

/// The value of a register-to-register or immediate integer instruction (RV64I's OP, OP-IMM,
/// OP-32, OP-IMM-32, LUI, AUIPC) at `pc`, or `None` for any other kind: the semantics both
/// engines execute (`exec` here, the fast engine in `fast.rs`).
#[inline(always)]
pub(crate) fn alu(kind: Kind, a: u64, b: u64, imm: u64, pc: u64) -> Option<u64> {
    Some(match kind {
        Kind::Lui => imm,
        Kind::Auipc => pc.wrapping_add(imm),
        Kind::Addi => a.wrapping_add(imm),
        Kind::Slti => ((a as i64) < (imm as i64)) as u64,
        Kind::Sltiu => (a < imm) as u64,
        Kind::Xori => a ^ imm,
        Kind::Ori => a | imm,
        Kind::Andi => a & imm,
        Kind::Slli => a << (imm & 63),
        Kind::Srli => a >> (imm & 63),
        Kind::Srai => ((a as i64) >> (imm & 63)) as u64,
        Kind::Add => a.wrapping_add(b),
        Kind::Sub => a.wrapping_sub(b),
        Kind::Sll => a << (b & 63),
        Kind::Slt => ((a as i64) < (b as i64)) as u64,
        Kind::Sltu => (a < b) as u64,
        Kind::Xor => a ^ b,
        Kind::Srl => a >> (b & 63),
        Kind::Sra => ((a as i64) >> (b & 63)) as u64,
        Kind::Or => a | b,
        Kind::And => a & b,
        Kind::Addiw => sext32(a.wrapping_add(imm)),
        Kind::Slliw => sext32(((a as u32) << (imm & 31)) as u64),
        Kind::Srliw => sext32(((a as u32) >> (imm & 31)) as u64),
        Kind::Sraiw => ((a as i32) >> (imm & 31)) as i64 as u64,
        Kind::Addw => sext32(a.wrapping_add(b)),
        Kind::Subw => sext32(a.wrapping_sub(b)),
        Kind::Sllw => sext32(((a as u32) << (b & 31)) as u64),
        Kind::Srlw => sext32(((a as u32) >> (b & 31)) as u64),
        Kind::Sraw => ((a as i32) >> (b & 31)) as i64 as u64,
        _ => return None,
    })
}

impl Core {
    /// Integer register slot `i` of a decoded op (x0..x31, SINK, RX1, RX2: op.rs).
    #[inline(always)]
    pub(crate) fn slot(&self, i: u8) -> u64 {
        debug_assert!((i as usize) < NREGS);
        // SAFETY: every op comes from `decode_parcels` (or is `FetchFault`'s, on SINK),
        // whose register fields are below NREGS (op.rs); `bind_rx` sets RX1 and RX2 only.
        // The bounds checks this spares were a tenth of the interpreter's common path.
        unsafe { *self.x.get_unchecked(i as usize) }
    }

    #[inline(always)]
    pub(crate) fn set_slot(&mut self, i: u8, v: u64) {
        debug_assert!((i as usize) < NREGS);
        // SAFETY: as in `slot`.
        unsafe { *self.x.get_unchecked_mut(i as usize) = v }
    }

    /// Wait for source operands (scoreboard), charging the stall to its producer's kind.
    #[inline(always)]
    pub(crate) fn stall_for(&mut self, rs1: u8, rs2: u8) {
        debug_assert!((rs1 as usize) < NREGS && (rs2 as usize) < NREGS);
        // SAFETY: register fields of a decoded op, as in `slot`.
        let r =
            unsafe { (*self.ready.get_unchecked(rs1 as usize)).max(*self.ready.get_unchecked(rs2 as usize)) };
        if r > self.cycle {
            self.stall(r, rs1 as usize, rs2 as usize);
        }
    }

    #[cold]
    pub(crate) fn stall(&mut self, r: u64, rs1: usize, rs2: usize) {
        let src = if self.ready[rs1] == r { rs1 } else { rs2 };
        let d = r - self.cycle;
        if self.ready_muldiv[src] {
            self.stats.stall_muldiv += d;
        } else {
            self.stats.stall_load_use += d;
        }
        self.cycle = r;
    }

    /// `exec`'s prologue: wait for the operands, take the issue cycle, count the
    /// instruction, and apply the mul/div write-port rule (`muldiv_port_taken`).
    #[inline(always)]
    pub(crate) fn issue_op(&mut self, op: Op) {
        self.stall_for(op.rs1, op.rs2);
        self.issue_waited(op);
    }

    /// `issue_op` once the operands are ready: for `exec_net`, which waits for them
    /// before its platform calls.
    #[inline(always)]
    pub(crate) fn issue_waited(&mut self, op: Op) {
        self.cycle += 1;
        self.stats.instret += 1;
        if self.cycle == self.muldiv_watch {
            self.muldiv_port_taken(op);
        }
    }

    /// Execute one instruction at `self.pc`.
    #[inline(always)]
    pub(crate) fn exec<P: Platform>(&mut self, op: Op, mem: &mut NodeMem, plat: &mut P) -> Result<(), Ex> {
        self.issue_op(op);
        let (a, b) = (self.slot(op.rs1), self.slot(op.rs2));
        let imm = op.imm as i64 as u64;
        let next = self.pc.wrapping_add(op.len() as u64);
        let v = match op.kind() {
            Kind::Lb => self.load_op::<1, P>(mem, plat, op, a.wrapping_add(imm))? as i8 as u64,
            Kind::Lh => self.load_op::<2, P>(mem, plat, op, a.wrapping_add(imm))? as i16 as u64,
            Kind::Lw => sext32(self.load_op::<4, P>(mem, plat, op, a.wrapping_add(imm))?),
            Kind::Ld => self.load_op::<8, P>(mem, plat, op, a.wrapping_add(imm))?,
            Kind::Lbu => self.load_op::<1, P>(mem, plat, op, a.wrapping_add(imm))?,
            Kind::Lhu => self.load_op::<2, P>(mem, plat, op, a.wrapping_add(imm))?,
            Kind::Lwu => self.load_op::<4, P>(mem, plat, op, a.wrapping_add(imm))?,
            Kind::Sb => return self.int_store::<1, P>(mem, plat, a.wrapping_add(imm), b, next),
            Kind::Sh => return self.int_store::<2, P>(mem, plat, a.wrapping_add(imm), b, next),
            Kind::Sw => return self.int_store::<4, P>(mem, plat, a.wrapping_add(imm), b, next),
            Kind::Sd => return self.int_store::<8, P>(mem, plat, a.wrapping_add(imm), b, next),
            Kind::Beq => return self.branch(op, a == b, next),
            Kind::Bne => return self.branch(op, a != b, next),
            Kind::Blt => return self.branch(op, (a as i64) < (b as i64), next),
            Kind::Bge => return self.branch(op, (a as i64) >= (b as i64), next),
            Kind::Bltu => return self.branch(op, a < b, next),
            Kind::Bgeu => return self.branch(op, a >= b, next),
            Kind::Jal => return self.jal(op, next),
            Kind::Jalr => return self.jalr(op, a, next),
            k => match alu(k, a, b, imm, self.pc) {
                Some(v) => v,
                None => return self.exec_rare(op, mem, plat, a, b),
            },
        };
        self.set_slot(op.rd, v);
        self.pc = next;
        Ok(())
    }

    /// Mul/div, system, atomics, the nanoPU register instructions, and the slow paths.
    /// The nanoPU register instructions and the CSR accesses, the most frequent ops here
    /// (1.35 M and 630 K in a 1,024-core NanoSort), go straight to `exec_net` and
    /// `exec_csr`: behind the mul/div check each paid its call, and in the body below the
    /// prologue of a large function (callgrind).
    #[inline(never)]
    pub(crate) fn exec_rare<P: Platform>(
        &mut self,
        op: Op,
        mem: &mut NodeMem,
        plat: &mut P,
        a: u64,
        b: u64,
    ) -> Result<(), Ex> {
        match op.kind() {
            Kind::Net => self.exec_net(op, mem, plat),
            Kind::Csrrw | Kind::Csrrs | Kind::Csrrc | Kind::Csrrwi | Kind::Csrrsi | Kind::Csrrci => {
                self.exec_csr(op, mem, plat)
            }
            _ => self.exec_other(op, mem, a, b),
        }
    }

    #[inline(never)]
    fn exec_other(&mut self, op: Op, mem: &mut NodeMem, a: u64, b: u64) -> Result<(), Ex> {
        // Asked only of M kinds: `muldiv` is not inlined.
        if op.kind().is_muldiv() {
            if let Some(v) = self.muldiv(op, a, b) {
                self.x[op.rd as usize] = v;
                self.pc += op.len() as u64;
                return Ok(());
            }
        }
        match op.kind() {
            Kind::Fence => self.pc += op.len() as u64,
            Kind::FenceI => {
                self.fence_i(mem);
                self.pc += op.len() as u64;
            }
            Kind::Ecall => return Err(Ex::Trap { cause: ECALL_M, tval: 0 }),
            Kind::Ebreak if self.is_semihost(mem) => return self.semihost(mem),
            Kind::Ebreak => return Err(Ex::Trap { cause: BREAKPOINT, tval: self.pc }),
            Kind::Mret => return self.mret(),
            Kind::Wfi => return self.wfi(mem, op),
            Kind::LrW | Kind::ScW | Kind::AmoW | Kind::LrD | Kind::ScD | Kind::AmoD => {
                return self.exec_amo(op, mem, a, b)
            }
            Kind::Fp => return self.exec_fp(op, mem, a),
            Kind::Bswap if self.t.bswap_insns => {
                self.x[op.rd as usize] = bswap(op.imm, a);
                self.pc += op.len() as u64;
            }
            Kind::Bswap => return Err(Ex::Trap { cause: 2, tval: self.raw_insn(mem) as u64 }),
            Kind::FetchFault => return Err(Ex::Trap { cause: 1, tval: self.pc }),
            _ => return Err(Ex::Trap { cause: 2, tval: op.imm as u32 as u64 }),
        }
        Ok(())
    }

    /// Load and record the result latency in the scoreboard (after any miss stall).
    #[inline(always)]
    pub(crate) fn load_op<const N: usize, P: Platform>(
        &mut self,
        mem: &mut NodeMem,
        plat: &mut P,
        op: Op,
        addr: u64,
    ) -> Result<u64, Ex> {
        let v = match self.load::<N>(mem, addr) {
            Ok(v) => v,
            Err(Ex::Trap { cause: crate::core::LOAD_FAULT, tval }) => {
                self.device_load::<N, P>(plat, op, tval)?
            }
            Err(e) => return Err(e),
        };
        self.set_load_ready::<N>(op.rd, self.cycle);
        Ok(v)
    }

    /// The scoreboard entry of an `N`-byte load's destination `rd`, the load done at
    /// `cycle` (after its issue and any miss); returns it.
    #[inline(always)]
    pub(crate) fn set_load_ready<const N: usize>(&mut self, rd: u8, cycle: u64) -> u64 {
        let lat = if N < 4 { self.t.load_latency_subword } else { self.t.load_latency };
        debug_assert!((rd as usize) < NREGS);
        // SAFETY: a decoded op's register field, as in `slot`.
        unsafe {
            *self.ready_muldiv.get_unchecked_mut(rd as usize) = false;
            *self.ready.get_unchecked_mut(rd as usize) = cycle - 1 + lat;
        }
        cycle - 1 + lat
    }

    /// Stores advance the pc first: an HTIF or CLINT store completes and then reports an
    /// event; only a trap puts the pc back on the store.
    #[inline(always)]
    pub(crate) fn store_op<const N: usize>(
        &mut self,
        mem: &mut NodeMem,
        addr: u64,
        v: u64,
        next: u64,
    ) -> Result<(), Ex> {
        let pc = self.pc;
        self.pc = next;
        let r = self.store::<N>(mem, addr, v);
        if let Err(Ex::Trap { .. }) = r {
            self.pc = pc;
        }
        r
    }

    #[inline(always)]
    fn mispredict(&mut self) {
        self.cycle += self.t.mispredict_penalty;
        self.stats.stall_branch += self.t.mispredict_penalty;
    }

    #[inline(always)]
    fn branch(&mut self, op: Op, taken: bool, next: u64) -> Result<(), Ex> {
        let target = self.pc.wrapping_add(op.imm as i64 as u64);
        if self.bp.branch(self.pc, taken, target) {
            self.mispredict();
        }
        self.pc = if taken { target } else { next };
        Ok(())
    }

    #[inline(always)]
    fn jal(&mut self, op: Op, next: u64) -> Result<(), Ex> {
        let target = self.pc.wrapping_add(op.imm as i64 as u64);
        let link = matches!(op.rd, 1 | 5).then_some(next);
        if self.bp.jal(self.pc, target, link) {
            self.mispredict();
        }
        self.set_slot(op.rd, next);
        self.pc = target;
        Ok(())
    }

    pub(crate) fn jalr(&mut self, op: Op, base: u64, next: u64) -> Result<(), Ex> {
        let target = base.wrapping_add(op.imm as i64 as u64) & !1;
        let link = matches!(op.rd, 1 | 5).then_some(next);
        let ret = op.rd == SINK && matches!(op.rs1, 1 | 5);
        if self.bp.jalr(self.pc, target, ret, link) {
            self.mispredict();
        }
        self.x[op.rd as usize] = next;
        self.pc = target;
        Ok(())
    }

    /// `wfi` (privileged spec 3.3.3): a no-op if an interrupt is pending, else the core
    /// reports `Exit::Wfi` with the pc past the instruction.
    fn wfi(&mut self, mem: &NodeMem, op: Op) -> Result<(), Ex> {
        self.pc += op.len() as u64;
        if self.interrupt_pending(mem) {
            return Ok(());
        }
        self.pending = Some(crate::error::Exit::Wfi);
        Err(Ex::Stop)
    }
}

#[cfg(test)]
mod tests {
    use crate::asm::{self, reg::*};
    use crate::op::Kind;
    use crate::testing::Bench;
    use crate::Exit;
    use std::sync::Arc;

    /// `is_alu` names exactly the kinds `alu` computes (`exec_net` relies on it).
    #[test]
    fn is_alu_is_what_alu_computes() {
        for code in 0..=Kind::Fp as u8 {
            // SAFETY: `Kind` is `repr(u8)` with the default discriminants, 0 to `Fp`'s.
            let kind = unsafe { std::mem::transmute::<u8, Kind>(code) };
            assert_eq!(super::is_alu(kind), super::alu(kind, 1, 2, 3, 4).is_some(), "{kind:?}");
        }
    }

    /// Run `code` followed by an HTIF exit with a0; return the bench after it halted.
    fn run(code: &[u32]) -> Bench {
        let mut all = code.to_vec();
        all.extend(asm::exit_with(A0));
        let mut b = Bench::new(&all, false);
        let e = b.run(1_000_000);
        assert!(matches!(e, Exit::Halted(_)), "{e:?}");
        b
    }

    #[test]
    fn shifts_use_low_bits_of_the_amount() {
        let b = run(&[
            asm::addi(A1, ZERO, -1),
            asm::addi(A2, ZERO, 65),           // shift by 65 = by 1 (RV64: 6 bits)
            asm::r(0, A2, A1, 5, A3, 0x33),    // srl a3, a1, a2
            asm::r(0x20, A2, A1, 5, A4, 0x33), // sra a4, a1, a2
            asm::addi(A2, ZERO, 33),           // sllw by 33 = by 1 (5 bits)
            asm::r(0, A2, A1, 1, A5, 0x3b),    // sllw a5, a1, a2
            asm::i(31, A1, 5, T1, 0x1b),       // srliw t1, a1, 31
        ]);
        assert_eq!(b.core.reg(13), u64::MAX >> 1);
        assert_eq!(b.core.reg(14), u64::MAX);
        assert_eq!(b.core.reg(15), (-2i64) as u64);
        assert_eq!(b.core.reg(6), 1);
    }

    #[test]
    fn word_ops_sign_extend() {
        let b = run(&[
            asm::lui(A1, 0x7ffff),          // a1 = 0x7ffff000
            asm::i(0xfff, A1, 0, A2, 0x1b), // addiw a2, a1, -1... imm 0xfff = -1
            asm::i(0x7ff, A1, 0, A3, 0x1b), // addiw a3, a1, 2047 -> 0x7ffff7ff
            asm::lui(A4, 0x80000),          // sign-extended 0xffffffff80000000
            asm::i(0x404, A4, 5, A5, 0x1b), // sraiw a5, a4, 4
            asm::r(0, A4, A4, 0, T1, 0x3b), // addw t1, a4, a4 -> 0
        ]);
        assert_eq!(b.core.reg(12), 0x7fff_efff);
        assert_eq!(b.core.reg(13), 0x7fff_f7ff);
        assert_eq!(b.core.reg(14), 0xffff_ffff_8000_0000);
        assert_eq!(b.core.reg(15), 0xffff_ffff_f800_0000);
        assert_eq!(b.core.reg(6), 0);
    }

    #[test]
    fn loads_sign_and_zero_extend() {
        let mut code = asm::la_dram(A1, 0x8000_f100);
        code.extend([
            asm::addi(A2, ZERO, -2),
            asm::sd(A2, A1, 0),
            asm::i(0, A1, 0, A3, 0x03), // lb
            asm::i(0, A1, 4, A4, 0x03), // lbu
            asm::i(0, A1, 1, A5, 0x03), // lh
            asm::i(0, A1, 5, T1, 0x03), // lhu
            asm::i(0, A1, 6, T2, 0x03), // lwu
        ]);
        let b = run(&code);
        assert_eq!(b.core.reg(13), (-2i64) as u64);
        assert_eq!(b.core.reg(14), 0xfe);
        assert_eq!(b.core.reg(15), (-2i64) as u64);
        assert_eq!(b.core.reg(6), 0xfffe);
        assert_eq!(b.core.reg(7), 0xffff_fffe);
    }

    #[test]
    fn misaligned_loads_and_stores_are_performed() {
        let mut code = asm::la_dram(A1, 0x8000_fffd); // crosses a page boundary
        code.extend([asm::addi(A2, ZERO, 0x123), asm::sd(A2, A1, 0), asm::ld(A3, A1, 0)]);
        let b = run(&code);
        assert_eq!(b.core.reg(13), 0x123);
    }

    /// The IceNIC cores' byte swap (`.insn r 0x33, funct3, 0x2A, rd, rs1, x0`): only where
    /// `bswap_insns` is on; elsewhere an illegal instruction.
    #[test]
    fn byte_swap_instructions_exist_only_when_enabled() {
        let swap = |f3: u32| asm::r(0x2a, ZERO, A1, f3, A2, 0x33);
        let mut code = asm::li64(A1, 0x0102_0304_0506_0708);
        code.extend([swap(0), asm::addi(A3, A2, 0), swap(1), asm::addi(A4, A2, 0), swap(2)]);
        let mut all = code.clone();
        all.extend(asm::exit_with(A0));
        let mut b = Bench::new(&all, false);
        Arc::make_mut(&mut b.core.t).bswap_insns = true;
        assert!(matches!(b.run(1_000_000), Exit::Halted(_)));
        assert_eq!((b.core.reg(13), b.core.reg(14)), (0x0807, 0x0807_0605));
        assert_eq!(b.core.reg(12), 0x0807_0605_0403_0201);
        let mut b = Bench::new(&all, false);
        assert!(matches!(b.run(1_000_000), Exit::Error(_)), "illegal without bswap_insns");
    }

    #[test]
    fn x0_stays_zero() {
        let b = run(&[asm::addi(ZERO, ZERO, 5), asm::add(A1, ZERO, ZERO)]);
        assert_eq!(b.core.reg(0), 0);
        assert_eq!(b.core.reg(11), 0);
    }

    #[test]
    fn load_use_and_mul_stalls_are_counted() {
        let mut code = asm::la_dram(A1, 0x8000_f100);
        code.extend([
            asm::ld(A2, A1, 0),
            asm::add(A3, A2, A2),           // load-use: 1 bubble
            asm::r(1, A3, A3, 0, A4, 0x33), // mul 0 * 0: out after two steps, latency 4
            asm::add(A5, A4, A4),           // waits for the multiplier
        ]);
        let b = run(&code);
        assert!(b.core.stats().stall_load_use >= 1);
        assert_eq!(b.core.stats().stall_muldiv, 3);
    }
}
