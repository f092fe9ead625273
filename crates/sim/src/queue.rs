//! A deterministic event queue: earliest time first, ties in insertion order.

use crate::hint::prefetch;
use crate::lanes::Lanes;
use crate::time::Time;

/// Heap key: 16 bytes whatever the event's size, the events themselves staying put in a
/// slab. Time in the high 64 bits, then the sequence number, then the slab slot: comparing
/// keys compares (time, sequence) as one 128-bit integer, without branches.
#[derive(Debug, Clone, Copy)]
struct Key(u128);

/// Bits of the slot in a key: up to 16 million events pending at once.
const SLOT_BITS: u32 = 24;
/// Sequence numbers fit in the remaining 40 bits: a trillion events per run.
const SEQ_LIMIT: u64 = 1 << (64 - SLOT_BITS);

/// Events a queue can hold pending at once. Going past it is a broken invariant (a panic),
/// so callers that let the user's input fill a queue check against this first.
pub const QUEUE_CAPACITY: usize = 1 << SLOT_BITS;

impl Key {
    fn new(time: Time, seq: u64, slot: u32) -> Key {
        assert!(seq < SEQ_LIMIT && slot < 1 << SLOT_BITS, "event queue: too many events");
        Key((time.0 as u128) << 64 | (seq << SLOT_BITS | slot as u64) as u128)
    }
    fn time(self) -> Time {
        Time((self.0 >> 64) as u64)
    }
    fn slot(self) -> u32 {
        (self.0 as u32) & ((1 << SLOT_BITS) - 1)
    }
}

/// Min-queue of events keyed by (time, sequence number); the keys are ordered by `lanes`.
#[derive(Debug)]
pub struct EventQueue<E> {
    keys: Lanes,
    slab: Vec<Option<E>>,
    free: Vec<u32>,
    next_seq: u64,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { keys: Lanes::default(), slab: Vec::new(), free: Vec::new(), next_seq: 0, popped: 0 }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, time: Time, event: E) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = Some(event);
                s
            }
            None => {
                self.slab.push(Some(event));
                (self.slab.len() - 1) as u32
            }
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        self.keys.push(Key::new(time, seq, slot).0);
    }
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let k = Key(self.keys.pop()?);
        self.popped += 1;
        self.free.push(k.slot());
        let e = self.slab[k.slot() as usize].take().expect("queued event");
        // The next event is usually far from this one in memory: start loading it while
        // this one is handled.
        if let Some(next) = self.keys.peek() {
            prefetch(&self.slab[Key(next).slot() as usize]);
        }
        Some((k.time(), e))
    }
    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.keys.peek().map(|k| Key(k).time())
    }
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    pub fn is_empty(&self) -> bool {
        self.keys.len() == 0
    }
    /// Events popped so far (for progress and speed reports).
    pub fn popped(&self) -> u64 {
        self.popped
    }
    /// Every pending event in order, leaving the queue empty (not counted as popped: the
    /// events move elsewhere rather than happen).
    pub fn take_all(&mut self) -> Vec<(Time, E)> {
        let (popped, all) = (self.popped, std::iter::from_fn(|| self.pop()).collect());
        self.popped = popped;
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(Time(5), 'a');
        q.push(Time(3), 'b');
        q.push(Time(5), 'c');
        q.push(Time(3), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.popped(), 4);
    }
}
