//! Machine-mode CSRs (RISC-V privileged spec chapter 3; counters: unprivileged spec
//! chapter 10 "Zicntr"/"Zihpm"). nanoPU CSRs 0x052..=0x061 go to the platform instead
//! (see `exec_csr`). Unknown CSRs and writes to read-only CSRs are illegal instructions.

use crate::core::{Core, Ex};
use crate::error::BlockOn;
use crate::mem::NodeMem;
use crate::op::{Kind, Op};
use crate::platform::{Platform, NANOPU_CSR_FIRST, NANOPU_CSR_LAST};

pub const MIE: u64 = 1 << 3;
pub const MPIE: u64 = 1 << 7;
/// mstatus.MPP is hard-wired to M (only M-mode exists: privileged spec 3.1.6.1).
const MPP_M: u64 = 3 << 11;
/// Interrupt enable bits that exist: MSI, MTI, MEI and the NIC line (bit 16).
const MIE_MASK: u64 = (1 << 3) | (1 << 7) | (1 << 11) | (1 << 16);
/// misa: MXL = 2 (64-bit), extensions A, C, D, F, I, M.
const MISA: u64 = (2 << 62) | 1 | (1 << 2) | (1 << 3) | (1 << 5) | (1 << 8) | (1 << 12);

/// CSR state that is not derived from elsewhere.
#[derive(Default, Hash)]
pub(crate) struct Csrs {
    pub mstatus: u64,
    pub mie: u64,
    pub mtvec: u64,
    pub mepc: u64,
    pub mcause: u64,
    pub mtval: u64,
    pub mscratch: u64,
    /// Offsets so that writes to mcycle/minstret take effect without touching local time.
    pub cycle_off: u64,
    pub instret_off: u64,
}

impl Core {
    /// Read a machine CSR; `None` if it does not exist.
    fn csr_read(&self, mem: &NodeMem, addr: u16) -> Option<u64> {
        let c = &self.csr;
        Some(match addr {
            0x300 => crate::core::fpu::with_sd(c.mstatus | MPP_M),
            0x001..=0x003 => return self.fcsr_read(addr),
            0x301 => MISA,
            0x304 => c.mie,
            0x305 => c.mtvec,
            0x340 => c.mscratch,
            0x341 => c.mepc,
            0x342 => c.mcause,
            0x343 => c.mtval,
            0x344 => self.mip(mem),
            0xf11..=0xf13 | 0xf15 => 0,
            0xf14 => self.hart as u64,
            // A CSR instruction reads the counters as they were before it executed
            // (unprivileged spec, Zicsr chapter: "if a CSR access instruction reads a CSR, it
            // reads the value prior to the execution of the instruction"); `exec` has already
            // counted this instruction and its issue cycle.
            0xb00 | 0xc00 => self.counter_cycle().wrapping_add(c.cycle_off),
            // `time` shadows the CLINT's mtime (unprivileged spec, Zicntr).
            0xc01 => self.mtime(),
            0xb02 | 0xc02 => (self.stats.instret - 1).wrapping_add(c.instret_off),
            // mhpmcounter3 counts L1 D-cache misses, as on the prototype (docs/platform.md section 2).
            0xb03 | 0xc03 => self.stats.dcache_misses,
            0xb04..=0xb1f | 0xc04..=0xc1f | 0x320 | 0x323..=0x33f => 0,
            _ => return None,
        })
    }

    /// `mcycle` before the executing instruction: its issue cycle (`exec` counted one more).
    fn counter_cycle(&self) -> u64 {
        self.cycle - 1
    }

    /// Write a machine CSR. `Err` = illegal; `Ok(true)` = interrupt state may have changed.
    fn csr_write(&mut self, addr: u16, v: u64) -> Result<bool, ()> {
        if addr >> 10 == 3 {
            return Err(()); // read-only range (privileged spec 2.1)
        }
        let c = &mut self.csr;
        match addr {
            0x300 => c.mstatus = v & (MIE | MPIE | crate::core::fpu::FS),
            0x001..=0x003 => return self.fcsr_write(addr, v),
            0x304 => c.mie = v & MIE_MASK,
            // MODE 2 and 3 are reserved: keep direct or vectored only (WARL).
            0x305 => c.mtvec = v & !2,
            0x340 => c.mscratch = v,
            // IALIGN = 16 with C: only bit 0 of mepc is zero (privileged spec 3.1.14).
            0x341 => c.mepc = v & !1,
            0x342 => c.mcause = v,
            0x343 => c.mtval = v,
            // "If a CSR access instruction writes such a CSR, the write is done instead of
            // the increment" (same chapter): the next instruction reads exactly `v` (plus the
            // cycles after this instruction completes, for mcycle).
            0xb00 => c.cycle_off = v.wrapping_sub(self.cycle + self.t.csr_penalty),
            0xb02 => c.instret_off = v.wrapping_sub(self.stats.instret),
            0x301 | 0x344 | 0xb03..=0xb1f | 0x320 | 0x323..=0x33f => {}
            _ => return Err(()),
        }
        Ok(matches!(addr, 0x300 | 0x304))
    }

    /// Execute a Zicsr instruction (unprivileged spec chapter 9): read old value, write new
    /// unless csrrs/csrrc with rs1 = x0 / uimm = 0 (then no write side effects at all).
    /// `exec_rare` calls it. The nanoPU CSRs and the machine's take separate paths, each
    /// its own function: the nanoPU CSRs (a core's `lmsgsrdy` polls and `lnicucmd` writes,
    /// 546 K of the 618 K CSR instructions of a 1,024-core NanoSort) need none of the
    /// machine CSRs' checks (pipeline flush, interrupt recheck), and the machine's path
    /// needs no platform.
    #[inline(always)]
    pub(crate) fn exec_csr<P: Platform>(
        &mut self,
        op: Op,
        mem: &mut NodeMem,
        plat: &mut P,
    ) -> Result<(), Ex> {
        let addr = (op.imm & 0xfff) as u16;
        if (NANOPU_CSR_FIRST..=NANOPU_CSR_LAST).contains(&addr) {
            self.exec_platform_csr(op, addr, plat)
        } else {
            self.exec_machine_csr(op, addr, mem)
        }
    }

    /// The source operand of a Zicsr instruction and whether it writes the CSR.
    #[inline(always)]
    fn csr_source(&self, op: Op) -> (u64, bool) {
        let uimm = ((op.imm >> 12) & 0x1f) as u64;
        match op.kind() {
            Kind::Csrrw => (self.slot(op.rs1), true),
            Kind::Csrrs | Kind::Csrrc => (self.slot(op.rs1), op.rs1 != 0),
            Kind::Csrrwi => (uimm, true),
            _ => (uimm, uimm != 0),
        }
    }

    /// The old value into `rd`, ready `csr_latency` after the issue cycle; the pc moves on.
    #[inline(always)]
    fn csr_retire(&mut self, op: Op, old: u64) {
        self.set_slot(op.rd, old);
        self.ready[op.rd as usize] = self.cycle - 1 + self.t.csr_latency;
        self.pc += op.len() as u64;
    }

    /// A machine CSR (`csr_read`, `csr_write`).
    #[inline(never)]
    fn exec_machine_csr(&mut self, op: Op, addr: u16, mem: &NodeMem) -> Result<(), Ex> {
        let (src, writes) = self.csr_source(op);
        let (old, recheck) = self.machine_csr(mem, addr, op.kind(), src, writes)?;
        self.csr_retire(op, old);
        if writes && write_flushes(addr) {
            self.cycle += self.t.csr_penalty;
        }
        if recheck {
            return Err(Ex::Recheck);
        }
        Ok(())
    }

    /// A nanoPU CSR, read (and written) through the platform, asked at the issue cycle
    /// (`exec` already counted this one). No write of these flushes the pipeline
    /// (`write_flushes`).
    #[inline(never)]
    fn exec_platform_csr<P: Platform>(&mut self, op: Op, addr: u16, plat: &mut P) -> Result<(), Ex> {
        let (src, writes) = self.csr_source(op);
        let now = self.cycle - 1;
        let r = plat.csr_read(self.hart, now, self.pc, addr);
        let old = self.platform_access(r, BlockOn::Csr(addr), true)?;
        if writes {
            let r = plat.csr_write(self.hart, now, addr, new_value(op.kind(), old, src));
            self.platform_access(r, BlockOn::Csr(addr), true)?;
        }
        self.csr_retire(op, old);
        if writes && plat.yield_after_write(self.hart) {
            return Err(Ex::Stop); // the platform changed state the caller must act on first
        }
        Ok(())
    }

    /// Returns the old value and whether interrupt state may have changed.
    fn machine_csr(
        &mut self,
        mem: &NodeMem,
        addr: u16,
        kind: Kind,
        src: u64,
        writes: bool,
    ) -> Result<(u64, bool), Ex> {
        let old = self.csr_read(mem, addr).ok_or_else(|| self.illegal())?;
        if !writes {
            return Ok((old, false));
        }
        let recheck = self.csr_write(addr, new_value(kind, old, src)).map_err(|()| self.illegal())?;
        Ok((old, recheck))
    }
}

/// Does a write to `addr` flush the pipeline? Not for mscratch..mtval, sscratch..stval and
/// the LNIC CSRs (`write_flush` in l-nic/rocket-chip `lnic-dev` `rocket/CSR.scala`).
#[inline]
fn write_flushes(addr: u16) -> bool {
    let exempt = [(0x340, 0x343), (0x140, 0x143), (NANOPU_CSR_FIRST, NANOPU_CSR_LAST)];
    !exempt.iter().any(|&(lo, hi)| (lo..=hi).contains(&addr))
}

fn new_value(kind: Kind, old: u64, src: u64) -> u64 {
    match kind {
        Kind::Csrrw | Kind::Csrrwi => src,
        Kind::Csrrs | Kind::Csrrsi => old | src,
        _ => old & !src,
    }
}

#[cfg(test)]
mod tests {
    use crate::asm::{self, reg::*};
    use crate::testing::Bench;
    use crate::{Access, Exit, Platform};

    fn run(code: &[u32]) -> (Bench, Exit) {
        let mut all = code.to_vec();
        all.extend(asm::exit_with(A0));
        let mut b = Bench::new(&all, false);
        let e = b.run(100_000);
        (b, e)
    }

    #[test]
    fn read_only_csrs_read_with_x0_and_trap_on_write() {
        let (b, e) =
            run(&[asm::csrrs(A1, 0xf14, ZERO), asm::i(0xc00, 0, 7, A2, 0x73), asm::addi(A0, ZERO, 0)]);
        assert_eq!(e, Exit::Halted(0), "csrrs x0 / csrrci 0 on read-only CSRs are reads");
        assert_eq!(b.core.reg(11), 0);
        assert!(b.core.reg(12) > 0);
        let (_, e) = run(&[asm::csrrw(ZERO, 0xf14, A0)]);
        let Exit::Error(err) = e else { panic!() };
        assert!(err.to_string().contains("unsupported CSR"), "{err}");
    }

    #[test]
    fn unknown_csr_is_illegal() {
        let (_, e) = run(&[asm::csrrs(A1, 0x7c0, ZERO)]);
        assert!(
            matches!(e, Exit::Error(ref x) if x.to_string().contains("illegal instruction 0x7c0025f3")),
            "{e:?}"
        );
    }

    #[test]
    fn mscratch_swaps_and_mstatus_keeps_mpp_m() {
        let (b, _) = run(&[
            asm::addi(A1, ZERO, 42),
            asm::csrrw(ZERO, 0x340, A1),
            asm::addi(A2, ZERO, 7),
            asm::csrrw(A3, 0x340, A2),
            asm::addi(T1, ZERO, -1),
            asm::csrrw(ZERO, 0x300, T1),
            asm::csrrs(A4, 0x300, ZERO),
            asm::csrrs(A5, 0x301, ZERO),
            asm::addi(A0, ZERO, 0),
        ]);
        assert_eq!(b.core.reg(13), 42);
        assert_eq!(b.core.reg(14), (1 << 63) | (3 << 13) | (3 << 11) | (1 << 7) | (1 << 3));
        assert_eq!(b.core.reg(15), (2 << 62) | 0x112d);
    }

    #[test]
    fn counters_read_back_what_was_written() {
        // Zicsr: a read sees the value before the reading instruction, and a write replaces
        // the writing instruction's increment: minstret reads back 1000, not 1001.
        let (b, _) = run(&[
            asm::addi(A1, ZERO, 1000),
            asm::csrrw(ZERO, 0xb02, A1),
            asm::csrrs(A2, 0xb02, ZERO),
            asm::csrrs(A3, 0xc02, ZERO),
            asm::csrrw(ZERO, 0xb00, A1),
            asm::csrrs(A4, 0xb00, ZERO),
            asm::csrrs(A5, 0xc00, ZERO),
            asm::addi(A0, ZERO, 0),
        ]);
        assert_eq!((b.core.reg(12), b.core.reg(13)), (1000, 1001), "minstret, then instret");
        // Reads do not flush: the second read comes one cycle after the first.
        assert_eq!((b.core.reg(14), b.core.reg(15)), (1000, 1001), "mcycle, then cycle");
    }

    /// Records nanoPU CSR traffic.
    #[derive(Default)]
    struct CsrLog {
        reads: Vec<u16>,
        writes: Vec<(u16, u64)>,
    }

    impl Platform for CsrLog {
        fn rx_ready(&mut self, _: usize, _: u64, _: u32) -> Access<()> {
            Ok(())
        }
        fn rx_pop(&mut self, _: usize, _: u64) -> u64 {
            0
        }
        fn tx_ready(&mut self, _: usize, _: u64) -> Access<()> {
            Ok(())
        }
        fn tx_push(&mut self, _: usize, _: u64, _: u64) -> Result<(), String> {
            Ok(())
        }
        fn csr_read(&mut self, _: usize, _: u64, _: u64, csr: u16) -> Access<u64> {
            self.reads.push(csr);
            Ok(0x10)
        }
        fn csr_write(&mut self, _: usize, _: u64, csr: u16, v: u64) -> Access<()> {
            self.writes.push((csr, v));
            Ok(())
        }
    }

    #[test]
    fn platform_csrs_honour_the_no_write_rules() {
        let mut code = vec![asm::csrrs(A1, 0x052, ZERO), asm::i(0x054, 0, 6, A2, 0x73)]; // csrrsi uimm 0
        code.extend([asm::i(0x054, 3, 6, A3, 0x73), asm::addi(A4, ZERO, 9), asm::csrrw(ZERO, 0x058, A4)]);
        code.extend([asm::addi(A0, ZERO, 0)]);
        code.extend(asm::exit_with(A0));
        let mut b = Bench::new(&code, false);
        let mut p = CsrLog::default();
        assert_eq!(b.core.run(&mut b.mem, &mut p, 10_000), Exit::Halted(0));
        assert_eq!(p.reads, vec![0x052, 0x054, 0x054, 0x058]);
        assert_eq!(p.writes, vec![(0x054, 0x13), (0x058, 9)]);
        assert_eq!(b.core.reg(11), 0x10);
    }
}
