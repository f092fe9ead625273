//! Loads and stores: a per-core software TLB of host chunk pointers for DRAM, the L1 D-cache
//! and L2 timing, and the slow paths for page faults-in, the boot page, the CLINT and HTIF.
//!
//! Misaligned ordinary accesses are performed (RISC-V unprivileged spec 2.6 allows either
//! performing them or trapping) and cost `misaligned_penalty`; accesses outside the memory
//! map raise access faults (privileged spec 3.7: no PMA there).

use std::ptr;

use crate::cache::Fill;
use crate::core::{Core, Ex, LOAD_FAULT, STORE_FAULT};
use crate::mem::{NodeMem, BOOT_BASE, CLINT_BASE, CLINT_SIZE, MTIME, MTIMECMP};
use crate::program::PAGE;
use crate::sparse::CHUNK;

// `load_quick` and `store_quick` take an aligned access of up to 8 bytes to lie in its chunk.
const _: () = assert!(CHUNK.is_multiple_of(8));

/// Do the `N` bytes at `addr` of the chunk at `chunk` (a TLB entry's bytes) hold the low
/// `N` bytes of `v`? The access lies in the chunk (the callers check).
#[inline(always)]
fn holds<const N: usize>(chunk: *const u8, addr: u64, v: u64) -> bool {
    let mut b = [0u8; 8];
    // SAFETY: a TLB entry points to a live chunk for the run (`Core::begin_run`), and
    // the access lies in it.
    unsafe { ptr::copy_nonoverlapping(chunk.add((addr % CHUNK) as usize), b.as_mut_ptr(), N) };
    b[..N] == v.to_le_bytes()[..N]
}

impl Core {
    /// Load `N` bytes (little-endian, zero-extended) with timing.
    #[inline(always)]
    pub(crate) fn load<const N: usize>(&mut self, mem: &mut NodeMem, addr: u64) -> Result<u64, Ex> {
        let cn = addr / CHUNK;
        let off = (addr % CHUNK) as usize;
        let e = self.tlb.get(cn);
        if !e.reads(cn) || off + N > CHUNK as usize {
            return self.load_slow::<N>(mem, addr);
        }
        self.data_timing::<N, false>(mem, addr);
        let mut b = [0u8; 8];
        // SAFETY: `e.ptr` points to a live chunk for the duration of this `run` (see
        // `Core::begin_run`) and off + N <= CHUNK.
        unsafe { ptr::copy_nonoverlapping(e.ptr.add(off), b.as_mut_ptr(), N) };
        Ok(u64::from_le_bytes(b))
    }

    /// `load` where it has no timing to charge (the fast engine's common case,
    /// `fast.rs`): an aligned access (so inside its chunk: `CHUNK` is a multiple of 8) to
    /// a chunk the TLB maps, in the line the last access touched (`dline`) or one the L1
    /// knows it holds (`L1::knows`: its look-up would hit and change nothing), that does
    /// not make the core yield (`note_access_unless_yield`). `None` otherwise, with
    /// nothing changed.
    #[inline(always)]
    pub(crate) fn load_quick<const N: usize>(&mut self, addr: u64) -> Option<u64> {
        let (cn, e) = (addr / CHUNK, self.tlb.get(addr / CHUNK));
        if addr & (N as u64 - 1) != 0 || !e.reads(cn) {
            return None;
        }
        let line = addr >> self.line_shift;
        if line != self.dline && !self.l1d.knows(line) || !self.note_access_unless_yield(line) {
            return None;
        }
        // `data_timing`'s line change, its L1 hit known (`note_line` is noted above).
        if line != self.dline {
            (self.dline, self.dline_dirty) = (line, false);
        }
        let mut b = [0u8; 8];
        // SAFETY: as in `load`; the access is aligned, so off + N <= CHUNK.
        unsafe { ptr::copy_nonoverlapping(e.ptr.add((addr % CHUNK) as usize), b.as_mut_ptr(), N) };
        Some(u64::from_le_bytes(b))
    }

    /// Whether an `N`-byte access at `addr` is to plain memory: aligned, its chunk in the
    /// TLB (private or shared: a store to a shared one leaves it as it is or makes it
    /// private, `store_slow`) or in DRAM and not watched, and for a store not where
    /// `tohost` may be (`may_touch_htif`). Then `load` or `store` cannot trap or reach a
    /// device, and the translated traces' helpers run it (`jit/helpers.rs`).
    pub(crate) fn plain_access<const N: usize>(&self, mem: &NodeMem, addr: u64, write: bool) -> bool {
        let cn = addr / CHUNK;
        let mapped = self.tlb.get(cn).reads(cn);
        let plain = mapped || Self::in_dram(mem, addr, N) && !self.watched_chunk(addr, N);
        addr & (N as u64 - 1) == 0 && plain && !(write && self.may_touch_htif::<N>(addr))
    }

    /// `store` at `cycle` where it has no timing to charge: `load_quick`'s terms, to a
    /// chunk other than `tohost`'s that is private, or shared and left as it is (a store
    /// of the bytes it holds: NanoSort zeroing its buffers, half the stores of the
    /// 1,024-core sort, which took the call to `store_in_run` before), in a line a store
    /// has dirtied since it became `dline` or one the L1 knows it holds written
    /// (`L1::knows_written`). Returns whether it stored (nothing changed if not).
    #[inline(always)]
    pub(crate) fn store_quick<const N: usize>(&mut self, addr: u64, v: u64, cycle: u64) -> bool {
        let (cn, e) = (addr / CHUNK, self.tlb.get(addr / CHUNK));
        let private = e.writes(cn);
        if addr & (N as u64 - 1) != 0 || cn == self.htif_cn {
            return false;
        }
        let shared_kept = || e.reads(cn) && holds::<N>(e.ptr, addr, v);
        if !private && !shared_kept() {
            return false;
        }
        let line = addr >> self.line_shift;
        let written = line == self.dline && self.dline_dirty;
        if !written && !self.l1d.knows_written(line) || !self.note_access_unless_yield(line) {
            return false;
        }
        // `data_timing`'s line change or first store to the line, its L1 hit known.
        (self.dline, self.dline_dirty) = (line, true);
        if private {
            let b = v.to_le_bytes();
            // SAFETY: as in `store_data`; aligned, so off + N <= CHUNK.
            unsafe { ptr::copy_nonoverlapping(b.as_ptr(), e.ptr.add((addr % CHUNK) as usize), N) };
        }
        if self.coh.sharing {
            self.note_store_at(addr, cycle);
        }
        true
    }

    /// Store the low `N` bytes of `v` with timing; the node's other cores will see it
    /// (`core/coherence.rs`).
    #[inline(always)]
    pub(crate) fn store<const N: usize>(&mut self, mem: &mut NodeMem, addr: u64, v: u64) -> Result<(), Ex> {
        let r = self.store_data::<N>(mem, addr, v);
        if self.coh.sharing {
            self.note_store(addr);
        }
        r
    }

    #[inline(always)]
    fn store_data<const N: usize>(&mut self, mem: &mut NodeMem, addr: u64, v: u64) -> Result<(), Ex> {
        let cn = addr / CHUNK;
        let off = (addr % CHUNK) as usize;
        let e = self.tlb.get(cn);
        if !e.writes(cn) || off + N > CHUNK as usize {
            if self.leaves_unchanged::<N>(addr, v) {
                // A store of the bytes a shared chunk holds (NanoSort zeroing its buffers):
                // what `store_slow` would do, without leaving the fast path (a chunk in the
                // TLB is not watched).
                self.data_timing::<N, true>(mem, addr);
                if cn == self.htif_cn {
                    return self.htif_check(mem, addr, N);
                }
                return Ok(());
            }
            return self.store_slow::<N>(mem, addr, v);
        }
        self.data_timing::<N, true>(mem, addr);
        let b = v.to_le_bytes();
        // SAFETY: as in `load`; an entry that `writes` points to this node's private chunk.
        unsafe { ptr::copy_nonoverlapping(b.as_ptr(), e.ptr.add(off), N) };
        if cn == self.htif_cn {
            return self.htif_check(mem, addr, N);
        }
        Ok(())
    }

    /// L1 D-cache (and L2/DRAM on a miss) plus the misaligned penalty; a store (`W`)
    /// dirties its line.
    #[inline(always)]
    fn data_timing<const N: usize, const W: bool>(&mut self, mem: &mut NodeMem, addr: u64) {
        if addr & (N as u64 - 1) != 0 {
            self.cycle += self.t.misaligned_penalty;
        }
        let line = addr >> self.line_shift;
        if line != self.dline {
            self.dline = line;
            self.dline_dirty = W;
            self.note_line(line);
            match self.l1d.access_rw(line, W) {
                Fill::Hit => {}
                fill => self.d_miss(mem, line, fill),
            }
        } else {
            if W && !self.dline_dirty {
                // The line was last read: the store dirties it (`dline` is held; a miss
                // only if a probe left it shared, `L1::upgrade`).
                self.dline_dirty = true;
                if let fill @ (Fill::Miss | Fill::Dirty(_)) = self.l1d.access_rw(line, true) {
                    self.d_miss(mem, line, fill);
                }
            }
            if self.coh.sharing {
                self.note_repeat();
            }
        }
    }

    /// An L1 D-cache miss: a dirty victim's write-back, then the refill.
    #[cold]
    fn d_miss(&mut self, mem: &mut NodeMem, line: u64, fill: Fill) {
        self.stats.dcache_misses += 1;
        self.await_store(mem, line);
        if let Some(victim) = fill.victim(self.t.write_backs) {
            self.write_back(mem, victim);
        }
        self.miss(mem, line);
    }

    /// A dirty L1 victim goes to the L2 before the refill is asked for (`l1_writeback`),
    /// its data through the L2's one path. The L2 holds the line dirty; if it does not
    /// hold it (this model's L2 does not enforce inclusion), the write goes on to the LLC.
    fn write_back(&mut self, mem: &mut NodeMem, victim: u64) {
        let wait = self.port_line(mem, self.cycle);
        let lat = wait + self.t.l1_writeback;
        self.cycle += lat;
        self.stats.stall_mem += lat;
        let rel = victim - (mem.base >> self.line_shift);
        if !mem.l2.write_back(rel) {
            mem.write_to_llc(rel << self.line_shift, self.cycle);
        }
    }

    /// Cycles a line's transfer ready at `at` waits for the L2's one response path.
    fn port_line(&self, mem: &mut NodeMem, at: u64) -> u64 {
        if !self.t.l2_one_port {
            return 0;
        }
        mem.port.line(at, self.t.line_bytes / self.t.bus_beat_bytes.max(1))
    }

    /// An L1 miss (I or D) stalls the in-order pipeline for the refill, whose data leaves
    /// the L2 through its one response path; an L2 miss goes on to the LLC and DRAM
    /// (`writeback.rs`), taking a dirty L2 victim along.
    pub(crate) fn miss(&mut self, mem: &mut NodeMem, line: u64) {
        let rel = line - (mem.base >> self.line_shift);
        let mut lat = self.t.l2_latency;
        let fill = mem.l2.access_rw(rel, false);
        if !fill.hit() {
            self.stats.l2_misses += 1;
            let victim = fill.victim(self.t.write_backs).map(|v| v << self.line_shift);
            let (cycles, llc_miss) =
                mem.beyond_l2(line << self.line_shift, self.cycle + lat, victim, &self.t);
            self.stats.llc_misses += llc_miss as u64;
            lat += cycles;
        }
        let beats = self.t.line_bytes / self.t.bus_beat_bytes.max(1);
        lat += self.port_line(mem, (self.cycle + lat).saturating_sub(beats));
        self.cycle += lat;
        self.stats.stall_mem += lat;
    }

    /// Leave the caches as if this core had just written `[addr, addr + len)` in order:
    /// each line through the L1 D-cache, and on a miss through the L2 and the LLC, as the
    /// stores would (write-allocate), dirty and with the write-backs of the dirty lines
    /// they evict. No time passes and no counter moves: this places a program's inputs
    /// where its own writes would have left them (docs/sort-harness.md "Warm and cold
    /// starts").
    pub fn warm(&mut self, mem: &mut NodeMem, addr: u64, len: u64) {
        let shift = self.line_shift;
        let base = mem.base >> shift;
        let wb = self.t.write_backs;
        for line in addr >> shift..(addr + len).div_ceil(1 << shift) {
            let fill = self.l1d.access_rw(line, wb);
            if fill.hit() {
                continue;
            }
            mem.stores.note_fill(line, self.hart);
            if let Fill::Dirty(victim) = fill {
                if !mem.l2.write_back(victim - base) {
                    mem.write_to_llc((victim - base) << shift, self.cycle);
                }
            }
            match mem.l2.access_rw(line - base, false) {
                Fill::Hit => {}
                Fill::Miss => _ = mem.llc.access((line << shift) - mem.base),
                Fill::Dirty(victim) => {
                    mem.write_to_llc(victim << shift, self.cycle);
                    mem.llc.access((line << shift) - mem.base);
                }
            }
        }
        self.dline = u64::MAX;
    }

    /// Is [addr, addr + n) entirely inside DRAM?
    fn in_dram(mem: &NodeMem, addr: u64, n: usize) -> bool {
        mem.dram_page(addr).is_some() && mem.dram_page(addr + n as u64 - 1).is_some()
    }

    #[cold]
    fn load_slow<const N: usize>(&mut self, mem: &mut NodeMem, addr: u64) -> Result<u64, Ex> {
        if self.watched_chunk(addr, N) && Self::in_dram(mem, addr, N) {
            let v = self.load_watched(mem, addr, N)?;
            self.data_timing::<N, false>(mem, addr);
            return Ok(v);
        }
        if Self::in_dram(mem, addr, N) {
            let cn = addr / CHUNK;
            let ptr = self.fill_tlb(mem, cn);
            let mut b = [0u8; 8];
            let off = (addr % CHUNK) as usize;
            if off + N <= CHUNK as usize {
                // SAFETY: `ptr` is the chunk's, just entered in the TLB, and off + N <= CHUNK.
                unsafe { ptr::copy_nonoverlapping(ptr.add(off), b.as_mut_ptr(), N) };
            } else {
                mem.read(addr, &mut b[..N]).map_err(|_| Ex::Trap { cause: LOAD_FAULT, tval: addr })?;
            }
            self.data_timing::<N, false>(mem, addr);
            return Ok(u64::from_le_bytes(b));
        }
        self.cycle += self.t.mmio_latency;
        if (BOOT_BASE..BOOT_BASE + PAGE).contains(&addr) && addr + N as u64 <= BOOT_BASE + PAGE {
            let mut b = [0u8; 8];
            let off = addr - BOOT_BASE;
            (0..N).for_each(|i| b[i] = mem.boot_byte(off + i as u64));
            return Ok(u64::from_le_bytes(b));
        }
        self.clint_read(mem, addr, N).ok_or(Ex::Trap { cause: LOAD_FAULT, tval: addr })
    }

    #[cold]
    fn store_slow<const N: usize>(&mut self, mem: &mut NodeMem, addr: u64, v: u64) -> Result<(), Ex> {
        if self.watched_chunk(addr, N) && Self::in_dram(mem, addr, N) {
            self.store_watched(mem, addr, N, v)?;
            self.data_timing::<N, true>(mem, addr);
            return self.htif_check(mem, addr, N);
        }
        if self.leaves_unchanged::<N>(addr, v) {
            // What the rest would do, without looking the chunk up: it stays as it is.
            self.data_timing::<N, true>(mem, addr);
            if addr / CHUNK == self.htif_cn {
                return self.htif_check(mem, addr, N);
            }
            return Ok(());
        }
        if !Self::in_dram(mem, addr, N) {
            self.cycle += self.t.mmio_latency;
            return match self.clint_write(mem, addr, N, v) {
                true => Err(Ex::Recheck),
                false => Err(Ex::Trap { cause: STORE_FAULT, tval: addr }),
            };
        }
        let cn = addr / CHUNK;
        if addr % CHUNK + N as u64 <= CHUNK {
            // Private now, or still shared (loads may go fast, stores come here until one
            // changes the chunk).
            let now = mem.store_in_chunk(addr, &v.to_le_bytes()[..N]);
            let shared = matches!(now, crate::mem::ChunkRef::Shared(_));
            self.tlb.fill(cn, now);
            if shared {
                self.enter_next_shared(mem, cn);
            }
        } else {
            mem.write(addr, &v.to_le_bytes()[..N])
                .map_err(|_| Ex::Trap { cause: STORE_FAULT, tval: addr })?;
            self.tlb.forget_shared();
        }
        self.data_timing::<N, true>(mem, addr);
        if self.may_touch_htif::<N>(addr) {
            return self.htif_check(mem, addr, N);
        }
        Ok(())
    }

    /// Might a store of `N` bytes at `addr` reach `tohost`? Only if one of its bytes is in
    /// `tohost`'s chunk (`htif_cn`) or the next (where a `tohost` not 8-aligned would
    /// end): the others are answered without `htif_check`, whose look-up of the program
    /// cost 31 host instructions at each of the 620,114 `store_slow` calls of a 1,024-core
    /// sort (callgrind).
    #[inline(always)]
    fn may_touch_htif<const N: usize>(&self, addr: u64) -> bool {
        let (first, last) = (addr / CHUNK, (addr + N as u64 - 1) / CHUNK);
        last >= self.htif_cn && first <= self.htif_cn.saturating_add(1)
    }

    /// A store left shared chunk `cn` as it was: NanoSort zeroing a buffer still as the
    /// image has it, whose next store is likely in the next chunk. Enter that one too if
    /// it is shared, so that its stores leave it as it is from the TLB (`store_data`)
    /// rather than each chunk's first through `store_slow`. Not a watched chunk: that one
    /// never enters the TLB (`core/watch.rs`), so its accesses are counted.
    fn enter_next_shared(&mut self, mem: &NodeMem, cn: u64) {
        if self.watched_chunk((cn + 1) * CHUNK, 1) {
            return;
        }
        if let Some(c) = mem.next_shared(cn) {
            self.tlb.fill_shared(cn + 1, c.as_ptr());
        }
    }

    /// Would storing `v` at `addr` leave a chunk the TLB maps as it is? NanoSort zeroes
    /// its buffers before use, in memory still shared with the program image: such stores
    /// miss the write TLB every time (storing them would make the chunk private for
    /// nothing, `NodeMem::store_in_chunk`), and this answers them without a look-up.
    #[inline(always)]
    fn leaves_unchanged<const N: usize>(&self, addr: u64, v: u64) -> bool {
        let (cn, off) = (addr / CHUNK, (addr % CHUNK) as usize);
        let e = self.tlb.get(cn);
        e.reads(cn) && off + N <= CHUNK as usize && holds::<N>(e.ptr, addr, v)
    }

    /// Enter DRAM chunk `cn` in the TLB (for loads and stores if the node has made it
    /// private, else for loads); where its bytes are.
    #[inline(always)]
    fn fill_tlb(&mut self, mem: &mut NodeMem, cn: u64) -> *const u8 {
        self.tlb.fill(cn, mem.chunk_ref(cn))
    }

    /// Read a CLINT register (SiFive CLINT layout, docs/abi.md). `mtime` is local time in
    /// real-time-clock ticks.
    fn clint_read(&self, mem: &NodeMem, addr: u64, n: usize) -> Option<u64> {
        let (reg, off) = clint_reg(mem, addr, n)?;
        let v = match reg {
            ClintReg::Msip(h) => mem.msip[h] as u64,
            ClintReg::Mtimecmp(h) => mem.mtimecmp[h],
            ClintReg::Mtime => self.mtime(),
        };
        Some(extract(v, off, n))
    }

    /// Write a CLINT register; false if `addr` is not one. mtime writes are ignored: it is
    /// the core's local clock.
    fn clint_write(&mut self, mem: &mut NodeMem, addr: u64, n: usize, v: u64) -> bool {
        let Some((reg, off)) = clint_reg(mem, addr, n) else {
            return false;
        };
        match reg {
            ClintReg::Msip(h) => mem.msip[h] = (insert(mem.msip[h] as u64, off, n, v) & 1) as u32,
            ClintReg::Mtimecmp(h) => mem.mtimecmp[h] = insert(mem.mtimecmp[h], off, n, v),
            ClintReg::Mtime => {}
        }
        true
    }
}

enum ClintReg {
    Msip(usize),
    Mtimecmp(usize),
    Mtime,
}

/// Which CLINT register an access hits, and the byte offset inside it. The access must lie
/// within one register.
fn clint_reg(mem: &NodeMem, addr: u64, n: usize) -> Option<(ClintReg, usize)> {
    if !(CLINT_BASE..CLINT_BASE + CLINT_SIZE).contains(&addr) {
        return None;
    }
    let (reg, base, size) = if addr >= MTIME {
        (ClintReg::Mtime, MTIME, 8)
    } else if addr >= MTIMECMP {
        let h = ((addr - MTIMECMP) / 8) as usize;
        (ClintReg::Mtimecmp(h), MTIMECMP + 8 * h as u64, 8)
    } else {
        let h = ((addr - CLINT_BASE) / 4) as usize;
        (ClintReg::Msip(h), CLINT_BASE + 4 * h as u64, 4)
    };
    let off = (addr - base) as usize;
    let hart_ok = match reg {
        ClintReg::Msip(h) | ClintReg::Mtimecmp(h) => h < mem.ncores(),
        ClintReg::Mtime => true,
    };
    (hart_ok && off + n <= size).then_some((reg, off))
}

fn extract(v: u64, off: usize, n: usize) -> u64 {
    let shifted = v >> (8 * off);
    if n >= 8 {
        shifted
    } else {
        shifted & ((1u64 << (8 * n)) - 1)
    }
}

fn insert(old: u64, off: usize, n: usize, v: u64) -> u64 {
    let mask = if n >= 8 { u64::MAX } else { ((1u64 << (8 * n)) - 1) << (8 * off) };
    (old & !mask) | ((v << (8 * off)) & mask)
}

#[cfg(test)]
mod tests {
    use crate::testing::Bench;
    use crate::TimingParams;

    /// The timings with the prototype's memory system in full.
    fn full() -> TimingParams {
        TimingParams::default().prototype_memory()
    }

    /// Cycles and (L2, LLC) misses that one L1 miss of the line at `addr` costs.
    fn miss(b: &mut Bench, addr: u64) -> (u64, u64, u64) {
        let (c, s) = (b.core.cycle, b.core.stats.clone());
        b.core.miss(&mut b.mem, addr >> b.core.line_shift);
        let t = &b.core.stats;
        (b.core.cycle - c, t.l2_misses - s.l2_misses, t.llc_misses - s.llc_misses)
    }

    #[test]
    fn warm_leaves_lines_where_stores_would_and_costs_nothing() {
        let t = full();
        let mut b = Bench::with_timing(&[0], false, &t);
        let a = 0x8010_0000;
        // 1 MiB written in order: the last 16 KiB fit the L1 (partly: random replacement),
        // the last 512 KiB the L2 (likewise), all of it the 4 MiB LLC.
        b.core.warm(&mut b.mem, a, 1 << 20);
        assert_eq!((b.core.cycle, b.core.stats.l2_misses, b.core.stats.llc_misses), (0, 0, 0));
        // The first 256 KiB: mostly gone from the L2, never from the LLC.
        let (mut l2, mut llc) = (0, 0);
        for k in 0..4096 {
            let (_, l2_miss, llc_miss) = miss(&mut b, a + 64 * k);
            (l2, llc) = (l2 + l2_miss, llc + llc_miss);
        }
        assert!(l2 > 2048 && llc == 0, "{l2} L2 misses, {llc} LLC misses");
        // A line never written is in none of them.
        let d = &t.dram;
        // Warming reads no DRAM, so the bank is still precharged (the L2's victim, dirty
        // from the L1's write-backs while warming, goes to the LLC after the read, and its
        // block is there: no cost).
        let cold = t.l2_latency + t.llc_latency + d.t_rcd + d.t_cas + d.backend_latency;
        assert_eq!(miss(&mut b, a + (1 << 20)), (cold, 1, 1));
        let l1_hits = (0..256).filter(|k| b.core.l1d.access((a + (1 << 20) - 64 * k) >> 6)).count();
        assert!(l1_hits > 128, "most of the last 16 KiB still in the L1: {l1_hits} of 256");
    }

    #[test]
    fn an_l2_miss_goes_to_the_llc_then_to_a_dram_bank() {
        let t = TimingParams::default();
        let (l2, llc, d) = (t.l2_latency, t.llc_latency, &t.dram);
        let mut b = Bench::new(&[0], false);
        let a = 0x8010_0000;
        // Cold: L2, LLC and a closed bank (activate, then CAS).
        assert_eq!(miss(&mut b, a), (l2 + llc + d.t_rcd + d.t_cas + d.backend_latency, 1, 1));
        // The other 64-byte half of the LLC's 128-byte block: an L2 miss, an LLC hit.
        assert_eq!(miss(&mut b, a + 64), (l2 + llc, 1, 0));
        // Back to the first line: the L2 has it.
        assert_eq!(miss(&mut b, a), (l2, 0, 0));
        // The next 128-byte block is in the row the first miss opened.
        assert_eq!(miss(&mut b, a + 128), (l2 + llc + d.t_cas + d.backend_latency, 1, 1));
        // Same bank and rank, another row: precharge, activate, CAS.
        let conflict = l2 + llc + d.t_rp + d.t_rcd + d.t_cas + d.backend_latency;
        assert_eq!(miss(&mut b, a + (1 << 18)), (conflict, 1, 1));
    }

    /// Cycles of a load of `addr` after writing (`store`) or reading 32 other lines of its
    /// L1 set, so that its miss evicts one of them (the replacement is random and may pick
    /// a way it filled before: 32 fills leave none of the four empty).
    fn fifth_line(store: bool, addr: u64) -> u64 {
        let mut b = Bench::with_timing(&[0], false, &full());
        // 64 sets of 64 bytes: lines 4 KiB apart share a set.
        for k in 1..=32 {
            match store {
                true => b.core.data_timing::<8, true>(&mut b.mem, addr + k * 4096),
                false => b.core.data_timing::<8, false>(&mut b.mem, addr + k * 4096),
            }
        }
        let c = b.core.cycle;
        b.core.data_timing::<8, false>(&mut b.mem, addr);
        b.core.cycle - c
    }

    #[test]
    fn a_dirty_l1_victim_is_written_back_before_the_refill() {
        let a = 0x8010_0000;
        assert_eq!(fifth_line(true, a), fifth_line(false, a) + full().l1_writeback);
    }

    /// Cycles of an L1 miss of `addr`, its DRAM row open, whose L2 set holds eight other
    /// lines, dirty if `dirty`, each of whose LLC sets is full of dirty blocks.
    fn l2_set_full(dirty: bool, addr: u64) -> u64 {
        let mut b = Bench::with_timing(&[0], false, &full());
        let rel = (addr - b.mem.base) >> 6;
        // 1,024 L2 sets: lines 1,024 apart share one; odd multiples, so that none shares
        // the LLC set of `addr` (512 KiB apart).
        for k in (1..16).step_by(2) {
            let line = rel + k * 1024;
            _ = b.mem.l2.access_rw(line, dirty);
            // 4,096 LLC sets of 128-byte blocks: 512 KiB apart share one.
            (100..108).for_each(|j| _ = b.mem.llc.access_rw(line * 64 + j * (512 << 10), true));
        }
        b.mem.dram.read(addr, 0);
        miss(&mut b, addr).0
    }

    #[test]
    fn a_dirty_l2_victim_holds_the_llc_after_the_read() {
        let t = TimingParams::default();
        let d = &t.dram;
        let a = 0x8010_0000;
        let clean = l2_set_full(false, a);
        assert_eq!(clean, t.l2_latency + t.llc_latency + d.t_cas + d.backend_latency, "a row hit");
        // The victim's write enters FASED after its 8 beats, then holds the LLC for a
        // metadata cycle, 16 beats of the dirty block it evicts and its own 8: to cycle 33
        // after the read's metadata cycle, whose DRAM data was back at 1 + 16.
        assert_eq!(l2_set_full(true, a), clean + 33 - 17);
    }

    #[test]
    fn a_refill_waits_for_the_l2_path_a_dma_holds() {
        let t = full();
        let mut b = Bench::with_timing(&[0], false, &t);
        let a = 0x8010_0000;
        let first = miss(&mut b, a).0;
        b.core.l1d.flush();
        assert_eq!(miss(&mut b, a).0, t.l2_latency, "an L2 hit, the path free");
        // A 1 KiB DMA write (128 beats) from now: the L2 hit's data would pass in its 14th
        // line request (13 + 3 cycles in, less the 8 beats), and waits for its end (a read
        // would hold it up for its queued Gets too: `port.rs`).
        let now = b.core.cycle;
        b.mem.port.dma(now, 128, false);
        b.core.l1d.flush();
        let (l2, into) = (t.l2_latency, t.l2_latency - 8);
        assert_eq!(miss(&mut b, a).0, l2 + (8 - into % 8));
        assert!(first > l2);
    }
}
