//! Pending events as FIFO lanes by delay, merged by a small heap.
//!
//! Most events are scheduled a fixed delay ahead of the one being handled (a serialization
//! time, a serialization plus a propagation, zero), and the time being handled never goes
//! back. So events pushed with the same delay arrive in increasing (time, sequence) order: a
//! FIFO holds them sorted at the cost of an append, and only the FIFOs' heads need a heap,
//! of a few dozen entries that stay in the first-level cache. A binary heap of every pending
//! event (thousands) cost a dozen dependent loads per pop, the simulator's largest cost.
//! The events live in the lanes themselves, next to their keys: taking one out touches one
//! place in memory.
//!
//! A lane belongs to one delay while it holds events. An event goes to its delay's lane,
//! found or claimed among two places the delay hashes to, if it sorts after that lane's last
//! one, and otherwise (both places taken by other delays, or a key earlier than the last
//! taken out, which a core running behind global time may schedule) to an ordinary heap,
//! `other`. The earliest event is the smaller of the lanes' earliest and `other`'s, so the
//! order is exactly (time, sequence) whatever lanes events go to.

use std::cmp::{Ordering, Reverse};
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::collections::VecDeque;

/// Lanes; a power of two (delays are hashed onto them).
const LANES: usize = 64;

#[derive(Debug)]
struct Lane<E> {
    /// The delay of its events (meaningful while it holds any).
    delay: u64,
    items: VecDeque<(u128, E)>,
}

/// An entry of a heap, ordered by its key alone (keys are unique).
#[derive(Debug)]
struct ByKey<T>(u128, T);

impl<T> PartialEq for ByKey<T> {
    fn eq(&self, o: &Self) -> bool {
        self.0 == o.0
    }
}
impl<T> Eq for ByKey<T> {}
impl<T> PartialOrd for ByKey<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for ByKey<T> {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.cmp(&o.0)
    }
}

#[derive(Debug)]
pub(crate) struct Lanes<E> {
    lanes: Vec<Lane<E>>,
    /// The first key of every non-empty lane, with the lane's index.
    heads: BinaryHeap<Reverse<ByKey<usize>>>,
    other: BinaryHeap<Reverse<ByKey<E>>>,
    /// Time of the last key taken out: delays are measured from it.
    base: u64,
    len: usize,
}

impl<E> Default for Lanes<E> {
    fn default() -> Self {
        let lanes = (0..LANES).map(|_| Lane { delay: 0, items: VecDeque::new() }).collect();
        Lanes { lanes, heads: BinaryHeap::new(), other: BinaryHeap::new(), base: 0, len: 0 }
    }
}

/// The time of a key (its high 64 bits).
fn time(k: u128) -> u64 {
    (k >> 64) as u64
}

/// The two places of a delay among the lanes (two multiplicative hashes).
fn places(delay: u64) -> [usize; 2] {
    let bits = 64 - LANES.trailing_zeros();
    let h = |m: u64| (delay.wrapping_mul(m) >> bits) as usize;
    [h(0x9e37_79b9_7f4a_7c15), h(0xc2b2_ae3d_27d4_eb4f)]
}

impl<E> Lanes<E> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn push(&mut self, k: u128, e: E) {
        self.len += 1;
        match self.lane_for(k) {
            Some(i) => self.append(i, k, e),
            None => self.other.push(Reverse(ByKey(k, e))),
        }
    }

    /// The lane `k` can be appended to: its delay's lane if `k` sorts after its last key, or
    /// a free lane, claimed for the delay.
    fn lane_for(&self, k: u128) -> Option<usize> {
        let delay = time(k).checked_sub(self.base)?;
        let [a, b] = places(delay);
        let (la, lb) = (&self.lanes[a], &self.lanes[b]);
        let owner = |l: &Lane<E>| l.delay == delay && !l.items.is_empty();
        match () {
            _ if owner(la) => la.items.back().is_some_and(|last| last.0 < k).then_some(a),
            _ if owner(lb) => lb.items.back().is_some_and(|last| last.0 < k).then_some(b),
            _ if la.items.is_empty() => Some(a),
            _ => lb.items.is_empty().then_some(b),
        }
    }

    fn append(&mut self, i: usize, k: u128, e: E) {
        let lane = &mut self.lanes[i];
        if lane.items.is_empty() {
            lane.delay = time(k) - self.base;
            self.heads.push(Reverse(ByKey(k, i)));
        }
        lane.items.push_back((k, e));
    }

    /// The smallest key.
    pub fn peek(&self) -> Option<u128> {
        let lane = self.heads.peek().map(|Reverse(h)| h.0);
        let other = self.other.peek().map(|Reverse(o)| o.0);
        match (lane, other) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The earliest event and its key.
    pub fn pop(&mut self) -> Option<(u128, E)> {
        let head = self.heads.peek().map(|Reverse(h)| (h.0, h.1));
        let from_other = match (head, self.other.peek()) {
            (None, None) => return None,
            (Some((k, _)), Some(Reverse(o))) => o.0 < k,
            (h, _) => h.is_none(),
        };
        let (k, e) = match head {
            Some((_, i)) if !from_other => self.advance(i),
            _ => self.other.pop().map(|Reverse(ByKey(k, e))| (k, e)).expect("peeked"),
        };
        self.len -= 1;
        self.base = time(k);
        Some((k, e))
    }

    /// Take lane `i`'s first event (the earliest of all) off and let its next one in.
    fn advance(&mut self, i: usize) -> (u128, E) {
        let first = self.lanes[i].items.pop_front().expect("lane is a head");
        let mut top = self.heads.peek_mut().expect("lane is a head");
        match self.lanes[i].items.front() {
            Some(next) => top.0 .0 = next.0,
            None => drop(PeekMut::pop(top)),
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;

    /// Events pushed at fixed and random delays after the last one taken out, and some
    /// before it, come out sorted, each with its own payload.
    #[test]
    fn pops_in_order() {
        let (mut q, mut rng, mut all, mut seq) = (Lanes::default(), Rng::new(3), Vec::new(), 0u128);
        let mut now = 0u64;
        for _ in 0..5000 {
            for _ in 0..rng.below(3) {
                let t = match rng.below(4) {
                    0 => now + 40,
                    1 => now + rng.below(1000),
                    2 => now.saturating_sub(rng.below(50)),
                    _ => now,
                };
                seq += 1;
                let k = (t as u128) << 64 | seq;
                q.push(k, !k);
                all.push(k);
            }
            all.sort_unstable_by(|a, b| b.cmp(a));
            let got = q.pop();
            assert_eq!(got, all.pop().map(|k| (k, !k)));
            now = got.map_or(now, |(k, _)| time(k));
        }
    }
}
