//! The core engines. `Interp` is the reference: `Core::run_block` fetches every instruction
//! through `fetch` (I-cache line check, page check, then the pre-decoded op) and executes it
//! with `exec`. `Fast` gives the same results with less host work per instruction
//! (docs/profile.md "Core engines"):
//!
//! - A *block* is a run of instructions through one pre-decoded code page, entered by one
//!   ordinary `fetch` and left at a control transfer, the page's end, the run's horizon or an
//!   event. Inside it the next op is read straight from the page's ops: the page check is
//!   made once per block, and the I-cache is consulted exactly where `fetch` would consult
//!   it, when the PC enters another line.
//! - Register-to-register and immediate integer instructions (`exec::alu`, the same
//!   semantics `exec` uses) run with the PC and the cycle count in host registers, with the
//!   scoreboard check `exec` makes and its stall accounting (`Core::stall`).
//! - Every other instruction (loads, stores, branches, jumps, mul/div, CSRs, atomics, F/D,
//!   the network registers, system instructions) goes through `exec` itself, so its timing
//!   (cache and TLB misses, the branch predictor, mul/div latency, CSR and network-register
//!   side effects, traps) is the interpreter's by construction. A block goes on after one of
//!   them only if it fell through to the next instruction in the same page.
//!
//! No block is kept between visits: the page's pre-decoded ops are the cache (shared by
//! every core running the program, re-decoded after `fence.i` by `NodeMem::code_page`),
//! so there is nothing of the engine's own to invalidate and no memory per core.
//! `tests` below and `tests/engines.rs` run both engines side by side.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::ControlFlow;
use std::str::FromStr;

use crate::core::Core;
use crate::error::Exit;
use crate::exec::alu;
use crate::mem::NodeMem;
use crate::platform::Platform;
use crate::program::PAGE;

/// Which engine executes a core's instructions (`--engine`, `[node] engine`). Both give
/// the same architectural state, cycles and counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// The reference interpreter: one fetch and one `exec` per instruction (default).
    #[default]
    Interp,
    /// Blocks through a code page with the integer ALU in host registers.
    Fast,
}

impl Engine {
    pub const NAMES: [&'static str; 2] = ["interp", "fast"];

    pub fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Fast => "fast",
        }
    }
}

impl FromStr for Engine {
    type Err = String;

    fn from_str(s: &str) -> Result<Engine, String> {
        match s {
            "interp" => Ok(Engine::Interp),
            "fast" => Ok(Engine::Fast),
            _ => Err(format!("engine '{s}' is not one of: {}", Engine::NAMES.join(", "))),
        }
    }
}

impl Core {
    /// `run_block` for the fast engine: execute until `block_end` or an event.
    pub(crate) fn run_block_fast<P: Platform>(&mut self, mem: &mut NodeMem, plat: &mut P) -> Option<Exit> {
        while self.cycle < self.block_end {
            let op = self.fetch(mem);
            let r = self.exec(op, mem, plat);
            if let ControlFlow::Break(e) = self.settle(mem, r) {
                return e;
            }
            // Not pre-decoded (code written at run time): one instruction at a time.
            if self.pc / PAGE == self.fetch_pn {
                self.run_alu(mem);
            }
        }
        None
    }

    /// Execute the integer ALU instructions from `self.pc` on, in the current code page
    /// (`fetch_pn`, `fetch_ops`), up to the first other instruction (left for `exec`), the
    /// page's end or the horizon.
    #[inline(always)]
    fn run_alu(&mut self, mem: &mut NodeMem) {
        let (page, ops) = (self.fetch_pn, self.fetch_ops);
        let (mut pc, mut cycle) = (self.pc, self.cycle);
        while cycle < self.block_end && pc / PAGE == page {
            // SAFETY: `ops` points to the 2048 decoded ops of page `page` (`fetch_ops` while
            // `fetch_pn == page`; nothing here changes either), alive for this run; `pc` is
            // inside that page.
            let op = unsafe { *ops.add(((pc % PAGE) / 2) as usize) };
            let (rs1, rs2) = (op.rs1 as usize, op.rs2 as usize);
            let imm = op.imm as i64 as u64;
            let Some(v) = alu(op.kind(), self.x[rs1], self.x[rs2], imm, pc) else {
                break; // left for `fetch` and `exec`, as one step that a horizon cannot split
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
            self.x[op.rd as usize] = v;
            pc = pc.wrapping_add(op.len() as u64);
        }
        (self.pc, self.cycle) = (pc, cycle);
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
    /// A hash of everything that makes this core's future: registers (integer and FP),
    /// pc, local cycle, every counter, CSRs, the scoreboards, the mul/div unit, the branch
    /// predictor, the L1 caches and the lines the fetch and load/store paths hold. Two
    /// engines that agree on it at every checkpoint agree on the run (`tests/engines.rs`).
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
