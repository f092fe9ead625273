//! Tag-only cache models. Only hit/miss matters for timing, so no data is stored.
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

/// A private L1 cache: set-associative, tags are full line numbers (`addr / line`).
#[derive(Hash)]
pub struct L1 {
    tags: Box<[u32]>,
    set_mask: u64,
    ways: usize,
    rng: u32,
}

impl L1 {
    /// Sets and ways are rounded up to powers of two (Rocket's geometries are).
    pub fn new(sets: usize, ways: usize) -> L1 {
        let sets = sets.next_power_of_two().max(1);
        let ways = ways.next_power_of_two().max(1);
        L1 {
            tags: vec![INVALID; sets * ways].into_boxed_slice(),
            set_mask: sets as u64 - 1,
            ways,
            rng: 0x9e37_79b9,
        }
    }

    /// Access line number `line`; fill on a miss. Returns true on a hit.
    #[inline(always)]
    pub fn access(&mut self, line: u64) -> bool {
        let base = (line & self.set_mask) as usize * self.ways;
        let Some(set) = self.tags.get_mut(base..base + self.ways) else {
            return false;
        };
        if set.contains(&(line as u32)) {
            return true;
        }
        let victim = xorshift(&mut self.rng) as usize & (set.len() - 1);
        set[victim] = line as u32;
        false
    }

    pub fn flush(&mut self) {
        self.tags.fill(INVALID);
    }

    /// Drop line number `line` if held (a coherence probe: another agent wrote it). A line
    /// is held in one way at most: `access` fills only on a miss.
    #[inline]
    pub fn invalidate(&mut self, line: u64) {
        let base = (line & self.set_mask) as usize * self.ways;
        // In bounds: base + ways <= sets * ways, as the set index is masked.
        for t in &mut self.tags[base..base + self.ways] {
            if *t == line as u32 {
                *t = INVALID;
                return;
            }
        }
    }
}

/// The node's shared L2: tags are u16 (line offset within DRAM divided by the number of
/// sets, plus one; 0 = invalid), allocated on first use so idle nodes cost nothing.
#[derive(Hash)]
pub struct L2 {
    tags: Vec<u16>,
    sets: usize,
    ways: usize,
    rng: u32,
}

impl L2 {
    pub fn new(sets: usize, ways: usize) -> L2 {
        L2 { tags: Vec::new(), sets: sets.next_power_of_two().max(1), ways: ways.max(1), rng: 0x2545_f491 }
    }

    /// Can `lines` DRAM lines be tagged in 16 bits with this geometry?
    pub fn fits(&self, lines: u64) -> bool {
        lines / (self.sets as u64) < u16::MAX as u64
    }

    /// Access DRAM-relative line number `rel`; fill on a miss. Returns true on a hit.
    pub fn access(&mut self, rel: u64) -> bool {
        if self.tags.is_empty() {
            self.tags = vec![0; self.sets * self.ways];
        }
        let base = (rel as usize & (self.sets - 1)) * self.ways;
        let tag = (rel / self.sets as u64 + 1) as u16;
        let set = &mut self.tags[base..base + self.ways];
        if set.contains(&tag) {
            return true;
        }
        let victim = xorshift(&mut self.rng) as usize % self.ways;
        set[victim] = tag;
        false
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
    fn l2_is_lazy_and_tags_fit() {
        let mut c = L2::new(1024, 8);
        assert!(c.tags.is_empty());
        assert!(!c.access(3));
        assert!(c.access(3));
        assert!(c.fits((256 << 20) / 64));
    }
}
