//! The fast core engine (`Engine::Fast`). The reference, `Core::run_block`, fetches every
//! instruction through `fetch` (I-cache line step, page check, then the pre-decoded op) and
//! executes it with `exec`; `Core::run_block_fast` gives the same architectural state,
//! cycles and counters with less host work (docs/profile.md "Core engines" has the
//! figures):
//!
//! - Inside a pre-decoded code page (`fetch_pn`, `fetch_ops`) it runs a loop of its own
//!   with the PC and the cycle count in host registers: the page check once per control
//!   transfer that leaves the page, the horizon and I-cache line checks against the core's
//!   fields, the op read straight from the page. The page's pre-decoded ops are the block
//!   cache (shared by every core running the program, re-decoded after `fence.i` by
//!   `NodeMem::code_page`), so there is nothing of the engine's own to invalidate.
//! - The common instructions are executed inline with the interpreter's own pieces: the
//!   integer ALU (`exec::alu`), loads and stores (`load_op`, `int_store`: TLB, caches,
//!   devices, traps), conditional branches and `jal` (the same `BranchPred` calls and
//!   mispredict charge as `exec`), `jalr` (`Core::jalr`); each after `exec`'s prologue
//!   (scoreboard stall, issue, `instret`, the mul/div write-port rule).
//! - Everything else (mul/div, CSRs, atomics, F/D, network registers, system) goes to
//!   `exec_rare`, the interpreter's code for it, after the same prologue; the loop then
//!   hands back to `run_block_fast`, which looks at the page again (`fence.i` may have
//!   re-decoded it) and the horizon (a CSR write may have moved it).
//! - Code that is not pre-decoded (written at run time) runs one instruction at a time
//!   through `fetch` and `exec`.
//!
//! `tests/engines.rs` runs both engines side by side on every program of `sw/build` and on
//! random programs, comparing `Core::state_digest` after every run; the harness's
//! `engines` test does the same for a 64-core NanoSort.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::ControlFlow;

use crate::core::{Core, Ex};
use crate::error::Exit;
use crate::exec::alu;
use crate::mem::NodeMem;
use crate::op::{Kind, Op, NREGS};
use crate::platform::Platform;
use crate::program::PAGE;

/// A load at `$addr` of `$n` bytes, extended by `$ext`, as `exec` does it: the core's pc
/// and cycle written back first (the load's miss, trap or device access sees them), the
/// cycle read back after.
macro_rules! load {
    ($core:ident, $mem:ident, $plat:ident, $op:ident, $pc:ident, $cycle:ident, $addr:expr, $n:literal, $ext:expr) => {{
        ($core.pc, $core.cycle) = ($pc, $cycle);
        // SAFETY: `$op` points to the op in its code page (`run_page`).
        let v = $core.load_op::<$n, P>($mem, $plat, unsafe { *$op }, $addr)?;
        $cycle = $core.cycle;
        $ext(v)
    }};
}

/// A store of the low `$n` bytes of `$v` at `$addr`, as `exec` does it; the pc moves on in
/// `store_op` (a trap puts it back); evaluates to the pc after it.
macro_rules! store {
    ($core:ident, $mem:ident, $plat:ident, $pc:ident, $cycle:ident, $addr:expr, $v:expr, $next:expr, $n:literal) => {{
        ($core.pc, $core.cycle) = ($pc, $cycle);
        $core.int_store::<$n, P>($mem, $plat, $addr, $v, $next)?;
        $cycle = $core.cycle;
        $core.pc
    }};
}

impl Core {
    /// `run_block` for the fast engine: execute until `block_end` or an event.
    pub(crate) fn run_block_fast<P: Platform>(&mut self, mem: &mut NodeMem, plat: &mut P) -> Option<Exit> {
        while self.cycle < self.block_end {
            let r = if self.pc / PAGE == self.fetch_pn {
                self.run_page(mem, plat)
            } else {
                // Another page (`fetch` looks it up) or code that is not pre-decoded.
                let op = self.fetch(mem);
                self.exec(op, mem, plat)
            };
            if let ControlFlow::Break(e) = self.settle(mem, r) {
                return e;
            }
        }
        None
    }

    /// Execute from `self.pc` in the current code page until the horizon, the page's end
    /// or a jump out of it (`Ok`, the core's pc and cycle written back), after an
    /// instruction `exec_rare` ran (`Ok`), or at an instruction's trap or event (`Err`, as
    /// `exec` returns it, for `settle`).
    #[inline(always)]
    fn run_page<P: Platform>(&mut self, mem: &mut NodeMem, plat: &mut P) -> Result<(), Ex> {
        let (page, ops) = (self.fetch_pn, self.fetch_ops);
        let (mut pc, mut cycle) = (self.pc, self.cycle);
        // The line the last instruction was fetched from, once it is known to lie in this
        // page: a pc in that line is in the page too, so the page check goes with the line
        // change (a line no larger than a page; otherwise every instruction takes that path).
        let shift = self.line_shift;
        let lines_fit = shift <= PAGE.trailing_zeros();
        let mut line = u64::MAX;
        while cycle < self.block_end {
            if pc >> shift != line {
                if pc / PAGE != page {
                    break;
                }
                cycle = self.enter_line(mem, pc, cycle);
                line = if lines_fit { self.iline } else { u64::MAX };
            }
            // SAFETY: `ops` points to the 2048 decoded ops of page `page` (`fetch_ops` while
            // `fetch_pn == page`; nothing in this loop changes either: `fence.i` is left to
            // `exec_rare`, after which the loop returns), alive for this run; `pc` is
            // inside that page. The slow paths read the op again through `at`, so that it
            // is not kept whole in the hot loop.
            let at = unsafe { ops.add(((pc % PAGE) / 2) as usize) };
            let op = unsafe { *at };
            cycle = self.issue(at, cycle);
            let (a, b) = (self.slot(op.rs1), self.slot(op.rs2));
            let imm = op.imm as i64 as u64;
            let next = pc.wrapping_add(op.len() as u64);
            let addr = a.wrapping_add(imm);
            let v = match op.kind() {
                Kind::Lb => load!(self, mem, plat, at, pc, cycle, addr, 1, |v| v as i8 as u64),
                Kind::Lh => load!(self, mem, plat, at, pc, cycle, addr, 2, |v| v as i16 as u64),
                Kind::Lw => load!(self, mem, plat, at, pc, cycle, addr, 4, |v| v as i32 as u64),
                Kind::Ld => load!(self, mem, plat, at, pc, cycle, addr, 8, |v| v),
                Kind::Lbu => load!(self, mem, plat, at, pc, cycle, addr, 1, |v| v),
                Kind::Lhu => load!(self, mem, plat, at, pc, cycle, addr, 2, |v| v),
                Kind::Lwu => load!(self, mem, plat, at, pc, cycle, addr, 4, |v| v),
                Kind::Sb => {
                    pc = store!(self, mem, plat, pc, cycle, addr, b, next, 1);
                    continue;
                }
                Kind::Sh => {
                    pc = store!(self, mem, plat, pc, cycle, addr, b, next, 2);
                    continue;
                }
                Kind::Sw => {
                    pc = store!(self, mem, plat, pc, cycle, addr, b, next, 4);
                    continue;
                }
                Kind::Sd => {
                    pc = store!(self, mem, plat, pc, cycle, addr, b, next, 8);
                    continue;
                }
                Kind::Beq => {
                    pc = self.branch_to(op, pc, a == b, next, &mut cycle);
                    continue;
                }
                Kind::Bne => {
                    pc = self.branch_to(op, pc, a != b, next, &mut cycle);
                    continue;
                }
                Kind::Blt => {
                    pc = self.branch_to(op, pc, (a as i64) < (b as i64), next, &mut cycle);
                    continue;
                }
                Kind::Bge => {
                    pc = self.branch_to(op, pc, (a as i64) >= (b as i64), next, &mut cycle);
                    continue;
                }
                Kind::Bltu => {
                    pc = self.branch_to(op, pc, a < b, next, &mut cycle);
                    continue;
                }
                Kind::Bgeu => {
                    pc = self.branch_to(op, pc, a >= b, next, &mut cycle);
                    continue;
                }
                Kind::Jal => {
                    pc = self.jal_to(op, pc, next, &mut cycle);
                    continue;
                }
                Kind::Jalr => {
                    (self.pc, self.cycle) = (pc, cycle);
                    // SAFETY: as above.
                    self.jalr(unsafe { *at }, a, next)?;
                    (pc, cycle) = (self.pc, self.cycle);
                    continue;
                }
                k => match alu(k, a, b, imm, pc) {
                    Some(v) => v,
                    None => {
                        (self.pc, self.cycle) = (pc, cycle);
                        // SAFETY: as above.
                        return self.exec_rare(unsafe { *at }, mem, plat, a, b);
                    }
                },
            };
            self.set_slot(op.rd, v);
            pc = next;
        }
        (self.pc, self.cycle) = (pc, cycle);
        Ok(())
    }

    /// Integer register slot `i` of a pre-decoded op.
    #[inline(always)]
    fn slot(&self, i: u8) -> u64 {
        debug_assert!((i as usize) < NREGS);
        // SAFETY: the ops of a code page come from `decode_parcels`, whose register fields
        // are below NREGS (op.rs: x0..x31, SINK, RX1, RX2).
        unsafe { *self.x.get_unchecked(i as usize) }
    }

    #[inline(always)]
    fn set_slot(&mut self, i: u8, v: u64) {
        debug_assert!((i as usize) < NREGS);
        // SAFETY: as in `slot`.
        unsafe { *self.x.get_unchecked_mut(i as usize) = v }
    }

    /// `exec`'s prologue at local cycle `cycle`: wait for the source operands (scoreboard),
    /// issue, count the instruction, and the mul/div write-port rule. Returns the cycle
    /// after issue.
    #[inline(always)]
    fn issue(&mut self, at: *const Op, mut cycle: u64) -> u64 {
        // SAFETY: `at` is an op of the current code page (`run_page`).
        let op = unsafe { *at };
        let (rs1, rs2) = (op.rs1 as usize, op.rs2 as usize);
        debug_assert!(rs1.max(rs2) < NREGS);
        // SAFETY: as in `slot`.
        let r = unsafe { (*self.ready.get_unchecked(rs1)).max(*self.ready.get_unchecked(rs2)) };
        if r > cycle {
            self.cycle = cycle;
            self.stall(r, rs1, rs2);
            cycle = self.cycle;
        }
        cycle += 1;
        self.stats.instret += 1;
        if cycle == self.muldiv_watch {
            // SAFETY: as above.
            self.muldiv_port_taken(unsafe { *at });
        }
        cycle
    }

    /// `exec`'s conditional branch at `pc`: the predictor, a mispredict's penalty added to
    /// `cycle`; returns the next pc.
    #[inline(always)]
    fn branch_to(&mut self, op: Op, pc: u64, taken: bool, next: u64, cycle: &mut u64) -> u64 {
        let target = pc.wrapping_add(op.imm as i64 as u64);
        if self.bp.branch(pc, taken, target) {
            self.charge_mispredict(cycle);
        }
        if taken {
            target
        } else {
            next
        }
    }

    /// `exec`'s `jal` at `pc`; returns the target.
    #[inline(always)]
    fn jal_to(&mut self, op: Op, pc: u64, next: u64, cycle: &mut u64) -> u64 {
        let target = pc.wrapping_add(op.imm as i64 as u64);
        let link = matches!(op.rd, 1 | 5).then_some(next);
        if self.bp.jal(pc, target, link) {
            self.charge_mispredict(cycle);
        }
        self.set_slot(op.rd, next);
        target
    }

    /// `Core::mispredict` on a local cycle count.
    #[inline(always)]
    fn charge_mispredict(&mut self, cycle: &mut u64) {
        *cycle += self.t.mispredict_penalty;
        self.stats.stall_branch += self.t.mispredict_penalty;
    }

    /// `fetch`'s I-cache step for the instruction at `pc`, at local cycle `cycle`; returns
    /// the cycle after any miss.
    #[inline(always)]
    fn enter_line(&mut self, mem: &mut NodeMem, pc: u64, cycle: u64) -> u64 {
        let line = pc >> self.line_shift;
        if line == self.iline {
            return cycle;
        }
        if line == self.iprev {
            (self.iprev, self.iline) = (self.iline, line);
            return cycle;
        }
        (self.pc, self.cycle) = (pc, cycle);
        self.fetch_line(mem, line);
        self.cycle
    }
}

impl Core {
    /// A hash of the core's state for comparing engines (`tests/engines.rs`): registers
    /// (integer and FP), pc, local cycle, every counter, CSRs, the scoreboards, the mul/div
    /// unit, the branch predictor, the L1 caches, the lines the fetch and load/store paths
    /// hold, the LR reservation. Left out: what only `exec` and the driver touch (the
    /// coherence bookkeeping of cores sharing memory, the trap-loop tracker, the netRX
    /// stash) and host-side caches (TLBs, fetch page).
    pub fn state_digest(&self) -> u64 {
        let mut h = DefaultHasher::new();
        (self.x, self.ready, self.ready_muldiv, self.pc, self.cycle).hash(&mut h);
        (self.iline, self.iprev, self.dline, self.muldiv_free, &self.stats).hash(&mut h);
        (&self.csr, &self.fp, &self.l1i, &self.l1d, &self.bp).hash(&mut h);
        (self.reservation, self.irq_lines, self.done.is_some()).hash(&mut h);
        h.finish()
    }
}

impl NodeMem {
    /// A hash of the node's shared timing state (the L2's tags and replacement state), for
    /// comparing engines (`Core::state_digest` has each core's).
    pub fn timing_digest(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.l2.hash(&mut h);
        h.finish()
    }
}
