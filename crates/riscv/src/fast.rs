//! The fast core engine (`Engine::Fast`). The reference, `Core::run_block`, fetches every
//! instruction through `fetch` (I-cache line step, page check, then the pre-decoded op) and
//! executes it with `exec`; `Core::run_block_fast` must give the same architectural state,
//! cycles and counters with less host work (docs/profile.md "Core engines" has what it
//! gains, which is nothing yet, and why):
//!
//! - After each instruction `exec` ran, the engine runs the *block* that follows in the
//!   same pre-decoded code page: the register-to-register and immediate integer
//!   instructions (`exec::alu`, the semantics `exec` uses), with the PC and the cycle count
//!   in host registers, the scoreboard check and stall accounting of `exec`
//!   (`Core::stall`), and the I-cache step of `fetch` exactly where `fetch` takes it, when
//!   the PC enters another line. No page check: the block stops at the page's end.
//! - The block stops at the first other instruction (load, store, branch, jump, mul/div,
//!   CSR, atomic, F/D, network register, system), which `exec` itself then executes, so
//!   that its timing (cache and TLB misses, the branch predictor, mul/div latency, CSR and
//!   network-register side effects, traps) is the interpreter's by construction. Its
//!   I-cache step is taken before the horizon is passed, as `fetch` and `exec` are one step
//!   the horizon cannot split.
//! - No block is kept between visits: the page's pre-decoded ops are the cache (shared by
//!   every core running the program, re-decoded after `fence.i` by `NodeMem::code_page`),
//!   so there is nothing of the engine's own to invalidate and no memory per core. Code
//!   that is not pre-decoded (written at run time) runs one instruction at a time.
//!
//! `tests/engines.rs` runs both engines side by side on every program of `sw/build` and on
//! random programs, comparing `Core::state_digest` after every run; the harness's
//! `engines` test does the same for a 64-core NanoSort.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::ControlFlow;

use crate::core::Core;
use crate::error::Exit;
use crate::exec::alu;
use crate::mem::NodeMem;
use crate::op::Op;
use crate::platform::Platform;
use crate::program::PAGE;

impl Core {
    /// `run_block` for the fast engine: execute until `block_end` or an event.
    pub(crate) fn run_block_fast<P: Platform>(&mut self, mem: &mut NodeMem, plat: &mut P) -> Option<Exit> {
        while self.cycle < self.block_end {
            let mut op = self.fetch(mem);
            loop {
                let r = self.exec(op, mem, plat);
                if let ControlFlow::Break(e) = self.settle(mem, r) {
                    return e;
                }
                // Not pre-decoded (code written at run time): one instruction at a time.
                if self.pc / PAGE != self.fetch_pn {
                    break;
                }
                match self.run_alu(mem) {
                    Some(next) => op = next,
                    None => break,
                }
            }
        }
        None
    }

    /// Execute the integer ALU instructions from `self.pc` on, in the current code page
    /// (`fetch_pn`, `fetch_ops`), up to the first other instruction, the page's end or the
    /// horizon. Returns that other instruction's op, fetched as `fetch` would have fetched
    /// it (before the horizon, its I-cache step taken): `exec` is next.
    #[inline(always)]
    fn run_alu(&mut self, mem: &mut NodeMem) -> Option<Op> {
        let (page, ops) = (self.fetch_pn, self.fetch_ops);
        let (mut pc, mut cycle) = (self.pc, self.cycle);
        let op = loop {
            if cycle >= self.block_end || pc / PAGE != page {
                (self.pc, self.cycle) = (pc, cycle);
                return None;
            }
            // SAFETY: `ops` points to the 2048 decoded ops of page `page` (`fetch_ops` while
            // `fetch_pn == page`; nothing here changes either), alive for this run; `pc` is
            // inside that page.
            let op = unsafe { *ops.add(((pc % PAGE) / 2) as usize) };
            let (rs1, rs2) = (op.rs1 as usize, op.rs2 as usize);
            let imm = op.imm as i64 as u64;
            let Some(v) = alu(op.kind(), self.x[rs1], self.x[rs2], imm, pc) else {
                break op;
            };
            // `fetch`'s I-cache step, then `exec`'s: scoreboard, issue, write back.
            cycle = self.enter_line(mem, pc, cycle);
            let r = self.ready[rs1].max(self.ready[rs2]);
            if r > cycle {
                self.cycle = cycle;
                self.stall(r, rs1, rs2);
                cycle = self.cycle;
            }
            cycle += 1;
            self.stats.instret += 1;
            if cycle == self.muldiv_watch {
                self.muldiv_port_taken(op); // as `exec` does: the M unit's write port
            }
            self.x[op.rd as usize] = v;
            pc = pc.wrapping_add(op.len() as u64);
        };
        self.cycle = self.enter_line(mem, pc, cycle);
        self.pc = pc;
        Some(op)
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
