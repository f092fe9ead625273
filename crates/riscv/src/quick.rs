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
use crate::program::PAGE;

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

/// `exec`'s load of `$n` bytes at `$addr`, extended by `$ext`, into `$op.rd`, at `$pc`; a
/// trap gives back the ops after it.
macro_rules! qload {
    ($ops:lifetime, $core:ident, $mem:ident, $plat:ident, $op:ident, $pc:expr, $left:expr, $addr:expr, $n:literal, $ext:expr) => {{
        $core.pc = $pc;
        let v = match $core.load_op::<$n, P>($mem, $plat, $op, $addr) {
            Ok(v) => v,
            Err(e) => break $ops $core.give_back($left, Err(e)),
        };
        $core.quiet_from = $core.quiet_from.max($core.ready[$op.rd as usize]);
        $core.set_slot($op.rd, $ext(v));
    }};
}

/// `exec`'s store of the low `$n` bytes of `$v` at `$addr`, at `$pc`.
macro_rules! qstore {
    ($ops:lifetime, $core:ident, $mem:ident, $plat:ident, $op:ident, $pc:expr, $left:expr, $addr:expr, $v:expr, $n:literal) => {{
        let pc = $pc;
        $core.pc = pc;
        if let Err(e) = $core.int_store::<$n, P>($mem, $plat, $addr, $v, pc + $op.len() as u64) {
            break $ops $core.give_back($left, Err(e));
        }
    }};
}

/// `exec`'s conditional branch at `$pc`: leaves the block if taken; after a mispredict of
/// a branch not taken, the horizon is checked again for the ops after it.
macro_rules! qbranch {
    ($ops:lifetime, $core:ident, $op:ident, $p:ident, $pc:expr, $taken:expr) => {{
        let (pc, taken) = ($pc, $taken);
        let target = pc.wrapping_add($op.imm as i64 as u64);
        if $core.bp.branch_inline(pc, taken, target) {
            $core.mispredict();
            let left = unsafe { (*$p).left } as u64;
            if !taken && $core.cycle + left > $core.block_end {
                break $ops Ok($core.give_back(left as usize, Quick::Late(unsafe { (*$p).idx } as usize + 1)));
            }
        }
        if taken {
            break $ops Ok($core.give_back(unsafe { (*$p).left } as usize, Quick::Left(target)));
        }
        continue $ops;
    }};
}

/// An integer ALU op of kind `$k` (`exec::alu`, folded for the one kind).
macro_rules! qalu {
    ($ops:lifetime, $core:ident, $op:ident, $k:ident, $a:ident, $b:ident, $imm:ident, $pc:expr) => {{
        let pc = $pc;
        // SAFETY: `alu` gives a value for every kind `qalu!` is used with.
        let v = unsafe { alu(Kind::$k, $a, $b, $imm, pc).unwrap_unchecked() };
        $core.set_slot($op.rd, v);
        continue $ops;
    }};
}

/// What the quick path does after a block (`Core::quick_next`).
enum Next {
    /// Run this block (index + 1) quickly too.
    Block(u32),
    /// Hand this block, its line stepped into, to the careful path from its first op.
    Careful(u32),
    /// Hand the pc to `run_blocks`.
    Stop,
}

impl Core {
    /// Run block `*id` (at its pc, in code page `page`, its line stepped into) from op
    /// `start` on the quick path (see the module's text), from local cycle `cycle`, which
    /// the caller made sure is at or past `quiet_from` and at least the ops left before the
    /// horizon; then the blocks it leaves for, as long as each is cached, in the page and
    /// the line `fetch` holds or the one before, and meets the same two conditions. `*id`
    /// is then the last block run (the one `Quick::Careful` and `Late` speak of).
    #[inline(never)]
    pub(crate) fn quick<P: Platform>(
        &mut self,
        mem: &mut NodeMem,
        plat: &mut P,
        page: u64,
        start: usize,
        id: &mut u32,
        cycle: &mut u64,
    ) -> Result<Quick, Ex> {
        // The cycle is the core's own here, as in `exec`.
        let mut at = *id;
        self.cycle = *cycle;
        let mut b = mem.blocks.block(at);
        self.stats.instret += (b.len as usize - start) as u64;
        // SAFETY: `start` is at most the block's length (`run_one`).
        let mut r = self.quick_ops(unsafe { mem.blocks.ops(b).add(start) }, b.pc, mem, plat);
        while let Ok(Quick::Left(to)) = r {
            match self.quick_next(mem, page, at, to) {
                Next::Block(next) => at = next,
                Next::Careful(next) => {
                    (at, r) = (next, Ok(Quick::Careful(0)));
                    break;
                }
                Next::Stop => break,
            }
            b = mem.blocks.block(at);
            self.stats.instret += b.len as u64;
            r = self.quick_ops(mem.blocks.ops(b), b.pc, mem, plat);
        }
        (*id, *cycle) = (at, self.cycle);
        r
    }

    /// The block the quick path goes on with after block `from` left for `to`, if it can:
    /// `to` is in `page` and starts a cached block (the same, the one `from` last left
    /// for, or found and then remembered in `from`) that the quick conditions hold for;
    /// then `fetch`'s line step (`enter_line`), after which a miss may leave the block to
    /// the careful path. `Stop` changes nothing but the successor remembered.
    #[inline(always)]
    fn quick_next(&mut self, mem: &mut NodeMem, page: u64, from: u32, to: u64) -> Next {
        let c = self.cycle;
        if to / PAGE != page {
            return Next::Stop;
        }
        let b = mem.blocks.block(from);
        let next = if b.pc == to {
            from
        } else if b.next_pc == to {
            b.next
        } else {
            match mem.blocks.find(to) {
                0 => return Next::Stop,
                n => {
                    mem.blocks.chain(from, to, n);
                    n
                }
            }
        };
        let len = mem.blocks.block(next).len as u64;
        if c < self.muldiv_watch || c + len > self.block_end {
            return Next::Stop;
        }
        let line = to >> self.line_shift;
        if line != self.iline {
            if line != self.iprev {
                self.pc = to;
                self.fetch_line(mem, line);
                if self.cycle + len > self.block_end {
                    return Next::Careful(next);
                }
            } else {
                (self.iprev, self.iline) = (self.iline, line);
            }
        }
        Next::Block(next)
    }

    /// A block's ops from `at` on, on the quick path, at the core's cycle (`instret`
    /// already counts them).
    #[inline(always)]
    fn quick_ops<P: Platform>(&mut self, mut at: *const BOp, bpc: u64, mem: &mut NodeMem, plat: &mut P) -> Result<Quick, Ex> {
        use Kind::*;
        'ops: loop {
            let p = at;
            // SAFETY: ops of a cached block up to its end marker, which leaves the loop
            // (`Kind::Illegal`); see `Core::careful` on why they stay. The other fields
            // are read where they are needed, through `p`.
            let op = unsafe { (*p).op };
            at = unsafe { at.add(1) };
            // This op's pc; the ops of the block after it.
            macro_rules! pc {
                () => {
                    bpc + unsafe { (*p).off } as u64
                };
            }
            macro_rules! left {
                () => {
                    unsafe { (*p).left } as isize as usize
                };
            }
            // `exec`'s scoreboard check, while a load's result may be pending.
            if self.cycle < self.quiet_from {
                if let Some(q) = self.quick_stall(op, unsafe { &*p }) {
                    break Ok(q);
                }
            }
            self.cycle += 1;
            let (a, b) = (self.slot(op.rs1), self.slot(op.rs2));
            let imm = op.imm as i64 as u64;
            let addr = a.wrapping_add(imm);
            match unsafe { (*p).kind } {
                Lb => qload!('ops, self, mem, plat, op, pc!(), left!(), addr, 1, |v| v as i8 as u64),
                Lh => qload!('ops, self, mem, plat, op, pc!(), left!(), addr, 2, |v| v as i16 as u64),
                Lw => qload!('ops, self, mem, plat, op, pc!(), left!(), addr, 4, |v| v as i32 as u64),
                Ld => qload!('ops, self, mem, plat, op, pc!(), left!(), addr, 8, |v| v),
                Lbu => qload!('ops, self, mem, plat, op, pc!(), left!(), addr, 1, |v| v),
                Lhu => qload!('ops, self, mem, plat, op, pc!(), left!(), addr, 2, |v| v),
                Lwu => qload!('ops, self, mem, plat, op, pc!(), left!(), addr, 4, |v| v),
                Sb => qstore!('ops, self, mem, plat, op, pc!(), left!(), addr, b, 1),
                Sh => qstore!('ops, self, mem, plat, op, pc!(), left!(), addr, b, 2),
                Sw => qstore!('ops, self, mem, plat, op, pc!(), left!(), addr, b, 4),
                Sd => qstore!('ops, self, mem, plat, op, pc!(), left!(), addr, b, 8),
                Beq => qbranch!('ops, self, op, p, pc!(), a == b),
                Bne => qbranch!('ops, self, op, p, pc!(), a != b),
                Blt => qbranch!('ops, self, op, p, pc!(), (a as i64) < (b as i64)),
                Bge => qbranch!('ops, self, op, p, pc!(), (a as i64) >= (b as i64)),
                Bltu => qbranch!('ops, self, op, p, pc!(), a < b),
                Bgeu => qbranch!('ops, self, op, p, pc!(), a >= b),
                // A jump is a block's last op: nothing to give back.
                Jal => {
                    let pc = pc!();
                    let mut c = self.cycle;
                    let to = self.jal_to(op, pc, pc + op.len() as u64, &mut c);
                    self.cycle = c;
                    break Ok(Quick::Left(to));
                }
                Jalr => {
                    let pc = pc!();
                    self.pc = pc;
                    if let Err(e) = self.jalr(op, a, pc + op.len() as u64) {
                        break Err(e);
                    }
                    break Ok(Quick::Left(self.pc));
                }
                // `exec_rare`'s ops and the end marker (`Illegal`): the careful path's,
                // from here.
                Illegal | Net | FetchFault | Mul | Mulh | Mulhsu | Mulhu | Div | Divu | Rem | Remu | Mulw
                | Divw | Divuw | Remw | Remuw | Fence | FenceI | Ecall | Ebreak | Mret | Wfi | Csrrw | Csrrs
                | Csrrc | Csrrwi | Csrrsi | Csrrci | LrW | ScW | AmoW | LrD | ScD | AmoD | Bswap | Fp => {
                    self.cycle -= 1;
                    break Ok(self.give_back(left!().wrapping_add(1), Quick::Careful(unsafe { (*p).idx } as usize)));
                }
                // One arm per kind, so that each is its own target of the dispatch.
                Lui => qalu!('ops, self, op, Lui, a, b, imm, pc!()),
                Auipc => qalu!('ops, self, op, Auipc, a, b, imm, pc!()),
                Addi => qalu!('ops, self, op, Addi, a, b, imm, pc!()),
                Slti => qalu!('ops, self, op, Slti, a, b, imm, pc!()),
                Sltiu => qalu!('ops, self, op, Sltiu, a, b, imm, pc!()),
                Xori => qalu!('ops, self, op, Xori, a, b, imm, pc!()),
                Ori => qalu!('ops, self, op, Ori, a, b, imm, pc!()),
                Andi => qalu!('ops, self, op, Andi, a, b, imm, pc!()),
                Slli => qalu!('ops, self, op, Slli, a, b, imm, pc!()),
                Srli => qalu!('ops, self, op, Srli, a, b, imm, pc!()),
                Srai => qalu!('ops, self, op, Srai, a, b, imm, pc!()),
                Add => qalu!('ops, self, op, Add, a, b, imm, pc!()),
                Sub => qalu!('ops, self, op, Sub, a, b, imm, pc!()),
                Sll => qalu!('ops, self, op, Sll, a, b, imm, pc!()),
                Slt => qalu!('ops, self, op, Slt, a, b, imm, pc!()),
                Sltu => qalu!('ops, self, op, Sltu, a, b, imm, pc!()),
                Xor => qalu!('ops, self, op, Xor, a, b, imm, pc!()),
                Srl => qalu!('ops, self, op, Srl, a, b, imm, pc!()),
                Sra => qalu!('ops, self, op, Sra, a, b, imm, pc!()),
                Or => qalu!('ops, self, op, Or, a, b, imm, pc!()),
                And => qalu!('ops, self, op, And, a, b, imm, pc!()),
                Addiw => qalu!('ops, self, op, Addiw, a, b, imm, pc!()),
                Slliw => qalu!('ops, self, op, Slliw, a, b, imm, pc!()),
                Srliw => qalu!('ops, self, op, Srliw, a, b, imm, pc!()),
                Sraiw => qalu!('ops, self, op, Sraiw, a, b, imm, pc!()),
                Addw => qalu!('ops, self, op, Addw, a, b, imm, pc!()),
                Subw => qalu!('ops, self, op, Subw, a, b, imm, pc!()),
                Sllw => qalu!('ops, self, op, Sllw, a, b, imm, pc!()),
                Srlw => qalu!('ops, self, op, Srlw, a, b, imm, pc!()),
                Sraw => qalu!('ops, self, op, Sraw, a, b, imm, pc!()),
            }
            // A load or a store: it may have taken more than a cycle or moved the horizon.
            let left = left!();
            if self.cycle + left as u64 > self.block_end {
                break Ok(self.give_back(left, Quick::Late(unsafe { (*p).idx } as usize + 1)));
            }
        }
    }

    /// Take back the `n` ops of the block that will not run here from `instret`; `r`.
    #[inline(always)]
    fn give_back<T>(&mut self, n: usize, r: T) -> T {
        self.stats.instret -= n as u64;
        r
    }

    /// `exec`'s scoreboard stall for `op` (the op `at` of a block) at the core's cycle:
    /// `None` after the stall, if any, or the careful path from the op if the stall would
    /// bring the horizon within reach of the block's ops.
    #[inline(always)]
    fn quick_stall(&mut self, op: Op, at: &BOp) -> Option<Quick> {
        let (rs1, rs2) = (op.rs1 as usize, op.rs2 as usize);
        let r = self.ready[rs1].max(self.ready[rs2]);
        if r <= self.cycle {
            return None;
        }
        let rest = at.left as usize + 1;
        if r + rest as u64 > self.block_end {
            return Some(self.give_back(rest, Quick::Careful(at.idx as usize)));
        }
        self.stall(r, rs1, rs2);
        None
    }
}
