//! A deterministic event queue: earliest time first, ties in insertion order.

use crate::lanes::Lanes;
use crate::time::Time;

/// An event's key: its time in the high 64 bits and its sequence number in the low 64, so
/// that comparing keys compares (time, sequence) as one 128-bit integer, without branches.
fn key(time: Time, seq: u64) -> u128 {
    (time.0 as u128) << 64 | seq as u128
}

/// Min-queue of events keyed by (time, sequence number); `lanes` orders them and holds them.
#[derive(Debug)]
pub struct EventQueue<E> {
    lanes: Lanes<E>,
    next_seq: u64,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { lanes: Lanes::default(), next_seq: 0, popped: 0 }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, time: Time, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.lanes.push(key(time, seq), event);
    }
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let (k, e) = self.lanes.pop()?;
        self.popped += 1;
        Some((Time((k >> 64) as u64), e))
    }
    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.lanes.peek().map(|k| Time((k >> 64) as u64))
    }
    pub fn len(&self) -> usize {
        self.lanes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.lanes.len() == 0
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
