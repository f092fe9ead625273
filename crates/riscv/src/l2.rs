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
//! The list (`TagList`, the LLC's too) keeps its spare room as one gap, which moves to
//! where the fills are, so that a fill moves the entries since the last fill, not the
//! list's tail.

use crate::cache::{xorshift, DirtyBits, Fill};
use std::ops::Range;

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

/// Entries for a tag list that outgrew `c`: twice as many up to `QUARTERS_FROM`, then the
/// next of 4, 5, 6 or 7 times a power of two. In 4-byte entries these are the allocator's
/// size classes (mimalloc's bins are four to each doubling), so a large list holds at most
/// a quarter more than it uses where doubling held up to twice as much (the L2's and the
/// LLC's, `llc.rs`); a small one doubles, as each step is a copy.
pub(crate) fn room(c: usize) -> usize {
    if c < QUARTERS_FROM {
        return (2 * c).clamp(16, QUARTERS_FROM);
    }
    let shift = (usize::BITS - c.leading_zeros()) - 3;
    // c >> shift is 4..=7: its next quarter-step, which may be the next power of two.
    ((c >> shift) + 1) << shift
}

/// Entries from which a tag list grows by quarters (2 KiB).
const QUARTERS_FROM: usize = 512;

/// The first entry of sorted `list` not below `key`: `list.partition_point(|&k| k < key)`,
/// for the L2's and the LLC's tag lists (up to 4,096 entries). The std search halves a
/// range whose size it keeps, 8 host instructions a step; this one (Shar's) first places
/// the answer within `[p, p + m]`, `m` the largest power of two not above the length, then
/// halves `m`: a step is a compare, a conditional move, a shift and the loop's branch (5
/// host instructions; about 40 M fewer in all on the 1,024-core sort, CHANGELOG). It reads
/// one or two entries more than the std search, the same ones at every look-up first.
#[inline]
pub(crate) fn lower_bound(list: &[u32], key: u32) -> usize {
    let n = list.len();
    if n == 0 {
        return 0;
    }
    let mut step = 1 << n.ilog2();
    // The answer is in [0, step] or, past entry step - 1, in [n - step, n] (n - step < step).
    let mut p = if list[step - 1] < key { n - step } else { 0 };
    step /= 2;
    while step > 0 {
        // The answer is in [p, p + 2 * step], p + 2 * step <= n.
        // SAFETY: p + step - 1 < p + 2 * step <= n, the length.
        let below = unsafe { *list.get_unchecked(p + step - 1) } < key;
        // A conditional move: a branch here would go either way about as often.
        p = std::hint::select_unpredictable(below, p + step, p);
        step /= 2;
    }
    // The answer is in [p, p + 1] and p + 1 <= n: entry p exists.
    p + (list[p] < key) as usize
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

/// Tags of the ways in use (the L2's, the LLC's), entries `set << SET_SHIFT | way <<
/// WAY_SHIFT | tag` (the bits between are the user's), sorted by set, a set's in way
/// order. The list's spare room is one gap between two sets, which a fill of an empty way
/// first moves to the end of its set: a fill moves the entries between the last fill and
/// this one, where a list of only entries moved its tail. A node's fills come mostly in
/// runs of neighbouring lines, so in the 1,024-core sort a fill moved 70 entries where it
/// moved 448 (the LLC's, 47 where 195). The list is as long as its capacity, which grows
/// as before (`room`), the new room going to the gap.
#[derive(Default)]
pub(crate) struct TagList<const SET_SHIFT: u32, const WAY_SHIFT: u32> {
    /// Entries, with the gap: `v.len()` is the capacity.
    pub(crate) v: Vec<u32>,
    /// The gap: slots `gap..gap + room`.
    gap: u32,
    room: u32,
}

impl<const SET_SHIFT: u32, const WAY_SHIFT: u32> TagList<SET_SHIFT, WAY_SHIFT> {
    /// The slots of `set`'s entries, all on one side of the gap (where they would go if
    /// none). Inline: a call for each look-up was about 10 host instructions of its 100.
    #[inline(always)]
    pub(crate) fn set(&self, set: usize) -> Range<usize> {
        let (v, key, same) = (&self.v, (set as u32) << SET_SHIFT, |k: &&u32| **k >> SET_SHIFT == set as u32);
        let (gap, after) = (self.gap as usize, (self.gap + self.room) as usize);
        // Before the gap if an entry there is not below the key; then, as look-ups
        // cluster around the last fill, which left the gap after its set, the sets at the
        // gap's edges before a search.
        let start = if gap > 0 && v[gap - 1] >= key {
            if same(&&v[gap - 1]) {
                gap - v[..gap].iter().rev().take_while(same).count()
            } else {
                lower_bound(&v[..gap], key)
            }
        } else if after == v.len() || v[after] >= key {
            after
        } else {
            after + lower_bound(&v[after..], key)
        };
        let side_end = if start < gap { gap } else { v.len() };
        start..start + v[start..side_end].iter().take_while(same).count()
    }

    /// The slot in `range` holding `tag`.
    #[inline(always)]
    pub(crate) fn find(&self, range: Range<usize>, tag: u16) -> Option<usize> {
        range.into_iter().find(|&i| self.v[i] as u16 == tag)
    }

    /// The way of entry `k`.
    pub(crate) fn way(k: u32) -> usize {
        (k >> WAY_SHIFT & 7) as usize
    }

    /// `Ok`: the slot of `way` among a set's slots `range`; `Err`: where it would go, the
    /// slot of the set's first way above it or the range's end.
    pub(crate) fn way_at(&self, range: Range<usize>, way: usize) -> Result<usize, usize> {
        let end = range.end;
        let mut later = range.skip_while(|&i| Self::way(self.v[i]) < way);
        later.next().map_or(Err(end), |i| if Self::way(self.v[i]) == way { Ok(i) } else { Err(i) })
    }

    /// Put entry `new` of `set` and `way` at slot `at` of the set's slots `range` (from
    /// `way_at`), growing the list if it is full and holds fewer than `full` entries (the
    /// next `room` up, at most `full`: a node of the datacenter-shaped sort holds 1,000 to
    /// 1,700 lines at its peak; with doubling all the way, the L2's list took 8 KiB from
    /// its 1,025th entry, and then growing by a quarter of `full` at a time 6 KiB from its
    /// 1,025th). False if it holds `full`.
    pub(crate) fn fill(
        &mut self,
        set: usize,
        way: usize,
        range: Range<usize>,
        at: usize,
        new: u32,
        full: usize,
    ) -> bool {
        let (mut end, mut at) = (range.end, at);
        if self.room == 0 {
            if self.v.len() >= full {
                return false;
            }
            self.grow(room(self.v.len()).min(full));
            let range = self.set(set);
            (end, at) = (range.end, self.way_at(range, way).unwrap_err());
        }
        self.put(end, at, new);
        true
    }

    /// Put `new` at slot `at` of a set that ends at slot `end`: move the gap there, then
    /// the set's slots from `at` into it.
    fn put(&mut self, end: usize, at: usize, new: u32) {
        let (gap, room) = (self.gap as usize, self.room as usize);
        // Each move only if there is one: memmove is a call, 20 or so host instructions
        // even for nothing, and most fills follow the last one.
        let (end, at) = if end <= gap {
            if end < gap {
                self.v.copy_within(end..gap, end + room);
            }
            (end, at)
        } else {
            if end > gap + room {
                self.v.copy_within(gap + room..end, gap);
            }
            (end - room, at - room)
        };
        if at < end {
            self.v.copy_within(at..end, at + 1);
        }
        self.v[at] = new;
        (self.gap, self.room) = (end as u32 + 1, room as u32 - 1);
    }

    /// Make the list `len` slots long, the new room the gap (the list is full).
    #[cold]
    fn grow(&mut self, len: usize) {
        let (n, gap) = (self.v.len(), self.gap as usize);
        self.v.reserve_exact(len - n);
        self.v.resize(len, 0);
        self.v.copy_within(gap..n, gap + len - n);
        self.room = (len - n) as u32;
    }

    /// The entries, in order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = u32> + '_ {
        let (gap, after) = (self.gap as usize, (self.gap + self.room) as usize);
        self.v[..gap].iter().chain(&self.v[after..]).copied()
    }

    /// Host bytes held.
    pub(crate) fn bytes(&self) -> usize {
        4 * self.v.capacity()
    }
}

/// The entries only: where the gap is is no part of the state.
impl<const S: u32, const W: u32> std::hash::Hash for TagList<S, W> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.entries().for_each(|k| k.hash(h));
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

    /// The lists double up to 512 entries, then grow by a quarter of a power of two at a
    /// time, along the allocator's size classes.
    #[test]
    fn lists_grow_by_quarters() {
        let mut steps = vec![0];
        while *steps.last().unwrap() < 2048 {
            steps.push(room(*steps.last().unwrap()));
        }
        assert_eq!(steps[..9], [0, 16, 32, 64, 128, 256, 512, 640, 768]);
        assert_eq!(steps[steps.len() - 5..], [1024, 1280, 1536, 1792, 2048]);
    }

    #[test]
    fn lower_bound_is_partition_point() {
        let mut x = 11u32;
        for n in 0..300 {
            let mut list: Vec<u32> = (0..n).map(|_| xorshift(&mut x) % 64).collect();
            list.sort_unstable();
            for key in 0..66 {
                assert_eq!(lower_bound(&list, key), list.partition_point(|&k| k < key), "{list:?} {key}");
            }
        }
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
