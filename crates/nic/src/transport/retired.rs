//! Messages done sending, dropped a few retirements later rather than at once.
//!
//! Dropping a finished message releases its reference to its words, an atomic write to the
//! words' counts, whose host cache line was last touched when the message was sent and is
//! rarely still cached by the time its ACK arrives: a miss that nothing after it proceeds
//! past. Retired here, the line starts loading at once and the message is dropped
//! `RETIRED` retirements later, when the line is in. Only when host memory is freed
//! changes; nothing simulated does.

use super::sender::OutMsg;

/// Messages a ring holds before dropping the oldest: a few of the simulation's steps
/// between retiring a message and dropping it (an estimate; any small number does).
const RETIRED: usize = 8;

/// A ring of retired messages (one per simulation, or partition, of a thread).
#[derive(Default)]
pub struct Retired {
    ring: [Option<Box<OutMsg>>; RETIRED],
    next: usize,
}

impl Retired {
    /// Keep `m` for `RETIRED` retirements, starting to load its words' counts; drop the
    /// message retired that many before.
    pub fn retire(&mut self, m: Box<OutMsg>) {
        m.prefetch_counts();
        let oldest = self.ring[self.next].replace(m);
        self.next = (self.next + 1) % RETIRED;
        drop(oldest);
    }

    /// Messages held.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.ring.iter().flatten().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::segment::Segment;
    use nanopu_sim::Time;
    use std::sync::Arc;

    #[test]
    fn a_retired_message_is_dropped_after_the_ring_goes_round() {
        let words: Arc<[u64]> = Arc::new([1, 2, 3]);
        let mut r = Retired::default();
        r.retire(Box::new(OutMsg::new(Segment::default(), Arc::clone(&words), 1, 1, Time::ZERO)));
        for k in 1..RETIRED {
            r.retire(Box::new(OutMsg::new(Segment::default(), Arc::new([]), 1, 1, Time::ZERO)));
            assert_eq!((r.held(), Arc::strong_count(&words)), (k + 1, 2), "still held");
        }
        r.retire(Box::new(OutMsg::new(Segment::default(), Arc::new([]), 1, 1, Time::ZERO)));
        assert_eq!((r.held(), Arc::strong_count(&words)), (RETIRED, 1), "dropped");
    }
}
