//! A cache's tags as a sorted list of the ways in use (the L2's, `l2.rs`, and the LLC's,
//! `llc.rs`): 4 bytes an entry, for caches a node fills only a little of, each turning
//! into its full array once the list would be a quarter of it. The list keeps its spare
//! room as one gap, which moves to where the fills are; its look-ups search by halves
//! (`lower_bound`).

use std::ops::Range;

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
    use crate::cache::xorshift;

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
}
