//! Tag-only cache models. Only hit/miss matters for timing, so no data is stored; a dirty
//! bit per way says whether evicting the line writes it back (docs/models/node.md
//! "Write-backs, the L2's one path and refresh").
//!
//! Replacement is pseudo-random, as in Rocket's L1 caches (rocket-chip
//! `DCacheParams.replacementPolicy = "random"`), which also keeps the state to the tags
//! alone. The random source is a per-cache xorshift, so runs are deterministic.

/// Invalid L1 tag (no DRAM line number reaches it).
const INVALID: u32 = u32::MAX;

/// Invalid narrow L1 tag: a line whose tag this would be widens the tags instead (`L1`).
const NARROW_INVALID: u16 = u16::MAX;

/// `L1::lo` while no line is in range: before the first fill, and once the tags are wide.
/// A line number is below 2^63, so `key - NO_BLOCK`, wrapping, is above 2^16.
const NO_BLOCK: u64 = u64::MAX - 0xffff;

pub(crate) fn xorshift(s: &mut u32) -> u32 {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    *s
}

/// What a filling access did: hit, or missed and evicted a clean way, or missed and
/// evicted a dirty line (its line number for the L1, its DRAM-relative line for the L2),
/// which must be written back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    Hit,
    Miss,
    Dirty(u64),
}

impl Fill {
    pub fn hit(self) -> bool {
        self == Fill::Hit
    }

    /// The dirty victim, if write-backs are modelled (`write_backs`).
    pub fn victim(self, write_backs: bool) -> Option<u64> {
        match self {
            Fill::Dirty(v) if write_backs => Some(v),
            _ => None,
        }
    }
}

/// One dirty bit per way, as 64-bit words.
#[derive(Hash, Clone, Default, PartialEq, Eq, Debug)]
pub(crate) struct DirtyBits(Box<[u64]>);

impl DirtyBits {
    pub(crate) fn new(ways: usize) -> DirtyBits {
        DirtyBits(vec![0; ways.div_ceil(64)].into_boxed_slice())
    }

    /// Way `i`'s bit.
    pub(crate) fn get(&self, i: usize) -> bool {
        self.0[i / 64] & 1 << (i % 64) != 0
    }

    /// Host bytes held.
    pub(crate) fn bytes(&self) -> usize {
        8 * self.0.len()
    }

    /// Set or clear way `i`'s bit; return what it was.
    pub(crate) fn put(&mut self, i: usize, dirty: bool) -> bool {
        let (w, b) = (&mut self.0[i / 64], 1u64 << (i % 64));
        let was = *w & b != 0;
        *w = if dirty { *w | b } else { *w & !b };
        was
    }
}

/// Slots of the D-cache's `L1::known` (a power of two; *estimate*: a run of a core touches
/// a few dozen data lines). Measured on the 1,024-core sort (cachegrind, host instructions):
/// 32 slots took 0.95% fewer than 16, as fewer loads and stores left the fast engine's run
/// to look up the tags of a line the L1 held.
pub(crate) const KNOWN_DATA: usize = 32;

/// Slots of the I-cache's `L1::known` (a power of two; *estimate*: a sort's inner loops and
/// the functions they call span a few dozen code lines, most entered from the line before
/// or the one fetched before, `Core::iline`, `iprev`). 8 slots rather than 16 took 0.28% more
/// host instructions on the 1,024-core sort, and leave the room the D-cache's 32 take: a
/// node's 4 `Core`s stay in mimalloc's 8 KiB class (docs/profile.md).
pub(crate) const KNOWN_CODE: usize = 8;

/// A private L1 cache: set-associative; a tag names a line (`addr / line`) within its set.
///
/// The tags are narrow, 16 bits, while every line filled lies in one block of 2^16 lines
/// per set (a 256 MiB DRAM aligned to its size, with 64 sets of 64-byte lines as Rocket's
/// L1s have): a line's tag is its key (`line >> set_bits`) less the block's first key,
/// `lo`. A line outside the block, or whose tag would be `NARROW_INVALID`, makes them wide
/// for good: the line numbers' low 32 bits. Both forms tell the same lines apart (a set's
/// lines of one block differ only in their keys' low 16 bits), so they fill and evict
/// alike; the narrow form halves the tags (8 of a 4-core node's 150 KiB at the heap's peak:
/// docs/profile.md). One form's box is empty while the other is in use.
///
/// `known` holds lines known to be in the cache, by their low bits, each with whether it
/// is known dirty (`line << 1 | dirty`): each has hit or been filled since the last fill of
/// its set, and replacement is random, so only a fill can evict it and looking it up again
/// would hit and change nothing (or, for a store, nothing once it is dirty). An access to a
/// known line answers from there, without reading the tags: with thousands of cores taking
/// turns, the tags are a host cache miss at nearly every look-up, while `known` sits in
/// the `Core` beside the other state a run touches (docs/profile.md "What keeps it fast").
#[derive(Hash)]
#[repr(C)]
pub struct L1<const K: usize> {
    /// Narrow tags, `NARROW_INVALID` for an empty way.
    narrow: Box<[u16]>,
    /// Wide tags, `INVALID` for an empty way.
    wide: Box<[u32]>,
    set_mask: u64,
    /// The narrow tags' first key, or `NO_BLOCK`.
    lo: u64,
    ways: u32,
    set_bits: u32,
    dirty: DirtyBits,
    /// Ways the L2's probe of a device's read left shared (TileLink Branch: `probe_to_b`);
    /// the others hold their line with write permission (Trunk, Rocket's only state for a
    /// line of a one-client L2, which grants T to every refill). Made at the first probe.
    shared: DirtyBits,
    rng: u32,
    /// A probe left some way shared since the last flush; until one does, stores and fills
    /// leave `shared` alone (most runs have no device reads: a sort's cores never do).
    any_shared: bool,
    /// `K` slots (`KNOWN_DATA`, `KNOWN_CODE`) of 32 bits (`key`): 160 bytes of the `Core`
    /// for both L1s, where 64-bit slots would take 320, and a node's 4 `Core`s fit
    /// mimalloc's 8 KiB class (docs/profile.md).
    known: [i32; K],
}

/// Where a translated trace finds an L1's known lines (`jit/emit.rs`), which it reads as
/// `knows` and `knows_written` do.
pub(crate) mod layout {
    use super::{KNOWN_CODE, KNOWN_DATA, L1};
    pub(crate) const KNOWN_DATA_AT: i32 = std::mem::offset_of!(L1<KNOWN_DATA>, known) as i32;
    pub(crate) const KNOWN_CODE_AT: i32 = std::mem::offset_of!(L1<KNOWN_CODE>, known) as i32;
}

/// An empty `known` slot: -1, which widens to `u64::MAX` (`key`); a line number is an
/// address over the line size, below 2^63 for lines of 2 bytes or more, so
/// `line << 1 | dirty` is never this.
const UNKNOWN: i32 = -1;

/// Lines below this number may be known (`line << 1 | dirty` is then a positive `i32`):
/// addresses below 64 GiB with 64-byte lines, which hold DRAM in every memory map here. A
/// line above is looked up in the tags at every access.
const KNOWABLE_LINES: u64 = 1 << 30;

/// A `known` slot as the 64 bits `line << 1 | dirty` compares with: sign-extended, so
/// `UNKNOWN` matches no line.
#[inline(always)]
fn key(k: i32) -> u64 {
    k as i64 as u64
}

/// The `known` slot of `line`, `dirty` or not (`UNKNOWN` if it cannot be known).
#[inline(always)]
fn slot_of(line: u64, dirty: bool) -> i32 {
    match line < KNOWABLE_LINES {
        true => (line << 1 | dirty as u64) as i32,
        false => UNKNOWN,
    }
}

impl<const K: usize> L1<K> {
    /// Sets and ways are rounded up to powers of two (Rocket's geometries are).
    pub fn new(sets: usize, ways: usize) -> L1<K> {
        let sets = sets.next_power_of_two().max(1);
        let ways = ways.next_power_of_two().max(1);
        let set_bits = sets.trailing_zeros();
        // Beyond 2^16 sets a block spans more lines than the wide tags tell apart.
        let (narrow, wide) = match set_bits <= 16 {
            true => (vec![NARROW_INVALID; sets * ways], vec![]),
            false => (vec![], vec![INVALID; sets * ways]),
        };
        L1 {
            known: [UNKNOWN; K],
            narrow: narrow.into_boxed_slice(),
            wide: wide.into_boxed_slice(),
            dirty: DirtyBits::new(sets * ways),
            shared: DirtyBits::default(),
            set_mask: sets as u64 - 1,
            lo: NO_BLOCK,
            ways: ways as u32,
            set_bits,
            rng: 0x9e37_79b9,
            any_shared: false,
        }
    }

    /// `look_up` of a line out of the narrow tags' range: through the wide tags if they
    /// are in use (out of line: only an unusual memory map needs them); while the narrow
    /// tags hold nothing (before the first fill, or after a flush) the line's block becomes
    /// theirs; otherwise, or if its tag would be `NARROW_INVALID`, they widen.
    #[cold]
    #[inline(never)]
    fn look_up_far(&mut self, line: u64, write: bool) -> Fill {
        if !self.wide.is_empty() {
            let set = (line & self.set_mask) as usize;
            let base = set * self.ways as usize;
            let probed = probe(&mut self.wide[base..base + self.ways as usize], line as u32, &mut self.rng);
            return self.settle(set, probed, line, write);
        }
        let key = line >> self.set_bits;
        match self.narrow.iter().all(|&t| t == NARROW_INVALID) && key as u16 != NARROW_INVALID {
            true => self.lo = key & !0xffff,
            false => self.widen(),
        }
        self.look_up(line, write)
    }

    /// Widen the narrow tags, for good (if not yet).
    fn widen(&mut self) {
        if self.narrow.is_empty() {
            return;
        }
        let ways = self.ways as usize;
        let wide = self.narrow.iter().enumerate().map(|(i, &t)| self.wide_tag(i / ways, t));
        self.wide = wide.collect();
        (self.narrow, self.lo) = (Box::default(), NO_BLOCK);
    }

    /// The wide tag of the line narrow tag `tag` of set `set` names.
    fn wide_tag(&self, set: usize, tag: u16) -> u32 {
        if tag == NARROW_INVALID {
            return INVALID;
        }
        ((self.lo + tag as u64) << self.set_bits | set as u64) as u32
    }

    /// Is line number `line` known to be in the cache (`known`)? Then `access(line)` would
    /// hit and change nothing.
    #[inline(always)]
    pub fn knows(&self, line: u64) -> bool {
        key(self.known[line as usize & (K - 1)]) >> 1 == line
    }

    /// Is line number `line` known to be in the cache and written (`known`)? Then
    /// `access_rw(line, true)` would hit and change nothing.
    #[inline(always)]
    pub fn knows_written(&self, line: u64) -> bool {
        key(self.known[line as usize & (K - 1)]) == line << 1 | 1
    }

    /// Access line number `line`; fill on a miss. Returns true on a hit.
    #[inline(always)]
    pub fn access(&mut self, line: u64) -> bool {
        self.access_rw(line, false).hit()
    }

    /// Access line number `line`, a store if `write` (the line becomes dirty); fill on a
    /// miss, reporting a dirty victim.
    #[inline(always)]
    pub fn access_rw(&mut self, line: u64, write: bool) -> Fill {
        let k = key(self.known[line as usize & (K - 1)]);
        if k == line << 1 | 1 || (!write && k >> 1 == line) {
            return Fill::Hit;
        }
        self.look_up(line, write)
    }

    /// `access_rw` through the tags; the line becomes known.
    #[inline(always)]
    fn look_up(&mut self, line: u64, write: bool) -> Fill {
        // The narrow tag, if in range (one comparison: out of the block, or
        // `NARROW_INVALID`, or the tags are wide).
        let rel = (line >> self.set_bits).wrapping_sub(self.lo);
        if rel >= NARROW_INVALID as u64 {
            return self.look_up_far(line, write);
        }
        let set = (line & self.set_mask) as usize;
        let base = set * self.ways as usize;
        let probed = match probe(&mut self.narrow[base..base + self.ways as usize], rel as u16, &mut self.rng)
        {
            Probe::Hit(w) => Probe::Hit(w),
            Probe::Filled(w, old) => Probe::Filled(w, old as u32),
        };
        self.settle(set, probed, line, write)
    }

    /// What a probe of `line`'s set found makes of the dirty bits and known lines; on a
    /// fill, the tag the way held is narrow or wide as the tags are.
    #[inline(always)]
    fn settle(&mut self, set: usize, probed: Probe<u32>, line: u64, write: bool) -> Fill {
        let base = set * self.ways as usize;
        let known = slot_of(line, write);
        let (way, old) = match probed {
            Probe::Hit(way) => {
                self.known[line as usize & (K - 1)] = known;
                if write {
                    self.dirty.put(base + way, true);
                    return self.upgrade(base + way);
                }
                return Fill::Hit;
            }
            Probe::Filled(way, old) => (way, old),
        };
        let was_dirty = self.dirty.put(base + way, write);
        if self.any_shared {
            self.shared.put(base + way, false);
        }
        self.forget_set(line);
        self.known[line as usize & (K - 1)] = known;
        match was_dirty {
            true => Fill::Dirty(self.victim(set, old) as u64),
            false => Fill::Miss,
        }
    }

    /// A store that hits way `i`: a shared (Branch) line needs write permission first,
    /// which Rocket's D-cache asks the L2 for as on a miss (an AcquireBlock BtoT, answered
    /// with a Grant without data: block-inclusivecache d3d95ec `SourceD.scala`, `s1_grant`),
    /// so it is one.
    #[inline(always)]
    fn upgrade(&mut self, i: usize) -> Fill {
        match self.any_shared && self.shared.put(i, false) {
            true => Fill::Miss,
            false => Fill::Hit,
        }
    }

    /// The line a dirty victim's tag names, as the wide tags name it.
    fn victim(&self, set: usize, old: u32) -> u32 {
        match self.wide.is_empty() {
            true => self.wide_tag(set, old as u16),
            false => old,
        }
    }

    /// A fill into `line`'s set may have evicted any line of it: those are no longer known.
    /// With at least `K` sets only `line`'s own slot can hold one, and the caller
    /// overwrites it.
    #[inline(always)]
    fn forget_set(&mut self, line: u64) {
        if self.set_mask as usize >= K - 1 {
            return;
        }
        for k in &mut self.known {
            if (key(*k) >> 1 ^ line) & self.set_mask == 0 {
                *k = UNKNOWN;
            }
        }
    }

    pub fn flush(&mut self) {
        self.known = [UNKNOWN; K];
        self.narrow.fill(NARROW_INVALID);
        self.wide.fill(INVALID);
        self.dirty.0.fill(0);
        self.shared.0.fill(0);
        self.any_shared = false;
    }

    /// Drop line number `line` if held (a coherence probe: another agent wrote it; a dirty
    /// copy's data goes to the L2 with the probe's answer, at the prober's cost). A line
    /// is held in one way at most: `access` fills only on a miss.
    #[inline]
    pub fn invalidate(&mut self, line: u64) {
        let (base, ways) = ((line & self.set_mask) as usize * self.ways as usize, self.ways as usize);
        // In bounds: base + ways <= sets * ways, as the set index is masked.
        // Narrow tags hold only the lines in their range (`look_up`).
        let rel = (line >> self.set_bits).wrapping_sub(self.lo);
        let way = match rel < NARROW_INVALID as u64 {
            true => drop_tag(&mut self.narrow[base..base + ways], rel as u16, NARROW_INVALID),
            false => self.invalidate_wide(base, line),
        };
        if let Some(way) = way {
            self.dirty.put(base + way, false);
            if self.any_shared {
                self.shared.put(base + way, false);
            }
            // Only a held line can be known. As the wide tags compare, a line 2^32 lines
            // away is the same line.
            let k = &mut self.known[line as usize & (K - 1)];
            if (key(*k) >> 1) as u32 == line as u32 {
                *k = UNKNOWN;
            }
        }
    }

    /// Is line number `line` held, and is it dirty? (A device's write probes every line an
    /// L1 holds: `dma.rs`.)
    pub fn holds(&self, line: u64) -> Option<bool> {
        let base = (line & self.set_mask) as usize * self.ways as usize;
        self.way_of(line).map(|way| self.dirty.get(base + way))
    }

    /// The L2's probe to Branch of line number `line` for a device's read, which it sends
    /// only if this L1 holds the line with write permission (block-inclusivecache d3d95ec
    /// `MSHR.scala`: a Get probes if the line is `TRUNK`): `None` if it does not; else
    /// whether the line was dirty (its data go to the L2 with the answer). The line stays,
    /// clean and shared, so a store to it asks for write permission again (`upgrade`).
    pub fn probe_to_b(&mut self, line: u64) -> Option<bool> {
        let i = (line & self.set_mask) as usize * self.ways as usize + self.way_of(line)?;
        if !self.any_shared {
            self.shared = DirtyBits::new((self.set_mask as usize + 1) * self.ways as usize);
        }
        if self.shared.get(i) {
            return None;
        }
        self.shared.put(i, true);
        self.any_shared = true;
        // The known line loses its write bit; compared as `invalidate` does (a line 2^32
        // lines away is the same line to the wide tags).
        let k = &mut self.known[line as usize & (K - 1)];
        if (key(*k) >> 1) as u32 == line as u32 {
            *k &= !1;
        }
        Some(self.dirty.put(i, false))
    }

    /// The way of `line`'s set holding it, if any.
    fn way_of(&self, line: u64) -> Option<usize> {
        let (base, ways) = ((line & self.set_mask) as usize * self.ways as usize, self.ways as usize);
        let rel = (line >> self.set_bits).wrapping_sub(self.lo);
        match rel < NARROW_INVALID as u64 {
            true => find_tag(&self.narrow[base..base + ways], rel as u16),
            false => self.wide.get(base..base + ways).and_then(|set| find_tag(set, line as u32)),
        }
    }

    /// `invalidate` of a line out of the narrow tags' range: held only if the tags are
    /// wide (out of line, as in `look_up_far`).
    #[cold]
    #[inline(never)]
    fn invalidate_wide(&mut self, base: usize, line: u64) -> Option<usize> {
        let ways = self.ways as usize;
        self.wide.get_mut(base..base + ways).and_then(|set| drop_tag(set, line as u32, INVALID))
    }
}

/// What a look-up in a set's tags found: the way holding the tag, or the way drawn for it
/// and the tag it held.
enum Probe<T> {
    Hit(usize),
    Filled(usize, T),
}

/// Look `tag` up in a set's tags; on a miss, put it in a way drawn at random.
#[inline(always)]
fn probe<T: Copy + PartialEq>(set: &mut [T], tag: T, rng: &mut u32) -> Probe<T> {
    if let Some(way) = find_tag(set, tag) {
        return Probe::Hit(way);
    }
    let way = xorshift(rng) as usize & (set.len() - 1);
    Probe::Filled(way, std::mem::replace(&mut set[way], tag))
}

/// Empty the way of a set holding `tag`, if any; its index.
#[inline(always)]
fn drop_tag<T: Copy + PartialEq>(set: &mut [T], tag: T, invalid: T) -> Option<usize> {
    let way = find_tag(set, tag)?;
    set[way] = invalid;
    Some(way)
}

/// The way of a set holding `tag`, if any. Four ways (Rocket's L1s) are compared
/// unrolled: a miss, and a probe of another core's cache (which nearly always finds
/// nothing), compare every way.
#[inline(always)]
fn find_tag<T: Copy + PartialEq>(set: &[T], tag: T) -> Option<usize> {
    match <&[T; 4]>::try_from(set) {
        Ok(four) => four.iter().position(|&t| t == tag),
        Err(_) => set.iter().position(|&t| t == tag),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_to_branch_cleans_a_line_keeps_it_and_a_store_asks_again() {
        let mut c = L1::<KNOWN_DATA>::new(64, 4);
        assert_eq!(c.probe_to_b(5), None, "not held");
        c.access_rw(5, true);
        assert_eq!(c.probe_to_b(5), Some(true), "dirty: the data go with the answer");
        assert_eq!(c.holds(5), Some(false));
        assert_eq!(c.probe_to_b(5), None, "shared now: a read does not probe it again");
        assert!(c.access(5), "a load hits a shared line");
        assert_eq!(c.access_rw(5, true), Fill::Miss, "a store needs write permission");
        assert_eq!(c.access_rw(5, true), Fill::Hit);
        assert_eq!(c.probe_to_b(5), Some(true));
        c.invalidate(5);
        c.access_rw(5, false);
        assert_eq!(c.probe_to_b(5), Some(false), "a refill has write permission again");
    }

    #[test]
    fn l1_hits_after_fill_and_evicts_when_full() {
        let mut c = L1::<KNOWN_DATA>::new(64, 4);
        assert!(!c.access(5));
        assert!(c.access(5));
        for k in 1..=4 {
            c.access(5 + 64 * k);
        }
        let resident = (0..=4).filter(|k| c.access(5 + 64 * k)).count();
        assert!(resident <= 5);
        c.flush();
        assert!(!c.access(5));
    }

    #[test]
    fn l1_reports_a_dirty_victim_once() {
        // One set of one way: every new line evicts the last.
        let mut c = L1::<KNOWN_DATA>::new(1, 1);
        assert_eq!(c.access_rw(5, false), Fill::Miss);
        assert_eq!(c.access_rw(5, true), Fill::Hit, "a store hit dirties the line");
        assert_eq!(c.access_rw(6, false), Fill::Dirty(5));
        assert_eq!(c.access_rw(7, true), Fill::Miss, "6 was only read");
        c.invalidate(7);
        assert_eq!(c.access_rw(8, false), Fill::Miss, "a probed line leaves no write-back");
    }

    /// Known lines answer only what the tags would: random loads, stores, probes and
    /// flushes over more lines than a small cache holds, through `access_rw` and through
    /// the tags alone (`look_up`), give the same fills, victims and tags at every step.
    #[test]
    fn known_lines_answer_as_the_tags_would() {
        for (sets, ways) in [(4, 2), (64, 4), (1, 4), (32, 1)] {
            let (mut c, mut tags) = (L1::<KNOWN_DATA>::new(sets, ways), L1::<KNOWN_DATA>::new(sets, ways));
            let mut rng = 0x2545_f491u32;
            let mut known = 0;
            for step in 0..50_000 {
                let r = xorshift(&mut rng);
                let line = 0x200_0000 + (r % (3 * (sets * ways) as u32)) as u64;
                match r >> 28 {
                    0 => {
                        c.invalidate(line);
                        tags.invalidate(line);
                    }
                    1 if step % 1_000 == 0 => {
                        c.flush();
                        tags.flush();
                    }
                    op => {
                        let write = op & 1 == 1;
                        known += c.knows(line) as u32;
                        let want = tags.look_up(line, write);
                        assert_eq!(c.access_rw(line, write), want, "step {step}, line {line:#x}");
                    }
                }
                assert_eq!(
                    (&c.narrow, &c.dirty, c.rng),
                    (&tags.narrow, &tags.dirty, tags.rng),
                    "step {step}"
                );
            }
            assert!(known > 500, "{sets} x {ways}: the known lines answered {known} times");
        }
    }

    /// A line beyond `KNOWABLE_LINES` is never known (its slot would not hold it): it hits
    /// through the tags, and leaves its slot empty.
    #[test]
    fn a_line_beyond_the_known_slots_hits_through_the_tags() {
        let mut c = L1::<KNOWN_DATA>::new(64, 4);
        for line in [KNOWABLE_LINES, KNOWABLE_LINES + 1, (1 << 31) - 1, (1 << 40) + 2] {
            assert_eq!(c.access_rw(line, true), Fill::Miss);
            assert_eq!(c.access_rw(line, true), Fill::Hit, "line {line:#x}");
            assert!(!c.knows(line) && !c.knows_written(line), "line {line:#x}");
        }
        c.access_rw(KNOWABLE_LINES - 1, true);
        assert!(c.knows_written(KNOWABLE_LINES - 1));
    }

    /// Narrow and wide tags give the same fills, victims and known lines: random loads,
    /// stores, probes and flushes near the DRAM's base, and from halfway on now and then a
    /// line the narrow tags can't hold (`far`: none; the next block; the invalid tag's line
    /// in the block; a line below the block), which widens them.
    #[test]
    fn narrow_tags_answer_as_wide_ones() {
        for (sets, ways) in [(64, 4), (4, 2), (1, 1)] {
            let bits = (sets as u64).trailing_zeros();
            let far = |far: u32, line: u64| match far {
                0 => line,
                1 => line + (1 << (bits + 16)),
                2 => line | 0xffff << bits,
                _ => line - (1 << (bits + 16)),
            };
            for kind in 0..4 {
                let (mut narrow, mut wide) =
                    (L1::<KNOWN_DATA>::new(sets, ways), L1::<KNOWN_DATA>::new(sets, ways));
                wide.widen();
                let mut rng = 0x2545_f491u32;
                for step in 0..20_000 {
                    let r = xorshift(&mut rng);
                    let line = 0x200_0000 + (r % (3 * (sets * ways) as u32)) as u64;
                    let line = if step >= 10_000 && r.is_multiple_of(64) { far(kind, line) } else { line };
                    match r >> 28 {
                        0 => (narrow.invalidate(line), wide.invalidate(line)),
                        1 if step % 1_000 == 0 => (narrow.flush(), wide.flush()),
                        op => {
                            let want = wide.access_rw(line, op & 1 == 1);
                            assert_eq!(
                                narrow.access_rw(line, op & 1 == 1),
                                want,
                                "step {step}, line {line:#x}"
                            );
                            assert_eq!(narrow.knows(line), wide.knows(line));
                            ((), ())
                        }
                    };
                    assert_eq!((narrow.known, narrow.rng), (wide.known, wide.rng), "step {step}");
                }
                assert_eq!(narrow.narrow.is_empty(), kind > 0, "{sets} x {ways}, {kind}");
                assert_eq!(narrow.dirty, wide.dirty);
                narrow.widen();
                assert_eq!(narrow.wide, wide.wide, "{sets} x {ways}, {kind}");
            }
        }
    }
}
