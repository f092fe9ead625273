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
//! none. They are a ring (`VecDeque`): the oldest goes at nearly every new interval, and
//! most requests come after every interval kept, so the search starts at the back.

use std::collections::VecDeque;

/// Busy intervals kept.
const KEEP: usize = 32;

/// The busy cycles of one node's L2 data path.
#[derive(Default, Hash)]
pub struct Port {
    /// `[start, end)` cycles, sorted, disjoint and not touching.
    busy: VecDeque<(u64, u64)>,
}

impl Port {
    /// A DMA of `beats` beats ready at cycle `at`: the cycles its last beat passes later
    /// than on a free path.
    pub fn dma(&mut self, at: u64, beats: u64) -> u64 {
        let (mut t, mut left) = (at, beats);
        let mut taken = Vec::new();
        let mut i = self.first_ending_after(at);
        while left > 0 {
            let free_until = self.busy.get(i).map_or(u64::MAX, |&(s, _)| s);
            let take = left.min(free_until.saturating_sub(t));
            if take > 0 {
                taken.push((t, t + take));
                (t, left) = (t + take, left - take);
            }
            if left > 0 {
                t = t.max(self.busy[i].1);
                i += 1;
            }
        }
        for (s, e) in taken {
            self.add(s, e);
        }
        t - at - beats
    }

    /// Mark the free cycles `[s, e)` busy.
    fn add(&mut self, s: u64, e: u64) {
        let i = self.first_ending_after(s);
        self.insert(i, s, e);
    }

    /// The first interval that ends after cycle `at` (the number kept if none does).
    #[inline]
    fn first_ending_after(&self, at: u64) -> usize {
        match self.busy.back() {
            Some(&(_, e)) if e > at => self.busy.partition_point(|&(_, e)| e <= at),
            _ => self.busy.len(),
        }
    }

    /// A core's request of `beats` beats (one line, `line_beats` = `beats`) ready at cycle
    /// `at`: the cycles it waits for the request in service.
    pub fn line(&mut self, at: u64, beats: u64) -> u64 {
        let beats = beats.max(1);
        let i = self.first_ending_after(at);
        match self.busy.get(i) {
            Some(&(s, e)) if s <= at => (beats - (at - s) % beats).min(e - at),
            Some(&(s, _)) if s < at + beats => 0,
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
        let joins_prev = i > 0 && self.busy[i - 1].1 == s;
        let joins_next = i < self.busy.len() && self.busy[i].0 == e;
        match (joins_prev, joins_next) {
            (true, true) => self.busy[i - 1].1 = self.busy.remove(i).expect("joins the next").1,
            (true, false) => self.busy[i - 1].1 = e,
            (false, true) => self.busy[i].0 = s,
            (false, false) => self.insert_new(i, (s, e)),
        }
    }

    /// Insert a new interval at position `i`, keeping at most `KEEP`. When full, the
    /// oldest goes first (or the new one, if it would be the oldest), so that the ring
    /// never holds `KEEP + 1`: its room stays `KEEP` entries (512 bytes a node), where a
    /// `VecDeque` pushed past it doubles to 64.
    fn insert_new(&mut self, i: usize, interval: (u64, u64)) {
        if self.busy.len() < KEEP {
            self.busy.reserve_exact(KEEP - self.busy.len());
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

    #[test]
    fn dmas_take_the_free_cycles_in_turn() {
        let mut p = Port::default();
        assert_eq!(p.dma(100, 16), 0);
        assert_eq!(p.dma(104, 8), 12, "behind the first: 116..124, not 104..112");
        assert_eq!(p.dma(90, 8), 0, "90..98 is free");
        assert_eq!(p.dma(95, 8), 27, "2 beats at 98..100, 6 from 124: done at 130, not 103");
        assert_eq!(p.busy, vec![(90, 130)]);
    }

    #[test]
    fn a_line_waits_for_the_request_in_service_only() {
        let mut p = Port::default();
        p.dma(100, 64); // eight line requests, 100..164
        assert_eq!(p.line(100, 8), 8, "the DMA's first request goes first");
        assert_eq!(p.line(103, 8), 5);
        assert_eq!(p.line(160, 8), 4, "the last request ends at 164");
        assert_eq!(p.line(164, 8), 0);
        assert_eq!(p.dma(164, 8), 8, "the line took 164..172");
        assert_eq!(p.line(50, 8), 0);
        assert_eq!(p.line(95, 8), 0, "its beats would overlap the DMA: not taken");
        assert_eq!(p.dma(45, 8), 8, "5 beats, then 50..58 is the line's, then 3");
    }

    #[test]
    fn keeps_a_bounded_history() {
        let mut p = Port::default();
        for k in 0..100 {
            p.dma(k * 100, 8);
        }
        assert_eq!(p.busy.len(), KEEP);
        assert_eq!(p.busy.capacity(), KEEP, "the ring never grows past what it keeps");
        assert_eq!(p.dma(0, 8), 0, "older than every kept interval: no wait");
    }
}
