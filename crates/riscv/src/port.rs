//! The L2's one response path (docs/models/node.md
//! "Write-backs, the L2's one path and refresh"): the
//! prototype's L2 has one bank, whose `SourceD` takes one request at a time and moves one
//! 8-byte beat a cycle (sifive block-inclusivecache d3d95ec `SourceD.scala`: `busy` from
//! the request until its last beat, `s1_counter`). A device's DMA reads (Get) and writes
//! (PutFullData, popped from the put buffer beat by beat), a core's refill (GrantData)
//! and an L1's write-back (Release data) all pass through it.
//!
//! The path is a calendar of busy intervals, so that requests simulated out of time order
//! (the cores of a node run one after another, each ahead of global time; a DMA happens
//! at global time) each wait only for what actually overlaps them:
//! - a DMA takes the free cycles from its start on until it has all its beats (it is a
//!   train of line requests, and the L2 interleaves other masters' requests with them);
//! - a core's refill or write-back, which is one request of a line, waits if its first
//!   beat falls on a busy cycle until the request in service there ends (a DMA is a train
//!   of line requests, `line_beats` each, and the L2 takes the core's between two of them),
//!   and takes its beats only if they are free (otherwise the DMA already timed is not
//!   moved).
//!
//! Only the last `KEEP` intervals are kept: a request earlier than all of them waits for
//! none. They are a ring of `KEEP` slots (`Ring`): the oldest goes at nearly every new
//! interval, and most requests come after every interval kept, so the search starts at the
//! back and an insertion moves the few intervals on its shorter side.

use std::hash::{Hash, Hasher};

/// Busy intervals kept (a power of two: ring positions wrap with a mask).
const KEEP: usize = 32;

/// Line requests of a device's read (Gets) that the L2 holds ahead of a core's request
/// arriving while the read is in service: the device keeps its Gets coming (IceNIC's reader
/// issues one a cycle with 8 in flight: l-nic/icenet 512c87e `StreamReaderCore`, `canSend`,
/// `nMemXacts = 8`), the L2 lets A-channel requests take 5 MSHRs (sifive
/// block-inclusivecache d3d95ec `Parameters.scala`, `out_mshrs` = 5; `Scheduler.scala`,
/// `prioFilter`), each held until `SourceD`, one request at a time, takes it round robin
/// (`robin_filter`), and a core's request waits in `SinkA` while none is free
/// (`req_block`): 4 queued beside the one in service (docs/models/icenic.md, "The cost of
/// size"). A device's writes (Puts) go through the put buffer, which the same rule does
/// not hold up.
const QUEUED_GETS: u64 = 4;

/// Device reads whose spans a core's request may fall in (the most recent).
const READS: usize = 4;

/// The busy cycles of one node's L2 data path.
#[derive(Default, Hash)]
pub struct Port {
    /// `[start, end)` cycles, sorted, disjoint and not touching.
    busy: Ring,
    /// `[first beat, end)` of the last `READS` device reads, the oldest replaced first.
    reads: [(u64, u64); READS],
    next_read: usize,
}

/// Up to `KEEP` intervals in order, the first at slot `head`: 512 bytes a node, in the
/// node's memory state rather than behind a pointer (a node of the prototype's memory
/// system, the default, fills them; one of the simple system never does). A `VecDeque`
/// did the same with calls for each search, pop and insertion: 215 host instructions a
/// request in the 1,024-core sort (callgrind), now about half (CHANGELOG).
#[derive(Default)]
struct Ring {
    slots: [(u64, u64); KEEP],
    head: usize,
    len: usize,
}

impl Ring {
    /// Interval `i` (0 the oldest); `i < len`.
    #[inline(always)]
    fn get(&self, i: usize) -> (u64, u64) {
        self.slots[(self.head + i) & (KEEP - 1)]
    }

    #[inline(always)]
    fn set(&mut self, i: usize, interval: (u64, u64)) {
        self.slots[(self.head + i) & (KEEP - 1)] = interval;
    }

    /// The end of the newest interval, if any.
    #[inline(always)]
    fn last_end(&self) -> Option<u64> {
        (self.len > 0).then(|| self.get(self.len - 1).1)
    }

    /// The first of the intervals `..len` that ends after `at` (all of them end in order).
    fn first_ending_after(&self, at: u64) -> usize {
        if self.len == KEEP {
            return self.first_ending_after_full(at);
        }
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid).1 <= at {
                true => lo = mid + 1,
                false => hi = mid,
            }
        }
        lo
    }

    /// `first_ending_after` in a full ring, the common case (a node of the prototype's
    /// memory system fills it early): a search by halves of fixed steps, unrolled, a
    /// conditional move each (the search with branches took 12 host instructions a step;
    /// -6.8 M host instructions on the 1,024-core sort, CHANGELOG).
    #[inline(always)]
    fn first_ending_after_full(&self, at: u64) -> usize {
        let mut p = 0;
        let mut step = KEEP / 2;
        while step > 0 {
            // The answer is in [p, p + 2 * step].
            let before = self.get(p + step - 1).1 <= at;
            p = std::hint::select_unpredictable(before, p + step, p);
            step /= 2;
        }
        // The answer is in [p, p + 1], p < KEEP.
        p + (self.get(p).1 <= at) as usize
    }

    /// Put `interval` at position `i`, moving the intervals on the shorter side by one;
    /// `len < KEEP`.
    fn insert(&mut self, i: usize, interval: (u64, u64)) {
        if i < self.len - i {
            self.head = (self.head + KEEP - 1) & (KEEP - 1);
            (0..i).for_each(|k| self.set(k, self.get(k + 1)));
        } else {
            (i..self.len).rev().for_each(|k| self.set(k + 1, self.get(k)));
        }
        self.set(i, interval);
        self.len += 1;
    }

    /// Take out interval `i`.
    fn remove(&mut self, i: usize) -> (u64, u64) {
        let gone = self.get(i);
        (i..self.len - 1).for_each(|k| self.set(k, self.get(k + 1)));
        self.len -= 1;
        gone
    }

    /// The intervals, oldest first.
    fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (0..self.len).map(|i| self.get(i))
    }

    /// Drop the oldest interval; `len > 0`.
    fn pop_front(&mut self) {
        self.head = (self.head + 1) & (KEEP - 1);
        self.len -= 1;
    }
}

/// The intervals in order, as the timing digest compares them (`NodeMem::timing_digest`).
impl Hash for Ring {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.len.hash(h);
        self.iter().for_each(|interval| interval.hash(h));
    }
}

impl Port {
    /// A DMA of `beats` beats ready at cycle `at`, a device's read (`read`) or write: the
    /// cycles its last beat passes later than on a free path.
    pub fn dma(&mut self, at: u64, beats: u64, read: bool) -> u64 {
        let (mut t, mut left) = (at, beats);
        let mut taken = Vec::new();
        let mut i = self.first_ending_after(at);
        while left > 0 {
            let free_until = if i < self.busy.len { self.busy.get(i).0 } else { u64::MAX };
            let take = left.min(free_until.saturating_sub(t));
            if take > 0 {
                taken.push((t, t + take));
                (t, left) = (t + take, left - take);
            }
            if left > 0 {
                t = t.max(self.busy.get(i).1);
                i += 1;
            }
        }
        if let (true, Some(&(first, _))) = (read, taken.first()) {
            self.note_read(first, t);
        }
        for (s, e) in taken {
            self.add(s, e);
        }
        t - at - beats
    }

    /// Keep `[s, e)` as a device read's span, in place of the oldest kept.
    fn note_read(&mut self, s: u64, e: u64) {
        self.reads[self.next_read] = (s, e);
        self.next_read = (self.next_read + 1) % READS;
    }

    /// Whether cycle `at` falls in a kept device read's span.
    fn reading(&self, at: u64) -> bool {
        self.reads.iter().any(|&(s, e)| s <= at && at < e)
    }

    /// Mark the free cycles `[s, e)` busy.
    fn add(&mut self, s: u64, e: u64) {
        let i = self.first_ending_after(s);
        self.insert(i, s, e);
    }

    /// The first interval that ends after cycle `at` (the number kept if none does).
    #[inline]
    fn first_ending_after(&self, at: u64) -> usize {
        match self.busy.last_end() {
            Some(e) if e > at => self.busy.first_ending_after(at),
            _ => self.busy.len,
        }
    }

    /// A core's request of `beats` beats (one line, `line_beats` = `beats`) ready at cycle
    /// `at`: the cycles it waits for the request in service, and during a device's read for
    /// the read's line requests the L2 holds ahead of it (`QUEUED_GETS`).
    pub fn line(&mut self, at: u64, beats: u64) -> u64 {
        let beats = beats.max(1);
        let i = self.first_ending_after(at);
        match (i < self.busy.len).then(|| self.busy.get(i)) {
            Some((s, e)) if s <= at => {
                let queued = if self.reading(at) { QUEUED_GETS * beats } else { 0 };
                (beats - (at - s) % beats + queued).min(e - at)
            }
            Some((s, _)) if s < at + beats => 0,
            _ => {
                self.insert(i, at, at + beats);
                0
            }
        }
    }

    /// Put `[s, e)` at position `i` (between the intervals ending at or before `s` and
    /// those starting at or after `e`), joining touching neighbours; drop the oldest beyond
    /// `KEEP`.
    fn insert(&mut self, i: usize, s: u64, e: u64) {
        if s == e {
            return;
        }
        let b = &mut self.busy;
        let joins_prev = i > 0 && b.get(i - 1).1 == s;
        let joins_next = i < b.len && b.get(i).0 == e;
        match (joins_prev, joins_next) {
            (true, true) => {
                let end = b.remove(i).1;
                b.set(i - 1, (b.get(i - 1).0, end));
            }
            (true, false) => b.set(i - 1, (b.get(i - 1).0, e)),
            (false, true) => b.set(i, (s, b.get(i).1)),
            (false, false) => self.insert_new(i, (s, e)),
        }
    }

    /// Insert a new interval at position `i`, keeping at most `KEEP`. When full, the
    /// oldest goes first (or the new one, if it would be the oldest).
    fn insert_new(&mut self, i: usize, interval: (u64, u64)) {
        if self.busy.len < KEEP {
            return self.busy.insert(i, interval);
        }
        if i > 0 {
            self.busy.pop_front();
            self.busy.insert(i - 1, interval);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::xorshift;

    fn intervals(p: &Port) -> Vec<(u64, u64)> {
        p.busy.iter().collect()
    }

    #[test]
    fn the_ring_keeps_order_as_a_list_would() {
        // Random insertions, removals and drops of the oldest, through the ring and a list.
        let (mut ring, mut list) = (Ring::default(), Vec::new());
        let mut x = 5u32;
        for n in 0..20_000u64 {
            let r = xorshift(&mut x) as usize;
            match r % 4 {
                0 if !list.is_empty() => {
                    ring.pop_front();
                    list.remove(0);
                }
                1 if !list.is_empty() => {
                    let i = r / 4 % list.len();
                    assert_eq!(ring.remove(i), list.remove(i));
                }
                _ if list.len() < KEEP => {
                    let i = r / 4 % (list.len() + 1);
                    ring.insert(i, (n, n + 1));
                    list.insert(i, (n, n + 1));
                }
                _ => {}
            }
            assert_eq!(ring.iter().collect::<Vec<_>>(), list, "step {n}");
        }
    }

    #[test]
    fn the_ring_finds_the_first_interval_ending_after_a_cycle() {
        // Rings of every length, from several heads, of intervals ending in order.
        let mut x = 9u32;
        for len in 0..=KEEP {
            for head in [0, 5, KEEP - 1] {
                let mut ring = Ring { head, ..Ring::default() };
                let mut end = 0;
                for _ in 0..len {
                    end += 1 + xorshift(&mut x) as u64 % 4;
                    ring.insert(ring.len, (end - 1, end));
                }
                let ends: Vec<u64> = ring.iter().map(|(_, e)| e).collect();
                for at in 0..end + 2 {
                    assert_eq!(ring.first_ending_after(at), ends.partition_point(|&e| e <= at));
                }
            }
        }
    }

    #[test]
    fn dmas_take_the_free_cycles_in_turn() {
        let mut p = Port::default();
        assert_eq!(p.dma(100, 16, false), 0);
        assert_eq!(p.dma(104, 8, false), 12, "behind the first: 116..124, not 104..112");
        assert_eq!(p.dma(90, 8, false), 0, "90..98 is free");
        assert_eq!(p.dma(95, 8, false), 27, "2 beats at 98..100, 6 from 124: done at 130, not 103");
        assert_eq!(intervals(&p), vec![(90, 130)]);
    }

    #[test]
    fn a_line_waits_for_the_request_in_service_only() {
        let mut p = Port::default();
        p.dma(100, 64, false); // eight line requests (a write), 100..164
        assert_eq!(p.line(100, 8), 8, "the DMA's first request goes first");
        assert_eq!(p.line(103, 8), 5);
        assert_eq!(p.line(160, 8), 4, "the last request ends at 164");
        assert_eq!(p.line(164, 8), 0);
        assert_eq!(p.dma(164, 8, false), 8, "the line took 164..172");
        assert_eq!(p.line(50, 8), 0);
        assert_eq!(p.line(95, 8), 0, "its beats would overlap the DMA: not taken");
        assert_eq!(p.dma(45, 8, false), 8, "5 beats, then 50..58 is the line's, then 3");
    }

    #[test]
    fn during_a_read_a_line_waits_for_the_gets_queued_ahead_too() {
        let mut p = Port::default();
        p.dma(100, 128, true); // a 1 KiB read: sixteen line requests, 100..228
        assert_eq!(p.line(100, 8), 8 + 4 * 8, "the one in service and four queued");
        assert_eq!(p.line(103, 8), 5 + 32);
        assert_eq!(p.line(200, 8), 28, "only what is left of the read: it ends at 228");
        assert_eq!(p.line(228, 8), 0);
        p.dma(300, 64, false); // a write: its Puts do not hold the line up
        assert_eq!(p.line(303, 8), 5);
    }

    #[test]
    fn keeps_a_bounded_history() {
        let mut p = Port::default();
        for k in 0..100 {
            p.dma(k * 100, 8, false);
        }
        assert_eq!(p.busy.len, KEEP);
        assert_eq!(p.dma(0, 8, false), 0, "older than every kept interval: no wait");
    }
}
