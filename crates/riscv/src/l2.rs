//! The node's shared L2: tags only, with a dirty bit per way (docs/models/node.md "Memory
//! system"). Replacement is pseudo-random over all the ways of the set, empty or not, as in
//! the L1s (`crate::cache`).
//!
//! Scale: 1,024 sets x 8 ways of u16 tags and their dirty bits are 17 KiB per node if
//! allocated at once, while a node of the datacenter-shaped sort holds far fewer lines. So
//! the tags start as a sorted list of the ways in use, 4 bytes each, and turn into the full
//! array once the list would hold a quarter of its ways. Both forms hold the same tags in
//! the same ways and draw the same victims, so the simulated results do not depend on the
//! form (a test replays random accesses through both).
//!
//! The list (`taglist::TagList`, the LLC's too) keeps its spare room as one gap, which
//! moves to where the fills are, so that a fill moves the entries since the last fill, not
//! the list's tail.

use crate::cache::{xorshift, DirtyBits, Fill};
use crate::taglist::TagList;

/// A list entry: `set << SET_SHIFT | way << WAY_SHIFT | dirty << 16 | tag`.
const SET_SHIFT: u32 = 20;
const WAY_SHIFT: u32 = 17;
const DIRTY: u32 = 1 << 16;

/// The ways in use, or all of them.
#[derive(Hash)]
enum Tags {
    /// List entries: a set's ways are adjacent, in way order.
    List(List),
    /// `sets * ways` tags (0 = invalid) and their dirty bits.
    Array(Box<[u16]>, DirtyBits),
}

/// The node's shared L2. Tags are u16: the line offset within DRAM divided by the number
/// of sets, plus one (0 = invalid).
#[derive(Hash)]
pub struct L2 {
    tags: Tags,
    sets: usize,
    ways: usize,
    rng: u32,
}

impl L2 {
    pub fn new(sets: usize, ways: usize) -> L2 {
        let (sets, ways) = (sets.next_power_of_two().max(1), ways.max(1));
        // The list form needs set and way to fit in the 15 bits above the dirty bit.
        let listable = sets <= 1 << (32 - SET_SHIFT) && ways <= 1 << (SET_SHIFT - WAY_SHIFT);
        let tags = if listable { Tags::List(List::default()) } else { array(sets * ways) };
        L2 { tags, sets, ways, rng: 0x2545_f491 }
    }

    /// Can `lines` DRAM lines be tagged in 16 bits with this geometry?
    pub fn fits(&self, lines: u64) -> bool {
        lines / (self.sets as u64) < u16::MAX as u64
    }

    /// Access DRAM-relative line number `rel`; fill on a miss. Returns true on a hit.
    pub fn access(&mut self, rel: u64) -> bool {
        self.access_rw(rel, false).hit()
    }

    /// Access DRAM-relative line number `rel`, a write if `write` (a device's write, or an
    /// L1's write-back: the line becomes dirty); fill on a miss, reporting a dirty victim.
    pub fn access_rw(&mut self, rel: u64, write: bool) -> Fill {
        let set = rel as usize & (self.sets - 1);
        let tag = self.tag(rel);
        let full = self.list_full();
        let (ways, rng) = (self.ways, &mut self.rng);
        let old = match &mut self.tags {
            Tags::List(list) => list_access(list, set, tag, write, full, || xorshift(rng) as usize % ways),
            Tags::Array(a, d) => Ok(array_access(a, d, set * ways, ways, tag, write, rng)),
        };
        let old = old.unwrap_or_else(|way| self.fill_new_array(set * ways + way, tag, write));
        match old {
            None => Fill::Hit,
            Some((old, true)) => Fill::Dirty((old as u64 - 1) * self.sets as u64 + set as u64),
            Some(_) => Fill::Miss,
        }
    }

    /// An L1's write-back of DRAM-relative line `rel`: dirty in the L2 if it holds it
    /// (the inclusive L2 always does; this model's L2 does not enforce inclusion, and a
    /// line it no longer holds goes on past it: false).
    pub fn write_back(&mut self, rel: u64) -> bool {
        let set = rel as usize & (self.sets - 1);
        let tag = self.tag(rel);
        match &mut self.tags {
            Tags::List(list) => list.find(list.set(set), tag).map(|i| list.v[i] |= DIRTY).is_some(),
            Tags::Array(a, d) => {
                let base = set * self.ways;
                let way = a[base..base + self.ways].iter().position(|&t| t == tag);
                way.map(|w| d.put(base + w, true)).is_some()
            }
        }
    }

    /// The tag of DRAM-relative line `rel`. The sets are a power of two: a shift, not a
    /// 64-bit division.
    #[inline]
    fn tag(&self, rel: u64) -> u16 {
        ((rel >> self.sets.trailing_zeros()) + 1) as u16
    }

    /// Entries at which the list turns into the array: a quarter of the ways.
    fn list_full(&self) -> usize {
        (self.sets * self.ways).div_ceil(4)
    }

    /// The list has reached a quarter of the ways with no room for a fill of empty way
    /// `i` (`set * ways + way`): turn it into the array and fill the way there. Returns the
    /// fill's `Evicted`: an empty way.
    #[cold]
    fn fill_new_array(&mut self, i: usize, tag: u16, write: bool) -> Evicted {
        let Tags::Array(mut a, mut d) = array(self.sets * self.ways) else { unreachable!() };
        let Tags::List(list) = &self.tags else { unreachable!() };
        for k in list.entries() {
            let i = (k >> SET_SHIFT) as usize * self.ways + List::way(k);
            a[i] = k as u16;
            d.put(i, k & DIRTY != 0);
        }
        (a[i], _) = (tag, d.put(i, write));
        self.tags = Tags::Array(a, d);
        Some((0, false))
    }

    /// Host bytes held by the tags and dirty bits (for memory accounting and tests).
    pub fn tag_bytes(&self) -> usize {
        match &self.tags {
            Tags::List(l) => l.bytes(),
            Tags::Array(a, d) => 2 * a.len() + d.bytes(),
        }
    }
}

fn array(n: usize) -> Tags {
    Tags::Array(vec![0; n].into_boxed_slice(), DirtyBits::new(n))
}

/// `None` on a hit; on a miss, the tag the drawn way held (0 if invalid) and whether it
/// was dirty.
type Evicted = Option<(u16, bool)>;

fn array_access(
    a: &mut [u16],
    d: &mut DirtyBits,
    base: usize,
    ways: usize,
    tag: u16,
    write: bool,
    rng: &mut u32,
) -> Evicted {
    let set = &mut a[base..base + ways];
    if let Some(way) = set.iter().position(|&t| t == tag) {
        if write {
            d.put(base + way, true);
        }
        return None;
    }
    let way = xorshift(rng) as usize % ways;
    let old = std::mem::replace(&mut set[way], tag);
    Some((old, d.put(base + way, write)))
}

/// The L2's list: entries `set << SET_SHIFT | way << WAY_SHIFT | dirty << 16 | tag`.
type List = TagList<SET_SHIFT, WAY_SHIFT>;

/// The list form of `array_access`; `draw` gives the way a miss fills. `Err(way)`: the
/// list holds `full` entries and has no room for a fill of empty `way`.
fn list_access(
    list: &mut List,
    set: usize,
    tag: u16,
    write: bool,
    full: usize,
    draw: impl FnOnce() -> usize,
) -> Result<Evicted, usize> {
    let range = list.set(set);
    if let Some(i) = list.find(range.clone(), tag) {
        list.v[i] |= if write { DIRTY } else { 0 };
        return Ok(None);
    }
    let way = draw();
    let new = (set as u32) << SET_SHIFT | (way as u32) << WAY_SHIFT | (write as u32) << 16 | tag as u32;
    match list.way_at(range.clone(), way) {
        Ok(i) => {
            let old = std::mem::replace(&mut list.v[i], new);
            Ok(Some((old as u16, old & DIRTY != 0)))
        }
        Err(at) => list.fill(set, way, range, at, new, full).then_some(Some((0, false))).ok_or(way),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l2_is_lazy_and_tags_fit() {
        let mut c = L2::new(1024, 8);
        assert_eq!(c.tag_bytes(), 0);
        assert!(!c.access(3));
        assert!(c.access(3));
        assert!(c.tag_bytes() > 0 && c.tag_bytes() < 1024);
        assert!(c.fits((256 << 20) / 64));
    }

    #[test]
    fn l2_names_its_dirty_victim_and_takes_write_backs() {
        let mut c = L2::new(4, 1);
        assert!(!c.write_back(3), "nothing held yet");
        assert_eq!(c.access_rw(3, false), Fill::Miss);
        assert!(c.write_back(3));
        // Line 7 maps to set 3 too: the dirty 3 goes.
        assert_eq!(c.access_rw(7, true), Fill::Dirty(3));
        assert_eq!(c.access_rw(11, false), Fill::Dirty(7), "a device write dirties it");
        assert_eq!(c.access_rw(3, false), Fill::Miss);
    }

    #[test]
    fn list_and_array_forms_agree() {
        // Random lines, reads, writes and write-backs into 64 sets of 4 ways, with
        // eviction, through a cache that starts as a list and one that is an array from the
        // start.
        let mut list = L2::new(64, 4);
        let mut arr = L2 { tags: array(256), ..L2::new(64, 4) };
        let mut x = 1u32;
        for n in 0..20000 {
            let (rel, op) = (xorshift(&mut x) as u64 % 1024, xorshift(&mut x) % 3);
            if op == 2 {
                assert_eq!(list.write_back(rel), arr.write_back(rel), "write-back {n}");
            } else {
                assert_eq!(list.access_rw(rel, op == 1), arr.access_rw(rel, op == 1), "access {n}");
            }
            if n == 10 {
                assert!(matches!(list.tags, Tags::List(_)), "a list while under a quarter");
            }
        }
        assert!(matches!(list.tags, Tags::Array(..)), "the list grew into the array");
        let (Tags::Array(a1, d1), Tags::Array(a2, d2)) = (&list.tags, &arr.tags) else { unreachable!() };
        assert!(a1 == a2 && d1 == d2, "same tags and dirty bits in the same ways");
    }

    #[test]
    fn the_list_replays_the_array_before_it_grows() {
        // Below a quarter of the ways the list form is kept; compare it step by step.
        let mut list = List::default();
        let (mut a, mut d) = (vec![0u16; 64 * 8], DirtyBits::new(64 * 8));
        let (mut r1, mut r2, mut x) = (9u32, 9u32, 3u32);
        for _ in 0..3000 {
            let (set, tag) = (xorshift(&mut x) as usize % 64, (xorshift(&mut x) % 20 + 1) as u16);
            let write = xorshift(&mut x) & 1 == 0;
            let got = list_access(&mut list, set, tag, write, 64 * 8, || xorshift(&mut r1) as usize % 8);
            let got = got.unwrap();
            assert_eq!(got, array_access(&mut a, &mut d, set * 8, 8, tag, write, &mut r2));
        }
        for k in list.entries() {
            let i = (k >> SET_SHIFT) as usize * 8 + (k >> WAY_SHIFT & 7) as usize;
            assert_eq!((a[i], d.get(i)), (k as u16, k & DIRTY != 0));
        }
        assert_eq!(list.entries().count(), a.iter().filter(|&&t| t != 0).count());
    }
}
