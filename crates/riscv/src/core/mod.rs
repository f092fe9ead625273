//! One hart: architectural state, its private timing state (scoreboard, L1 caches, branch
//! predictor), and the run loop.
//!
//! The run loop is two-level: the outer loop ([`Core::run`]) takes interrupts and computes a
//! *horizon*, the earliest cycle at which anything outside the instruction stream can change
//! (the `until` limit or the timer deadline); the inner loop ([`Core::run_block`]) executes
//! instructions until that horizon or until an instruction reports an event. Interrupt state
//! only changes through events (CSR writes, CLINT stores, `mret`) or the timer, so the inner
//! loop checks a single comparison per instruction.

pub(crate) mod aside;
pub(crate) mod coherence;
pub(crate) mod csr;
pub(crate) mod fpu;
pub(crate) mod rx_stash;
pub(crate) mod tlb;
pub(crate) mod trap;
pub(crate) mod watch;

use std::ops::ControlFlow;
use std::sync::Arc;

use crate::bpred::BranchPred;
use crate::cache::{KNOWN_CODE, KNOWN_DATA, L1};
use crate::core::csr::Csrs;
use crate::core::trap::{MSIP, MTIP};
use crate::engine::Engine;
use crate::error::{CoreStats, Exit, StallKind};
use crate::mem::NodeMem;
use crate::op::{Op, NREGS};
use crate::params::TimingParams;
use crate::platform::Platform;
use crate::program::Program;

/// Access-fault causes (RISC-V privileged spec 3.1.15): a load or store outside every
/// memory and device.
pub(crate) const LOAD_FAULT: u64 = 5;
pub(crate) const STORE_FAULT: u64 = 7;

/// `Core::reservation` when there is none: no aligned address.
pub(crate) const NO_RESERVATION: u64 = u64::MAX;

/// Why an instruction left the straight-line path.
pub(crate) enum Ex {
    /// Synchronous exception (RISC-V privileged spec 3.1.15 causes).
    Trap { cause: u64, tval: u64 },
    /// Interrupt enable/pending state may have changed: recompute the horizon.
    Recheck,
    /// `run` must return `self.pending`.
    Stop,
}

/// One RISC-V hart with its timing model.
///
/// The fields are laid out in the order given (`repr(C)`), starting on a host cache line:
/// the scalars a run reads at every instruction first, together in three host lines, then
/// what a run touches by the instruction (CSRs, counters, predictor, L1s, registers, TLBs),
/// then the rest. With thousands of cores taking turns, each line a dispatched core touches
/// is a likely host cache miss (docs/profile.md, "What keeps it fast").
#[repr(C, align(64))]
pub struct Core {
    pub(crate) pc: u64,
    pub(crate) cycle: u64,
    /// Where the inner loop stops (`run_block`): the horizon, or now if the core must yield.
    pub(crate) block_end: u64,
    /// The fast engine's bound on the scoreboard (`fast.rs`): no earlier cycle than this
    /// can stall on a register or meet the mul/div write-port rule. Kept across runs;
    /// `u64::MAX` until the fast engine computes it (`set_engine` sets it so again: the
    /// interpreter does not keep it).
    pub(crate) quiet_from: u64,
    pub(crate) iline: u64,
    /// The line fetched from before `iline`, still in the L1 I-cache (its replacement is
    /// random, so a hit changes no state and only a fill can evict it): a loop over two
    /// lines goes back and forth without consulting the cache model.
    pub(crate) iprev: u64,
    pub(crate) dline: u64,
    /// The current code page and its decoded ops (`fetch.rs`), valid while the node's
    /// `NodeMem::code_gen` is `fetch_gen`.
    pub(crate) fetch_pn: u64,
    pub(crate) fetch_ops: *const Op,
    pub(crate) fetch_gen: u64,
    /// The code page fetched from before `fetch_pn` and its ops, under the same terms.
    pub(crate) other_pn: u64,
    pub(crate) other_ops: *const Op,
    /// `NodeMem::page_gen` when the TLBs were last flushed.
    pub(crate) tlb_gen: u64,
    /// First cycle the next M instruction can issue (the unit is back in `s_ready`).
    pub(crate) muldiv_free: u64,
    /// The value of `cycle` just after the issue of the instruction that is in WB when the
    /// unit's pending result is due (the due cycle minus one; `exec` compares, `muldiv.rs`
    /// sets it); `muldiv_rd` is the register the result goes to.
    pub(crate) muldiv_watch: u64,
    /// Chunk of `tohost` (8-aligned, so inside one chunk): stores there are checked for
    /// HTIF commands.
    pub(crate) htif_cn: u64,
    /// Shared by the node's cores (`Core::sharing`).
    pub(crate) t: Arc<TimingParams>,
    pub(crate) irq_lines: u64,
    /// log2 of the cache line size (a shift, not a division, on the hot path).
    pub(crate) line_shift: u32,
    /// The register the mul/div unit's pending result goes to (`muldiv_watch`).
    pub(crate) muldiv_rd: u8,
    /// A store has dirtied `dline` in the L1 D-cache since it became `dline`.
    pub(crate) dline_dirty: bool,
    /// Which engine `run` uses (`engine.rs`); the results are the same.
    pub(crate) engine: Engine,
    // Read at every run or nearly every instruction of one, above; what a run may touch
    // next, then the rest (`repr(C)`: in this order).
    pub(crate) csr: Csrs,
    pub(crate) stats: CoreStats,
    /// Read at the start of every run.
    pub(crate) done: Option<Exit>,
    pub(crate) bp: BranchPred,
    /// Stores shared with the node's other cores (`core/coherence.rs`).
    pub(crate) coh: coherence::Coherence,
    pub(crate) l1d: L1<KNOWN_DATA>,
    pub(crate) l1i: L1<KNOWN_CODE>,
    pub(crate) x: [u64; NREGS],
    /// Scoreboard: cycle at which each register's pending result is available.
    pub(crate) ready: [u64; NREGS],
    pub(crate) tlb: tlb::Tlb,
    /// What produced the pending result (for stall accounting): true = mul/div.
    pub(crate) ready_muldiv: [bool; NREGS],
    pub(crate) pending: Option<Exit>,
    pub(crate) hart: usize,
    /// The LR reservation's address, `NO_RESERVATION` for none (an LR's address is aligned).
    pub(crate) reservation: u64,
    pub(crate) program: Arc<Program>,
    /// netRX words popped by an instruction that then blocked; consumed on its retry.
    pub(crate) rx_stash: rx_stash::RxStash,
    pub(crate) fp: crate::core::fpu::LazyFp,
    pub(crate) traps: crate::core::trap::TrapTrack,
    /// The console's bytes and the watched ranges, boxed at first use.
    pub(crate) aside: aside::Aside,
}

// SAFETY: the raw pointers (fetch page, TLBs) are caches valid only inside one `run` call,
// which holds `&mut NodeMem`; they are reset at the start of every `run`, so moving a Core to
// another thread between runs cannot expose a dangling pointer.
unsafe impl Send for Core {}

impl Core {
    /// Ask the host to bring this core's state into its caches, ahead of its next run: with
    /// thousands of cores taking turns, the first touch of each of its lines is otherwise
    /// a miss, waited for.
    #[inline]
    pub fn prefetch(&self) {
        nanopu_sim::hint::prefetch_all(self);
    }

    /// A hart in its reset state (docs/abi.md): pc = entry, a0 = hart id, a1 = boot info.
    /// Panics if `timing.muldiv` describes no unit Rocket builds (`MulDivParams::check`).
    pub fn new(hart: usize, program: &Arc<Program>, timing: &TimingParams) -> Core {
        Core::sharing(hart, program, Arc::new(timing.clone()))
    }

    /// As [`Core::new`], with timing parameters shared with other cores (a node's cores
    /// share one copy: 392 bytes each otherwise, docs/profile.md).
    pub fn sharing(hart: usize, program: &Arc<Program>, timing: Arc<TimingParams>) -> Core {
        if let Err(e) = timing.muldiv.check() {
            panic!("{e}");
        }
        let mut x = [0; NREGS];
        x[10] = hart as u64;
        x[11] = crate::mem::BOOT_BASE;
        Core {
            x,
            ready: [0; NREGS],
            ready_muldiv: [false; NREGS],
            pc: program.entry(),
            cycle: 0,
            fetch_pn: u64::MAX,
            fetch_ops: std::ptr::null(),
            fetch_gen: 0,
            other_pn: u64::MAX,
            other_ops: std::ptr::null(),
            iline: u64::MAX,
            iprev: u64::MAX,
            dline: u64::MAX,
            dline_dirty: false,
            block_end: 0,
            line_shift: timing.line_bytes.max(1).next_power_of_two().trailing_zeros(),
            tlb: tlb::Tlb::default(),
            tlb_gen: u64::MAX,
            muldiv_free: 0,
            muldiv_watch: 0,
            muldiv_rd: 0,
            htif_cn: program.tohost.map_or(u64::MAX, |a| a / crate::sparse::CHUNK),
            t: Arc::clone(&timing),
            csr: Csrs::default(),
            fp: Default::default(),
            l1i: L1::new(timing.l1i_sets, timing.l1i_ways),
            l1d: L1::new(timing.l1d_sets, timing.l1d_ways),
            coh: Default::default(),
            bp: BranchPred::new(timing.bht_entries, timing.btb_entries, timing.ras_entries),
            stats: CoreStats::default(),
            hart,
            program: program.clone(),
            irq_lines: 0,
            reservation: NO_RESERVATION,
            rx_stash: Default::default(),
            pending: None,
            done: None,
            traps: Default::default(),
            aside: Default::default(),
            engine: Engine::default(),
            quiet_from: u64::MAX,
        }
    }

    /// Execute until local cycle >= `until`, or until the program blocks, waits, exits or
    /// fails. Never panics on program behaviour.
    pub fn run<P: Platform>(&mut self, mem: &mut NodeMem, plat: &mut P, until: u64) -> Exit {
        if let Some(e) = &self.done {
            return e.clone();
        }
        self.begin_run(mem);
        let external_on = self.external_irqs_enabled();
        loop {
            if let Err(e) = self.take_interrupt(mem) {
                return self.finish(e);
            }
            // Enabling external interrupts ends the run: the driver bounds a core that can
            // be interrupted more tightly, so that no interrupt is taken late.
            // A core found polling memory another core writes ends its run too: the
            // driver holds it in step with the others (`core/coherence.rs`).
            if self.cycle >= until || (!external_on && self.external_irqs_enabled()) || self.take_yield() {
                return Exit::Limit;
            }
            self.block_end = self.horizon(mem, until);
            let ended = match self.engine {
                Engine::Interp => self.run_block(mem, plat),
                Engine::Fast => self.run_block_fast::<false, P>(mem, plat),
                Engine::Jit => self.run_block_fast::<true, P>(mem, plat),
            };
            if let Some(e) = ended {
                return self.finish(e);
            }
        }
    }

    /// Drop the host pointers cached by a previous run that memory may have invalidated
    /// since: the fetch page only if a code page was marked stale (it may be decoded again
    /// when next fetched; an unchanged `code_gen` means `code_page` would give the same
    /// ops, and asking it after every run cost 3.96 M calls in a 4,096-core sort), the TLB's
    /// shared entries only if a chunk became private (one may point to the shared chunk it
    /// replaced). Private chunks never move: their entries stay warm, which matters when
    /// the cores of a node run a few hundred cycles at a time, each run after another core
    /// made a chunk private (`core/coherence.rs`).
    fn begin_run(&mut self, mem: &NodeMem) {
        if self.fetch_gen != mem.code_gen {
            self.fetch_pn = u64::MAX;
            self.other_pn = u64::MAX;
            self.fetch_gen = mem.code_gen;
        }
        if self.tlb_gen != mem.page_gen {
            self.forget_shared(mem);
            self.tlb_gen = mem.page_gen;
        }
    }

    /// Chunks were made private since this core's last run: drop the TLB's entries that
    /// may point to the shared chunks they replaced (every shared entry if too many were
    /// made to be known).
    fn forget_shared(&mut self, mem: &NodeMem) {
        let Some(made) = mem.made_since(self.tlb_gen) else {
            self.tlb.forget_shared();
            return;
        };
        for cn in made {
            self.tlb.forget_shared_chunk(cn);
        }
    }

    /// Another hart may have run since this one's last run (and stored to its reserved
    /// address): drop the LR reservation; the next SC fails, as it may spuriously (RISC-V
    /// unprivileged spec 13.2). The caller decides, so that a core that runs again with
    /// nothing in between keeps it: dropping it at every run boundary would never let an
    /// LR/SC loop succeed when the core yields between the two.
    pub fn drop_reservation(&mut self) {
        self.reservation = NO_RESERVATION;
    }

    /// Could any interrupt line driven from outside (`set_irq`) be taken now?
    fn external_irqs_enabled(&self) -> bool {
        self.irq_mask_enabled() & !(MSIP | MTIP) != 0
    }

    fn finish(&mut self, e: Exit) -> Exit {
        if matches!(e, Exit::Halted(_) | Exit::Error(_)) {
            self.done = Some(e.clone());
        }
        e
    }

    /// Execute until `block_end` or an event; `Some(exit)` ends the run.
    fn run_block<P: Platform>(&mut self, mem: &mut NodeMem, plat: &mut P) -> Option<Exit> {
        while self.cycle < self.block_end {
            let op = self.fetch(mem);
            let r = self.exec(op, mem, plat);
            if let ControlFlow::Break(e) = self.settle(mem, r) {
                return e;
            }
        }
        None
    }

    /// What an instruction's outcome does to the inner loop: go on (after taking a trap),
    /// or break with `None` (recompute the horizon) or `Some(exit)` (end the run).
    #[inline(always)]
    pub(crate) fn settle(&mut self, mem: &NodeMem, r: Result<(), Ex>) -> ControlFlow<Option<Exit>> {
        match r {
            Ok(()) => ControlFlow::Continue(()),
            Err(Ex::Trap { cause, tval }) => match self.take_trap(mem, cause, tval) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => ControlFlow::Break(Some(e)),
            },
            Err(Ex::Recheck) => ControlFlow::Break(None),
            Err(Ex::Stop) => ControlFlow::Break(Some(self.pending.take().unwrap_or(Exit::Limit))),
        }
    }

    /// Execute with `engine` from now on (`engine.rs`): the same results, at another speed.
    pub fn set_engine(&mut self, engine: Engine) {
        self.engine = engine;
        self.quiet_from = u64::MAX;
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Local time in cycles.
    #[inline]
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Move local time forward to `cycle` (parked or stalled by the driver).
    pub fn advance_to(&mut self, cycle: u64, why: StallKind) {
        if cycle <= self.cycle {
            return;
        }
        let d = cycle - self.cycle;
        match why {
            StallKind::NetRx => self.stats.stall_netrx += d,
            StallKind::NetTx => self.stats.stall_nettx += d,
            StallKind::Wfi => self.stats.stall_wfi += d,
            StallKind::Other => self.stats.stall_mem += d,
        }
        self.cycle = cycle;
    }

    pub fn pc(&self) -> u64 {
        self.pc
    }

    /// The timing parameters the core was built with.
    pub fn timing(&self) -> &crate::params::TimingParams {
        &self.t
    }

    pub fn hart(&self) -> usize {
        self.hart
    }

    pub fn stats(&self) -> &CoreStats {
        &self.stats
    }

    /// Drive an external interrupt line into `mip` (bit 16 = the NIC, docs/platform.md section 2).
    pub fn set_irq(&mut self, bit: u32, level: bool) {
        if bit < 64 {
            let m = 1u64 << bit;
            self.irq_lines = if level { self.irq_lines | m } else { self.irq_lines & !m };
        }
    }

    /// Console output produced since the last call (HTIF / semihosting).
    pub fn take_console(&mut self) -> Vec<u8> {
        self.aside.take_console()
    }

    /// Integer register `i` (0..32) as the program sees it.
    pub fn reg(&self, i: usize) -> u64 {
        if i < 32 {
            self.x[i]
        } else {
            0
        }
    }

    /// Exit code once the program has exited.
    pub fn halted(&self) -> Option<i64> {
        match self.done {
            Some(Exit::Halted(c)) => Some(c),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    /// The scalars a run reads at every instruction stay in the `Core`'s first three host
    /// cache lines (64 bytes each, the `Core` aligned to one).
    #[test]
    fn the_hot_scalars_share_three_host_lines() {
        assert_eq!(std::mem::align_of::<Core>(), 64);
        let last = [offset_of!(Core, engine), offset_of!(Core, dline_dirty), offset_of!(Core, t)];
        assert!(last.iter().all(|&o| o < 3 * 64), "{last:?}");
    }

    /// A node's cores are one allocation, which mimalloc rounds up to a size class. Aligned
    /// to 64 bytes, it asks for the size plus 63 bytes (mimalloc 3 aligns within a larger
    /// block unless the block's size is a power of two up to 4 KiB): 8 KiB for 4 cores of
    /// up to 1,984 bytes, 10 KiB above (docs/profile.md). Cold state belongs outside the
    /// `Core` (allocated at first use, or in the node).
    #[test]
    fn four_cores_stay_in_eight_kib() {
        let asked = 4 * std::mem::size_of::<Core>() + std::mem::align_of::<Core>() - 1;
        assert!(asked <= 8192, "{}", std::mem::size_of::<Core>());
    }
}
