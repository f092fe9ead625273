//! What a trace holds (`jit/mod.rs`): the ops reached from an entry within its page that
//! the quiet loop runs inline, the timing parameters it is made for, and how it says where
//! the fast engine goes on.

use crate::core::Core;
use crate::mem::NodeMem;
use crate::op::{Kind, Op};
use crate::program::PAGE;

/// A translated trace: `core` the core it runs, `io` its cycle and far limit (`Io`), `k` the
/// op it is entered at (its index in `Trace::items`). Returns an `Exit`'s code.
pub(crate) type TraceFn = unsafe extern "C" fn(core: *mut Core, io: *mut Io, k: u64) -> u64;

/// What a trace reads and writes besides the `Core`: the run's cycle (`fast.rs`, `Run`), the
/// cycle from which an op that may take longer than its issue ends the run, and, written
/// where it hands back, the run's end then (the code slot in the page of the end of the
/// line it was running).
/// The core's BHT words and packed BTB words (`BranchPred::tables`) follow: a trace stores
/// only packed pairs (`Trace::new`), so the BTB keeps its form while the trace runs. Then
/// what the trace counts the ops it ran from (`emit.rs`, `exit_all`: each took one cycle
/// to issue, and every other cycle it added is in the core's branch or load-use stall
/// counter or charged by a helper): their sum at entry, less the cycles helpers charged
/// (`helpers::settled`). Last, the node's memory, for the accesses the helpers run with
/// their timing.
#[repr(C)]
pub(crate) struct Io {
    pub cycle: u64,
    pub far_limit: u64,
    pub end: i64,
    pub bht: *mut u64,
    pub btb: *mut u64,
    pub base: u64,
    pub mem: *mut NodeMem,
}

/// Where the fast engine goes on after a trace, as its code says (`Exit::code`,
/// `Exit::of`): at an op of the page (its code slot in the page) in the quiet loop
/// (`Next`), after an op that may have set a scoreboard entry (`Raised`), or with the run
/// ended there (`End`, a mispredict near the horizon); or at a jump's target pc (even, so
/// told apart by the low bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    Next(i64),
    Raised(i64),
    End(i64),
    Jump(u64),
}

impl Exit {
    pub(crate) fn code(self) -> u64 {
        let slot = |off: i64, mode: u64| ((off << 3) as u64) | mode << 1 | 1;
        match self {
            Exit::Next(off) => slot(off, 0),
            Exit::Raised(off) => slot(off, 1),
            Exit::End(off) => slot(off, 2),
            Exit::Jump(pc) => pc,
        }
    }

    #[inline(always)]
    pub(crate) fn of(code: u64) -> Exit {
        if code & 1 == 0 {
            return Exit::Jump(code);
        }
        let off = code as i64 >> 3;
        match (code >> 1) & 3 {
            0 => Exit::Next(off),
            1 => Exit::Raised(off),
            _ => Exit::End(off),
        }
    }
}

/// One op of a trace: `off` code slots from the entry, at `pc`; `end`, its I-cache line's
/// end (code slots from the entry: the run's end while it runs, `Run::end`); for a load,
/// whether the quiet loop may go on after it when it hits (`next_free`: the next op, in
/// the line, reads neither source from its destination, `Run::quiet_after_load`).
pub(crate) struct Item {
    pub off: i64,
    pub pc: u64,
    pub op: Op,
    pub end: i64,
    pub next_free: bool,
    /// The next op (in this line or the next) reads a source from this op's destination.
    pub next_reads: bool,
}

/// A trace: its ops (the entry's first), found from the entry along both ways of every
/// branch and `jal`, within the entry's page.
pub(crate) struct Trace {
    pub items: Vec<Item>,
    /// The entry's code slot in its page.
    pub slot: i64,
    pub shape: Shape,
}

/// The timing parameters a trace is made for (`Shape::of` packs a core's in a word): the
/// I-cache line (log2 bytes), the predictor's BHT (log2 entries, where the history's hash
/// goes) and BTB (log2 entries), the mispredict penalty, the load latency of a word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub line_shift: u32,
    pub bht_bits: u32,
    pub hash_shift: u32,
    pub btb_bits: u32,
    pub penalty: u64,
    pub load_latency: u64,
}

impl Shape {
    /// A core's shape in a word; `None` (no traces) if a parameter does not fit its field.
    #[inline(always)]
    pub(crate) fn of(c: &Core) -> Option<u64> {
        let (bht_bits, hash_shift, btb_mask) = c.bp.shape();
        let btb_bits = btb_mask.count_ones() as u64;
        let (p, lat) = (c.t.mispredict_penalty, c.t.load_latency);
        if p >> 16 != 0 || lat >> 16 != 0 || lat == 0 {
            return None;
        }
        let fields =
            c.line_shift as u64 | (bht_bits as u64) << 8 | (hash_shift as u64) << 16 | btb_bits << 24;
        Some(fields | p << 32 | lat << 48)
    }

    pub(crate) fn unpack(w: u64) -> Shape {
        let b = |i: u32| (w >> (8 * i)) as u32 & 0xff;
        let (penalty, load_latency) = ((w >> 32) & 0xffff, w >> 48);
        Shape { line_shift: b(0), bht_bits: b(1), hash_shift: b(2), btb_bits: b(3), penalty, load_latency }
    }
}

/// Fewer ops than this gain less than a trace's call costs.
const MIN_OPS: usize = 2;
/// At most this many ops a trace (a compile's cost grows with it): chosen, not tuned, so
/// that a function of compute's size (its quicksort, about 100 ops) is one trace. With 64,
/// compute's traces handed back 1.2 M times more at ops they did not hold, and took 4.3%
/// more host instructions (callgrind, 2026-12-06).
const MAX_OPS: usize = 256;
// An op's index in its trace is 15 bits of its word (`Traces::translate`).
const _: () = assert!(MAX_OPS < 1 << 15);

impl Trace {
    /// The trace entered at op `i` of `ops` (a code region whose first op is at pc `base`),
    /// for cores of `shape`; `None` if it would be too short. It stops at ops another
    /// trace holds (`held`, by index in `ops`): a program's code is translated once, where
    /// overlapping traces took a 256-core NanoSort 9,308 ops in 168 compiles (about 1 s of
    /// Cranelift's time, `fast` profile), the way between two traces through the fast
    /// engine instead.
    pub(crate) fn new(
        ops: &[Op],
        i: usize,
        base: u64,
        shape: Shape,
        held: impl Fn(usize) -> bool,
    ) -> Option<Trace> {
        let pc = base + 2 * i as u64;
        let page = (-((pc % PAGE) as i64 / 2), (PAGE - pc % PAGE) as i64 / 2);
        let slot = (pc % PAGE) as i64 / 2;
        let mut t = Trace { items: Vec::new(), slot, shape };
        let mut todo = std::collections::VecDeque::from([0i64]);
        let mut seen = std::collections::HashSet::from([0i64]);
        while let Some(off) = todo.pop_front() {
            if t.items.len() == MAX_OPS {
                break;
            }
            let op = ops[(i as i64 + off) as usize];
            let translates = translated(op.kind()) && packs(op, pc.wrapping_add((2 * off) as u64));
            if !translates || off != 0 && held((i as i64 + off) as usize) {
                continue;
            }
            let item = t.item(ops, i, pc, off);
            for next in t.successors(&item) {
                if next >= page.0 && next < page.1 && seen.insert(next) {
                    todo.push_back(next);
                }
            }
            t.items.push(item);
        }
        (t.items.len() >= MIN_OPS).then_some(t)
    }

    fn item(&self, ops: &[Op], i: usize, entry: u64, off: i64) -> Item {
        let op = ops[(i as i64 + off) as usize];
        let pc = entry.wrapping_add((2 * off) as u64);
        let shift = self.shape.line_shift;
        let end = off + ((((pc >> shift) + 1) << shift) - pc) as i64 / 2;
        let next = off + op.len() as i64 / 2;
        let n = ops.get((i as i64 + next) as usize);
        let next_reads = n.is_none_or(|n| n.rs1 == op.rd || n.rs2 == op.rd);
        let next_free = next < end && !next_reads;
        Item { off, pc, op, end, next_free, next_reads }
    }

    /// Where an op may lead: the next op (not after a jump), a branch's or `jal`'s target,
    /// and after a call (a `jal` that links) the op it returns to.
    fn successors(&self, it: &Item) -> Vec<i64> {
        let next = it.off + it.op.len() as i64 / 2;
        let target = it.off + it.op.imm as i64 / 2;
        match it.op.kind() {
            Kind::Jal if links(it.op) => vec![target, next],
            Kind::Jal => vec![target],
            Kind::Jalr => vec![],
            Kind::Beq | Kind::Bne | Kind::Blt | Kind::Bge | Kind::Bltu | Kind::Bgeu => vec![next, target],
            _ => vec![next],
        }
    }

    /// The indices of the trace's ops that a call in it returns to (the op after a `jal`
    /// or `jalr` that links): where a `jalr` goes on in the trace if its target is one.
    pub(crate) fn return_sites(&self) -> Vec<usize> {
        let calls =
            self.items.iter().filter(|it| matches!(it.op.kind(), Kind::Jal | Kind::Jalr) && links(it.op));
        let after: std::collections::HashSet<i64> = calls.map(|it| it.off + it.op.len() as i64 / 2).collect();
        (0..self.items.len()).filter(|&k| after.contains(&self.items[k].off)).collect()
    }

    /// The index of the trace's op `off` slots from the entry, if it has one.
    pub(crate) fn at(&self, off: i64) -> Option<usize> {
        self.items.iter().position(|it| it.off == off)
    }
}

/// Whether a jump links (writes the return address to `ra` or `t0`: a call, whose link
/// the predictor's return stack takes; RISC-V unprivileged spec 2.5.1).
pub(crate) fn links(op: Op) -> bool {
    matches!(op.rd, 1 | 5)
}

/// Whether a branch's or `jal`'s pc and target pack in one BTB word (`BranchPred`'s
/// narrow form: both below 4 GiB, as the default memory map's code is); a trace runs no
/// other, so that the BTB cannot change form under it.
fn packs(op: Op, pc: u64) -> bool {
    let control = matches!(
        op.kind(),
        Kind::Jal | Kind::Beq | Kind::Bne | Kind::Blt | Kind::Bge | Kind::Bltu | Kind::Bgeu
    );
    !control || crate::bpred::pack(pc, pc.wrapping_add(op.imm as i64 as u64)).is_some()
}

/// The kinds a trace runs: those the quiet loop runs inline (`jalr` too) and the mul/div
/// unit's (`emit/muldiv.rs`).
pub(crate) fn translated(k: Kind) -> bool {
    use Kind::*;
    matches!(
        k,
        Lui | Auipc
            | Jal
            | Jalr
            | Beq
            | Bne
            | Blt
            | Bge
            | Bltu
            | Bgeu
            | Lb
            | Lh
            | Lw
            | Ld
            | Lbu
            | Lhu
            | Lwu
            | Sb
            | Sh
            | Sw
            | Sd
            | Addi
            | Slti
            | Sltiu
            | Xori
            | Ori
            | Andi
            | Slli
            | Srli
            | Srai
            | Add
            | Sub
            | Sll
            | Slt
            | Sltu
            | Xor
            | Srl
            | Sra
            | Or
            | And
            | Addiw
            | Slliw
            | Srliw
            | Sraiw
            | Addw
            | Subw
            | Sllw
            | Srlw
            | Sraw
    ) || crate::muldiv::is_muldiv(k)
}

#[cfg(test)]
mod tests {
    use super::{Exit, Shape, Trace};
    use crate::op::{Kind, Op, SINK};

    /// 64-byte lines, the default predictor's sizes, a penalty of 3, a load latency of 2.
    fn shape() -> Shape {
        Shape { line_shift: 6, bht_bits: 9, hash_shift: 6, btb_bits: 5, penalty: 3, load_latency: 2 }
    }

    /// A page of ops, `Illegal` but for `at`'s (each 4 bytes: its second slot stays
    /// `Illegal`, as a decoded page holds the op starting there).
    fn page(at: &[(usize, Op)]) -> Vec<Op> {
        let mut ops = vec![Op::ILLEGAL0; 2048];
        at.iter().for_each(|&(i, op)| ops[i] = op);
        ops
    }

    fn op(k: Kind, rd: u8, rs1: u8, rs2: u8, imm: i32) -> Op {
        Op::new(k, rd, rs1, rs2, imm, 4)
    }

    /// From the entry along both ways of a branch, to the first op a trace does not run; a
    /// load whose next op reads its result says so.
    #[test]
    fn a_trace_follows_both_ways_of_a_branch_and_stops_at_an_op_it_does_not_run() {
        let ops = page(&[
            (0, op(Kind::Addi, 1, 1, 0, 1)),
            (2, op(Kind::Beq, SINK, 1, 2, 8)),
            (4, op(Kind::Ld, 3, 4, 0, 0)),
            (6, op(Kind::Add, 5, 3, 3, 0)),
            (8, op(Kind::Csrrs, 6, 0, 0, 0xc00)),
        ]);
        let t = Trace::new(&ops, 0, 0x8000_0000, shape(), |_| false).expect("a trace");
        let mut offs: Vec<i64> = t.items.iter().map(|it| it.off).collect();
        offs.sort();
        assert_eq!(offs, [0, 2, 4, 6], "the csrrs at slot 8 is left to the fast engine");
        let ld = &t.items[t.at(4).unwrap()];
        assert!(ld.next_reads && !ld.next_free, "the add reads the load's result");
        assert_eq!((ld.pc, ld.end), (0x8000_0008, 32), "a 64-byte line is 32 slots");
        assert!(Trace::new(&ops, 8, 0x8000_0000, shape(), |_| false).is_none(), "no trace from the csrrs");
        assert!(Trace::new(&ops, 6, 0x8000_0000, shape(), |_| false).is_none(), "one op gains nothing");
        let t = Trace::new(&ops, 0, 0x8000_0000, shape(), |j| j == 4).expect("a trace");
        let offs: Vec<i64> = t.items.iter().map(|it| it.off).collect();
        assert_eq!(offs, [0, 2, 6], "the ld another trace holds is left to it");
    }

    /// A multiply or divide is in the trace, and the ops after it (`emit/muldiv.rs`).
    #[test]
    fn a_trace_holds_a_divide_and_what_follows_it() {
        let ops = page(&[
            (0, op(Kind::Addi, 1, 1, 0, 1)),
            (2, op(Kind::Divu, 6, 5, 1, 0)),
            (4, op(Kind::Add, 5, 6, 3, 0)),
        ]);
        let t = Trace::new(&ops, 0, 0x8000_0000, shape(), |_| false).expect("a trace");
        assert_eq!(t.items.iter().map(|it| it.off).collect::<Vec<_>>(), [0, 2, 4]);
    }

    /// A branch whose target is above 4 GiB would make the BTB hold full pairs: left out.
    #[test]
    fn a_branch_whose_pair_does_not_pack_is_left_out() {
        let ops = page(&[(0, op(Kind::Addi, 1, 1, 0, 1)), (2, op(Kind::Bne, SINK, 1, 0, 0x1000))]);
        let low = Trace::new(&ops, 0, 0x8000_0000, shape(), |_| false).expect("a trace");
        assert_eq!(low.items.len(), 2);
        assert!(
            Trace::new(&ops, 0, 0xffff_f000, shape(), |_| false).is_none(),
            "the bne's target is at 4 GiB"
        );
    }

    #[test]
    fn exits_round_trip_through_their_codes() {
        for e in [Exit::Next(0), Exit::Next(-31), Exit::Raised(5), Exit::End(31), Exit::Jump(0x8000_1234)] {
            assert_eq!(Exit::of(e.code()), e);
        }
    }
}
