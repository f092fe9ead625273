//! Pending events, by key, as FIFO lanes by delay, merged by a small heap.
//!
//! Most events are scheduled a fixed delay ahead of the one being handled (a serialization
//! time, a serialization plus a propagation, zero), and the time being handled never goes
//! back. So keys pushed with the same delay arrive in increasing (time, sequence) order: a
//! FIFO holds them sorted at the cost of an append, and only the FIFOs' heads need a heap,
//! of a few dozen entries that stay in the first-level cache. A binary heap of every pending
//! key (thousands) cost a dozen dependent loads per pop, the simulator's largest cost.
//!
//! A lane belongs to one delay while it holds keys. A key goes to its delay's lane, found or
//! claimed among two places the delay hashes to, if it sorts after that lane's last key, and
//! otherwise (both places taken by other delays, or a key earlier than the last taken out,
//! which a core running behind global time may schedule) to an ordinary heap, `other`. The
//! earliest key is the smallest of the lanes' earliest, `other`'s and `aside`'s, so the order
//! is exactly (time, sequence) whatever place keys go to. Keys whose delays no other shares
//! (the packets let in from other partitions, a window's worth at once) come as a batch
//! (`push_aside`), leaving the lanes to the delays that recur: they are sorted into `aside`,
//! one vector, where each cost a push and a pop of `other`'s heap (48-byte entries, a heap of
//! hundreds). Each event rides beside its key, in its lane, in `other` or in `aside`.
//!
//! A lane that empties keeps room for `KEEP` keys; at each batch set aside (a window of a
//! partitioned run) a lane, `aside` or `other` holding less than a quarter of its room
//! gives most of it back (`tidy`), so that a burst's room does not stay with a queue that
//! never empties.

use std::cmp::Reverse;
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::collections::VecDeque;

/// Lanes; a power of two (delays are hashed onto them).
const LANES: usize = 64;

#[derive(Debug)]
struct Lane<E> {
    /// The delay of its keys (meaningful while it holds any).
    delay: u64,
    /// Keys with the events they order: an event moves once into its lane and once out,
    /// where a slab beside the keys cost a look-up, a free list and a cache miss per event.
    keys: VecDeque<(u128, E)>,
}

impl<E> Default for Lane<E> {
    fn default() -> Self {
        Lane { delay: 0, keys: VecDeque::new() }
    }
}

/// A key and its event in `other`: ordered by the key alone, smallest first.
#[derive(Debug)]
struct Other<E>(u128, E);

impl<E> PartialEq for Other<E> {
    fn eq(&self, o: &Other<E>) -> bool {
        self.0 == o.0
    }
}
impl<E> Eq for Other<E> {}
impl<E> PartialOrd for Other<E> {
    fn partial_cmp(&self, o: &Other<E>) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Other<E> {
    fn cmp(&self, o: &Other<E>) -> std::cmp::Ordering {
        o.0.cmp(&self.0)
    }
}

/// A lane's first key; ordered by the key alone (keys are unique).
#[derive(Debug, Clone, Copy)]
struct Head {
    key: u128,
    lane: usize,
}

impl PartialEq for Head {
    fn eq(&self, o: &Head) -> bool {
        self.key == o.key
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, o: &Head) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Head {
    fn cmp(&self, o: &Head) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

#[derive(Debug)]
pub(crate) struct Lanes<E> {
    /// An array, not a vector: `places` gives indices below `LANES`, so that indexing it
    /// needs no bounds check (two at every push).
    lanes: Box<[Lane<E>; LANES]>,
    /// The first key of every non-empty lane.
    heads: BinaryHeap<Reverse<Head>>,
    other: BinaryHeap<Other<E>>,
    /// The keys pushed aside (`push_aside`), sorted latest first, so that the earliest is
    /// popped off the end.
    aside: Vec<(u128, E)>,
    /// Time of the last key taken out: delays are measured from it.
    base: u64,
    len: usize,
    /// The smallest key while any is held (else meaningless): a cluster's event loop asks
    /// for it before every event (the next time of both its queues) and the pop again,
    /// which then read one field instead of comparing two heaps' tops.
    min: u128,
    /// The smaller of `other`'s and `aside`'s first keys (`u128::MAX` if both are empty):
    /// after most pops (from a lane), the new smallest key is this or the lanes' first.
    rest: u128,
}

impl<E> Default for Lanes<E> {
    fn default() -> Self {
        let lanes = Box::new(std::array::from_fn(|_| Lane::default()));
        let (heads, other, aside) = (BinaryHeap::new(), BinaryHeap::new(), Vec::new());
        Lanes { lanes, heads, other, aside, base: 0, len: 0, min: 0, rest: u128::MAX }
    }
}

/// Entries an emptied lane keeps room for. A lane's room is the most it ever held, and its
/// entries carry events (48 bytes in a cluster's queue): a burst (every core's start, a
/// sort's shuffle) would otherwise stay reserved in every lane it passed through, for the
/// rest of the run (measured: 7% more memory on a 4,096-core sort). 8 rather than 16: the
/// 16,384-core sort's resident peak 0.8-0.9% lower, host instructions the same within
/// 0.01% (CHANGELOG, 2026-12-05).
const KEEP: usize = 8;

/// Give back an emptied lane's room beyond `KEEP`.
fn shrink<T>(keys: &mut VecDeque<T>) {
    if keys.capacity() > KEEP {
        keys.shrink_to(KEEP);
    }
}

/// Does a queue holding `len` entries in room for `cap` hold less than a quarter of it?
/// A lane that never empties, `aside` between windows and `other` would otherwise keep
/// their busiest moment's room while they drain: at the heap's peak of the 16,384-core
/// sort the queues held 7.6 KiB a node of room for 1.7 KiB of entries.
fn loose(len: usize, cap: usize) -> bool {
    cap > KEEP && len < cap / 4
}

/// The room a loose queue keeps: twice what it holds (so that it does not grow again
/// soon), at least `KEEP`.
fn tight(len: usize) -> usize {
    KEEP.max(2 * len)
}

/// Give back an emptied vector's room beyond twice `next` entries (and `KEEP`), once that
/// is under half its room: a burst's room goes, a steady load keeps its own.
fn shrink_to_twice<T>(v: &mut Vec<T>, next: usize) {
    let keep = KEEP.max(2 * next);
    if v.capacity() > 2 * keep {
        v.shrink_to(keep);
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
        self.count_in(k);
        match self.lane_for(k) {
            Some(i) => self.append(i, k, e),
            None => {
                self.other.push(Other(k, e));
                self.rest = self.rest.min(k);
            }
        }
    }

    /// Push keys whose delays no other key shares (the packets let in from other partitions,
    /// each arriving whenever it does), a batch at once: into `aside`, not a lane (a lane
    /// one took would be kept from the delays that come again and again, and crowd them into
    /// `other` instead). The batch is a few runs of nearly sorted keys (one per sending
    /// partition) and `aside` is sorted, so the sort finds runs and merges them.
    pub fn push_aside(&mut self, batch: impl Iterator<Item = (u128, E)>) {
        let held = self.aside.len();
        if held == 0 {
            shrink_to_twice(&mut self.aside, batch.size_hint().0);
        }
        for (k, e) in batch {
            self.count_in(k);
            self.aside.push((k, e));
        }
        if self.aside.len() > held {
            // Stable, for its runs: the unstable sort looks for one run only.
            self.aside.sort_by_key(|e| Reverse(e.0));
            self.rest = self.rest_first();
        }
        self.tidy();
    }

    /// One more key held: the smallest, if it is.
    #[inline]
    fn count_in(&mut self, k: u128) {
        if self.len == 0 || k < self.min {
            self.min = k;
        }
        self.len += 1;
    }

    /// The lane `k` can be appended to: its delay's lane if `k` sorts after its last key, or
    /// a free lane, claimed for the delay.
    fn lane_for(&self, k: u128) -> Option<usize> {
        let delay = time(k).checked_sub(self.base)?;
        let [a, b] = places(delay);
        let (la, lb) = (&self.lanes[a], &self.lanes[b]);
        let owner = |l: &Lane<E>| l.delay == delay && !l.keys.is_empty();
        match () {
            _ if owner(la) => la.keys.back().is_some_and(|&(last, _)| last < k).then_some(a),
            _ if owner(lb) => lb.keys.back().is_some_and(|&(last, _)| last < k).then_some(b),
            _ if la.keys.is_empty() => Some(a),
            _ => lb.keys.is_empty().then_some(b),
        }
    }

    fn append(&mut self, i: usize, k: u128, e: E) {
        let lane = &mut self.lanes[i];
        if lane.keys.is_empty() {
            lane.delay = time(k) - self.base;
            self.heads.push(Reverse(Head { key: k, lane: i }));
        }
        lane.keys.push_back((k, e));
    }

    /// The smallest key.
    #[inline]
    pub fn peek(&self) -> Option<u128> {
        (self.len > 0).then_some(self.min)
    }

    /// The event of the smallest key.
    pub fn peek_event(&self) -> Option<&E> {
        let k = self.peek()?;
        match self.lane_of(k) {
            Some(i) => self.lanes[i % LANES].keys.front().map(|(_, e)| e),
            None if self.aside_holds(k) => self.aside.last().map(|(_, e)| e),
            None => self.other.peek().map(|o| &o.1),
        }
    }

    /// The lane whose first key is `k`, the smallest of all, if a lane holds it.
    #[inline]
    fn lane_of(&self, k: u128) -> Option<usize> {
        self.heads.peek().filter(|Reverse(h)| h.key == k).map(|Reverse(h)| h.lane)
    }

    /// Whether `aside` holds `k`, the smallest of all and in no lane (else `other` does).
    #[inline]
    fn aside_holds(&self, k: u128) -> bool {
        self.aside.last().is_some_and(|a| a.0 == k)
    }

    /// The smallest key and its event.
    pub fn pop(&mut self) -> Option<(u128, E)> {
        let k = self.peek()?;
        let e = match self.lane_of(k) {
            Some(i) => self.advance(i),
            None => self.pop_rest(k),
        };
        self.len -= 1;
        self.base = time(k);
        self.min = self.heads.peek().map_or(u128::MAX, |Reverse(h)| h.key).min(self.rest);
        Some((k, e))
    }

    /// Take key `k`, the smallest of all, off `aside` or `other`, and give its event.
    fn pop_rest(&mut self, k: u128) -> E {
        let e = match self.aside_holds(k) {
            true => self.aside.pop().expect("held").1,
            false => self.other.pop().expect("the smallest key is in other").1,
        };
        self.rest = self.rest_first();
        e
    }

    /// Give back most of the room of the queues that hold less than a quarter of theirs, at
    /// each batch set aside (once a window in a partitioned run). A look at every pop gave
    /// back more but cost host instructions at every pop, and a look every 4,096 pops gave
    /// back less than this and cost more (CHANGELOG, issue 40).
    /// Only the lanes holding keys are looked at (a quarter of them in `nanopu bench
    /// network`): an emptied lane kept room for `KEEP` keys at most (`shrink`), which is
    /// not loose.
    #[inline(never)]
    fn tidy(&mut self) {
        for Reverse(h) in self.heads.iter() {
            let keys = &mut self.lanes[h.lane % LANES].keys;
            if loose(keys.len(), keys.capacity()) {
                keys.shrink_to(tight(keys.len()));
            }
        }
        if loose(self.aside.len(), self.aside.capacity()) {
            self.aside.shrink_to(tight(self.aside.len()));
        }
        if loose(self.other.len(), self.other.capacity()) {
            self.other.shrink_to(tight(self.other.len()));
        }
    }

    /// The smaller of `other`'s and `aside`'s first keys.
    fn rest_first(&self) -> u128 {
        let other = self.other.peek().map_or(u128::MAX, |o| o.0);
        other.min(self.aside.last().map_or(u128::MAX, |a| a.0))
    }

    /// Take lane `i`'s first key (the smallest of all) off, let its next one in, and give
    /// its event.
    fn advance(&mut self, i: usize) -> E {
        let lane = &mut self.lanes[i % LANES]; // i < LANES: the mask spares a bounds check
        let (_, e) = lane.keys.pop_front().expect("a head's lane holds it");
        let mut top = self.heads.peek_mut().expect("lane is a head");
        match lane.keys.front() {
            Some(&(next, _)) => *top = Reverse(Head { key: next, lane: i }),
            None => {
                PeekMut::pop(top);
                shrink(&mut lane.keys);
            }
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;

    /// Keys pushed at fixed and random delays after the last one taken out, and some before
    /// it, into lanes or aside (in batches), come out sorted, and the event peeked at is the
    /// one popped next.
    #[test]
    fn pops_in_order() {
        let (mut q, mut rng, mut all, mut seq) = (Lanes::default(), Rng::new(3), Vec::new(), 0u128);
        let mut now = 0u64;
        for _ in 0..5000 {
            let mut batch = Vec::new();
            let aside = rng.below(5) == 0;
            for _ in 0..rng.below(if aside { 6 } else { 3 }) {
                let t = match rng.below(4) {
                    0 => now + 40,
                    1 => now + rng.below(1000),
                    2 => now.saturating_sub(rng.below(50)),
                    _ => now,
                };
                seq += 1;
                let k = (t as u128) << 64 | seq;
                match aside {
                    true => batch.push((k, !k)),
                    false => q.push(k, !k),
                }
                all.push(k);
            }
            q.push_aside(batch.into_iter());
            all.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(q.peek(), all.last().copied(), "the kept smallest key");
            assert_eq!(q.peek_event().copied(), all.last().map(|k| !k), "the smallest key's event");
            let popped = q.pop();
            assert!(popped.is_none_or(|(k, e)| e == !k), "each key with its own event");
            let k = popped.map(|(k, _)| k);
            assert_eq!(k, all.pop());
            now = k.map_or(now, time);
        }
    }
}
