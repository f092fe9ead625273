//! The fast engine's quick path (`fast.rs`): a whole block run with the per-instruction
//! checks of `exec`'s prologue and `run_block`'s loop worked out in advance, for a block
//! entered at a cycle `c` from which neither can do anything:
//!
//! - the scoreboard is quiet (`c >= Core::quiet_from`): no register is pending and the
//!   mul/div unit's write-port rule cannot fire (`muldiv_watch < c`), so an op issues in
//!   one cycle, unless it reads a register a load earlier in the same block wrote
//!   (`BOp::chk`, found when the block was cut), the only entries that can become pending
//!   inside the block (every other op that sets one, mul/div and the rest of `exec_rare`,
//!   ends a block and goes to the careful path);
//! - the horizon is at least the block's length away (`c + len <= block_end`): the
//!   interpreter checks `cycle < block_end` before each instruction, which one cycle per
//!   op cannot fail; only an op that takes more than a cycle (a miss, a misaligned access,
//!   a mispredict, a stall) or that may pull the horizon in (a load or store: a polling
//!   core yields) can, so the bound is checked again after those, for the ops left, and the
//!   rest of the block goes to the careful path when it fails;
//! - `instret` is counted once per block (the ops not run are taken back where the block
//!   is left early); nothing reads it inside a block (only CSR and network instructions,
//!   which `exec_rare` runs, do).
//!
//! Everything that depends on the run stays dynamic and is the interpreter's own code: the
//! loads and stores (`load_op`, `int_store`: TLB, caches, devices, traps), the branch
//! predictor, `jal`/`jalr`, the stalls (`Core::stall`).

use crate::blocks::BOp;
use crate::core::{Core, Ex};
use crate::exec::alu;
use crate::mem::NodeMem;
use crate::op::{Kind, Op};
use crate::platform::Platform;

/// Where a block's quick run stopped.
pub(crate) enum Quick {
    /// The block was left for this pc (the end, a taken branch or a jump).
    Left(u64),
    /// Op `i` and those after it are left to the careful path (`Core::careful`); nothing
    /// of op `i` was done, and the horizon is known not to stop it.
    Careful(usize),
    /// The same, but the horizon may stop the block before op `i`.
    Late(usize),
}

/// `exec`'s load of `$n` bytes at `$addr`, extended by `$ext`, into `$op.rd` (as `load!` in
/// `fast.rs`); a trap gives back the ops after it.
macro_rules! qload {
    ($core:ident, $mem:ident, $plat:ident, $op:ident, $pc:ident, $c:ident, $left:ident, $addr:expr, $n:literal, $ext:expr) => {{
        ($core.pc, $core.cycle) = ($pc, *$c);
        let v = match $core.load_op::<$n, P>($mem, $plat, $op, $addr) {
            Ok(v) => v,
            Err(e) => return $core.give_back($left, Err(e)),
        };
        *$c = $core.cycle;
        $core.quiet_from = $core.quiet_from.max($core.ready[$op.rd as usize]);
        $core.set_slot($op.rd, $ext(v));
    }};
}

/// `exec`'s store of the low `$n` bytes of `$v` at `$addr` (as `store!` in `fast.rs`).
macro_rules! qstore {
    ($core:ident, $mem:ident, $plat:ident, $pc:ident, $c:ident, $left:ident, $addr:expr, $v:expr, $next:expr, $n:literal) => {{
        ($core.pc, $core.cycle) = ($pc, *$c);
        if let Err(e) = $core.int_store::<$n, P>($mem, $plat, $addr, $v, $next) {
            return $core.give_back($left, Err(e));
        }
        *$c = $core.cycle;
    }};
}

impl Core {
    /// Run the block `ops` (`len` ops at `bpc`) from its first op on the quick path (see
    /// the module's text), from local cycle `cycle`, which the caller made sure is at or
    /// past `quiet_from` and at least `len` before the horizon.
    #[inline(always)]
    pub(crate) fn quick<P: Platform>(
        &mut self,
        ops: *const BOp,
        bpc: u64,
        len: usize,
        cycle: &mut u64,
        mem: &mut NodeMem,
        plat: &mut P,
    ) -> Result<Quick, Ex> {
        self.stats.instret += len as u64;
        let mut at = ops;
        loop {
            // SAFETY: ops `0..=len` of a cached block, the last the end marker, which
            // leaves the loop (`Kind::Illegal`); see `Core::careful` on why they stay.
            let u = unsafe { *at };
            at = unsafe { at.add(1) };
            let (op, i) = (u.op, u.idx as usize);
            // Ops of the block after this one.
            let left = len.wrapping_sub(i + 1);
            if u.chk {
                if let Some(q) = self.quick_stall(op, *cycle, i, len) {
                    return Ok(q);
                }
                *cycle = self.cycle;
            }
            *cycle += 1;
            let (a, b) = (self.slot(op.rs1), self.slot(op.rs2));
            let imm = op.imm as i64 as u64;
            let pc = bpc + u.off as u64;
            let next = pc + op.len() as u64;
            let addr = a.wrapping_add(imm);
            let c = &mut *cycle;
            match u.kind {
                Kind::Lb => qload!(self, mem, plat, op, pc, c, left, addr, 1, |v| v as i8 as u64),
                Kind::Lh => qload!(self, mem, plat, op, pc, c, left, addr, 2, |v| v as i16 as u64),
                Kind::Lw => qload!(self, mem, plat, op, pc, c, left, addr, 4, |v| v as i32 as u64),
                Kind::Ld => qload!(self, mem, plat, op, pc, c, left, addr, 8, |v| v),
                Kind::Lbu => qload!(self, mem, plat, op, pc, c, left, addr, 1, |v| v),
                Kind::Lhu => qload!(self, mem, plat, op, pc, c, left, addr, 2, |v| v),
                Kind::Lwu => qload!(self, mem, plat, op, pc, c, left, addr, 4, |v| v),
                Kind::Sb => qstore!(self, mem, plat, pc, c, left, addr, b, next, 1),
                Kind::Sh => qstore!(self, mem, plat, pc, c, left, addr, b, next, 2),
                Kind::Sw => qstore!(self, mem, plat, pc, c, left, addr, b, next, 4),
                Kind::Sd => qstore!(self, mem, plat, pc, c, left, addr, b, next, 8),
                Kind::Beq => match self.quick_branch(op, pc, a == b, c, i, left) {
                    Some(q) => return Ok(q),
                    None => continue,
                },
                Kind::Bne => match self.quick_branch(op, pc, a != b, c, i, left) {
                    Some(q) => return Ok(q),
                    None => continue,
                },
                Kind::Blt => match self.quick_branch(op, pc, (a as i64) < (b as i64), c, i, left) {
                    Some(q) => return Ok(q),
                    None => continue,
                },
                Kind::Bge => match self.quick_branch(op, pc, (a as i64) >= (b as i64), c, i, left) {
                    Some(q) => return Ok(q),
                    None => continue,
                },
                Kind::Bltu => match self.quick_branch(op, pc, a < b, c, i, left) {
                    Some(q) => return Ok(q),
                    None => continue,
                },
                Kind::Bgeu => match self.quick_branch(op, pc, a >= b, c, i, left) {
                    Some(q) => return Ok(q),
                    None => continue,
                },
                // A jump is a block's last op: nothing to give back.
                Kind::Jal => return Ok(Quick::Left(self.jal_to(op, pc, next, c))),
                Kind::Jalr => {
                    (self.pc, self.cycle) = (pc, *c);
                    self.jalr(op, a, next)?;
                    *c = self.cycle;
                    return Ok(Quick::Left(self.pc));
                }
                k => match alu(k, a, b, imm, pc) {
                    Some(v) => {
                        self.set_slot(op.rd, v);
                        continue;
                    }
                    // `exec_rare`'s ops and the end marker: the careful path's, from here.
                    None => {
                        *c -= 1;
                        return self.give_back(len - i, Ok(Quick::Careful(i)));
                    }
                },
            }
            // A load or a store: it may have taken more than a cycle or moved the horizon.
            if *cycle + left as u64 > self.block_end {
                return self.give_back(left, Ok(Quick::Late(i + 1)));
            }
        }
    }

    /// Take back the `n` ops of the block that will not run here from `instret`; `r`.
    #[inline(always)]
    fn give_back<T>(&mut self, n: usize, r: T) -> T {
        self.stats.instret -= n as u64;
        r
    }

    /// `exec`'s scoreboard stall for `op`, op `i` of a block of `len` (a `chk` op), at
    /// `cycle`: `None` after the stall, if any (the core's cycle is then the one the op
    /// issues after), or the careful path from op `i` if the stall would bring the horizon
    /// within reach of the block's ops.
    #[inline(always)]
    fn quick_stall(&mut self, op: Op, cycle: u64, i: usize, len: usize) -> Option<Quick> {
        let (rs1, rs2) = (op.rs1 as usize, op.rs2 as usize);
        let r = self.ready[rs1].max(self.ready[rs2]);
        self.cycle = cycle;
        if r <= cycle {
            return None;
        }
        if r + (len - i) as u64 > self.block_end {
            return Some(self.give_back(len - i, Quick::Careful(i)));
        }
        self.stall(r, rs1, rs2);
        None
    }

    /// `exec`'s conditional branch at `pc` (`Core::branch_to`), op `i` of the block with
    /// `left` ops after it: `Some` if the block ends here (taken) or the careful path goes
    /// on after it (a mispredict brought the horizon within reach), `None` to go on.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn quick_branch(&mut self, op: Op, pc: u64, taken: bool, cycle: &mut u64, i: usize, left: usize) -> Option<Quick> {
        let target = pc.wrapping_add(op.imm as i64 as u64);
        if self.bp.branch_inline(pc, taken, target) {
            self.charge_mispredict(cycle);
            if !taken && *cycle + left as u64 > self.block_end {
                return Some(self.give_back(left, Quick::Late(i + 1)));
            }
        }
        if taken {
            return Some(self.give_back(left, Quick::Left(target)));
        }
        None
    }
}
