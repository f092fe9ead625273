//! Traps and interrupts (RISC-V privileged spec 3.1.6 mstatus, 3.1.7 mtvec, 3.1.9 mip/mie,
//! 3.3.1 trap entry, 3.3.2 mret), machine mode only.

use crate::core::csr::{MIE, MPIE};
use crate::core::{Core, Ex};
use crate::error::{CoreError, ErrorKind, Exit, TrapInfo};
use crate::mem::NodeMem;

pub const MSIP: u64 = 1 << 3;
pub const MTIP: u64 = 1 << 7;
const INTERRUPT: u64 = 1 << 63;
/// Standard priority order: MEI, MSI, MTI, SEI, SSI, STI (privileged spec 3.1.9); platform
/// interrupts (bit 16 = NIC, and above) come after them, lowest number first.
const PRIORITY: [u32; 6] = [11, 3, 7, 9, 1, 5];
/// Taking the same exception this many times in a row with nothing changed is a trap loop.
const TRAP_LOOP_LIMIT: u32 = 3;

/// What the trap path remembers, to detect a trap loop and name the trap that led into it.
/// Only `take_trap` and `mret` touch it: the run loop's fast path pays nothing. Allocated at
/// a core's first trap: most cores (NanoSort's) take none, and 104 bytes in place were 4%
/// of a `Core` (docs/profile.md).
#[derive(Default)]
pub(crate) struct TrapTrack(Option<Box<TrapState>>);

/// An exception as taken: (pc, cause, mtval).
type Taken = (u64, u64, u64);

#[derive(Default)]
struct TrapState {
    /// The first trap since the last `mret`: the one that entered the handler.
    first: Option<TrapInfo>,
    /// The latest exception (pc, cause, mtval), the integer registers when it was taken,
    /// and how many times in a row it was taken. The registers are allocated at the first
    /// exception: a core that only takes interrupts needs none.
    last: Option<Taken>,
    regs: Vec<u64>,
    repeats: u32,
}

impl TrapTrack {
    /// `mret` ends the handling of a trap (privileged spec 3.3.2): the next trap is a first.
    fn handled(&mut self) {
        if let Some(t) = &mut self.0 {
            (t.first, t.last) = (None, None);
        }
    }

    fn first(&self) -> Option<TrapInfo> {
        self.0.as_ref().and_then(|t| t.first)
    }

    /// The latest exception and the registers when it was taken.
    fn last(&self) -> Option<(Taken, &[u64])> {
        self.0.as_ref().and_then(|t| Some((t.last?, &t.regs[..])))
    }

    fn state(&mut self) -> &mut TrapState {
        self.0.get_or_insert_with(Box::default)
    }
}

impl Core {
    /// The fault that entered the trap handler the core is in (a trap since the last `mret`),
    /// if a fault did: for a program that exits from its handler (as runtimes do when they
    /// give up on a trap) the cause its exit code stands for, which the code alone does not
    /// say. Environment calls and breakpoints are requests, not faults, and interrupts are
    /// not the running code's doing: none of them is given.
    pub fn handling_fault(&self) -> Option<TrapInfo> {
        let fault = |t: &TrapInfo| t.cause >> 63 == 0 && !matches!(t.cause, 3 | 8 | 9 | 11);
        self.traps.first().filter(fault)
    }

    /// Current `mip`: external lines, CLINT software and timer interrupts.
    pub(crate) fn mip(&self, mem: &NodeMem) -> u64 {
        let h = self.hart;
        let msip = mem.msip.get(h).is_some_and(|&m| m & 1 != 0);
        let mtip = mem.mtimecmp.get(h).is_some_and(|&c| self.mtime() >= c);
        self.irq_lines | if msip { MSIP } else { 0 } | if mtip { MTIP } else { 0 }
    }

    /// `(mip & mie) != 0`, regardless of `mstatus.MIE`: the `wfi` wake-up condition.
    pub fn interrupt_pending(&self, mem: &NodeMem) -> bool {
        self.mip(mem) & self.csr.mie != 0
    }

    /// Would the core take an interrupt before its next instruction (pending, enabled in
    /// `mie` and `mstatus.MIE` set)? A core parked on netRX or netTX wakes for it.
    pub fn interrupt_would_trap(&self, mem: &NodeMem) -> bool {
        self.mip(mem) & self.irq_mask_enabled() != 0
    }

    /// Cycle at which an enabled timer interrupt would be taken, if any (MTIE and MIE set).
    pub fn trap_timer_deadline(&self, mem: &NodeMem) -> Option<u64> {
        self.timer_deadline(mem).filter(|_| self.csr.mstatus & MIE != 0)
    }

    /// Interrupt bits that would be taken if pending (`mie` when `mstatus.MIE`, else none).
    pub(crate) fn irq_mask_enabled(&self) -> u64 {
        if self.csr.mstatus & MIE != 0 {
            self.csr.mie
        } else {
            0
        }
    }

    /// Would interrupt line `bit` end a `wfi` (`mie[bit]` set, whatever `mstatus.MIE`:
    /// RISC-V privileged spec, "Wait for Interrupt")?
    pub fn wfi_wakes_for(&self, bit: u32) -> bool {
        bit < 64 && self.csr.mie & (1 << bit) != 0
    }

    /// Could interrupt line `bit` be taken right now (`mstatus.MIE` and `mie[bit]` set)?
    /// A core that cannot take the NIC interrupt may run far ahead of global time.
    pub fn interrupts_enabled(&self, bit: u32) -> bool {
        self.csr.mstatus & MIE != 0 && bit < 64 && self.csr.mie & (1 << bit) != 0
    }

    /// Cycle at which MTIP becomes pending (`mtime` reaches `mtimecmp`), if the timer
    /// interrupt is enabled in `mie`.
    pub fn timer_deadline(&self, mem: &NodeMem) -> Option<u64> {
        let cmp = *mem.mtimecmp.get(self.hart)?;
        (self.csr.mie & MTIP != 0 && cmp != u64::MAX).then(|| cmp.saturating_mul(self.rtc_cycles()))
    }

    /// `mtime`: real-time-clock ticks of `TimingParams::rtc_cycles` core cycles each.
    pub(crate) fn mtime(&self) -> u64 {
        self.cycle / self.rtc_cycles()
    }

    fn rtc_cycles(&self) -> u64 {
        self.t.rtc_cycles.max(1)
    }

    /// Earliest cycle at which the inner loop must stop to look at interrupts.
    /// `mstatus.MIE` is read first: with interrupts off (NanoSort's cores) the CLINT's
    /// registers, a host cache miss at each dispatch, are not read.
    pub(crate) fn horizon(&self, mem: &NodeMem, until: u64) -> u64 {
        if self.csr.mstatus & MIE == 0 {
            return until;
        }
        match self.timer_deadline(mem) {
            Some(t) => until.min(t.max(self.cycle + 1)),
            None => until,
        }
    }

    /// Take the highest-priority enabled pending interrupt, if interrupts are enabled.
    /// As `horizon`, `mstatus.MIE` first.
    pub(crate) fn take_interrupt(&mut self, mem: &NodeMem) -> Result<(), Exit> {
        if self.csr.mstatus & MIE == 0 {
            return Ok(());
        }
        let ready = self.mip(mem) & self.csr.mie;
        if ready == 0 {
            return Ok(());
        }
        let code =
            PRIORITY.iter().copied().find(|&b| ready & (1 << b) != 0).unwrap_or(ready.trailing_zeros());
        self.stats.interrupts += 1;
        self.take_trap(mem, INTERRUPT | code as u64, 0)
    }

    /// Enter the trap handler, or end the run if there is none or the trap loops.
    pub(crate) fn take_trap(&mut self, mem: &NodeMem, cause: u64, tval: u64) -> Result<(), Exit> {
        let tval = if cause == 2 && tval == u64::MAX { self.raw_insn(mem) as u64 } else { tval };
        let base = self.csr.mtvec & !3;
        if base == 0 {
            let text = self.loaded_text(mem);
            return Err(self.fatal_trap(mem, ErrorKind::Trap { cause, tval, text }));
        }
        self.note_trap(mem, base, cause, tval)?;
        self.csr.mepc = self.pc;
        self.csr.mcause = cause;
        self.csr.mtval = tval;
        let mie = self.csr.mstatus & MIE != 0;
        self.csr.mstatus = (self.csr.mstatus & !(MIE | MPIE)) | if mie { MPIE } else { 0 };
        let vectored = self.csr.mtvec & 3 == 1 && cause & INTERRUPT != 0;
        self.pc = if vectored { base + 4 * (cause & 0xff) } else { base };
        self.cycle += self.t.trap_penalty;
        self.stats.traps += 1;
        Ok(())
    }

    /// Remember this trap; `Err` when it is the same exception taken again with no progress
    /// since: at the handler's entry (nothing ran in between: `mtvec` unfetchable, or its
    /// first instruction traps), or, with no `mret` since, at the same PC inside the handler
    /// with the same integer registers (the handler traps each time it runs).
    fn note_trap(&mut self, mem: &NodeMem, base: u64, cause: u64, tval: u64) -> Result<(), Exit> {
        let first = self.traps.first().is_none().then(|| self.trap_info(mem, cause, tval));
        let repeats = self.repeats_last(base, cause, tval);
        let t = self.traps.state();
        t.first = t.first.or(first);
        if cause & INTERRUPT != 0 {
            t.last = None;
            return Ok(());
        }
        if repeats {
            t.repeats += 1;
        } else {
            t.last = Some((self.pc, cause, tval));
            t.regs.clear();
            t.regs.extend_from_slice(&self.x[..32]);
            t.repeats = 1;
        }
        if t.repeats < TRAP_LOOP_LIMIT {
            return Ok(());
        }
        Err(self.trap_loop(mem, base, cause, tval))
    }

    fn repeats_last(&self, base: u64, cause: u64, tval: u64) -> bool {
        self.traps.last().is_some_and(|(last, regs)| {
            last == (self.pc, cause, tval) && (self.pc == base || regs == &self.x[..32])
        })
    }

    /// The trap-loop error, naming the trap that entered the handler unless it is this one.
    fn trap_loop(&self, mem: &NodeMem, base: u64, cause: u64, tval: u64) -> Exit {
        let first = self.traps.first().filter(|f| (f.pc, f.cause, f.tval) != (self.pc, cause, tval));
        let text = self.loaded_text(mem);
        self.fatal_trap(mem, ErrorKind::TrapLoop { cause, tval, mtvec: base, first, text })
    }

    /// Is the instruction at pc the program's text as loaded?
    fn loaded_text(&self, mem: &NodeMem) -> bool {
        self.program.is_loaded_text(self.pc, self.raw_insn(mem))
    }

    /// The trap as taken at pc. Its instruction is named unless mtval already holds it
    /// (illegal instruction), there is none (fetch fault) or it did not run (interrupt).
    fn trap_info(&self, mem: &NodeMem, cause: u64, tval: u64) -> TrapInfo {
        let named = cause & INTERRUPT != 0 || cause == 1 || cause == 2;
        let insn = if named { None } else { self.insn_at(mem) };
        TrapInfo { cause, pc: self.pc, tval, insn, text: self.loaded_text(mem) }
    }

    fn insn_at(&self, mem: &NodeMem) -> Option<u32> {
        let lo = mem.fetch_half(self.pc)? as u32;
        if lo & 3 != 3 {
            return Some(lo);
        }
        Some(lo | (mem.fetch_half(self.pc + 2)? as u32) << 16)
    }

    pub(crate) fn fatal(&self, kind: ErrorKind) -> Exit {
        Exit::Error(Box::new(CoreError { hart: self.hart, pc: self.pc, kind, stack: None }))
    }

    /// A fatal trap, with the stack overflow behind it if sp has left this hart's stack.
    fn fatal_trap(&self, mem: &NodeMem, kind: ErrorKind) -> Exit {
        let stack = crate::runaway::check(&self.program, mem, self.hart, self.x[2]).map(Box::new);
        Exit::Error(Box::new(CoreError { hart: self.hart, pc: self.pc, kind, stack }))
    }

    /// Encoding of the instruction at pc (for `mtval` of illegal instructions).
    pub(crate) fn raw_insn(&self, mem: &NodeMem) -> u32 {
        let lo = mem.fetch_half(self.pc).unwrap_or(0) as u32;
        if lo & 3 != 3 {
            return lo;
        }
        lo | (mem.fetch_half(self.pc + 2).unwrap_or(0) as u32) << 16
    }

    /// `mret`: restore MIE from MPIE, set MPIE, return to `mepc` (privileged spec 3.3.2).
    pub(crate) fn mret(&mut self) -> Result<(), Ex> {
        self.traps.handled();
        let mpie = self.csr.mstatus & MPIE != 0;
        self.csr.mstatus = (self.csr.mstatus & !MIE) | MPIE | if mpie { MIE } else { 0 };
        self.pc = self.csr.mepc;
        self.cycle += self.t.mret_penalty;
        Err(Ex::Recheck)
    }

    /// Raise an illegal-instruction exception; `mtval` is filled from memory.
    pub(crate) fn illegal(&self) -> Ex {
        Ex::Trap { cause: 2, tval: u64::MAX }
    }
}

#[cfg(test)]
mod tests {
    use crate::asm::{self, reg::*};
    use crate::mem::MTIMECMP;
    use crate::testing::Bench;
    use crate::{ErrorKind, Exit, StallKind};

    const MTVEC: u32 = 0x305;
    const MEPC: u32 = 0x341;
    const MCAUSE: u32 = 0x342;
    const MIE_CSR: u32 = 0x304;
    const MSTATUS: u32 = 0x300;

    /// Pad `code` with nops up to index `n`.
    fn pad(code: &mut Vec<u32>, n: usize) {
        assert!(code.len() <= n);
        code.resize(n, asm::NOP);
    }

    #[test]
    fn ecall_enters_handler_and_mret_returns() {
        let h = 16;
        let mut c = asm::la_index(T0, 0, h).to_vec();
        c.extend([asm::csrrw(ZERO, MTVEC, T0), asm::ECALL, asm::addi(A1, ZERO, 1)]);
        c.extend(asm::exit_with(A0));
        pad(&mut c, h);
        c.extend([
            asm::csrrs(A0, MCAUSE, ZERO),
            asm::csrrs(T1, MEPC, ZERO),
            asm::addi(T1, T1, 4),
            asm::csrrw(ZERO, MEPC, T1),
            asm::MRET,
        ]);
        let mut b = Bench::new(&c, false);
        assert_eq!(b.run(100_000), Exit::Halted(11));
        assert_eq!(b.core.reg(11), 1);
        assert_eq!(b.core.stats().traps, 1);
    }

    /// `trap` at index 3 with the handler at index 16 (`handler`), then exit with a0 = 7.
    fn trap_with_handler(trap: u32, handler: &[u32]) -> Bench {
        let mut c = asm::la_index(T0, 0, 16).to_vec();
        c.extend([asm::csrrw(ZERO, MTVEC, T0), trap, asm::addi(A0, ZERO, 7)]);
        c.extend(asm::exit_with(A0));
        pad(&mut c, 16);
        c.extend(handler);
        Bench::new(&c, false)
    }

    /// A handler that exits with 7 at once.
    fn exiting_handler() -> Vec<u32> {
        let mut h = vec![asm::addi(A0, ZERO, 7)];
        h.extend(asm::exit_with(A0));
        h
    }

    #[test]
    fn the_fault_that_entered_the_handler_is_named_until_mret() {
        let mut b = trap_with_handler(asm::ld(A1, ZERO, 0x10), &exiting_handler());
        assert_eq!(b.run(100_000), Exit::Halted(7));
        let t = b.core.handling_fault().expect("the load's fault entered the handler");
        assert_eq!((t.cause, t.tval, t.pc), (5, 0x10, 0x8000_000c));
        // A handler that skips the load and returns: the exit is no longer in its handling.
        let skip = [asm::csrrs(T1, MEPC, ZERO), asm::addi(T1, T1, 4), asm::csrrw(ZERO, MEPC, T1), asm::MRET];
        let mut r = trap_with_handler(asm::ld(A1, ZERO, 0x10), &skip);
        assert_eq!(r.run(100_000), Exit::Halted(7));
        assert_eq!(r.core.stats().traps, 1);
        assert_eq!(r.core.handling_fault(), None, "mret ended the handling");
    }

    #[test]
    fn an_ecall_is_a_request_not_a_fault() {
        let mut b = trap_with_handler(asm::ECALL, &exiting_handler());
        assert_eq!(b.run(100_000), Exit::Halted(7));
        assert_eq!(b.core.stats().traps, 1);
        assert_eq!(b.core.handling_fault(), None);
    }

    #[test]
    fn fatal_trap_names_core_pc_and_fp_hint() {
        let mut b = Bench::new(&[asm::NOP, 0x0000_0053], false);
        let Exit::Error(e) = b.run(1000) else { panic!("expected error") };
        assert_eq!(
            e.to_string(),
            "core 0, pc 0x80000004: illegal instruction 0x00000053 (reserved F/D encoding or rounding mode, or FP off: mstatus.FS = 0) (no trap handler: mtvec = 0)"
        );
        assert_eq!(b.run(2000), Exit::Error(e), "errors are sticky");
    }

    #[test]
    fn load_outside_memory_is_an_access_fault() {
        let mut b = Bench::new(&[asm::ld(A0, ZERO, 0x10)], false);
        let Exit::Error(e) = b.run(1000) else { panic!() };
        assert!(e.to_string().contains("load access fault at 0x10 (outside memory)"), "{e}");
    }

    #[test]
    fn trap_loop_is_detected() {
        let mut c = asm::la_index(T0, 0, 8).to_vec();
        c.extend([asm::csrrw(ZERO, MTVEC, T0), asm::ECALL]);
        pad(&mut c, 8);
        c.push(0xffff_ffff); // illegal at the handler entry
        let mut b = Bench::new(&c, false);
        let Exit::Error(e) = b.run(10_000) else { panic!() };
        assert!(matches!(e.kind, ErrorKind::TrapLoop { cause: 2, .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "core 0, pc 0x80000020: environment call (ecall) from M-mode at pc 0x8000000c, instruction 0x00000073; then the trap handler (mtvec 0x80000020) trapped at its entry repeatedly: illegal instruction 0xffffffff (unknown encoding) (trap loop)"
        );
    }

    /// mtvec = 0x4000_0000, outside memory: the handler's entry cannot be fetched.
    fn unfetchable_handler(trap: u32) -> Vec<u32> {
        vec![asm::lui(T0, 0x40000), asm::csrrw(ZERO, MTVEC, T0), trap]
    }

    #[test]
    fn trap_loop_at_unfetchable_mtvec_names_the_first_trap() {
        let mut b = Bench::new(&unfetchable_handler(asm::ld(A0, ZERO, 0x10)), false);
        let Exit::Error(e) = b.run(10_000) else { panic!() };
        assert_eq!(
            e.to_string(),
            "core 0, pc 0x40000000: load access fault at 0x10 (outside memory) at pc 0x80000008, instruction 0x01003503; then the trap handler (mtvec 0x40000000) trapped at its entry repeatedly: instruction access fault at 0x40000000 (outside memory) (trap loop)"
        );
        assert_eq!(b.core.stats().traps, 3, "the first trap and two at the entry; the third is the error");
    }

    #[test]
    fn trap_loop_names_an_unmodelled_first_instruction() {
        let mut b = Bench::new(&unfetchable_handler(0x40b5_7533), false); // andn a0, a0, a1
        let Exit::Error(e) = b.run(10_000) else { panic!() };
        assert_eq!(
            e.to_string(),
            "core 0, pc 0x40000000: illegal instruction 0x40b57533 (from the Zbb (bit manipulation: basic) extension, which nanopu does not model) at pc 0x80000008; then the trap handler (mtvec 0x40000000) trapped at its entry repeatedly: instruction access fault at 0x40000000 (outside memory) (trap loop)"
        );
    }

    /// Handler at index 8: t1 += `step`, exit 7 once t1 >= 10, else an illegal instruction.
    fn trapping_handler(step: i32) -> Vec<u32> {
        let mut c = asm::la_index(T0, 0, 8).to_vec();
        c.extend([asm::csrrw(ZERO, MTVEC, T0), asm::addi(T2, ZERO, 10), asm::ECALL]);
        pad(&mut c, 8);
        c.extend([asm::addi(T1, T1, step), asm::b(8, T2, T1, 5), 0x0000_0000]);
        c.extend([asm::addi(A0, ZERO, 7)]);
        c.extend(asm::exit_with(A0));
        c
    }

    #[test]
    fn handler_trapping_inside_itself_names_the_first_trap() {
        let mut b = Bench::new(&trapping_handler(0), false);
        let Exit::Error(e) = b.run(10_000) else { panic!() };
        assert!(matches!(e.kind, ErrorKind::TrapLoop { cause: 2, first: Some(_), .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "core 0, pc 0x80000028: environment call (ecall) from M-mode at pc 0x80000010, instruction 0x00000073; then the trap handler (mtvec 0x80000020) trapped at pc 0x80000028 repeatedly: illegal instruction 0x00000000 (all-zero encoding: jumped into unwritten memory?) (trap loop)"
        );
    }

    #[test]
    fn handler_trapping_while_making_progress_is_no_loop() {
        let mut b = Bench::new(&trapping_handler(1), false);
        assert_eq!(b.run(100_000), Exit::Halted(7));
        assert_eq!(b.core.stats().traps, 10);
    }

    #[test]
    fn trap_loop_entered_directly_names_only_the_loop() {
        let mut c = asm::la_index(T0, 0, 8).to_vec();
        c.extend([asm::csrrw(ZERO, MTVEC, T0), asm::i(0, T0, 0, ZERO, 0x67)]);
        pad(&mut c, 8);
        c.push(0xffff_ffff);
        let mut b = Bench::new(&c, false);
        let Exit::Error(e) = b.run(10_000) else { panic!() };
        assert_eq!(
            e.to_string(),
            "core 0, pc 0x80000020: illegal instruction 0xffffffff (unknown encoding) repeated at the trap handler's entry (trap loop)"
        );
    }

    #[test]
    fn mret_ends_a_trap_so_the_next_is_a_first() {
        // Handler at 16 returns past the ecall; the second ecall then loops at a bad mtvec.
        let h = 16;
        let mut c = asm::la_index(T0, 0, h).to_vec();
        c.extend([asm::csrrw(ZERO, MTVEC, T0), asm::ECALL, asm::lui(T0, 0x40000)]);
        c.extend([asm::csrrw(ZERO, MTVEC, T0), asm::EBREAK]);
        pad(&mut c, h);
        c.extend([asm::csrrs(T1, MEPC, ZERO), asm::addi(T1, T1, 4), asm::csrrw(ZERO, MEPC, T1), asm::MRET]);
        let mut b = Bench::new(&c, false);
        let Exit::Error(e) = b.run(10_000) else { panic!() };
        assert!(
            e.to_string().starts_with(
                "core 0, pc 0x40000000: breakpoint (ebreak) at pc 0x80000018, instruction 0x00100073; "
            ),
            "{e}"
        );
    }

    /// Set up: handler at index 32 exits with mcause's low byte; mie = `mie`, MIE on.
    fn irq_program(mie: i32, timer: Option<i32>, vectored: bool) -> Vec<u32> {
        let h = 32;
        let mut c = asm::la_index(T0, 0, h).to_vec();
        if vectored {
            c.push(asm::addi(T0, T0, 1));
        }
        c.push(asm::csrrw(ZERO, MTVEC, T0));
        if let Some(t) = timer {
            c.extend([asm::lui(T1, (MTIMECMP >> 12) as u32), asm::addi(T2, ZERO, t), asm::sd(T2, T1, 0)]);
        }
        c.extend([
            asm::lui(T1, mie as u32 >> 12),
            asm::addi(T1, T1, mie & 0xfff),
            asm::csrrw(ZERO, MIE_CSR, T1),
        ]);
        c.extend([asm::csrrwi(ZERO, MSTATUS, 8), asm::jal(ZERO, 0)]);
        pad(&mut c, h);
        c.extend([asm::csrrs(A0, MCAUSE, ZERO), asm::i(0xff, A0, 7, A0, 0x13)]);
        c.extend(asm::exit_with(A0));
        c
    }

    #[test]
    fn timer_interrupt_fires_at_mtimecmp() {
        // mtimecmp = 2 ticks of the 1 MHz RTC: 6,400 cycles at 3.2 GHz.
        let mut b = Bench::new(&irq_program(1 << 7, Some(2), false), false);
        assert_eq!(b.run(100_000), Exit::Halted(7));
        assert!(b.core.cycle() >= 6400);
        assert_eq!(b.core.stats().interrupts, 1);
    }

    #[test]
    fn nic_interrupt_is_vectored_to_entry_16() {
        let mut c = irq_program(1 << 16, None, true);
        // Vectored: cause 16 enters at base + 64 = index 48; put "exit 99" there.
        pad(&mut c, 48);
        c.push(asm::addi(A0, ZERO, 99));
        c.extend(asm::exit_with(A0));
        let mut b = Bench::new(&c, false);
        assert_eq!(b.run(2000), Exit::Limit);
        b.core.set_irq(16, true);
        assert_eq!(b.run(4000), Exit::Halted(99));
    }

    #[test]
    fn wfi_reports_and_wakes_on_timer() {
        let mut c = vec![asm::lui(T1, (MTIMECMP >> 12) as u32), asm::addi(T2, ZERO, 2), asm::sd(T2, T1, 0)];
        c.extend([asm::addi(T1, ZERO, 128), asm::csrrw(ZERO, MIE_CSR, T1), asm::WFI, asm::addi(A0, ZERO, 5)]);
        c.extend(asm::exit_with(A0));
        let mut b = Bench::new(&c, false);
        assert_eq!(b.run(100_000), Exit::Wfi);
        assert!(!b.core.interrupt_pending(&b.mem));
        assert_eq!(b.core.timer_deadline(&b.mem), Some(6400), "2 RTC ticks");
        b.core.advance_to(6399, StallKind::Wfi);
        assert!(!b.core.interrupt_pending(&b.mem));
        b.core.advance_to(6400, StallKind::Wfi);
        assert!(b.core.interrupt_pending(&b.mem));
        assert_eq!(b.run(100_000), Exit::Halted(5), "MIE off: wakes and continues");
        assert!(b.core.stats().stall_wfi > 0);
    }
}
