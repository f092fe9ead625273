//! The fast core engine (`Engine::Fast`). The reference, `Core::run_block`, fetches every
//! instruction through `fetch` (I-cache line step, page check, then the pre-decoded op) and
//! executes it with `exec`; `Core::run_block_fast` gives the same architectural state,
//! cycles and counters with less host work (docs/profile.md "Core engines" has the
//! figures):
//!
//! - It runs line by line (`run_lines`): the ops of the current code page (`fetch_pn`,
//!   `fetch_ops`, the node's decoded ops that `fetch` reads, shared with every node that
//!   did not write its code) from the pc to the end of its I-cache line, the first taken
//!   branch or jump that leaves the line, or an instruction `exec_rare` runs. The op
//!   pointer (the pc is derived from it where an op needs it) and the cycle count stay in
//!   host registers: one I-cache line step and one page check per run, where `fetch` takes
//!   them per instruction. At a line's end the run goes on into the next line when that
//!   takes no look-up (`next_line_of_run`). Nothing is copied or cached per node: an
//!   earlier version cut blocks into a cache per node, which cost a lookup per block and,
//!   with one cache per node, 18% more host L1 data misses than the interpreter on a
//!   256-core NanoSort (docs/profile.md "Core engines").
//! - The horizon (`block_end`) is not compared after every op: an op takes at least its
//!   issue cycle and a line holds at most `line_bytes / 2` ops, so below the horizon less
//!   that (`Run::far_limit`) no run of single-cycle ops can reach it. Only an op that may
//!   take more (a stall, a miss, a mispredict, the mul/div unit) compares afterwards, and
//!   ends the run if the horizon is within reach; a line entered closer than that runs no
//!   more ops than cycles are left (one op at a time, before: 3.5 M of the 9.3 M line
//!   entries of a 1,024-core sort, whose dispatches are short; 1.2 M of 7.0 M now, -1.1%
//!   host instructions). A branch taken back into its own line goes on in the run under the
//!   same bound.
//! - The common instructions run inline with the interpreter's own pieces: the integer
//!   ALU (`exec::alu`), loads and stores (`load_quick` and `store_quick` where the access
//!   has no timing to charge: aligned, in a chunk the TLB maps, in the current line or one
//!   the L1 knows it holds, not making the core yield; the pc and the cycle stay in the
//!   run. Others out of line, through `load_op` and `int_store`: TLB, caches, devices,
//!   traps; inline, those made the loop's code spill what it kept in host registers),
//!   conditional branches and `jal` (the same `BranchPred` calls and mispredict
//!   charge as `exec`), `jalr` (`Core::jalr`), multiplies and divides (`Core::muldiv`);
//!   each after `exec`'s prologue (scoreboard stall, issue, `instret`, the mul/div
//!   write-port rule), whose checks are skipped while the cycle is past every pending
//!   result (`Core::quiet_from`, kept across runs: every op that sets an entry raises it);
//!   from there the ops run in a quiet loop (`quiet_steps`) with no check at issue, until
//!   an op that may set an entry (`Flow::Raised`, or `exec_rare`'s), less a load that hit
//!   whose next op does not read it (`Run::quiet_after_load`). The dispatch is one
//!   jump table over the op's code byte (`by_code!`: kind and length, no range check), so
//!   each arm steps past its op by a constant.
//! - Everything else (CSRs, atomics, F/D, network registers, system) goes to `exec_rare`,
//!   the interpreter's code for it, after the same prologue; the run then goes on from
//!   the core's pc with a line step (`rare_done`), the horizon compared before it (an
//!   atomic found polling moves it to now), unless `fence.i` dropped the code page: then
//!   it hands back to `run_block_fast`, which looks the page up again.
//! - Code that is not pre-decoded (written at run time) runs through `fetch` and `exec`.
//!   A run entering another pre-decoded page looks it up first (`enter_code_page`) and
//!   runs it in line runs (its first instruction through `fetch` and `exec` took 1.0 M
//!   of the 55.5 M simulated instructions of a 1,024-core sort that way).
//!
//! - With `Engine::Jit` (`run_block_fast::<true, _>`), the quiet loop first runs the
//!   translated trace it has at the op (`run_trace`, `jit/`), which hands back where the
//!   loop goes on.
//!
//! `tests/engines.rs` runs both engines side by side on every program of `sw/build`, on
//! random programs (with compressed instructions, self-modifying, recursive, or on a core
//! that changes engine between runs), on nanoPU register instructions and on two cores sharing
//! memory, comparing `Core::state_digest` after every run; the harness's `engines` test
//! does the same for a 64-core NanoSort.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::ops::ControlFlow;

use crate::core::{Core, Ex};
use crate::error::Exit;
use crate::exec::alu;
use crate::jit::{Exit as TraceExit, Io, Shape, Traces};
use crate::mem::NodeMem;
use crate::op::{Kind, Op};
use crate::platform::Platform;
use crate::program::PAGE;

/// The load `$op` (at its base register plus immediate) of `$n` bytes, extended by `$ext`,
/// as `exec` does it; the bound `quiet_from` raised to the result's scoreboard entry. One
/// with no timing to charge (`Core::load_quick`: 92% of the `ld`s on compute) leaves the pc
/// and the cycle in the run; any other goes out of line (`load_in_run`), its cycle read
/// back and the horizon compared after it (`Run::settle_access`). The op spans `$s` code
/// slots.
macro_rules! load {
    ($core:ident, $mem:ident, $plat:ident, $r:ident, $s:ident, $op:ident, $n:literal, $ext:expr) => {{
        let addr = $core.slot($op.rs1).wrapping_add($op.imm as i64 as u64);
        let v = match $core.load_quick::<$n>(addr) {
            Some(v) => {
                // No time taken, nothing else changed (`load_quick`): the pc and the cycle
                // stay in the run, which goes on as after a single-cycle op.
                let rd = $r.rd();
                let ready = $core.set_load_ready::<$n>(rd, $r.cycle);
                $core.quiet_from = $core.quiet_from.max(ready);
                $core.set_slot(rd, $ext(v));
                $r.at = $r.at.wrapping_add($s);
                return Ok(match QUIET && $r.quiet_after_load(ready, rd) {
                    true => Flow::Next,
                    false => Flow::Raised,
                });
            }
            None => {
                let v = $core.load_in_run::<$n, P>($mem, $plat, $r.op(), $r.pc(), $r.cycle, addr)?;
                $r.cycle = $core.cycle;
                $r.settle_access($core.block_end);
                v
            }
        };
        $core.set_slot($r.rd(), $ext(v));
        $r.at = $r.at.wrapping_add($s);
        Ok(Flow::Raised)
    }};
}

/// The store `$op` (of the low `$n` bytes of `rs2`, at `rs1` plus the immediate), as `exec`
/// does it: inline if it has no timing to charge (`Core::store_quick`: 86% of the `sd`s on
/// compute), else out of line (`store_in_run`) as a load.
macro_rules! store {
    ($core:ident, $mem:ident, $plat:ident, $r:ident, $s:ident, $op:ident, $n:literal) => {{
        let (addr, v) = ($core.slot($op.rs1).wrapping_add($op.imm as i64 as u64), $core.slot($op.rs2));
        if !$core.store_quick::<$n>(addr, v, $r.cycle) {
            let pc = $r.pc();
            $core.store_in_run::<$n, P>($mem, $plat, pc, $r.cycle, addr, v, pc + 2 * $s as u64)?;
            $r.cycle = $core.cycle;
            $r.settle_access($core.block_end);
        }
        $r.at = $r.at.wrapping_add($s);
        Ok(Flow::Next)
    }};
}

/// `exec::alu` for the one kind `$k` (which it gives a value for) on `$op`'s operands,
/// folded at compile time (the operands it does not use are not read); its result written
/// and the run stepped past its op (`$s` code slots).
macro_rules! alu_of {
    ($core:ident, $k:ident, $op:ident, $r:ident, $s:ident) => {{
        // SAFETY: `alu` gives a value for every kind `alu_of!` is used with; only `Auipc`
        // reads the pc (computed then, `Run::pc`).
        let v = unsafe {
            let (a, b, imm) = ($core.slot($op.rs1), $core.slot($op.rs2), $op.imm as i64 as u64);
            alu(Kind::$k, a, b, imm, if matches!(Kind::$k, Kind::Auipc) { $r.pc() } else { 0 })
                .unwrap_unchecked()
        };
        $core.set_slot($r.rd(), v);
        $r.at = $r.at.wrapping_add($s);
        Ok(Flow::Next)
    }};
}

/// The code bytes (`Op::code`) of each kind: `c2::K` for a 2-byte op, `c4::K` for a
/// 4-byte one, as constants `by_code!` matches.
macro_rules! code_consts {
    ($($k:ident),* $(,)?) => {
        #[allow(non_upper_case_globals)]
        mod c2 {
            use crate::op::Kind;
            $(pub const $k: u8 = Kind::$k as u8;)*
        }
        #[allow(non_upper_case_globals)]
        mod c4 {
            use crate::op::{Kind, LONG};
            $(pub const $k: u8 = Kind::$k as u8 | LONG;)*
        }
        /// Every kind has its constants: the match is exhaustive.
        #[allow(dead_code)]
        fn every_kind_has_codes(k: Kind) {
            match k {
                $(Kind::$k => {})*
            }
        }
    };
}

code_consts!(
    Illegal, Net, FetchFault, Lui, Auipc, Jal, Jalr, Beq, Bne, Blt, Bge, Bltu, Bgeu, Lb, Lh, Lw, Ld, Lbu,
    Lhu, Lwu, Sb, Sh, Sw, Sd, Addi, Slti, Sltiu, Xori, Ori, Andi, Slli, Srli, Srai, Add, Sub, Sll, Slt, Sltu,
    Xor, Srl, Sra, Or, And, Addiw, Slliw, Srliw, Sraiw, Addw, Subw, Sllw, Srlw, Sraw, Mul, Mulh, Mulhsu,
    Mulhu, Div, Divu, Rem, Remu, Mulw, Divw, Divuw, Remw, Remuw, Fence, FenceI, Ecall, Ebreak, Mret, Wfi,
    Csrrw, Csrrs, Csrrc, Csrrwi, Csrrsi, Csrrci, LrW, ScW, AmoW, LrD, ScD, AmoD, Bswap, Fp,
);

/// A `match` on an op's code byte with one arm per kind (`$k | ...`), each written once
/// and expanded twice, for the 2-byte and the 4-byte op, with `$s` bound to its code
/// slots (1 or 2): one jump table over the byte, no mask and no length computed.
macro_rules! by_code {
    ($code:expr, $s:ident, { $($($k:ident)|+ => $body:expr,)* }) => {{
        // Every kind has an arm: the compiler checks this match is exhaustive.
        let _every_kind = |k: Kind| match k {
            $($(Kind::$k)|+ => {})*
        };
        match $code {
            $($(c2::$k)|+ => {
                #[allow(unused_variables)]
                let $s: usize = 1;
                $body
            })*
            $($(c4::$k)|+ => {
                #[allow(unused_variables)]
                let $s: usize = 2;
                $body
            })*
            // SAFETY: an op's code byte is a kind with or without `LONG` (`Op::new`), and
            // every kind has its arm (`_every_kind`). (`unreachable!` here cost 2 host
            // instructions a simulated instruction on compute, through the loop's code.)
            _ => unsafe { std::hint::unreachable_unchecked() },
        }
    }};
}

/// Where an op leaves the run (`Core::step`).
enum Flow {
    /// The next op, in order (`Run::at` moved on to it: read only while below `end`;
    /// `wrapping_add`, since a 4-byte op in the page's last slot points it past the page).
    Next,
    /// `Next`, after an op that may have raised `quiet_from` (a load, a multiply or a
    /// divide): the quiet loop (`quiet_steps`) hands back.
    Raised,
    /// A taken branch or a jump to this pc: the line run ends here.
    Jump(u64),
    /// `exec_rare` ran the op: the core's pc and cycle are its own.
    Rare,
}

// `Run::pc` relies on the ops' size and alignment.
const _: () = assert!(std::mem::size_of::<Op>() == 8 && std::mem::align_of::<Op>().is_multiple_of(4));

/// The state of a line run in host registers (`run_lines`).
struct Run {
    /// The op to execute; the pc is derived from it (`pc`).
    at: *const Op,
    /// `pc() == (at as u64 >> 2) + bias`: ops are 8 bytes, one per 2-byte code slot, and
    /// 4-aligned, so the slot's pc is `page base + (at - ops) / 4`.
    bias: u64,
    /// The run stops once `at` reaches this: the end of the I-cache line, or sooner.
    end: *const Op,
    cycle: u64,
    /// Below this cycle, no op of the rest of the line can reach the horizon by its one
    /// issue cycle (each op takes at least one, and a line holds at most `line_bytes / 2`
    /// ops): the horizon less that. An op that adds more (a stall, a miss, a mispredict)
    /// compares with it afterwards, and so does a branch taken back into its own line.
    far_limit: u64,
}

impl Run {
    /// The op at `at`, read again where it is passed on whole: a value kept from the
    /// step's start made the compiler assemble it in a register for every op.
    #[inline(always)]
    fn op(&self) -> Op {
        // SAFETY: `at` is below `end`, in the line, so in the page (`run_lines`).
        unsafe { *self.at }
    }

    /// The op's destination register, read where it is used rather than kept from the
    /// op's first read: kept, it went to the stack and back at every op.
    #[inline(always)]
    fn rd(&self) -> u8 {
        // SAFETY: as in `op`; a volatile read is not merged with the first one.
        unsafe { std::ptr::read_volatile(std::ptr::addr_of!((*self.at).rd)) }
    }

    #[inline(always)]
    fn pc(&self) -> u64 {
        (self.at as u64 >> 2).wrapping_add(self.bias)
    }

    /// After a load that hit (`load!`) in the quiet loop, its result due at `ready` in
    /// register slot `rd` (`r.at` on the next op):
    /// whether the loop may go on to the next op with no check at issue. It may if the
    /// result is due by the next op's issue cycle's end (the load latency of 2, the
    /// default, for a word or double word) and that op, in the run, reads neither source
    /// from it: then the next op has nothing to wait for (every other entry is due by now,
    /// as the quiet loop's), the write-port rule cannot apply (`muldiv_watch` is behind
    /// the cycle), and after it the cycle is `ready` again, past every pending result.
    /// Compute's loads are nearly all followed by an op that does not use them (the
    /// quicksort's scans, the fold), which then left the quiet loop for one checked op.
    #[inline(always)]
    fn quiet_after_load(&self, ready: u64, rd: u8) -> bool {
        if ready != self.cycle + 1 || self.at >= self.end {
            return false;
        }
        // SAFETY: below `end`, in the line, so in the page (`run_lines`).
        let op = unsafe { *self.at };
        op.rs1 != rd && op.rs2 != rd
    }

    /// After an op that may have taken more than its issue cycle: if the horizon may now
    /// be within reach of the rest of the line, the run ends after this op (the outer
    /// loop compares with the horizon, as `run_block` does after every instruction).
    #[inline(always)]
    fn settle_variable(&mut self) {
        if self.cycle >= self.far_limit {
            self.end = self.at;
        }
    }

    /// `settle_variable` after a load or store, which may also have moved the horizon to
    /// now (`Core::note_repeat`: a core found polling yields after this instruction).
    /// The run ends then (the outer loop then sees the horizon passed, as `note_repeat`
    /// moves it to no later than the core's cycle), so `far_limit` is compared with, not
    /// lowered.
    #[inline(always)]
    fn settle_access(&mut self, block_end: u64) {
        if self.cycle >= self.far_limit.min(block_end) {
            self.end = self.at;
        }
    }
}

impl Core {
    /// `run_block` for the fast engine: execute until `block_end` or an event.
    /// With `JIT`, the quiet loop runs translated traces where it has them (`jit/`).
    pub(crate) fn run_block_fast<const JIT: bool, P: Platform>(
        &mut self,
        mem: &mut NodeMem,
        plat: &mut P,
    ) -> Option<Exit> {
        if self.quiet_from == u64::MAX {
            self.bound_scoreboard();
        }
        while self.cycle < self.block_end {
            let r = if self.pc / PAGE == self.fetch_pn || self.enter_code_page(mem) {
                self.run_lines::<JIT, P>(mem, plat)
            } else {
                // Code that is not pre-decoded (`fetch` decodes it) or not in memory.
                let op = self.fetch(mem);
                let r = self.exec(op, mem, plat);
                self.raise_after_exec(op);
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
    /// the engine first runs (`Core::set_engine` sets it to `u64::MAX`, as `Core::new`
    /// does) and after a trap; every op that sets an entry raises the bound (`load!`,
    /// `issue_checked`, `step`'s mul/div and `exec_rare` arms, `exec_net`,
    /// `raise_after_exec`), and only ops set entries, so the bound holds across runs
    /// without a pass over the registers at each (1% of a 256-core NanoSort's host
    /// instructions when it made one at every dispatch, docs/profile.md "Core engines").
    fn bound_scoreboard(&mut self) {
        self.quiet_from = self.ready.iter().fold(self.muldiv_watch, |m, &r| m.max(r));
    }

    /// After `exec` ran `op` outside `run_lines`: raise the bound by the entries it may
    /// have set, its destination's, the mul/div unit's (`muldiv_watch`) and the pending
    /// result the port rule may have moved (`muldiv_rd`). Also after `exec_net` (`net.rs`).
    #[inline(always)]
    pub(crate) fn raise_after_exec(&mut self, op: Op) {
        let set = self.ready_of(op.rd).max(self.ready_of(self.muldiv_rd));
        self.quiet_from = self.quiet_from.max(self.muldiv_watch).max(set);
    }

    /// Execute line runs (the module's text) from `self.pc` in the current code page until
    /// the horizon or a pc outside the page (`Ok`, the core's pc and cycle written back),
    /// after a `fence.i` (`Ok`, from `exec_rare`), or at an instruction's trap or event
    /// (`Err`, as `exec` returns it, for `settle`).
    #[inline(always)]
    fn run_lines<const JIT: bool, P: Platform>(&mut self, mem: &mut NodeMem, plat: &mut P) -> Result<(), Ex> {
        let traces = if JIT { self.traces() } else { None };
        let page = self.fetch_pn;
        let (ops, shift) = (self.fetch_ops, self.line_shift);
        let mut pc = self.pc;
        let bias = (page * PAGE).wrapping_sub(ops as u64 >> 2);
        let far_limit = self.block_end.saturating_sub((1 << shift) / 2);
        // A slot's index within its line: the low bits of its index in the page (lines
        // are aligned, and no larger than a page).
        let line_mask = ((1usize << shift) / 2).saturating_sub(1);
        let mut r = Run { at: ops, bias, end: ops, cycle: self.cycle, far_limit };
        // `block_end` is read again at each line: a load or store may move it (`load!`).
        while r.cycle < self.block_end && pc / PAGE == page {
            // `fetch`'s I-cache step, once for the ops of one line.
            r.cycle = self.enter_line(mem, pc, r.cycle);
            // Ops run in order inside a line (a jump leaves the loop): past its end is out.
            let at = ((pc % PAGE) / 2) as usize;
            // SAFETY: `ops` points to the 2048 decoded ops of page `fetch_pn`, which holds
            // `pc` and every pc of its line; they change only when `NodeMem::code_page`
            // decodes a page again, which does not happen in this loop (`fence.i` is left
            // to `exec_rare`, after which it returns).
            r.at = unsafe { ops.add(at) };
            // The line's last slot is `at` with the low bits of a slot in a line set.
            r.end = ops.wrapping_add((at | line_mask) + 1);
            if r.cycle >= r.far_limit {
                std::hint::cold_path();
                // Near the horizon: no more ops than cycles are left before it (each takes
                // at least one; one that may take more ends the run, `settle_variable`).
                // The line's I-cache miss may have taken the cycle past it: then the run
                // ends after one op, as `run_block` runs one (`exec` before its check).
                r.end = r.end.min(r.at.wrapping_add(self.block_end.saturating_sub(r.cycle) as usize));
            }
            pc = loop {
                let flow = match r.cycle >= self.quiet_from {
                    true => self.quiet_steps(&mut r, mem, plat, traces)?,
                    false => self.step::<false, P>(&mut r, mem, plat)?,
                };
                match flow {
                    Flow::Next | Flow::Raised => {
                        if r.at >= r.end {
                            let pc = r.pc();
                            if !self.next_line_of_run(&mut r, pc) {
                                break pc;
                            }
                        }
                    }
                    Flow::Jump(to) => break to,
                    Flow::Rare if self.fetch_pn != page => return Ok(()),
                    Flow::Rare => break self.rare_done(&mut r),
                }
            };
        }
        (self.pc, self.cycle) = (pc, r.cycle);
        Ok(())
    }

    /// At the end of the run's line (`r.at` past its last op, on the op at `pc`):
    /// whether the run goes on into the next line without leaving the loop, as the outer
    /// loop would enter it with nothing to charge: far from the horizon (`far_limit`, and
    /// `block_end`, which a load or store may have moved to now), in the same code page,
    /// and a line `fetch` takes with no look-up (`known_line`: the line fetched before
    /// the current one, which they swap, or one the L1 knows it holds). The run's end is
    /// then that line's end (`pc` is 2 bytes into it after a 4-byte op that straddles
    /// the two). Compute runs on into the next line every 22 instructions (5.4 M of its
    /// 17.3 M line entries; the others follow a taken branch or jump). (Taken jumps
    /// into another line chained here too took 4.9% more host instructions on compute,
    /// the loop's registers spilled; a taken branch into the line before, in
    /// `branch_to`, 2.1% more.)
    #[inline(always)]
    fn next_line_of_run(&mut self, r: &mut Run, pc: u64) -> bool {
        if r.cycle >= r.far_limit || r.cycle >= self.block_end || pc / PAGE != self.fetch_pn {
            return false;
        }
        let line = pc >> self.line_shift;
        if !self.known_line(line) {
            return false;
        }
        let next = (line + 1) << self.line_shift;
        r.end = r.at.wrapping_add((next - pc) as usize / 2);
        true
    }

    /// Ops from `r.at` while every pending result stays ready (from `quiet_from` on: no
    /// stall, no port rule, so no check at issue), until the line's end, a jump, an op
    /// `exec_rare` ran or one that may have set a scoreboard entry (`Flow::Raised`).
    /// With `traces` (`Engine::Jit`), a translated trace runs where the loop has one
    /// (`run_trace`), from its start and after each op a trace left to it.
    #[inline(always)]
    fn quiet_steps<P: Platform>(
        &mut self,
        r: &mut Run,
        mem: &mut NodeMem,
        plat: &mut P,
        traces: Option<*const Traces>,
    ) -> Result<Flow, Ex> {
        loop {
            if let Some(t) = traces.filter(|_| r.cycle < r.far_limit) {
                // SAFETY: the program's traces (`Core::traces`), which the core's `Arc` of
                // the program keeps.
                match self.run_trace(r, mem, unsafe { &*t }) {
                    Some(Flow::Next) if r.at < r.end => {}
                    Some(flow) => return Ok(flow),
                    None => {}
                }
            }
            match self.step::<true, P>(r, mem, plat)? {
                Flow::Next if r.at < r.end => {}
                flow => return Ok(flow),
            }
        }
    }

    /// The program's translated traces, if they are made for this core's timing (`jit/`,
    /// `Shape`): looked up once a run of lines, not at every trace.
    #[inline(always)]
    fn traces(&self) -> Option<*const Traces> {
        let t = self.program.engine_cache(Traces::new)?;
        t.claim(Shape::of(self)?).then_some(t as *const Traces)
    }

    /// The translated trace at `r.at`, if it has one (`jit/`), run: the run's cycle and op
    /// where the trace left them, and where the run goes on as the quiet loop would. Only
    /// while every pending result is ready and the horizon is out of the line's reach, so
    /// that the run's end is the line's (`quiet_steps`).
    #[inline(always)]
    fn run_trace(&mut self, r: &mut Run, mem: &mut NodeMem, traces: &Traces) -> Option<Flow> {
        let (f, k) = traces.at(r.at)?;
        let (bht, btb) = self.bp.tables()?;
        // What a trace's loads rely on when they raise the bound (`jit/emit/access.rs`).
        debug_assert!(self.quiet_from <= r.cycle + 1, "the bound {} at cycle {}", self.quiet_from, r.cycle);
        let base = self.stats.stall_branch.wrapping_add(self.stats.stall_load_use);
        let mut io = Io { cycle: r.cycle, far_limit: r.far_limit, end: 0, bht, btb, base, mem };
        // SAFETY: a trace of this core's code (`Traces::at`: the program's own ops, the
        // line's), given the core and the run's terms; it touches nothing else.
        let code = unsafe { f(self as *mut Core, &mut io, k) };
        r.cycle = io.cycle;
        let page = self.fetch_ops;
        let mut to = |slot: i64| {
            r.at = page.wrapping_offset(slot as isize);
            r.end = page.wrapping_offset(io.end as isize);
        };
        Some(match TraceExit::of(code) {
            TraceExit::Jump(pc) => Flow::Jump(pc),
            TraceExit::Next(off) => {
                to(off);
                Flow::Next
            }
            TraceExit::Raised(off) => {
                to(off);
                Flow::Raised
            }
            TraceExit::End(off) => {
                to(off);
                r.end = r.at;
                Flow::Next
            }
        })
    }

    /// After an op `exec_rare` ran (`Flow::Rare`) that left the code page as it was
    /// (`fence.i` drops it): the run goes on from the core's pc, as `run_block_fast` would
    /// go on, with no new run: a nanoPU register instruction, a CSR access or a `fence`
    /// (315 K and 186 K of them in a 256-core NanoSort) then costs one line step, where
    /// a new run cost its setup too. An op that moves the horizon (`block_end`: an atomic
    /// or FP access found polling, `Core::note_repeat`) moves it to now, which the loop
    /// compares with before the next line. Returns the pc.
    #[inline(always)]
    fn rare_done(&mut self, r: &mut Run) -> u64 {
        r.cycle = self.cycle;
        self.pc
    }

    /// Execute the op at `r.at` (of the current code page) as `exec` does; says where the
    /// run goes. The dispatch is on the op's code byte (`by_code!`), kind and length
    /// together, so each arm steps past its op by a constant.
    #[inline(always)]
    fn step<const QUIET: bool, P: Platform>(
        &mut self,
        r: &mut Run,
        mem: &mut NodeMem,
        plat: &mut P,
    ) -> Result<Flow, Ex> {
        // SAFETY: `at` is below `end`, in the line, so in the page (`run_lines`).
        let op = unsafe { *r.at };
        if QUIET {
            // Every pending result is ready (`quiet_steps`): issue only.
            self.stats.instret += 1;
            r.cycle += 1;
        } else {
            self.issue(op.rs1, op.rs2, r);
        }
        // Each arm reads the operands it uses (in `load!`, `store!`, `alu_of!`): a register
        // op then reads no immediate and an op with one no second register (read before
        // the dispatch for every op, they took 0.6% more host instructions on compute; read
        // through helper functions, `fn imm(op)`, 7.1% more: the loop compiled anew).
        by_code!(op.code(), s, {
            Lb => load!(self, mem, plat, r, s, op, 1, |v| v as i8 as u64),
            Lh => load!(self, mem, plat, r, s, op, 2, |v| v as i16 as u64),
            Lw => load!(self, mem, plat, r, s, op, 4, |v| v as i32 as u64),
            Ld => load!(self, mem, plat, r, s, op, 8, |v| v),
            Lbu => load!(self, mem, plat, r, s, op, 1, |v| v),
            Lhu => load!(self, mem, plat, r, s, op, 2, |v| v),
            Lwu => load!(self, mem, plat, r, s, op, 4, |v| v),
            Sb => store!(self, mem, plat, r, s, op, 1),
            Sh => store!(self, mem, plat, r, s, op, 2),
            Sw => store!(self, mem, plat, r, s, op, 4),
            Sd => store!(self, mem, plat, r, s, op, 8),
            Beq => Ok(self.branch_to(op, r, s, self.slot(op.rs1) == self.slot(op.rs2))),
            Bne => Ok(self.branch_to(op, r, s, self.slot(op.rs1) != self.slot(op.rs2))),
            Blt => Ok(self.branch_to(op, r, s, (self.slot(op.rs1) as i64) < (self.slot(op.rs2) as i64))),
            Bge => Ok(self.branch_to(op, r, s, (self.slot(op.rs1) as i64) >= (self.slot(op.rs2) as i64))),
            Bltu => Ok(self.branch_to(op, r, s, self.slot(op.rs1) < self.slot(op.rs2))),
            Bgeu => Ok(self.branch_to(op, r, s, self.slot(op.rs1) >= self.slot(op.rs2))),
            Jal => Ok(Flow::Jump(self.jal_to(op, r, s))),
            Jalr => {
                let pc = r.pc();
                (self.pc, self.cycle) = (pc, r.cycle);
                self.jalr(r.op(), self.slot(op.rs1), pc + 2 * s as u64)?;
                r.cycle = self.cycle;
                Ok(Flow::Jump(self.pc))
            },
            Mul | Mulh | Mulhsu | Mulhu | Div | Divu | Rem | Remu | Mulw | Divw | Divuw | Remw | Remuw => {
                Ok(self.muldiv_in_run(op, r, s, self.slot(op.rs1), self.slot(op.rs2)))
            },
            // Everything else `exec_rare` runs, named, and one arm per ALU kind: the
            // dispatch is then one jump table over every code, with no range check.
            Illegal | Net | FetchFault | Fence | FenceI | Ecall | Ebreak | Mret | Wfi | Csrrw | Csrrs
            | Csrrc | Csrrwi | Csrrsi | Csrrci | LrW | ScW | AmoW | LrD | ScD | AmoD | Bswap | Fp => {
                (self.pc, self.cycle) = (r.pc(), r.cycle);
                self.exec_rare(r.op(), mem, plat, self.slot(op.rs1), self.slot(op.rs2))?;
                // The entries it may have set: its destination's (a CSR read, an atomic,
                // an FP compare or move; `exec_net` raises the bound for a nanoPU
                // instruction's own) and `muldiv_watch` (the port rule, at issue).
                self.quiet_from = self.quiet_from.max(self.muldiv_watch).max(self.ready_of(op.rd));
                Ok(Flow::Rare)
            },
            Lui => alu_of!(self, Lui, op, r, s),
            Auipc => alu_of!(self, Auipc, op, r, s),
            Addi => alu_of!(self, Addi, op, r, s),
            Slti => alu_of!(self, Slti, op, r, s),
            Sltiu => alu_of!(self, Sltiu, op, r, s),
            Xori => alu_of!(self, Xori, op, r, s),
            Ori => alu_of!(self, Ori, op, r, s),
            Andi => alu_of!(self, Andi, op, r, s),
            Slli => alu_of!(self, Slli, op, r, s),
            Srli => alu_of!(self, Srli, op, r, s),
            Srai => alu_of!(self, Srai, op, r, s),
            Add => alu_of!(self, Add, op, r, s),
            Sub => alu_of!(self, Sub, op, r, s),
            Sll => alu_of!(self, Sll, op, r, s),
            Slt => alu_of!(self, Slt, op, r, s),
            Sltu => alu_of!(self, Sltu, op, r, s),
            Xor => alu_of!(self, Xor, op, r, s),
            Srl => alu_of!(self, Srl, op, r, s),
            Sra => alu_of!(self, Sra, op, r, s),
            Or => alu_of!(self, Or, op, r, s),
            And => alu_of!(self, And, op, r, s),
            Addiw => alu_of!(self, Addiw, op, r, s),
            Slliw => alu_of!(self, Slliw, op, r, s),
            Srliw => alu_of!(self, Srliw, op, r, s),
            Sraiw => alu_of!(self, Sraiw, op, r, s),
            Addw => alu_of!(self, Addw, op, r, s),
            Subw => alu_of!(self, Subw, op, r, s),
            Sllw => alu_of!(self, Sllw, op, r, s),
            Srlw => alu_of!(self, Srlw, op, r, s),
            Sraw => alu_of!(self, Sraw, op, r, s),
        })
    }

    /// A load `load_quick` does not take, as `exec` does it, out of line (the run's
    /// common loads take no call), at `pc` and `cycle`: the core's pc and cycle written
    /// first (the load's miss, trap or device access sees them), the bound `quiet_from`
    /// raised to the result's scoreboard entry after. The run's state is passed by value:
    /// behind a reference it would be kept in memory.
    #[inline(never)]
    fn load_in_run<const N: usize, P: Platform>(
        &mut self,
        mem: &mut NodeMem,
        plat: &mut P,
        op: Op,
        pc: u64,
        cycle: u64,
        addr: u64,
    ) -> Result<u64, Ex> {
        (self.pc, self.cycle) = (pc, cycle);
        let v = self.load_op::<N, P>(mem, plat, op, addr)?;
        self.quiet_from = self.quiet_from.max(self.ready_of(op.rd));
        Ok(v)
    }

    /// A store `store_quick` does not take, as `exec` does it, out of line, at `pc` and
    /// `cycle` (`int_store` moves the core's pc on to `next`; a trap puts it back).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn store_in_run<const N: usize, P: Platform>(
        &mut self,
        mem: &mut NodeMem,
        plat: &mut P,
        pc: u64,
        cycle: u64,
        addr: u64,
        v: u64,
        next: u64,
    ) -> Result<(), Ex> {
        (self.pc, self.cycle) = (pc, cycle);
        self.int_store::<N, P>(mem, plat, addr, v, next)
    }

    /// `exec`'s prologue: wait for the source operands (scoreboard), issue, count the
    /// instruction, and the mul/div write-port rule. From `quiet_from` on neither a stall nor
    /// the port rule can happen (every scoreboard entry and `muldiv_watch` are at most
    /// that), so only the issue is left: one comparison for the common case.
    #[inline(always)]
    fn issue(&mut self, rs1: u8, rs2: u8, r: &mut Run) {
        self.stats.instret += 1;
        if r.cycle >= self.quiet_from {
            r.cycle += 1;
            return;
        }
        self.issue_checked(rs1, rs2, r);
    }

    /// `issue` before `quiet_from`: `exec`'s checks, then the bound again (the port rule may
    /// have moved a scoreboard entry and `muldiv_watch` on).
    #[inline(always)]
    fn issue_checked(&mut self, rs1: u8, rs2: u8, r: &mut Run) {
        let ready = self.ready_of(rs1).max(self.ready_of(rs2));
        if ready > r.cycle {
            self.cycle = r.cycle;
            self.stall(ready, rs1 as usize, rs2 as usize);
            r.cycle = self.cycle;
            r.settle_variable();
        }
        r.cycle += 1;
        if r.cycle == self.muldiv_watch {
            self.port_rule(r.op());
        }
    }

    /// The write-port rule for `op`, issuing at `muldiv_watch` (`muldiv_port_taken`), and
    /// the bound raised past what it moved. Also a translated trace's (`jit/helpers.rs`).
    #[inline(always)]
    pub(crate) fn port_rule(&mut self, op: Op) {
        self.muldiv_port_taken(op);
        let rd = self.muldiv_rd;
        self.quiet_from = self.quiet_from.max(self.muldiv_watch).max(self.ready_of(rd));
    }

    /// A multiply or divide (`exec_rare`'s first arm, `Core::muldiv`), inside the run: it
    /// changes neither the code, the horizon nor the page. It may wait for the unit.
    #[inline(always)]
    fn muldiv_in_run(&mut self, op: Op, r: &mut Run, s: usize, a: u64, b: u64) -> Flow {
        self.cycle = r.cycle;
        // SAFETY: `muldiv` gives a value for every M kind, the only ones that come here.
        let v = unsafe { self.muldiv(r.op(), a, b).unwrap_unchecked() };
        self.set_slot(op.rd, v);
        r.cycle = self.cycle;
        self.quiet_from = self.quiet_from.max(self.muldiv_watch).max(self.ready_of(op.rd));
        r.settle_variable();
        r.at = r.at.wrapping_add(s);
        Flow::Raised
    }

    /// `exec`'s conditional branch at the run's op: the predictor, a mispredict's penalty;
    /// a taken branch ends the run, a branch not taken goes on in it.
    #[inline(always)]
    fn branch_to(&mut self, op: Op, r: &mut Run, s: usize, taken: bool) -> Flow {
        let pc = r.pc();
        let target = pc.wrapping_add(op.imm as i64 as u64);
        if self.bp.branch_inline(pc, taken, target) {
            self.charge_mispredict(r);
        }
        if taken && ((target ^ pc) >> self.line_shift != 0 || r.cycle >= r.far_limit) {
            return Flow::Jump(target);
        }
        if taken {
            // Back (or on) into the same I-cache line, far from the horizon: the run goes
            // on there, as the outer loop would (no line step: `fetch` takes none while
            // the line stays the same; the target is in the page).
            r.at = r.at.wrapping_offset((target.wrapping_sub(pc) as i64 / 2) as isize);
            return Flow::Next;
        }
        r.at = r.at.wrapping_add(s);
        Flow::Next
    }

    /// `exec`'s `jal` at the run's op (of `s` code slots); returns the target.
    #[inline(always)]
    fn jal_to(&mut self, op: Op, r: &mut Run, s: usize) -> u64 {
        let pc = r.pc();
        let (target, next) = (pc.wrapping_add(op.imm as i64 as u64), pc + 2 * s as u64);
        let link = matches!(op.rd, 1 | 5).then_some(next);
        if self.bp.jal(pc, target, link) {
            self.charge_mispredict(r);
        }
        self.set_slot(op.rd, next);
        target
    }

    /// Scoreboard entry `i` (a register slot of a decoded op, or `muldiv_rd`, which is one).
    #[inline(always)]
    pub(crate) fn ready_of(&self, i: u8) -> u64 {
        debug_assert!((i as usize) < crate::op::NREGS);
        // SAFETY: as in `Core::slot`: register fields of decoded ops are below NREGS.
        unsafe { *self.ready.get_unchecked(i as usize) }
    }

    /// `Core::mispredict` in a run.
    #[inline(always)]
    fn charge_mispredict(&mut self, r: &mut Run) {
        r.cycle += self.t.mispredict_penalty;
        self.stats.stall_branch += self.t.mispredict_penalty;
        r.settle_variable();
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
