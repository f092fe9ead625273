//! What the cores of one node see of each other's stores: the coherence of their private L1
//! D-caches behind the shared L2 (docs/models/node.md "Cores sharing memory").
//!
//! The cores of a node run one after another, each at most a window past the others (a few
//! cycles while it polls a line; crates/cluster `dispatch`). While another core of its node
//! could read memory, a core notes the lines it stores to and the cycle of each line's last
//! store; after its run the other cores observe them: the line leaves their L1 D-cache, as
//! the inclusive L2's probe takes it away on the prototype, so their next access misses and
//! refills from the L2 (`l2_latency`). A core that reads a line stored at a cycle still in
//! its own future (the writer ran a few cycles ahead) waits for that cycle first: a store is
//! never seen before it is made (the node's `StoreTable` holds the cycles, `stores.rs`).

use super::Core;
use crate::mem::NodeMem;
use crate::program::PAGE;

/// Accesses in a row to one line after which a core is taken to be polling it.
const POLL_ACCESSES: u32 = 16;

/// A line number and the cycle of the last store to it.
pub type LineStore = (u64, u64);

/// Slots of the index that finds a line already noted in this run (a power of two).
const NOTED_SLOTS: usize = 32;

/// Where a translated trace finds what `note_access_unless_yield` reads and writes, for
/// the loads it runs itself (`jit/emit.rs`).
pub(crate) mod layout {
    use super::Coherence;
    use std::mem::offset_of;
    pub(crate) const SHARING: i32 = offset_of!(Coherence, sharing) as i32;
    pub(crate) const REPEATS: i32 = offset_of!(Coherence, repeats) as i32;
    pub(crate) const REPEAT_LINE: i32 = offset_of!(Coherence, repeat_line) as i32;
}

/// One core's side of coherence.
#[derive(Default)]
pub(crate) struct Coherence {
    /// Note stores for the other cores (another core of the node has yet to finish).
    pub(crate) sharing: bool,
    /// This run is held within a few cycles of the other running cores.
    in_step: bool,
    /// Data accesses in a row to one line, and that line (kept apart from `dline`, which
    /// other cores' stores reset).
    repeats: u32,
    repeat_line: u64,
    /// End the run: the core started polling outside of step.
    yield_now: bool,
    /// The core ended its last run looping in place (`loops_in_place`).
    looping: bool,
    /// Lines stored to since the others last observed this core, mostly each once.
    stores: Vec<LineStore>,
    /// Where in `stores` a line may be, by its low bits (plus one; 0: nowhere): a run
    /// stores to a few lines again and again (its stack, its variables), and each noted
    /// once is invalidated once in every other core. 16 bits, so that a node's 4 `Core`s
    /// fit mimalloc's 8 KiB class (docs/profile.md); a line noted past the 65,535th
    /// entry is nowhere, and entered again at its next store (as a line whose slot another
    /// took since: `stores` may hold a line twice).
    noted: [u16; NOTED_SLOTS],
}

impl Core {
    /// Note stores for the node's other cores from now on (`on`), or stop; `in_step`: this
    /// run is held within a few cycles of the other running cores.
    pub fn set_sharing(&mut self, on: bool, in_step: bool) {
        self.coh.sharing = on;
        self.coh.in_step = in_step;
        if !on {
            self.clear_stores();
        }
    }

    /// `noted` is left as it is: a slot no line wrote since names an entry past the end or
    /// one of another line (each entry's line wrote its own slot), which `note_store_at`
    /// checks for, so it finds what a zeroed slot would. Zeroing took about 10 host
    /// instructions at every dispatch (callgrind, the 1,024-core sort).
    fn clear_stores(&mut self) {
        self.coh.stores.clear();
    }

    /// Is the core polling one line (`POLL_ACCESSES` data accesses in a row to it, none to
    /// another)? A spin on a flag is; the driver then keeps it in step with the others.
    #[inline]
    pub fn polls(&self) -> bool {
        self.coh.repeats >= POLL_ACCESSES
    }

    /// An access to another line than the last (`dline`): the same as before if only
    /// another core's store reset `dline`.
    #[inline(always)]
    pub(crate) fn note_line(&mut self, line: u64) {
        if line != self.coh.repeat_line {
            self.coh.repeat_line = line;
            self.coh.repeats = 0;
        } else if self.coh.sharing {
            self.note_repeat();
        }
    }

    /// One more access to the current line; a core that starts polling outside of step
    /// ends its run after this instruction.
    #[inline(always)]
    pub(crate) fn note_repeat(&mut self) {
        self.coh.repeats = self.coh.repeats.saturating_add(1);
        if self.coh.repeats == POLL_ACCESSES && !self.coh.in_step {
            self.coh.yield_now = true;
            self.block_end = self.cycle;
        }
    }

    pub(crate) fn take_yield(&mut self) -> bool {
        std::mem::take(&mut self.coh.yield_now)
    }

    /// The lines this core stored to since the last call, with their last store's cycle
    /// (a line may be there twice); give the vector back with `clear_noted`. Inlined, as
    /// `clear_noted`: called across crates at every dispatch.
    #[inline]
    pub fn take_stores(&mut self) -> Vec<LineStore> {
        std::mem::take(&mut self.coh.stores)
    }

    /// After `take_stores`: note the next run's stores in `stores` (cleared), keeping its
    /// allocation.
    #[inline]
    pub fn clear_noted(&mut self, stores: Vec<LineStore>) {
        self.coh.stores = stores;
        self.clear_stores();
    }

    /// Another core of the node stored to `line`: drop it from the L1 D-cache (the node's
    /// `StoreTable` keeps the store's cycle).
    #[inline]
    pub fn observe_store(&mut self, line: u64) {
        self.l1d.invalidate(line);
        self.dline = u64::MAX;
    }

    /// What `note_line` or `note_repeat` (whichever `data_timing` would call) notes of an
    /// access to `line` in the L1 (the current line, `dline`, or another), unless it would
    /// make the core yield: then nothing changes and it returns false (the fast engine's
    /// loads and stores then take the full path, `lsu.rs` `load_quick`). Written out
    /// rather than as a yield test before `note_line`: that form took 3.2% more host
    /// instructions on compute (`nanopu bench iss`, cachegrind), the loop compiled anew.
    #[inline(always)]
    pub(crate) fn note_access_unless_yield(&mut self, line: u64) -> bool {
        let coh = &mut self.coh;
        if line != coh.repeat_line {
            (coh.repeat_line, coh.repeats) = (line, 0);
            return true;
        }
        if !coh.sharing {
            return true;
        }
        let repeats = coh.repeats.saturating_add(1);
        if repeats == POLL_ACCESSES && !coh.in_step {
            return false;
        }
        coh.repeats = repeats;
        true
    }

    /// Note a store to `addr` at the current cycle (only while sharing).
    #[inline(always)]
    pub(crate) fn note_store(&mut self, addr: u64) {
        self.note_store_at(addr, self.cycle);
    }

    /// `note_store` at `cycle` (the fast engine's, which keeps the cycle in the run).
    #[inline(always)]
    pub(crate) fn note_store_at(&mut self, addr: u64, cycle: u64) {
        let line = addr >> self.line_shift;
        let coh = &mut self.coh;
        let slot = &mut coh.noted[line as usize & (NOTED_SLOTS - 1)];
        match coh.stores.get_mut((*slot as usize).wrapping_sub(1)) {
            Some(noted) if noted.0 == line => noted.1 = cycle,
            _ => {
                coh.stores.push((line, cycle));
                *slot = u16::try_from(coh.stores.len()).unwrap_or(0);
            }
        }
    }

    /// Before an L1 miss of `line`: if another core stored to it at a cycle still ahead of
    /// this core's clock, the access waits until then (the new data is not there before).
    #[inline(always)]
    pub(crate) fn await_store(&mut self, mem: &mut NodeMem, line: u64) {
        let s = mem.stores.on_miss(line, self.hart);
        if s > self.cycle {
            self.stats.stall_mem += s - self.cycle;
            self.cycle = s;
        }
    }
}

impl Core {
    /// Did this core end its last run looping in place (`note_loop`)? Only it can leave
    /// the loop, so the answer holds until it runs again.
    #[inline]
    pub fn looping(&self) -> bool {
        self.coh.looping
    }

    /// After a run: is this core at a jump or a taken branch to itself, with interrupts
    /// off? Then it touches no memory and changes nothing again: the prototype's runtime
    /// parks cores 1.. so (`while (hartid != 0) {}`), and they need not be kept in step
    /// with the others.
    pub fn note_loop(&mut self, mem: &NodeMem) {
        self.coh.looping = self.loops_in_place(mem);
    }

    fn loops_in_place(&self, mem: &NodeMem) -> bool {
        if self.irq_mask_enabled() != 0 || !self.may_jump_at_pc(mem) {
            return false;
        }
        let Some(low) = mem.half_at(self.pc) else { return false };
        if low & 3 != 3 {
            return self.compressed_self_loop(low);
        }
        let high = mem.half_at(self.pc.wrapping_add(2));
        high.is_some_and(|high| self.self_loop(low as u32 | (high as u32) << 16))
    }

    /// Could the instruction at the pc be a jump or a branch? Asked of the op the core
    /// would run, when its fetch page holds the pc and is current: reading the bits from
    /// memory again takes two chunk look-ups (1.1% of a sort's host instructions when
    /// asked after every run). `decode` gives every jump or branch one of these kinds
    /// (`Net` where it names x30 or x31 in nanoPU mode); the bits alone then decide.
    fn may_jump_at_pc(&self, mem: &NodeMem) -> bool {
        if self.pc / PAGE != self.fetch_pn || self.fetch_gen != mem.code_gen {
            return true;
        }
        // SAFETY: as in `fetch`: the ops of page `fetch_pn`, current while `code_gen` is
        // `fetch_gen`.
        let op = unsafe { *self.fetch_ops.add(((self.pc % PAGE) / 2) as usize) };
        use crate::op::Kind::*;
        matches!(op.kind(), Jal | Beq | Bne | Blt | Bge | Bltu | Bgeu | Net)
    }

    /// `jal rd, 0`, or a B-type branch of offset 0 whose condition holds (RISC-V
    /// unprivileged spec 2.5).
    fn self_loop(&self, insn: u32) -> bool {
        if insn & 0x7f == 0x6f && insn >> 12 == 0 {
            return true;
        }
        let offset_bits = insn & 0xfe00_0f80;
        if insn & 0x7f != 0x63 || offset_bits != 0 {
            return false;
        }
        let (a, b) = (self.x[((insn >> 15) & 31) as usize], self.x[((insn >> 20) & 31) as usize]);
        match (insn >> 12) & 7 {
            0 => a == b,
            1 => a != b,
            4 => (a as i64) < b as i64,
            5 => a as i64 >= b as i64,
            6 => a < b,
            7 => a >= b,
            _ => false,
        }
    }

    /// `c.j 0`, or `c.beqz`/`c.bnez` of offset 0 whose condition holds (spec 16.6).
    fn compressed_self_loop(&self, insn: u16) -> bool {
        let (op, funct3) = (insn & 3, insn >> 13);
        if op != 1 {
            return false;
        }
        match funct3 {
            5 => insn & 0x1ffc == 0,
            6 | 7 if insn & 0x1c7c == 0 => {
                let r = self.x[8 + ((insn >> 7) & 7) as usize];
                (r == 0) == (funct3 == 6)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::asm::{self, reg::*};
    use crate::testing::Bench;
    use crate::Exit;

    /// Whether `code` ends a run looping in place, asked with the fetch page current (the
    /// decoded op) and again with it dropped (memory alone): both must agree.
    fn loops(code: &[u32]) -> bool {
        let mut b = Bench::new(code, false);
        assert_eq!(b.run(1_000), Exit::Limit);
        b.core.note_loop(&b.mem);
        let from_op = b.core.looping();
        b.core.fetch_pn = u64::MAX;
        b.core.note_loop(&b.mem);
        assert_eq!(b.core.looping(), from_op, "the decoded op and memory agree");
        from_op
    }

    #[test]
    fn a_branch_or_jump_to_itself_loops_in_place_and_a_loop_of_two_does_not() {
        assert!(loops(&[asm::addi(T0, ZERO, 1), asm::bne(T0, ZERO, 0)]));
        assert!(loops(&[asm::jal(0, 0)]));
        assert!(!loops(&[asm::addi(T0, ZERO, 1), asm::beq(T0, ZERO, 0), asm::jal(0, -4)]));
        assert!(!loops(&[asm::addi(T0, T0, 1), asm::jal(0, -4)]));
    }
}
