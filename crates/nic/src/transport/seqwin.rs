//! Which messages of one sender were delivered: duplicate suppression that does not forget
//! a message while its sender may still send it.
//!
//! The rule (ours; how it is derived below):
//!
//! - Every message an endpoint starts, unicast or multicast, gets the endpoint's next 32-bit
//!   sequence number, carried in every packet of the message and in every control packet
//!   about it (`Segment::mcast_seq`); the 16-bit `msg_id` is its low half.
//! - A sender starts message `n` only when every unicast message it started before
//!   `n - SEQ_WINDOW` is finished (fully acknowledged); until then `n` waits.
//! - A receiver remembers, per sender, the sequence numbers it delivered that lie within
//!   `SEQ_WINDOW` of the newest one it delivered (`newest`). A data packet of a message it is
//!   not reassembling is then:
//!   - of a remembered message: a duplicate, answered, since its sender may not have the
//!     acknowledgement yet;
//!   - unicast and `SEQ_WINDOW` or more behind `newest`: a duplicate. `newest` was started
//!     after it, which the sender did only once every message that far back was finished,
//!     i.e. acknowledged, i.e. delivered here. Nothing to answer: the sender is done with it;
//!   - anything else: new.
//!
//! Why nothing is delivered twice: a sender sends a unicast message again only while it is
//! unfinished; anything delivered here since was started before it finished, so within
//! `SEQ_WINDOW` of it, and the message is still remembered. A copy made by the network, however
//! late, is either remembered or far enough behind to be a duplicate by the second case.
//! Nothing is mistaken for a duplicate: the remembered numbers are exact 32-bit values, so a
//! receiver that has not heard from a sender for a long time still compares correctly, and
//! only a copy 2^31 messages late (which the simulator cannot produce) would alias.
//!
//! Multicast is the exception to the second case: its sender never sends a packet twice and
//! the fabric's hop-by-hop retransmission never makes a second copy (docs/models/network.md),
//! so an old multicast packet is a late first copy (a hop resent it after a link came back)
//! and is new. A multicast duplicate would need a network copy arriving after `SEQ_WINDOW`
//! newer messages of its sender were delivered here.
//!
//! Where it comes from: NDP (Handley et al., SIGCOMM 2017) numbers packets per connection and
//! discards by sequence number, as TCP does; the receiver here sees messages of many senders,
//! not connections. Homa (Montazeri et al., SIGCOMM 2018) gives RPCs unique ids and accepts
//! that an RPC may run more than once. Both leave message-level exactly-once to us. The
//! bound on what a sender has outstanding is the classic condition of selective-repeat
//! sliding windows (no more than half the sequence space in flight), applied to the 16-bit
//! `msg_id` so that the ids of unfinished messages never collide (the sender's window by
//! message id and its control packets rely on that).
//!
//! Nothing is forgotten by age: a rule that forgot a delivered message a fixed time after
//! delivery would deliver it again when, under heavy loss, a sender still without an ACK
//! retransmits it after that time.

use std::collections::VecDeque;

/// How far (in messages started) a sender's oldest unfinished unicast message may lag its
/// newest, and how far back a receiver remembers: half the 16-bit message id space.
pub const SEQ_WINDOW: u32 = 1 << 15;

/// What a receiver makes of a data packet of a message it is not reassembling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// Not delivered yet.
    New,
    /// Delivered and remembered: a duplicate its sender may still need answered.
    Delivered,
    /// `SEQ_WINDOW` or more behind the newest delivered: a duplicate if unicast.
    Behind,
}

/// The sequence numbers delivered from one sender within `SEQ_WINDOW` of the newest, in
/// ascending order (the newest last).
#[derive(Clone, Debug, Default)]
pub struct SeqWindow {
    done: Done,
}

/// How many sequence numbers a `SeqWindow` holds without an allocation of its own.
const INLINE: usize = 3;

/// A `SeqWindow`'s numbers: up to `INLINE` in place, more in a deque. A node hears from
/// many senders a few messages each (a 16,384-core NanoSort node from about 450, fewer than
/// two messages each on average), and a deque per sender plus the 40-byte table entries
/// holding them were the largest item of a node's heap (docs/profile.md); in place, an
/// entry of the endpoint's table is 24 bytes and most senders allocate nothing.
#[derive(Clone, Debug)]
enum Done {
    Few(u8, [u32; INLINE]),
    // Boxed on purpose: a deque in place (32 bytes) would double the entry.
    #[allow(clippy::box_collection)]
    Many(Box<VecDeque<u32>>),
}

impl Default for Done {
    fn default() -> Done {
        Done::Few(0, [0; INLINE])
    }
}

impl Done {
    fn len(&self) -> usize {
        match self {
            Done::Few(n, _) => *n as usize,
            Done::Many(d) => d.len(),
        }
    }

    fn get(&self, i: usize) -> Option<u32> {
        match self {
            Done::Few(n, s) => s[..*n as usize].get(i).copied(),
            Done::Many(d) => d.get(i).copied(),
        }
    }

    fn back(&self) -> Option<u32> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    fn binary_search_by(&self, f: impl FnMut(&u32) -> std::cmp::Ordering) -> Result<usize, usize> {
        match self {
            Done::Few(n, s) => s[..*n as usize].binary_search_by(f),
            Done::Many(d) => d.binary_search_by(f),
        }
    }

    /// Put `seq` at position `i`, moving to a deque when the place is full.
    fn insert(&mut self, i: usize, seq: u32) {
        match self {
            Done::Few(n, s) if (*n as usize) < INLINE => {
                s.copy_within(i..*n as usize, i + 1);
                s[i] = seq;
                *n += 1;
            }
            Done::Few(_, s) => {
                let mut d: VecDeque<u32> = s.iter().copied().collect();
                d.insert(i, seq);
                *self = Done::Many(Box::new(d));
            }
            Done::Many(d) => d.insert(i, seq),
        }
    }

    fn pop_front(&mut self) {
        match self {
            Done::Few(n, s) => {
                s.copy_within(1..*n as usize, 0);
                *n -= 1;
            }
            Done::Many(d) => drop(d.pop_front()),
        }
    }
}

impl SeqWindow {
    /// How far `seq` lies behind the newest delivered (negative: ahead of it).
    fn behind(&self, seq: u32) -> Option<i32> {
        self.done.back().map(|newest| newest.wrapping_sub(seq) as i32)
    }

    pub fn seen(&self, seq: u32) -> Seen {
        match self.behind(seq) {
            Some(b) if b >= SEQ_WINDOW as i32 => Seen::Behind,
            Some(b) if b >= 0 && self.position(seq).is_ok() => Seen::Delivered,
            _ => Seen::New,
        }
    }

    /// Where `seq` is, or would go, in `done` (ordered by distance behind the newest,
    /// decreasing).
    fn position(&self, seq: u32) -> Result<usize, usize> {
        let newest = self.done.back().expect("not empty");
        let b = newest.wrapping_sub(seq);
        self.done.binary_search_by(|&x| b.cmp(&newest.wrapping_sub(x)))
    }

    /// `seq` was delivered. One already out of the window stays forgotten (only a late
    /// multicast message can be: see the module's comment).
    pub fn delivered(&mut self, seq: u32) {
        match self.behind(seq) {
            None => self.done.insert(0, seq),
            Some(b) if b < 0 => self.advance(seq),
            Some(b) if b < SEQ_WINDOW as i32 => self.insert(seq),
            Some(_) => {}
        }
    }

    fn advance(&mut self, seq: u32) {
        self.done.insert(self.done.len(), seq);
        while self.done.get(0).is_some_and(|x| seq.wrapping_sub(x) >= SEQ_WINDOW) {
            self.done.pop_front();
        }
    }

    fn insert(&mut self, seq: u32) {
        if let Err(i) = self.position(seq) {
            self.done.insert(i, seq);
        }
    }

    /// Sequence numbers remembered (tests, memory accounting).
    pub fn len(&self) -> usize {
        self.done.len()
    }

    pub fn is_empty(&self) -> bool {
        self.done.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_what_was_delivered_out_of_order_and_across_the_wrap() {
        let mut w = SeqWindow::default();
        assert_eq!(w.seen(5), Seen::New);
        let start = u32::MAX - 3;
        for k in [0u32, 2, 1, 7, 5] {
            w.delivered(start.wrapping_add(k));
        }
        for k in [0u32, 1, 2, 5, 7] {
            assert_eq!(w.seen(start.wrapping_add(k)), Seen::Delivered, "{k}");
        }
        for k in [3u32, 4, 6, 8, 100] {
            assert_eq!(w.seen(start.wrapping_add(k)), Seen::New, "{k}");
        }
        assert_eq!(w.len(), 5);
    }

    /// The in-place numbers behave as the deque they replaced: random deliveries (in and out
    /// of order, some a window behind) give the same answers as a plain sorted deque of the
    /// same rule, across the move from in place to a deque.
    #[test]
    fn in_place_numbers_agree_with_a_deque() {
        let mut rng = nanopu_sim::Rng::new(3);
        for _ in 0..200 {
            let (mut w, mut model) = (SeqWindow::default(), VecDeque::<u32>::new());
            let base = rng.next_u64() as u32;
            for _ in 0..rng.below(12) {
                let seq = base.wrapping_add(rng.below(8) as u32 + [0, SEQ_WINDOW][rng.below(2) as usize]);
                w.delivered(seq);
                model_delivered(&mut model, seq);
                assert_eq!(w.len(), model.len());
                for k in (0..8).chain(SEQ_WINDOW..SEQ_WINDOW + 8) {
                    let q = base.wrapping_add(k);
                    assert_eq!(w.seen(q), model_seen(&model, q), "{q}");
                }
            }
        }
    }

    fn model_seen(d: &VecDeque<u32>, seq: u32) -> Seen {
        match d.back().map(|&newest| newest.wrapping_sub(seq) as i32) {
            Some(b) if b >= SEQ_WINDOW as i32 => Seen::Behind,
            _ if d.contains(&seq) => Seen::Delivered,
            _ => Seen::New,
        }
    }

    /// The rule of `SeqWindow::delivered` on a deque, newest last.
    fn model_delivered(d: &mut VecDeque<u32>, seq: u32) {
        let newest = d.back().copied().unwrap_or(seq);
        let behind = |x: u32| newest.wrapping_sub(x) as i32;
        if d.contains(&seq) || behind(seq) >= SEQ_WINDOW as i32 {
            return;
        }
        let i = d.iter().position(|&x| behind(x) < behind(seq)).unwrap_or(d.len());
        d.insert(i, seq);
        let newest = *d.back().unwrap();
        d.retain(|&x| newest.wrapping_sub(x) < SEQ_WINDOW);
    }

    #[test]
    fn a_table_entry_is_24_bytes() {
        assert_eq!(std::mem::size_of::<(u32, SeqWindow)>(), 24);
    }

    #[test]
    fn forgets_only_what_is_a_window_behind() {
        let mut w = SeqWindow::default();
        w.delivered(10);
        w.delivered(12);
        w.delivered(10 + SEQ_WINDOW - 1);
        assert_eq!(w.seen(10), Seen::Delivered);
        assert_eq!(w.seen(11), Seen::New, "not delivered, inside the window");
        w.delivered(10 + SEQ_WINDOW);
        assert_eq!(w.seen(10), Seen::Behind);
        assert_eq!(w.seen(11), Seen::New, "still inside the window");
        assert_eq!(w.seen(12), Seen::Delivered);
        assert_eq!(w.len(), 3);
        w.delivered(5);
        assert_eq!(w.len(), 3, "a late one out of the window is not kept");
    }
}
