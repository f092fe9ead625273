//! The last-level cache that FireSim's FASED memory model puts in front of DRAM in the
//! prototype's build (docs/models/node.md "Memory system"): set-associative, tags only.
//!
//! Replacement as in FASED's `LastLevelCache.scala`: a miss fills the lowest-numbered empty
//! way of its set (`PriorityEncoderOH(empty_ways)`), and only a full set evicts, a way drawn
//! at random (an LFSR16 there; a per-cache xorshift here, so runs are deterministic).
//!
//! Scale: 4 MiB of 128-byte blocks is 32,768 tags, 64 KiB per node if allocated at once,
//! while a node of the 65,536-core sort holds about 550 blocks. So the tags start as a
//! sorted list of the ways in use, 4 bytes each (`taglist::TagList`), and turn into the full
//! array once the list would be a quarter of its size. Nothing is ever invalidated, so the
//! ways in use of a set are always 0..n: both forms hold the same ways and draw the same
//! victims.
//!
//! Writes (the L2's write-backs) make a block dirty (`llc_w_mdaccess` sets `dirty`), and a
//! miss that evicts a dirty block names it, for its write to DRAM. The dirty blocks are a
//! sorted list of way indices (few blocks are ever dirty in a node).

use crate::cache::{xorshift, Fill};
use crate::taglist::TagList;

/// The ways in use, or all of them.
enum Tags {
    /// `set << 19 | way << 16 | tag`: a set's ways are adjacent, in way order.
    List(List),
    /// `sets * ways` tags, 0 = empty way.
    Array(Box<[u16]>),
}

/// A node's LLC. Tags are u16: block number divided by the number of sets, plus one.
pub struct Llc {
    tags: Tags,
    /// `set * ways + way` of each dirty block, sorted.
    dirty: Vec<u32>,
    sets: usize,
    ways: usize,
    block_shift: u32,
    rng: u32,
}

impl Llc {
    /// Sets are rounded up to a power of two, the block size too.
    pub fn new(sets: usize, ways: usize, block_bytes: u64) -> Llc {
        let (sets, ways) = (sets.next_power_of_two().max(1), ways.max(1));
        // The list form needs set and way to fit in 16 bits above the tag.
        let listable = sets <= 1 << 13 && ways <= 8;
        let tags =
            if listable { Tags::List(List::default()) } else { Tags::Array(vec![0; sets * ways].into()) };
        let block_shift = block_bytes.max(1).next_power_of_two().trailing_zeros();
        Llc { tags, dirty: Vec::new(), sets, ways, block_shift, rng: 0x6c07_8965 }
    }

    /// Can a DRAM of `bytes` be tagged in 16 bits with this geometry?
    pub fn fits(&self, bytes: u64) -> bool {
        (bytes >> self.block_shift) / (self.sets as u64) < u16::MAX as u64
    }

    /// Access the block holding DRAM-relative byte address `rel`; fill on a miss. Returns
    /// true on a hit.
    pub fn access(&mut self, rel: u64) -> bool {
        self.access_rw(rel, false).hit()
    }

    /// Access the block holding DRAM-relative byte address `rel`, a write if `write` (it
    /// becomes dirty); fill on a miss, naming a dirty victim by its DRAM-relative address.
    pub fn access_rw(&mut self, rel: u64, write: bool) -> Fill {
        let block = rel >> self.block_shift;
        // The sets are a power of two: a shift, not a 64-bit division.
        let tag = ((block >> self.sets.trailing_zeros()) + 1) as u16;
        let set = block as usize & (self.sets - 1);
        let full = self.list_full();
        let filled = match &mut self.tags {
            Tags::List(list) => list_access(list, set, tag, self.ways, full, &mut self.rng),
            Tags::Array(a) => Ok(array_access(&mut a[set * self.ways..][..self.ways], tag, &mut self.rng)),
        };
        let (hit, way, old) = filled.unwrap_or_else(|way| self.fill_new_array(set * self.ways + way, tag));
        if hit && !write {
            // A read hit leaves the dirty blocks as they are (`put_dirty`): no search.
            return Fill::Hit;
        }
        let was_dirty = self.put_dirty((set * self.ways + way) as u32, write, hit);
        match (hit, was_dirty) {
            (true, _) => Fill::Hit,
            (false, true) => {
                Fill::Dirty(((old as u64 - 1) * self.sets as u64 + set as u64) << self.block_shift)
            }
            (false, false) => Fill::Miss,
        }
    }

    /// Way `i` was accessed: a write dirties it, a fill of a read cleans it (a hit read
    /// leaves it). Returns whether it was dirty.
    fn put_dirty(&mut self, i: u32, write: bool, hit: bool) -> bool {
        let at = self.dirty.binary_search(&i);
        match (at, write) {
            (Ok(_), true) => true,
            (Ok(k), false) if !hit => {
                self.dirty.remove(k);
                true
            }
            (Ok(_), false) => true,
            (Err(k), true) => {
                self.dirty.insert(k, i);
                false
            }
            (Err(_), false) => false,
        }
    }

    /// Entries at which the list turns into the array: a quarter of the array's bytes.
    fn list_full(&self) -> usize {
        self.sets * self.ways * 2 / 4 / 4
    }

    /// The list has reached a quarter of the array's bytes with no room for a fill of
    /// empty way `i` (`set * ways + way`): turn it into the array and fill the way there.
    #[cold]
    fn fill_new_array(&mut self, i: usize, tag: u16) -> Access {
        let Tags::List(list) = &self.tags else { unreachable!() };
        let mut a = vec![0u16; self.sets * self.ways];
        for k in list.entries() {
            a[(k >> 19) as usize * self.ways + List::way(k)] = k as u16;
        }
        a[i] = tag;
        self.tags = Tags::Array(a.into());
        (false, i % self.ways, 0)
    }

    /// Host bytes held by the tags (for memory accounting and tests).
    pub fn tag_bytes(&self) -> usize {
        match &self.tags {
            Tags::List(l) => l.bytes(),
            Tags::Array(a) => 2 * a.len(),
        }
    }
}

/// The victim of a miss in a set with `used` of `ways` ways in use: the first empty way,
/// else one at random.
fn victim(used: usize, ways: usize, rng: &mut u32) -> usize {
    if used < ways {
        return used;
    }
    xorshift(rng) as usize % ways
}

/// (hit, the way hit or filled, the tag the way held before: 0 if empty).
type Access = (bool, usize, u16);

fn array_access(set: &mut [u16], tag: u16, rng: &mut u32) -> Access {
    if let Some(way) = set.iter().position(|&t| t == tag) {
        return (true, way, tag);
    }
    let used = set.iter().position(|&t| t == 0).unwrap_or(set.len());
    let way = victim(used, set.len(), rng);
    (false, way, std::mem::replace(&mut set[way], tag))
}

/// The LLC's list: entries `set << 19 | way << 16 | tag`.
type List = TagList<19, 16>;

/// The list form of `array_access`. `Err(way)`: the list holds `full` entries and has no
/// room for a fill of empty `way`.
fn list_access(
    list: &mut List,
    set: usize,
    tag: u16,
    ways: usize,
    full: usize,
    rng: &mut u32,
) -> Result<Access, usize> {
    let range = list.set(set);
    if let Some(i) = list.find(range.clone(), tag) {
        return Ok((true, List::way(list.v[i]), tag));
    }
    let used = range.len();
    let way = victim(used, ways, rng);
    let new = (set as u32) << 19 | (way as u32) << 16 | tag as u32;
    match list.way_at(range.clone(), way) {
        Ok(i) => Ok((false, way, std::mem::replace(&mut list.v[i], new) as u16)),
        Err(at) => list.fill(set, way, range, at, new, full).then_some((false, way, 0)).ok_or(way),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte address of block `b` of set `s` in a cache of `sets` 128-byte sets.
    fn addr(sets: u64, s: u64, b: u64) -> u64 {
        (b * sets + s) * 128
    }

    #[test]
    fn empty_until_touched_and_blocks_are_128_bytes() {
        let mut c = Llc::new(4096, 8, 128);
        assert_eq!(c.tag_bytes(), 0);
        assert!(!c.access(0));
        assert!(c.access(127), "same 128-byte block");
        assert!(!c.access(128), "next block");
        assert_eq!(c.tag_bytes(), 4 * crate::taglist::room(0), "one allocation");
        assert!(c.fits(256 << 20));
        assert!(!c.fits(64 << 30), "2^29 blocks over 4096 sets need 17-bit tags");
    }

    #[test]
    fn fills_empty_ways_before_evicting() {
        let mut c = Llc::new(4096, 8, 128);
        for b in 0..8 {
            assert!(!c.access(addr(4096, 5, b)));
        }
        // Eight blocks in eight ways: all still there, whatever the random source says.
        assert!((0..8).all(|b| c.access(addr(4096, 5, b))));
        assert!(!c.access(addr(4096, 5, 8)));
        let resident = (0..9).filter(|&b| c.access(addr(4096, 5, b))).count();
        assert!(resident <= 8, "a ninth block evicts one: {resident} resident");
    }

    #[test]
    fn sets_do_not_interfere_and_4_mib_fits() {
        let mut c = Llc::new(4096, 8, 128);
        for b in 0..8 {
            (0..4096).for_each(|s| assert!(!c.access(addr(4096, s, b))));
        }
        assert!(matches!(c.tags, Tags::Array(_)));
        assert!((0..8).all(|b| (0..4096).all(|s| c.access(addr(4096, s, b)))));
        assert_eq!(c.tag_bytes(), 64 << 10);
    }

    #[test]
    fn list_and_array_forms_agree() {
        // Random tags into 4 sets of 4 ways, with eviction, through both forms.
        let (mut list, mut array) = (List::default(), vec![0u16; 4 * 4]);
        let (mut r1, mut r2, mut x) = (7u32, 7u32, 1u32);
        for _ in 0..2000 {
            let (set, tag) = (xorshift(&mut x) as usize % 4, (xorshift(&mut x) % 12 + 1) as u16);
            let got = list_access(&mut list, set, tag, 4, 16, &mut r1).unwrap();
            assert_eq!(got, array_access(&mut array[set * 4..][..4], tag, &mut r2));
        }
        let from_list: Vec<u16> = list.entries().map(|k| k as u16).collect();
        assert_eq!(from_list, array, "same tags in the same ways");
    }

    #[test]
    fn a_list_agrees_with_the_array_until_it_becomes_one() {
        // Random blocks, reads and writes into 512 sets of 8 ways (the list turns into the
        // array at 512 entries), through an LLC that starts as a list and one that is an
        // array from the start: the fills move the list's gap back and forth.
        let mut list = Llc::new(512, 8, 128);
        let mut arr = Llc { tags: Tags::Array(vec![0; 4096].into()), ..Llc::new(512, 8, 128) };
        let mut x = 5u32;
        for n in 0..30000 {
            let (rel, write) = ((xorshift(&mut x) % 8192) as u64 * 128, xorshift(&mut x) & 3 == 0);
            assert_eq!(list.access_rw(rel, write), arr.access_rw(rel, write), "access {n}");
            if n == 300 {
                assert!(matches!(list.tags, Tags::List(_)), "a list while under a quarter");
            }
        }
        let (Tags::Array(a1), Tags::Array(a2)) = (&list.tags, &arr.tags) else { panic!("not grown") };
        assert!(a1 == a2 && list.dirty == arr.dirty, "same tags and dirty blocks in the same ways");
    }

    #[test]
    fn a_written_block_is_written_back_when_evicted() {
        // One set of one way: each new block evicts the last.
        let mut c = Llc::new(1, 1, 128);
        assert_eq!(c.access_rw(0, true), Fill::Miss, "a write allocates");
        assert_eq!(c.access_rw(64, false), Fill::Hit, "same block, still dirty");
        assert_eq!(c.access_rw(128, false), Fill::Dirty(0));
        assert_eq!(c.access_rw(256, false), Fill::Miss, "the refill was clean");
        let mut c = Llc::new(4096, 1, 128);
        c.access_rw(addr(4096, 9, 3), true);
        assert_eq!(c.access_rw(addr(4096, 9, 5), false), Fill::Dirty(addr(4096, 9, 3)));
    }
}
