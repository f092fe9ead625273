//! The node's table of the stores its cores have shown each other (docs/models/node.md
//! "Cores sharing memory"): for each line, the cycle of the latest store to it, which core
//! made it, and the latest store by any other core. A core that misses on a line stored by
//! another core at a cycle still in its own future waits until then (`core/coherence.rs`).
//!
//! One table per node, not one per core: each store is entered once, however many cores
//! observe it, and a reader asks for the latest store by a core other than itself (the
//! two figures kept per line answer that for every reader). A store whose cycle a reader
//! has already passed makes it wait for nothing, so what each reader saw when the store
//! was published needs no keeping: its clock only moves forward.
//!
//! The table also knows which cores may hold each line in their L1 D-cache: the core that
//! stored to it last and those that missed on it since (a core only gets a line by missing
//! on it, or by a warm start). A store then probes only their caches; a line no other core
//! has read since, a core's own stack above all, probes none. Probing a cache that does not
//! hold the line would change nothing.

/// The latest stores to one line: one slot of the table, 32 bytes (two to a host cache
/// line; with 64-bit holders it was 40, and a node's table of 128 slots 5 KiB).
#[derive(Clone, Copy)]
struct Latest {
    line: u64,
    /// Cycle of the latest store, and the core that made it (`EMPTY`: a free slot).
    cycle: u64,
    by: u32,
    /// Cores that may hold the line in their L1 D-cache (bit `i`: core `i`).
    holders: Holders,
    /// Cycle of the latest store by any core but `by` (0: none).
    other: u64,
}

const _: () = assert!(std::mem::size_of::<Latest>() == 32);

/// A line's holders, one bit per core below `HOLDER_BITS`; the cores from `HOLDER_BITS`
/// on have no bit and are probed at every store (probing a cache that does not hold the
/// line changes nothing, so this costs host time only, and only on nodes of more cores).
pub type Holders = u32;
pub const HOLDER_BITS: usize = Holders::BITS as usize;

/// `Latest::by` of a free slot: no node has 2^32 - 1 cores.
const EMPTY: u32 = u32::MAX;
const FREE: Latest = Latest { line: 0, cycle: 0, by: EMPTY, holders: 0, other: 0 };

/// Every core may hold the line (it had no entry: none yet, or pruned).
pub const ANY: Holders = Holders::MAX;

/// The bit of core `i` among a line's holders; cores `HOLDER_BITS` and up have none, and
/// are probed at every store.
pub fn holder_bit(i: usize) -> Holders {
    Holders::from(1u8).checked_shl(i as u32).unwrap_or(0)
}

/// Entries below which the table is not pruned: a pruning costs a pass over the table and
/// a pass over the node's cores. 20: pruned at 40 lines, a table rebuilt after a pruning
/// has 64 slots (2 KiB) and room for 8 more lines in the run that reaches 40 before it
/// grows. At 32 it had 128 slots (4 KiB a node at the 16,384-core sort's peak); at 24 it
/// was full at the pruning's 48 lines, and the run that reached them grew it to 128 slots
/// and the pruning shrank it back (15,700 grows in a 1,024-core sort, +0.9% host
/// instructions). Measured (CHANGELOG): the 16,384-core sort's peak resident set 3.2 KiB a
/// node lower than at 32, +0.46% host instructions (the more frequent passes).
const PRUNE_MIN: usize = 20;

/// Slots of a table's first allocation (*estimate*: 640 bytes, a few runs' stores).
const MIN_SLOTS: usize = 16;

/// Slots (a power of two) that hold `entries` lines at most three quarters full.
fn slots_for(entries: usize) -> usize {
    (entries * 4).div_ceil(3).next_power_of_two()
}

/// Lines stored to by the node's cores while another core of the node was running.
///
/// An open-addressed table probed linearly from the line's hash, at most three quarters
/// full: a line's slot holds its key and figures together, so a look-up reads the slot
/// alone where a general hash map reads its control bytes and then the entry (fewer host
/// instructions; the time is mostly the host cache miss on a node's cold table either
/// way: CHANGELOG 2026-12-03). Slots are only ever freed all at once (`prune` rebuilds
/// the table), so there are no tombstones.
#[derive(Default)]
pub struct StoreTable {
    /// A power of two of slots, or none.
    slots: Vec<Latest>,
    /// Lines held (32 bits, with `pruned_len`, to make room for `seen` in the node).
    len: u32,
    /// `len` after the table was last pruned (it is pruned when it has doubled).
    pruned_len: u32,
    /// For each class of regions of memory (`region_class`), which of the node's first
    /// `SEEN_CORES` cores have filled a line of one into their L1 D-cache, whether the
    /// table knew the line or not (bit `SEEN_CORES * class + i`: core `i`): a core whose
    /// bit is clear for a line's class does not hold the line, and a store to it needs no
    /// probe there (`may_hold`). Most lines a core stores to are new to the table (or
    /// pruned from it) and may be in any cache by their entry, yet only their writer ever
    /// reads them (its stack, its buffers). By class, not by core: a store finds the
    /// cores of its line's class with one shift, where 16 bits for each core took a test
    /// of each (about 10 host instructions a store, callgrind).
    seen: u64,
}

/// Classes of regions `StoreTable::seen` tells apart: 16, so that the table, `seen` and
/// all, takes the 40 bytes of the node it took before. 64 bits a core (32 more bytes a
/// node, 4 KiB regions) left 0.24 M of the 1,024-core sort's 2.48 M probes, against 0.91 M
/// (cachegrind: -0.67% host instructions against -0.28%), for about 0.05% more peak
/// memory in the 16,384-core sort.
const REGION_CLASSES: u32 = 16;

const _: () = assert!(REGION_CLASSES as usize * SEEN_CORES == u64::BITS as usize);

/// Cores whose fills `StoreTable::seen` follows: a nanoPU node's 4. A node's cores beyond
/// them may hold any line.
const SEEN_CORES: usize = 4;

/// Lines of a region of memory (log2): 128 lines, 8 KiB of 64-byte lines. In
/// the 1,024-core sort (callgrind) 4 KiB regions took 0.10% more host instructions with
/// 16 bits. With 64 bits, 4 KiB regions did best: 512 bytes left 1.27 M of the 2.48 M
/// probes against 0.24 M (each core's bits fill up), 2 KiB and 16 KiB took 0.12% and
/// 0.02% more host instructions.
const REGION_SHIFT: u32 = 7;

/// The class of `line`'s region in `StoreTable::seen`: the region number hashed onto
/// `REGION_CLASSES` (Fibonacci hashing, as `slot_of`), from the line number's low 32 bits
/// only, which are all an L1's wide tags keep.
#[inline(always)]
fn region_class(line: u64) -> u32 {
    let region = u64::from(line as u32 >> REGION_SHIFT);
    (region.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - REGION_CLASSES.trailing_zeros())) as u32
}

impl StoreTable {
    /// Core `by` stored to `line` at `cycle`: the cores whose L1 D-cache may hold the line
    /// and must lose it (bit `i`: core `i`, `by` among them or not; cores `HOLDER_BITS` and
    /// up always).
    pub fn record(&mut self, by: usize, line: u64, cycle: u64) -> Holders {
        if 4 * (self.len as usize + 1) > 3 * self.slots.len() {
            self.grow();
        }
        let i = self.slot_of(line);
        let by32 = by as u32;
        let e = &mut self.slots[i];
        if e.by == EMPTY {
            *e = Latest { line, cycle, by: by32, holders: ANY, other: 0 };
            self.len += 1;
        } else if e.by == by32 {
            e.cycle = e.cycle.max(cycle);
        } else if cycle > e.cycle {
            *e = Latest { line, cycle, by: by32, holders: e.holders, other: e.cycle };
        } else {
            e.other = e.other.max(cycle);
        }
        std::mem::replace(&mut e.holders, holder_bit(by))
    }

    /// Twice the slots. Out of line: inlined, its registers made every `record` save and
    /// restore six (about 15 host instructions a call, callgrind).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        self.rebuild((2 * self.slots.len()).max(MIN_SLOTS), |_| true);
    }

    /// Core `reader` missed on `line` and now holds it: the cycle of the latest store to it
    /// by another core (0: none).
    #[inline(always)]
    pub fn on_miss(&mut self, line: u64, reader: usize) -> u64 {
        self.see(reader, line);
        if self.len == 0 {
            return 0;
        }
        let Some(e) = self.get_mut(line) else { return 0 };
        e.holders |= holder_bit(reader);
        if e.by == reader as u32 {
            e.other
        } else {
            e.cycle
        }
    }

    /// Core `core` filled `line` without a timed miss (a warm start): it holds it.
    pub fn note_fill(&mut self, line: u64, core: usize) {
        self.see(core, line);
        if let Some(e) = self.get_mut(line) {
            e.holders |= holder_bit(core);
        }
    }

    /// Core `core` filled `line` into its L1 D-cache.
    #[inline(always)]
    fn see(&mut self, core: usize, line: u64) {
        if core < SEEN_CORES {
            self.seen |= 1 << (SEEN_CORES as u32 * region_class(line) + core as u32);
        }
    }

    /// The cores whose L1 D-cache may hold `line`: those of the first `SEEN_CORES` that
    /// filled a line of its region (`seen`), and every core past them (bit `i`: core `i`).
    #[inline]
    pub fn may_hold(&self, line: u64) -> Holders {
        let first = holder_bit(SEEN_CORES) - 1;
        let seen = (self.seen >> (SEEN_CORES as u32 * region_class(line))) as Holders;
        (seen & first) | !first
    }

    /// Forget stores no core can wait for any more: every core that may still read is at
    /// `earliest` or later. Done only once the table has doubled, so its cost is spread; a
    /// line forgotten may again be in any cache.
    pub fn prune(&mut self, earliest: u64) {
        if self.prune_due() {
            let kept = self.slots.iter().filter(|e| e.by != EMPTY && e.cycle > earliest).count();
            self.pruned_len = kept as u32;
            // The table keeps the size of its busiest moment otherwise (hundreds of lines,
            // 20 KiB, per node of a sort: docs/profile.md); room for what is kept and as
            // many again is what it fills before the next pruning.
            self.rebuild(slots_for(2 * kept.max(PRUNE_MIN)), |e| e.cycle > earliest);
        }
    }

    /// Has the table doubled since it was last pruned (`prune` would prune now)?
    #[inline]
    pub fn prune_due(&self) -> bool {
        self.len >= 2 * self.pruned_len.max(PRUNE_MIN as u32)
    }

    /// Forget every store and free the table: no core of the node will run again.
    pub fn clear(&mut self) {
        *self = StoreTable::default();
    }

    /// Lines the table holds before it grows (three quarters of its slots).
    #[cfg(test)]
    fn capacity(&self) -> usize {
        3 * self.slots.len() / 4
    }

    /// A table of `n` slots (a power of two) holding the current lines that `keep`. A
    /// plain loop over the old slots: as an iterator chain (`into_iter().filter()`) it was
    /// left as calls in the `fast` build, about 22 host instructions a slot (callgrind).
    fn rebuild(&mut self, n: usize, keep: impl Fn(&Latest) -> bool) {
        let old = std::mem::replace(&mut self.slots, vec![FREE; n]);
        self.len = 0;
        for e in &old {
            if e.by != EMPTY && keep(e) {
                let i = self.slot_of(e.line);
                self.slots[i] = *e;
                self.len += 1;
            }
        }
    }

    /// The slot of `line`, or the free slot where it would go (the table has a free slot).
    #[inline(always)]
    fn slot_of(&self, line: u64) -> usize {
        let mask = self.slots.len() - 1;
        // Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): a node's lines are mostly
        // consecutive, which the multiply spreads over the table.
        let mut i = (line.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & mask;
        loop {
            let e = &self.slots[i];
            if e.by == EMPTY || e.line == line {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    #[inline(always)]
    fn get_mut(&mut self, line: u64) -> Option<&mut Latest> {
        if self.slots.is_empty() {
            return None;
        }
        let i = self.slot_of(line);
        Some(&mut self.slots[i]).filter(|e| e.by != EMPTY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_sees_the_latest_store_of_the_others_not_its_own() {
        let mut t = StoreTable::default();
        t.record(0, 7, 100);
        assert_eq!((t.on_miss(7, 0), t.on_miss(7, 1)), (0, 100));
        t.record(1, 7, 300);
        t.record(0, 7, 200);
        assert_eq!((t.on_miss(7, 0), t.on_miss(7, 1), t.on_miss(7, 2)), (300, 200, 300));
        t.record(2, 7, 250);
        assert_eq!((t.on_miss(7, 1), t.on_miss(7, 3)), (250, 300));
        assert_eq!(t.on_miss(8, 1), 0);
    }

    #[test]
    fn a_store_probes_the_caches_that_got_the_line_since_the_last_store() {
        let mut t = StoreTable::default();
        assert_eq!(t.record(0, 7, 100), ANY, "a line not yet in the table may be anywhere");
        assert_eq!(t.record(0, 7, 110), holder_bit(0), "no other core missed on it");
        t.on_miss(7, 2);
        t.note_fill(7, 3);
        t.on_miss(9, 1);
        assert_eq!(t.record(1, 7, 120), holder_bit(0) | holder_bit(2) | holder_bit(3));
        assert_eq!(t.record(0, 7, 130), holder_bit(1));
        assert_eq!(holder_bit(HOLDER_BITS), 0);
    }

    #[test]
    fn a_region_is_one_class_and_its_lines_share_it() {
        let class = region_class(0x1234);
        assert_eq!(class, region_class(0x1234 ^ ((1 << REGION_SHIFT) - 1)));
        assert_eq!(class, region_class(0x1234 | 1 << 32), "low 32 bits only");
        let classes: std::collections::BTreeSet<u32> =
            (0..1024).map(|r| region_class(r << REGION_SHIFT)).collect();
        assert_eq!(classes, (0..REGION_CLASSES).collect(), "every class, none past them");
    }

    #[test]
    fn a_line_may_be_held_by_the_cores_that_filled_a_line_of_its_region() {
        let mut t = StoreTable::default();
        let past = !(holder_bit(SEEN_CORES) - 1);
        assert_eq!(t.may_hold(0x1234), past, "only the cores past the first SEEN_CORES");
        t.on_miss(0x1234, 1);
        t.note_fill(0x1234 ^ 1, 3);
        t.on_miss(0x1234, SEEN_CORES);
        assert_eq!(t.may_hold(0x1234), past | holder_bit(1) | holder_bit(3));
        let elsewhere =
            (0..64u64).map(|r| r << REGION_SHIFT).find(|&l| region_class(l) != region_class(0x1234));
        assert_eq!(t.may_hold(elsewhere.expect("16 classes")), past);
    }

    #[test]
    fn every_line_is_found_however_the_table_grew() {
        let mut t = StoreTable::default();
        let lines: Vec<u64> = (0..2_000u64).map(|i| i.wrapping_mul(0x1_0000_0001) ^ (i << 40)).collect();
        for (i, &line) in lines.iter().enumerate() {
            assert_eq!(t.record(i % 4, line, 10 + i as u64), ANY, "line {line:#x} is new");
        }
        assert_eq!(t.len as usize, lines.len());
        assert!(4 * t.len as usize <= 3 * t.slots.len(), "at most three quarters full");
        for (i, &line) in lines.iter().enumerate() {
            let other = (i + 1) % 4;
            assert_eq!(t.on_miss(line, other), 10 + i as u64, "line {line:#x}");
        }
        assert_eq!(t.on_miss(0xdead_beef, 0), 0);
    }

    #[test]
    fn pruning_keeps_the_stores_a_core_may_still_wait_for() {
        let mut t = StoreTable::default();
        (0..256).for_each(|line| _ = t.record(0, line, line));
        t.prune(200);
        assert_eq!(t.len, 55);
        (256..300).for_each(|line| _ = t.record(0, line, line));
        t.prune(1_000);
        assert_eq!(t.len, 99, "kept until twice what the last pruning kept");
        assert_eq!((t.on_miss(199, 1), t.on_miss(201, 1)), (0, 201));
        assert_eq!(t.record(0, 199, 300), ANY, "a pruned line may be anywhere again");
        assert!(t.capacity() < 256, "the table shrinks with what it keeps");
        t.clear();
        assert_eq!((t.capacity(), t.on_miss(201, 1)), (0, 0));
    }
}
