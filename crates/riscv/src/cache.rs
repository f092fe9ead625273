//! Tag-only cache models. Only hit/miss matters for timing, so no data is stored; a dirty
//! bit per way says whether evicting the line writes it back (docs/models/node.md
//! "Write-backs, the L2's one path and refresh").
//!
//! Replacement is pseudo-random, as in Rocket's L1 caches (rocket-chip
//! `DCacheParams.replacementPolicy = "random"`), which also keeps the state to the tags
//! alone. The random source is a per-cache xorshift, so runs are deterministic.

/// Invalid L1 tag (no DRAM line number reaches it).
const INVALID: u32 = u32::MAX;

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
    #[cfg(test)]
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

/// Slots of `L1::known` (a power of two; *estimate*: a sort's inner loops and the functions
/// they call span a few dozen code lines, and a run of a core touches a few dozen data lines).
pub(crate) const KNOWN: usize = 16;

/// A private L1 cache: set-associative, tags are full line numbers (`addr / line`).
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
pub struct L1 {
    tags: Box<[u32]>,
    set_mask: u64,
    ways: usize,
    dirty: DirtyBits,
    rng: u32,
    known: [u64; KNOWN],
}

/// An empty `known` slot: a line number is an address over the line size, below 2^63 for
/// lines of 2 bytes or more, so `line << 1 | dirty` is never this.
const UNKNOWN: u64 = u64::MAX;

impl L1 {
    /// Sets and ways are rounded up to powers of two (Rocket's geometries are).
    pub fn new(sets: usize, ways: usize) -> L1 {
        let sets = sets.next_power_of_two().max(1);
        let ways = ways.next_power_of_two().max(1);
        L1 {
            known: [UNKNOWN; KNOWN],
            tags: vec![INVALID; sets * ways].into_boxed_slice(),
            dirty: DirtyBits::new(sets * ways),
            set_mask: sets as u64 - 1,
            ways,
            rng: 0x9e37_79b9,
        }
    }

    /// Is line number `line` known to be in the cache (`known`)? Then `access(line)` would
    /// hit and change nothing.
    #[inline(always)]
    pub fn knows(&self, line: u64) -> bool {
        self.known[line as usize & (KNOWN - 1)] >> 1 == line
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
        let k = self.known[line as usize & (KNOWN - 1)];
        if k == line << 1 | 1 || (!write && k >> 1 == line) {
            return Fill::Hit;
        }
        self.look_up(line, write)
    }

    /// `access_rw` through the tags; the line becomes known.
    #[inline(always)]
    fn look_up(&mut self, line: u64, write: bool) -> Fill {
        let base = (line & self.set_mask) as usize * self.ways;
        let Some(set) = self.tags.get_mut(base..base + self.ways) else {
            return Fill::Miss;
        };
        if let Some(way) = set.iter().position(|&t| t == line as u32) {
            if write {
                self.dirty.put(base + way, true);
            }
            self.known[line as usize & (KNOWN - 1)] = line << 1 | write as u64;
            return Fill::Hit;
        }
        let way = xorshift(&mut self.rng) as usize & (set.len() - 1);
        let old = std::mem::replace(&mut set[way], line as u32);
        let was_dirty = self.dirty.put(base + way, write);
        self.forget_set(line);
        self.known[line as usize & (KNOWN - 1)] = line << 1 | write as u64;
        match was_dirty {
            true => Fill::Dirty(old as u64),
            false => Fill::Miss,
        }
    }

    /// A fill into `line`'s set may have evicted any line of it: those are no longer known.
    /// With at least `KNOWN` sets only `line`'s own slot can hold one, and the caller
    /// overwrites it.
    #[inline(always)]
    fn forget_set(&mut self, line: u64) {
        if self.set_mask as usize >= KNOWN - 1 {
            return;
        }
        for k in &mut self.known {
            if (*k >> 1 ^ line) & self.set_mask == 0 {
                *k = UNKNOWN;
            }
        }
    }

    pub fn flush(&mut self) {
        self.known = [UNKNOWN; KNOWN];
        self.tags.fill(INVALID);
        self.dirty.0.fill(0);
    }

    /// Drop line number `line` if held (a coherence probe: another agent wrote it; a dirty
    /// copy's data goes to the L2 with the probe's answer, at the prober's cost). A line
    /// is held in one way at most: `access` fills only on a miss.
    #[inline]
    pub fn invalidate(&mut self, line: u64) {
        let base = (line & self.set_mask) as usize * self.ways;
        // In bounds: base + ways <= sets * ways, as the set index is masked.
        let set = &mut self.tags[base..base + self.ways];
        if let Some(way) = set.iter().position(|&t| t == line as u32) {
            set[way] = INVALID;
            self.dirty.put(base + way, false);
            // Only a held line can be known. As the tags compare, a line 2^32 lines away
            // is the same line.
            let k = &mut self.known[line as usize & (KNOWN - 1)];
            if (*k >> 1) as u32 == line as u32 {
                *k = UNKNOWN;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l1_hits_after_fill_and_evicts_when_full() {
        let mut c = L1::new(64, 4);
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
        let mut c = L1::new(1, 1);
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
            let (mut c, mut tags) = (L1::new(sets, ways), L1::new(sets, ways));
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
                assert_eq!((&c.tags, &c.dirty, c.rng), (&tags.tags, &tags.dirty, tags.rng), "step {step}");
            }
            assert!(known > 500, "{sets} x {ways}: the known lines answered {known} times");
        }
    }
}
