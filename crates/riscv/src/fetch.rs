//! Instruction fetch: an index into the pre-decoded ops of the current code page, with the
//! L1 I-cache consulted only when the PC enters a new line.

use crate::core::Core;
use crate::decode::decode_parcels;
use crate::mem::NodeMem;
use crate::op::{Kind, Op, SINK};
use crate::program::PAGE;

impl Core {
    #[inline(always)]
    pub(crate) fn fetch(&mut self, mem: &mut NodeMem) -> Op {
        let pc = self.pc;
        let line = pc >> self.line_shift;
        if line != self.iline && !self.known_line(line) {
            self.fetch_line(mem, line);
        }
        if pc / PAGE == self.fetch_pn {
            // SAFETY: fetch_ops points to the 2048 decoded ops of page fetch_pn, in the
            // program or the node's own copy (`NodeMem::code_over`, whose boxes never move
            // or drop): it is dropped in begin_run when the node's code_gen has changed
            // since, and replaced only by fetch_slow itself.
            unsafe { *self.fetch_ops.add(((pc % PAGE) / 2) as usize) }
        } else {
            self.fetch_slow(mem)
        }
    }

    /// The PC entered `line`, another than the current one: if the line is known to be in
    /// the L1 I-cache (the line before, or one the cache knows, `L1::knows`), it becomes
    /// the current line and the cache is not looked up (that would hit and change nothing,
    /// and reading its tags is a host cache miss when thousands of cores take turns).
    #[inline(always)]
    pub(crate) fn known_line(&mut self, line: u64) -> bool {
        if line == self.iprev || self.l1i.knows(line) {
            (self.iprev, self.iline) = (self.iline, line);
            return true;
        }
        false
    }

    /// The PC entered `line`, not known to be in the L1 I-cache: look it up.
    #[cold]
    pub(crate) fn fetch_line(&mut self, mem: &mut NodeMem, line: u64) {
        self.iprev = self.iline;
        self.iline = line;
        if mem.dram_page(self.pc).is_some() && !self.l1i.access(line) {
            self.stats.icache_misses += 1;
            self.iprev = u64::MAX; // the fill may have evicted it
            self.miss(mem, line);
        }
    }

    #[cold]
    fn fetch_slow(&mut self, mem: &mut NodeMem) -> Op {
        if self.enter_code_page(mem) {
            // SAFETY: as in `fetch`.
            return unsafe { *self.fetch_ops.add(((self.pc % PAGE) / 2) as usize) };
        }
        // Not pre-decoded (e.g. code written at run time): decode from memory each time.
        match mem.fetch_half(self.pc) {
            Some(lo) => {
                decode_parcels(lo, mem.fetch_half(self.pc + 2).unwrap_or(0), self.program.is_nanopu())
            }
            None => Op::new(Kind::FetchFault, SINK, 0, 0, 0, 2),
        }
    }

    /// Make the pc's page the fetch page (`fetch_pn`, `fetch_ops`) if its code is
    /// pre-decoded; whether it now is. Nothing a fetch charges or counts: the fast engine
    /// enters a page here and runs its ops in line runs (`run_block_fast`).
    #[inline(never)]
    pub(crate) fn enter_code_page(&mut self, mem: &mut NodeMem) -> bool {
        let pn = self.pc / PAGE;
        if pn == self.other_pn && self.fetch_gen == mem.code_gen {
            // Back to the page before (a call into a routine on the next page, and its
            // return): its ops are current while the node's code generation holds.
            std::mem::swap(&mut self.fetch_pn, &mut self.other_pn);
            std::mem::swap(&mut self.fetch_ops, &mut self.other_ops);
            return true;
        }
        let Some(ops) = mem.code_page(pn) else { return false };
        (self.other_pn, self.other_ops) = (self.fetch_pn, self.fetch_ops);
        (self.fetch_pn, self.fetch_ops) = (pn, ops.as_ptr());
        true
    }

    /// `fence.i`: later fetches see earlier stores (Zifencei, unprivileged spec chapter 6).
    pub(crate) fn fence_i(&mut self, mem: &mut NodeMem) {
        mem.invalidate_code();
        self.fetch_gen = mem.code_gen; // fetch_pn is dropped below
        self.l1i.flush();
        self.iline = u64::MAX;
        self.iprev = u64::MAX;
        self.fetch_pn = u64::MAX;
        self.other_pn = u64::MAX;
        self.cycle += self.t.fence_i_penalty;
    }
}

#[cfg(test)]
mod tests {
    use crate::asm::{self, reg::*};
    use crate::cache::{xorshift, KNOWN_CODE, L1};
    use crate::testing::Bench;
    use crate::Exit;
    use std::sync::Arc;

    #[test]
    fn stores_to_code_take_effect_after_fence_i() {
        let k = 12;
        let mut c = asm::la_index(A1, 0, k).to_vec();
        let new = asm::addi(A0, ZERO, 42); // 0x02a00513
        c.extend([
            asm::lui(T1, new >> 12),
            asm::addi(T1, T1, (new & 0xfff) as i32),
            asm::s(0, T1, A1, 2),
            0x0000_100f,
        ]);
        c.resize(k, asm::NOP);
        c.push(asm::addi(A0, ZERO, 1));
        c.extend(asm::exit_with(A0));
        let mut b = Bench::new(&c, false);
        assert_eq!(b.run(100_000), Exit::Halted(42));
    }

    /// A core keeps its fetch page across runs (`begin_run`) only while no code page of
    /// its node was marked stale: hart 0 waits for a flag in the page it runs from; hart 1
    /// rewrites the instruction after the wait, runs `fence.i`, then sets the flag. Hart 0's
    /// next run must run the new instruction.
    #[test]
    fn another_cores_fence_i_reaches_a_core_that_kept_its_fetch_page() {
        const FLAG: usize = 40;
        let mut c = vec![0]; // bne a0, zero, writer (below)
        c.extend(asm::la_index(A2, 1, FLAG));
        c.extend([asm::i(0, A2, 2, T0, 0x03), asm::beq(T0, ZERO, -4)]); // lw t0, 0(a2)
        let target = c.len();
        c.push(asm::addi(A0, ZERO, 1));
        c.extend(asm::exit_with(A0));
        let writer = c.len();
        c[0] = asm::bne(A0, ZERO, 4 * writer as i32);
        c.extend(asm::la_index(A1, writer, target));
        let new = asm::addi(A0, ZERO, 42);
        c.extend([asm::lui(T1, new >> 12), asm::addi(T1, T1, (new & 0xfff) as i32)]);
        c.extend([asm::s(0, T1, A1, 2), 0x0000_100f, asm::addi(T2, ZERO, 1)]);
        c.extend(asm::la_index(A2, c.len(), FLAG));
        c.extend([asm::s(0, T2, A2, 2), asm::jal(0, 0)]);
        c.resize(FLAG + 1, asm::NOP);
        c[FLAG] = 0;
        let mut b = Bench::new(&c, false);
        let mut writer = crate::Core::new(1, &b.mem.program, &crate::TimingParams::default());
        assert_eq!(b.run(500), Exit::Limit);
        assert_ne!(b.core.fetch_pn, u64::MAX, "hart 0 holds its fetch page");
        assert_eq!(writer.run(&mut b.mem, &mut crate::NoNic, 2_000), Exit::Limit);
        assert_eq!(b.run(100_000), Exit::Halted(42));
    }

    /// The known lines (`L1::knows`, `iprev`) skip only look-ups that would hit: on a small
    /// I-cache and a random walk over more lines than it holds, the core counts the misses
    /// of a model looked up at every change of line.
    #[test]
    fn known_lines_miss_as_a_lookup_at_every_line_change() {
        let mut b = Bench::new(&[asm::NOP], false);
        let (sets, ways) = (4, 2);
        Arc::make_mut(&mut b.core.t).l1i_sets = sets;
        b.core.l1i = L1::new(sets, ways);
        let mut model = L1::<KNOWN_CODE>::new(sets, ways);
        let first = b.mem.base >> b.core.line_shift;
        let (mut rng, mut misses, mut at) = (0x2545_f491u32, 0, u64::MAX);
        for _ in 0..20_000 {
            let line = first + (xorshift(&mut rng) % 24) as u64;
            b.core.pc = line << b.core.line_shift;
            if line != b.core.iline && !b.core.known_line(line) {
                b.core.fetch_line(&mut b.mem, line);
            }
            if line != at && !model.access(line) {
                misses += 1;
            }
            at = line;
        }
        assert_eq!(b.core.stats.icache_misses, misses);
        assert!(misses > 1_000, "the walk evicts ({misses} misses)");
    }

    #[test]
    fn jumping_outside_memory_is_an_instruction_access_fault() {
        let mut b = Bench::new(&[asm::i(0, ZERO, 0, ZERO, 0x67) | (0x100 << 20)], false); // jalr x0, 0x100(x0)
        let Exit::Error(e) = b.run(1000) else { panic!() };
        assert!(e.to_string().contains("pc 0x100: instruction access fault at 0x100"), "{e}");
    }

    #[test]
    fn run_resumes_after_limit() {
        let mut c = vec![
            asm::addi(T1, ZERO, 1000),
            asm::addi(T1, T1, -1),
            asm::bne(T1, ZERO, -4),
            asm::addi(A0, ZERO, 0),
        ];
        c.extend(asm::exit_with(A0));
        let mut b = Bench::new(&c, false);
        assert_eq!(b.run(500), Exit::Limit);
        assert!(b.core.cycle() >= 500);
        assert_eq!(b.run(1_000_000), Exit::Halted(0));
        assert_eq!(b.core.stats().instret, 2001 + 1 + 6, "loop, li, exit sequence up to the tohost store");
    }
}
