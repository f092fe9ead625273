//! Loads and stores in a trace (`emit.rs`): `load_quick`'s and `store_quick`'s common case
//! run in the host code (`quick_access`), the rest through the helpers (`helpers::load`,
//! `helpers::store`), and the next op's wait for a word load's result.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I64, I8};
use cranelift_codegen::ir::{Block, Endianness, InstBuilder, MemFlagsData, Value};

use super::{
    Emit, COH, DLINE, DLINE_DIRTY, HTIF_CN, L1D, QUIET_FROM, READY, READY_MULDIV, STALL_LOAD_USE, TLB,
};
use crate::cache::{layout as l1, KNOWN_DATA};
use crate::jit::helpers;
use crate::jit::trace::{Exit, Item};
use crate::op::{Kind, Op};

impl Emit<'_> {
    /// A load (`load!` in the quiet loop): in the trace (`quick_load`) or by the helper;
    /// out before it if the helper declines it (a device's); after it, out with `Raised`
    /// unless the quiet loop would go on or the trace waits for its result itself
    /// (`load_use`).
    pub(super) fn load(&mut self, j: usize) {
        let it = &self.t.items[j];
        let op = it.op;
        let addr = self.read(op.rs1);
        let addr = self.b.ins().iadd_imm_s(addr, op.imm as i64);
        let c = self.b.use_var(self.cycle);
        let c1 = self.b.ins().iadd_imm_s(c, 1);
        let (helper, hit) = (self.b.create_block(), self.b.create_block());
        let waits = self.load_use(it);
        let raised = if waits.is_some() { hit } else { self.b.create_block() };
        self.quick_load(it, addr, c1, helper, hit, raised);
        self.b.switch_to_block(helper);
        self.load_by_helper(it, addr, c1, hit, raised);
        let next = it.off + op.len() as i64 / 2;
        if waits.is_none() {
            self.b.switch_to_block(raised);
            self.issue();
            self.exit(Exit::Raised(next), it.end);
        }
        self.b.switch_to_block(hit);
        self.issue();
        match waits {
            Some(wait) => self.next_after(j, wait, Exit::Raised),
            None => self.next(j),
        }
    }

    /// The load `it` at `addr` by its helper (`helpers::load`), issued at `c1`: out before
    /// it if the helper declines it; after it, out if the run ends (`settled`), else to
    /// `raised` if the helper says so (it is `hit` where the trace waits itself), or `hit`.
    fn load_by_helper(&mut self, it: &Item, addr: Value, c1: Value, hit: Block, raised: Block) {
        let op = it.op;
        let rd_free = self.iconst(op.rd as u64 | (it.next_free as u64) << 8);
        let args = [self.core, self.io, addr, c1, self.iconst(it.pc), rd_free];
        let status = self.call(load_helper(op), &args);
        let (slow, loaded) = (self.exit_block(Exit::Next(it.off), it.end), self.b.create_block());
        self.b.ins().brif(status, loaded, &[], slow, &[]);
        self.b.switch_to_block(loaded);
        self.settled(status, it.off + op.len() as i64 / 2, it.end);
        if raised == hit {
            return self.jump_block(hit);
        }
        let is_raised = self.b.ins().band_imm_s(status, helpers::done::RAISED as i64);
        self.b.ins().brif(is_raised, raised, &[], hit, &[]);
    }

    /// After a helper ran a load or store (`status` as `helpers::load` and `store` return
    /// it): the cycle after it (less the issue's, which the op's `issue` adds), and out
    /// before op `next` with the run ended if the access's timing took it to the far limit
    /// or the horizon (`helpers::done::END`).
    pub(super) fn settled(&mut self, status: Value, next: i64, end: i64) {
        let after = self.b.ins().ushr_imm_s(status, 2);
        let before_issue = self.b.ins().iadd_imm_s(after, -1);
        self.b.def_var(self.cycle, before_issue);
        let ended = self.b.ins().band_imm_s(status, helpers::done::END as i64);
        let (out, on) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(ended, out, &[], on, &[]);
        self.b.switch_to_block(out);
        self.issue();
        self.exit(Exit::End(next), end);
        self.b.switch_to_block(on);
    }

    /// `load_quick` for a word or double-word load, run here (`quick_access`); then the
    /// result written as `load!` writes it, and on to `hit` if the quiet loop would go on
    /// after it (`next_free`, at the default latency), else to `raised`. Anything else to
    /// `helper` (nothing changed yet).
    fn quick_load(&mut self, it: &Item, addr: Value, c1: Value, helper: Block, hit: Block, raised: Block) {
        let op = it.op;
        let lat = self.t.shape.load_latency;
        let n = match op.kind() {
            Kind::Ld => 8,
            Kind::Lw | Kind::Lwu => 4,
            _ => return self.jump_block(helper),
        };
        let at = self.quick_access(addr, n, false, helper);
        let le = MemFlagsData::trusted().with_endianness(Endianness::Little);
        let v = match op.kind() {
            Kind::Ld => self.b.ins().load(I64, le, at, 0),
            Kind::Lw => self.b.ins().sload32(le, at, 0),
            _ => self.b.ins().uload32(le, at, 0),
        };
        // `set_load_ready`, the bound, the register (`load!`).
        let flags = MemFlagsData::trusted();
        let rd = op.rd as i32;
        let ready = self.b.ins().iadd_imm_s(c1, lat as i64 - 1);
        let no = self.b.ins().iconst(I8, 0);
        self.b.ins().store(flags, no, self.core, READY_MULDIV + rd);
        self.b.ins().store(flags, ready, self.core, READY + 8 * rd);
        // The bound raised to `ready`, which is past it: a trace starts with the bound at
        // most a cycle past the cycle (the quiet loop's terms, a hit load's result due at
        // the next op's issue at the latest: `Core::run_trace` asserts it), and every load
        // in it is due a cycle or more after its issue. Not a `max` with the bound: 1.1%
        // fewer host instructions on compute.
        self.b.ins().store(flags, ready, self.core, QUIET_FROM);
        self.write(op.rd, v);
        self.jump_block(if it.next_free && lat == 2 { hit } else { raised });
    }

    /// `load_quick`'s and `store_quick`'s (`write`) terms for an access of `n` bytes at
    /// `addr`, checked here: aligned; its chunk in the TLB (for a store, a private chunk
    /// and not `tohost`'s); in the line of the core's last data access (`dline`; for a
    /// store, one a store has dirtied since) or one the L1 knows it holds (written, for a
    /// store); `note_access_unless_yield`'s answer yes without a call (another line than
    /// the last access's, or no sharing; a store only without sharing, as it would note
    /// itself for the other cores). Then the line noted and made `dline`, as `data_timing`
    /// does, and the host address of the bytes returned; else to `helper`, nothing changed.
    fn quick_access(&mut self, addr: Value, n: i64, write: bool, helper: Block) -> Value {
        use crate::core::{coherence::layout as coh, tlb::layout as tlb};
        let flags = MemFlagsData::trusted();
        let misaligned = self.b.ins().band_imm_s(addr, n - 1);
        self.on_unless(misaligned, helper);
        let cn = self.b.ins().ushr_imm_s(addr, crate::sparse::CHUNK.trailing_zeros() as i64);
        let h = self.b.ins().imul_imm_s(cn, tlb::HASH as i64);
        let i = self.b.ins().ushr_imm_s(h, tlb::SHIFT as i64);
        let at = self.core_slot(i, 2);
        let tag = self.b.ins().sload32(flags, at, TLB + tlb::TAGS);
        let missed = match write {
            // `writes`: the tag is the chunk's, the shared bit clear.
            true => {
                let want = self.b.ins().ishl_imm_s(cn, 1);
                let missed = self.b.ins().icmp(IntCC::NotEqual, tag, want);
                let htif = self.b.ins().load(I64, flags, self.core, HTIF_CN);
                let htif = self.b.ins().icmp(IntCC::Equal, cn, htif);
                let sharing = self.b.ins().uload8(I64, flags, self.core, COH + coh::SHARING);
                let sharing = self.b.ins().icmp_imm_s(IntCC::NotEqual, sharing, 0);
                let no = self.b.ins().bor(missed, htif);
                self.b.ins().bor(no, sharing)
            }
            false => {
                let tag = self.b.ins().ushr_imm_s(tag, 1);
                self.b.ins().icmp(IntCC::NotEqual, tag, cn)
            }
        };
        self.on_unless(missed, helper);
        let line = self.b.ins().ushr_imm_s(addr, self.t.shape.line_shift as i64);
        let again = self.may_note(line, write, helper);
        self.known_line(line, write, helper);
        self.note(line, again);
        let at = self.core_slot(i, 3);
        let chunk = self.b.ins().load(I64, flags, at, TLB + tlb::PTRS);
        let off = self.b.ins().band_imm_s(addr, crate::sparse::CHUNK as i64 - 1);
        self.b.ins().iadd(chunk, off)
    }

    /// The `Core`'s address plus `i` entries of `1 << log2` bytes: entry `i` of one of its
    /// tables, whose offset the load adds.
    fn core_slot(&mut self, i: Value, log2: i64) -> Value {
        let at = self.b.ins().ishl_imm_s(i, log2);
        self.b.ins().iadd(self.core, at)
    }

    /// On if `line` is `dline` (for a store, `dline` dirtied) or the L1 knows it holds it
    /// (`L1::knows`, `knows_written`), else to `helper`. Then, for another line,
    /// `data_timing`'s line change: `dline` the line, dirty after a store, clean after a
    /// load (no way to `helper` is left after it: `may_note`'s is before).
    fn known_line(&mut self, line: Value, write: bool, helper: Block) {
        let flags = MemFlagsData::trusted();
        let dline = self.word(self.core, DLINE);
        let mut held = self.b.ins().icmp(IntCC::Equal, line, dline);
        if write {
            let dirty = self.b.ins().load(I8, flags, self.core, DLINE_DIRTY);
            held = self.b.ins().band(held, dirty);
        }
        let (other, known, on) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.ins().brif(held, on, &[], other, &[]);
        self.b.switch_to_block(other);
        let slot = self.b.ins().band_imm_s(line, KNOWN_DATA as i64 - 1);
        let slot = self.core_slot(slot, 2);
        let key = self.b.ins().sload32(flags, slot, L1D + l1::KNOWN_DATA_AT);
        let is_known = match write {
            true => {
                let want = self.b.ins().ishl_imm_s(line, 1);
                let want = self.b.ins().bor_imm_s(want, 1);
                self.b.ins().icmp(IntCC::Equal, key, want)
            }
            false => {
                let key = self.b.ins().ushr_imm_s(key, 1);
                self.b.ins().icmp(IntCC::Equal, key, line)
            }
        };
        self.b.ins().brif(is_known, known, &[], helper, &[]);
        self.b.switch_to_block(known);
        self.b.ins().store(flags, line, self.core, DLINE);
        let dirty = self.b.ins().iconst(I8, write as i64);
        self.b.ins().store(flags, dirty, self.core, DLINE_DIRTY);
        self.jump_block(on);
        self.b.switch_to_block(on);
    }

    /// `note_access_unless_yield`'s terms for an answer yes without a call: another line
    /// than the last access's, or the same again (a repeat, which only counts while the
    /// core shares memory: then to `helper`, nothing changed). Returns whether it is the
    /// same line again. A store comes here only without sharing (`quick_access`).
    fn may_note(&mut self, line: Value, write: bool, helper: Block) -> Value {
        use crate::core::coherence::layout as coh;
        let flags = MemFlagsData::trusted();
        let last = self.word(self.core, COH + coh::REPEAT_LINE);
        let again = self.b.ins().icmp(IntCC::Equal, last, line);
        if !write {
            let sharing = self.b.ins().load(I8, flags, self.core, COH + coh::SHARING);
            let counts = self.b.ins().band(again, sharing);
            self.on_unless(counts, helper);
        }
        again
    }

    /// `note_access_unless_yield`'s note of a new line (`again`: the same line as the last
    /// access's, when it notes nothing without sharing).
    fn note(&mut self, line: Value, again: Value) {
        use crate::core::coherence::layout as coh;
        let flags = MemFlagsData::trusted();
        let (new, go) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(again, go, &[], new, &[]);
        self.b.switch_to_block(new);
        self.b.ins().store(flags, line, self.core, COH + coh::REPEAT_LINE);
        let zero = self.iconst(0);
        self.b.ins().istore32(flags, zero, self.core, COH + coh::REPEATS);
        self.jump_block(go);
        self.b.switch_to_block(go);
    }

    /// For a word or double-word load the quiet loop would hand back after (its next op
    /// reads its result, or is in the next line): the cycles that next op waits in the
    /// checked issue (`issue_checked`), with the load latency of 2 or 1, whose results are
    /// due by the next op's issue or one cycle after: then every other entry is past (as in
    /// the quiet loop), the mul/div port rule cannot apply, and after that op every pending
    /// result is ready again. `None` otherwise (a sub-word load, another latency): the
    /// trace hands back (`Raised`).
    fn load_use(&self, it: &Item) -> Option<u64> {
        let word = matches!(it.op.kind(), Kind::Lw | Kind::Ld | Kind::Lwu);
        let lat = self.t.shape.load_latency;
        if !word || it.next_free || lat > 2 {
            return None;
        }
        Some(if it.next_reads { lat - 1 } else { 0 })
    }

    /// A block that waits `wait` cycles for a load's result (charged to load-use stalls)
    /// and goes on to op `k`; op `k`'s own block if there is nothing to wait.
    pub(super) fn stall_block(&mut self, k: usize, wait: u64) -> Block {
        if wait == 0 {
            return self.blocks[k];
        }
        let block = self.b.create_block();
        self.stalls.push((block, k, wait));
        block
    }

    /// Fill the blocks `stall_block` made.
    pub(super) fn fill_stalls(&mut self) {
        let flags = MemFlagsData::trusted();
        for (block, k, wait) in std::mem::take(&mut self.stalls) {
            self.b.switch_to_block(block);
            let c = self.b.use_var(self.cycle);
            let c = self.b.ins().iadd_imm_s(c, wait as i64);
            self.b.def_var(self.cycle, c);
            let s = self.b.ins().load(I64, flags, self.core, STALL_LOAD_USE);
            let s = self.b.ins().iadd_imm_s(s, wait as i64);
            self.b.ins().store(flags, s, self.core, STALL_LOAD_USE);
            self.jump(k);
        }
    }

    /// A store (`store!`): its quick path here (`quick_access`), or the helper
    /// (`store_quick`'s other cases: a shared chunk left as it is, sharing; or the store
    /// with its timing where it reaches plain memory); out before it if the helper declines
    /// it (a device's).
    pub(super) fn store(&mut self, j: usize) {
        let it = &self.t.items[j];
        let op = it.op;
        let n = match op.kind() {
            Kind::Sb => 1,
            Kind::Sh => 2,
            Kind::Sw => 4,
            _ => 8,
        };
        let f = match n {
            1 => helpers::store::<1> as *const () as usize,
            2 => helpers::store::<2> as *const () as usize,
            4 => helpers::store::<4> as *const () as usize,
            _ => helpers::store::<8> as *const () as usize,
        };
        let addr = self.read(op.rs1);
        let addr = self.b.ins().iadd_imm_s(addr, op.imm as i64);
        let v = self.read(op.rs2);
        let (helper, done) = (self.b.create_block(), self.b.create_block());
        let at = self.quick_access(addr, n as i64, true, helper);
        let le = MemFlagsData::trusted().with_endianness(Endianness::Little);
        match n {
            1 => self.b.ins().istore8(le, v, at, 0),
            2 => self.b.ins().istore16(le, v, at, 0),
            4 => self.b.ins().istore32(le, v, at, 0),
            _ => self.b.ins().store(le, v, at, 0),
        };
        self.jump_block(done);
        self.b.switch_to_block(helper);
        let c = self.b.use_var(self.cycle);
        let c1 = self.b.ins().iadd_imm_s(c, 1);
        let next_pc = self.iconst(it.pc + op.len() as u64);
        let status = self.call(f, &[self.core, self.io, addr, v, c1, next_pc]);
        let (slow, stored) = (self.exit_block(Exit::Next(it.off), it.end), self.b.create_block());
        self.b.ins().brif(status, stored, &[], slow, &[]);
        self.b.switch_to_block(stored);
        self.settled(status, it.off + op.len() as i64 / 2, it.end);
        self.jump_block(done);
        self.b.switch_to_block(done);
        self.issue();
        self.next(j);
    }
}

/// The load helper of `op`'s width and extension.
fn load_helper(op: Op) -> usize {
    match op.kind() {
        Kind::Lb => helpers::load::<1, true> as *const () as usize,
        Kind::Lh => helpers::load::<2, true> as *const () as usize,
        Kind::Lw => helpers::load::<4, true> as *const () as usize,
        Kind::Lbu => helpers::load::<1, false> as *const () as usize,
        Kind::Lhu => helpers::load::<2, false> as *const () as usize,
        Kind::Lwu => helpers::load::<4, false> as *const () as usize,
        _ => helpers::load::<8, false> as *const () as usize,
    }
}
