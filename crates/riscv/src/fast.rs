//! The fast core engine (`Engine::Fast`). The reference, `Core::run_block`, fetches every
//! instruction through `fetch` (I-cache line step, page check, then the pre-decoded op) and
//! executes it with `exec`; `Core::run_block_fast` gives the same architectural state,
//! cycles and counters with less host work (docs/profile.md "Core engines" has the
//! figures):
//!
//! - It runs line by line (`run_lines`): the ops of the current code page (`fetch_pn`,
//!   `fetch_ops`, the node's decoded ops that `fetch` reads, shared with every node that
//!   did not write its code) from the pc to the end of its I-cache line, the first taken
//!   branch or jump, or an instruction `exec_rare` runs, with the pc and the cycle count in host registers: one I-cache line
//!   step and one page check per run, where `fetch` takes them per instruction. Nothing
//!   is copied or cached per node: an earlier version cut blocks into a cache per node,
//!   which cost a lookup per block and, with one cache per node, 18% more host L1 data
//!   misses than the interpreter on a 256-core NanoSort (docs/profile.md "Core engines").
//! - The common instructions run inline with the interpreter's own pieces: the integer
//!   ALU (`exec::alu`), loads and stores (`load_op`, `int_store`: TLB, caches, devices,
//!   traps), conditional branches and `jal` (the same `BranchPred` calls and mispredict
//!   charge as `exec`), `jalr` (`Core::jalr`); each after `exec`'s prologue (scoreboard
//!   stall, issue, `instret`, the mul/div write-port rule), whose checks are skipped while
//!   the cycle is past every pending result (`Core::quiet_from`). The dispatch names every
//!   kind (one jump table, no range check).
//! - Everything else (mul/div, CSRs, atomics, F/D, network registers, system) goes to
//!   `exec_rare`, the interpreter's code for it, after the same prologue. After a multiply
//!   or divide the run goes on (it changes neither code, horizon nor page); after anything
//!   else the loop hands back to `run_block_fast`, which looks at the page again
//!   (`fence.i` may have re-decoded it) and the horizon (a CSR write may have moved it).
//! - Code that is not pre-decoded (written at run time) and the first instruction in
//!   another page run through `fetch` and `exec`.
//!
//! `tests/engines.rs` runs both engines side by side on every program of `sw/build`, on
//! random programs and on random self-modifying programs, comparing `Core::state_digest`
//! after every run; the harness's `engines` test does the same for a 64-core NanoSort.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::ControlFlow;

use crate::core::{Core, Ex};
use crate::error::Exit;
use crate::exec::alu;
use crate::mem::NodeMem;
use crate::op::{Kind, Op};
use crate::platform::Platform;
use crate::program::PAGE;

/// A load at `$addr` of `$n` bytes, extended by `$ext`, as `exec` does it: the core's pc
/// and cycle written back first (the load's miss, trap or device access sees them), the
/// cycle read back after.
macro_rules! load {
    ($core:ident, $mem:ident, $plat:ident, $op:ident, $pc:ident, $cycle:ident, $addr:expr, $n:literal, $ext:expr) => {{
        ($core.pc, $core.cycle) = ($pc, *$cycle);
        // SAFETY: `$op` points to an op of the current code page (`run_lines`).
        let v = $core.load_op::<$n, P>($mem, $plat, unsafe { *$op }, $addr)?;
        *$cycle = $core.cycle;
        // SAFETY: as above; the load set its destination's scoreboard entry.
        $core.quiet_from = $core.quiet_from.max($core.ready[unsafe { (*$op).rd } as usize]);
        $ext(v)
    }};
}

/// A store of the low `$n` bytes of `$v` at `$addr`, as `exec` does it; the pc moves on in
/// `store_op` (a trap puts it back); evaluates to the pc after it.
macro_rules! store {
    ($core:ident, $mem:ident, $plat:ident, $pc:ident, $cycle:ident, $addr:expr, $v:expr, $next:expr, $n:literal) => {{
        ($core.pc, $core.cycle) = ($pc, *$cycle);
        $core.int_store::<$n, P>($mem, $plat, $addr, $v, $next)?;
        *$cycle = $core.cycle;
        $core.pc
    }};
}

/// `exec::alu` for the one kind `$k` (which it gives a value for), folded at compile time.
macro_rules! alu_of {
    ($k:ident, $a:ident, $b:ident, $imm:ident, $pc:ident) => {
        // SAFETY: `alu` gives a value for every kind `alu_of!` is used with.
        unsafe { alu(Kind::$k, $a, $b, $imm, $pc).unwrap_unchecked() }
    };
}

/// Where an op leaves the pc (`Core::step`).
enum Flow {
    /// The next op, in order.
    Next(u64),
    /// A taken branch or a jump: the run ends here.
    Jump(u64),
    /// `exec_rare` ran the op: the core's pc and cycle are its own.
    Rare,
}

impl Core {
    /// `run_block` for the fast engine: execute until `block_end` or an event.
    pub(crate) fn run_block_fast<P: Platform>(&mut self, mem: &mut NodeMem, plat: &mut P) -> Option<Exit> {
        self.bound_scoreboard();
        while self.cycle < self.block_end {
            let r = if self.pc / PAGE == self.fetch_pn {
                self.run_lines(mem, plat)
            } else {
                // Another page (`fetch` looks it up) or code that is not pre-decoded.
                let op = self.fetch(mem);
                let r = self.exec(op, mem, plat);
                self.bound_scoreboard();
                r
            };
            let stopped = r.is_err();
            if let ControlFlow::Break(e) = self.settle(mem, r) {
                return e;
            }
            if stopped {
                // An op that trapped may have set a scoreboard entry before it did.
                self.bound_scoreboard();
            }
        }
        None
    }

    /// Set `quiet_from` to the latest pending result (and `muldiv_watch`). Computed when
    /// the engine starts on a horizon, and after what runs outside `run_lines`; inside it,
    /// every op that sets an entry raises the bound (`load!`, `issue_checked`, `step`'s
    /// `exec_rare` arm), so the bound holds without a pass over the registers at each
    /// entry (2.7% of the engine's host time when it made one, docs/profile.md).
    fn bound_scoreboard(&mut self) {
        self.quiet_from = self.ready.iter().fold(self.muldiv_watch, |m, &r| m.max(r));
    }

    /// Execute line runs (the module's text) from `self.pc` in the current code page until
    /// the horizon or a pc outside the page (`Ok`, the core's pc and cycle written back),
    /// after an instruction `exec_rare` ran (`Ok`), or at an instruction's trap or event
    /// (`Err`, as `exec` returns it, for `settle`).
    #[inline(always)]
    fn run_lines<P: Platform>(&mut self, mem: &mut NodeMem, plat: &mut P) -> Result<(), Ex> {
        let page = self.fetch_pn;
        let (mut pc, mut cycle) = (self.pc, self.cycle);
        let (ops, shift) = (self.fetch_ops, self.line_shift);
        'lines: while cycle < self.block_end && pc / PAGE == page {
            // `fetch`'s I-cache step, once for the ops of one line.
            cycle = self.enter_line(mem, pc, cycle);
            // Ops run in order inside a line (a jump leaves the loop): past its end is out.
            let line_end = ((pc >> shift) + 1) << shift;
            // SAFETY: `ops` points to the 2048 decoded ops of page `fetch_pn`, which holds
            // `pc` (and every pc of the line); they change only when `NodeMem::code_page`
            // decodes a page again, which does not happen in this loop (`fence.i` is left
            // to `exec_rare`, after which it returns).
            let mut at = unsafe { ops.add(((pc % PAGE) / 2) as usize) };
            loop {
                match self.step(at, pc, &mut cycle, mem, plat)? {
                    Flow::Next(next) => {
                        // The op at `next` (a slot per 2 bytes); read only if `next` is
                        // still in the line, so in the page (`wrapping_add`: a 4-byte op
                        // in the page's last slot points it past the page's end).
                        at = at.wrapping_add(((next - pc) / 2) as usize);
                        pc = next;
                    }
                    Flow::Jump(to) => {
                        pc = to;
                        break;
                    }
                    Flow::Rare => return Ok(()),
                }
                if pc >= line_end {
                    break;
                }
                if cycle >= self.block_end {
                    break 'lines;
                }
            }
        }
        (self.pc, self.cycle) = (pc, cycle);
        Ok(())
    }

    /// Execute the op at `at` (of the current code page), at `pc`, as `exec` does; says
    /// where the pc went.
    #[inline(always)]
    fn step<P: Platform>(
        &mut self,
        at: *const Op,
        pc: u64,
        cycle: &mut u64,
        mem: &mut NodeMem,
        plat: &mut P,
    ) -> Result<Flow, Ex> {
        // SAFETY: `at` is an op of the current code page (`run_lines`).
        let op = unsafe { *at };
        *cycle = self.issue(at, *cycle);
        let (a, b) = (self.slot(op.rs1), self.slot(op.rs2));
        let imm = op.imm as i64 as u64;
        let next = pc.wrapping_add(op.len() as u64);
        let addr = a.wrapping_add(imm);
        let c = cycle;
        use Kind::*;
        let v = match op.kind() {
            Kind::Lb => load!(self, mem, plat, at, pc, c, addr, 1, |v| v as i8 as u64),
            Kind::Lh => load!(self, mem, plat, at, pc, c, addr, 2, |v| v as i16 as u64),
            Kind::Lw => load!(self, mem, plat, at, pc, c, addr, 4, |v| v as i32 as u64),
            Kind::Ld => load!(self, mem, plat, at, pc, c, addr, 8, |v| v),
            Kind::Lbu => load!(self, mem, plat, at, pc, c, addr, 1, |v| v),
            Kind::Lhu => load!(self, mem, plat, at, pc, c, addr, 2, |v| v),
            Kind::Lwu => load!(self, mem, plat, at, pc, c, addr, 4, |v| v),
            Kind::Sb => return Ok(Flow::Next(store!(self, mem, plat, pc, c, addr, b, next, 1))),
            Kind::Sh => return Ok(Flow::Next(store!(self, mem, plat, pc, c, addr, b, next, 2))),
            Kind::Sw => return Ok(Flow::Next(store!(self, mem, plat, pc, c, addr, b, next, 4))),
            Kind::Sd => return Ok(Flow::Next(store!(self, mem, plat, pc, c, addr, b, next, 8))),
            Kind::Beq => return Ok(self.branch_to(op, pc, a == b, next, c)),
            Kind::Bne => return Ok(self.branch_to(op, pc, a != b, next, c)),
            Kind::Blt => return Ok(self.branch_to(op, pc, (a as i64) < (b as i64), next, c)),
            Kind::Bge => return Ok(self.branch_to(op, pc, (a as i64) >= (b as i64), next, c)),
            Kind::Bltu => return Ok(self.branch_to(op, pc, a < b, next, c)),
            Kind::Bgeu => return Ok(self.branch_to(op, pc, a >= b, next, c)),
            Kind::Jal => return Ok(Flow::Jump(self.jal_to(op, pc, next, c))),
            Kind::Jalr => {
                (self.pc, self.cycle) = (pc, *c);
                // SAFETY: as above.
                self.jalr(unsafe { *at }, a, next)?;
                *c = self.cycle;
                return Ok(Flow::Jump(self.pc));
            }
            // Everything `exec_rare` runs, named, and one arm per ALU kind: the dispatch is
            // then one jump table over every kind, with no range check.
            Illegal | Net | FetchFault | Mul | Mulh | Mulhsu | Mulhu | Div | Divu | Rem | Remu | Mulw
            | Divw | Divuw | Remw | Remuw | Fence | FenceI | Ecall | Ebreak | Mret | Wfi | Csrrw | Csrrs
            | Csrrc | Csrrwi | Csrrsi | Csrrci | LrW | ScW | AmoW | LrD | ScD | AmoD | Bswap | Fp => {
                (self.pc, self.cycle) = (pc, *c);
                // SAFETY: as above.
                self.exec_rare(unsafe { *at }, mem, plat, a, b)?;
                // The entries it may have set: its destination's (a CSR read, an atomic,
                // an FP compare or move, a multiply or divide) and `muldiv_watch`.
                self.quiet_from = self.quiet_from.max(self.muldiv_watch).max(self.ready[op.rd as usize]);
                if !crate::muldiv::is_muldiv(op.kind()) {
                    return Ok(Flow::Rare);
                }
                // A multiply or divide changes neither the code, the horizon nor the page:
                // the run goes on.
                *c = self.cycle;
                return Ok(Flow::Jump(self.pc));
            }
            Lui => alu_of!(Lui, a, b, imm, pc),
            Auipc => alu_of!(Auipc, a, b, imm, pc),
            Addi => alu_of!(Addi, a, b, imm, pc),
            Slti => alu_of!(Slti, a, b, imm, pc),
            Sltiu => alu_of!(Sltiu, a, b, imm, pc),
            Xori => alu_of!(Xori, a, b, imm, pc),
            Ori => alu_of!(Ori, a, b, imm, pc),
            Andi => alu_of!(Andi, a, b, imm, pc),
            Slli => alu_of!(Slli, a, b, imm, pc),
            Srli => alu_of!(Srli, a, b, imm, pc),
            Srai => alu_of!(Srai, a, b, imm, pc),
            Add => alu_of!(Add, a, b, imm, pc),
            Sub => alu_of!(Sub, a, b, imm, pc),
            Sll => alu_of!(Sll, a, b, imm, pc),
            Slt => alu_of!(Slt, a, b, imm, pc),
            Sltu => alu_of!(Sltu, a, b, imm, pc),
            Xor => alu_of!(Xor, a, b, imm, pc),
            Srl => alu_of!(Srl, a, b, imm, pc),
            Sra => alu_of!(Sra, a, b, imm, pc),
            Or => alu_of!(Or, a, b, imm, pc),
            And => alu_of!(And, a, b, imm, pc),
            Addiw => alu_of!(Addiw, a, b, imm, pc),
            Slliw => alu_of!(Slliw, a, b, imm, pc),
            Srliw => alu_of!(Srliw, a, b, imm, pc),
            Sraiw => alu_of!(Sraiw, a, b, imm, pc),
            Addw => alu_of!(Addw, a, b, imm, pc),
            Subw => alu_of!(Subw, a, b, imm, pc),
            Sllw => alu_of!(Sllw, a, b, imm, pc),
            Srlw => alu_of!(Srlw, a, b, imm, pc),
            Sraw => alu_of!(Sraw, a, b, imm, pc),
        };
        self.set_slot(op.rd, v);
        Ok(Flow::Next(next))
    }

    /// `exec`'s prologue at local cycle `cycle`: wait for the source operands (scoreboard),
    /// issue, count the instruction, and the mul/div write-port rule. Returns the cycle
    /// after issue. From `quiet_from` on neither a stall nor the port rule can happen
    /// (every scoreboard entry and `muldiv_watch` are at most that), so only the issue is
    /// left: one comparison for the common case.
    #[inline(always)]
    fn issue(&mut self, at: *const Op, cycle: u64) -> u64 {
        self.stats.instret += 1;
        if cycle >= self.quiet_from {
            return cycle + 1;
        }
        self.issue_checked(at, cycle)
    }

    /// `issue` before `quiet_from`: `exec`'s checks, then the bound again (the port rule
    /// may have moved a scoreboard entry and `muldiv_watch` on).
    #[inline(always)]
    fn issue_checked(&mut self, at: *const Op, mut cycle: u64) -> u64 {
        // SAFETY: `at` is an op of the current code page (`run_lines`).
        let op = unsafe { *at };
        let (rs1, rs2) = (op.rs1 as usize, op.rs2 as usize);
        let r = self.ready[rs1].max(self.ready[rs2]);
        if r > cycle {
            self.cycle = cycle;
            self.stall(r, rs1, rs2);
            cycle = self.cycle;
        }
        cycle += 1;
        if cycle == self.muldiv_watch {
            self.muldiv_port_taken(op);
            let rd = self.muldiv_rd as usize;
            self.quiet_from = self.quiet_from.max(self.muldiv_watch).max(self.ready[rd]);
        }
        cycle
    }

    /// `exec`'s conditional branch at `pc`: the predictor, a mispredict's penalty added to
    /// `cycle`; a taken branch ends the run, a branch not taken goes on in it.
    #[inline(always)]
    fn branch_to(&mut self, op: Op, pc: u64, taken: bool, next: u64, cycle: &mut u64) -> Flow {
        let target = pc.wrapping_add(op.imm as i64 as u64);
        if self.bp.branch_inline(pc, taken, target) {
            self.charge_mispredict(cycle);
        }
        if taken {
            Flow::Jump(target)
        } else {
            Flow::Next(next)
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
        if line == self.iline || self.known_line(line) {
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
    /// A hash of the node's shared timing state (the L2's tags, dirty bits and replacement
    /// state, the busy cycles of its response path), for comparing engines
    /// (`Core::state_digest` has each core's).
    pub fn timing_digest(&self) -> u64 {
        let mut h = DefaultHasher::new();
        (&self.l2, &self.port).hash(&mut h);
        h.finish()
    }
}
