//! When the endpoint's outgoing messages time out, found without looking at every message.
//!
//! Every progress pushes a message's deadline later, so keeping a sorted set exact would
//! cost a reordering per ACK or PULL. Instead each message has one entry in a min-heap that
//! is never later than its deadline: a deadline that moves later is found lazily, when its
//! stale entry comes up and is put back at the true time; one that moves earlier gets a new
//! entry (the endpoint calls `note`). The messages due at a time, and the earliest deadline,
//! are then exactly those a scan of every message would give, at a cost that grows with the
//! log of the messages in flight rather than with their number (a sender with hundreds of
//! messages in an incast timed out its messages by scanning all of them on every firing).

use super::outmsgs::{OutKey, OutMsgs};
use super::sender::OutMsg;
use nanopu_sim::Time;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

#[derive(Default)]
pub struct Deadlines {
    /// (entry time, message) as one number (`Entry`); an entry counts only while it is the
    /// message's `rto_entry`.
    heap: BinaryHeap<Reverse<Entry>>,
}

/// A heap entry: its time, then the message's destination IP and id in one word, compared
/// as one 128-bit number, which orders entries as the tuple (time, IP, id) does (the
/// tuple's comparison was a chain of calls in the `fast` build: docs/profile.md). Two
/// words, not a `u128`: that is aligned to 16 bytes, which mimalloc serves through its
/// aligned path (`mi_malloc_aligned`'s general case, seen in the `u128` form's profile).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Entry {
    at: u64,
    key: u64,
}

impl Entry {
    #[inline]
    fn rank(self) -> u128 {
        u128::from(self.at) << 64 | u128::from(self.key)
    }
}

impl Ord for Entry {
    #[inline]
    fn cmp(&self, other: &Entry) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for Entry {
    #[inline]
    fn partial_cmp(&self, other: &Entry) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn entry(at: Time, (ip, id): OutKey) -> Entry {
    Entry { at: at.0, key: u64::from(ip) << 16 | u64::from(id) }
}

/// An entry's (time, message).
fn parts(e: Entry) -> (Time, OutKey) {
    (Time(e.at), ((e.key >> 16) as u32, e.key as u16))
}

impl Deadlines {
    /// `m` (under `key`) times out at `at`: give it an entry if that is earlier than its own.
    pub fn note(&mut self, key: OutKey, m: &mut OutMsg, at: Time) {
        if at < m.rto_entry {
            m.rto_entry = at;
            self.heap.push(Reverse(entry(at, key)));
        }
    }

    /// The messages whose deadline is at or before `now`, in key order; their entries are
    /// taken (the caller notes their new deadlines).
    pub fn due(&mut self, now: Time, out: &mut OutMsgs, deadline: impl Fn(&OutMsg) -> Time) -> Vec<OutKey> {
        let mut due = Vec::new();
        while let Some(key) = self.pop_until(now, out) {
            let m = out.get_mut(&key).expect("popped entries are live");
            match deadline(m) {
                d if d <= now => {
                    m.rto_entry = Time::MAX;
                    due.push(key);
                }
                d => self.reenter(key, m, d),
            }
        }
        due.sort_unstable();
        due
    }

    /// The earliest deadline of any message, its entry made exact first.
    pub fn earliest(&mut self, out: &mut OutMsgs, deadline: impl Fn(&OutMsg) -> Time) -> Option<Time> {
        while let Some(&Reverse(e)) = self.heap.peek() {
            let (t, key) = parts(e);
            let Some(m) = Self::owner(out, t, key) else {
                self.heap.pop();
                continue;
            };
            let d = deadline(m);
            if d == t {
                return Some(t);
            }
            self.heap.pop();
            self.reenter(key, m, d);
        }
        None
    }

    /// Drop the entries no message owns any more, once they outnumber the messages in flight
    /// twice over (plus `SLACK`), and give their room back. Every ACK that moves a deadline
    /// earlier adds an entry and a finished message leaves its entries behind until their
    /// time comes, so without this the heap holds about every message sent in the last
    /// timeout and keeps the capacity of its busiest moment. Behaviour is unchanged: only
    /// entries `owner` rejects go, which `due` and `earliest` would pop and skip.
    pub fn tidy(&mut self, out: &mut OutMsgs) {
        const SLACK: usize = 16;
        if self.heap.len() <= 2 * out.len() + SLACK {
            return;
        }
        self.heap.retain(|&Reverse(e)| {
            let (t, key) = parts(e);
            Self::owner(out, t, key).is_some()
        });
        self.heap.shrink_to(2 * self.heap.len() + SLACK);
    }

    /// Entries in the heap, live or not (tests).
    #[cfg(test)]
    pub fn entries(&self) -> usize {
        self.heap.len()
    }

    /// Pop entries up to `now` until one that is its message's own; that message's key.
    fn pop_until(&mut self, now: Time, out: &mut OutMsgs) -> Option<OutKey> {
        while let Some(&Reverse(e)) = self.heap.peek().filter(|e| parts(e.0).0 <= now) {
            self.heap.pop();
            let (t, key) = parts(e);
            if Self::owner(out, t, key).is_some() {
                return Some(key);
            }
        }
        None
    }

    /// The message an entry belongs to, if it still does (the message may be done, or its
    /// deadline noted earlier since).
    fn owner(out: &mut OutMsgs, t: Time, key: OutKey) -> Option<&mut OutMsg> {
        out.get_mut(&key).filter(|m| m.rto_entry == t)
    }

    fn reenter(&mut self, key: OutKey, m: &mut OutMsg, at: Time) {
        m.rto_entry = at;
        self.heap.push(Reverse(entry(at, key)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Segment;
    use nanopu_sim::Rng;
    use std::sync::Arc;

    /// A message under `key` whose deadline the test keeps in `last_progress`.
    fn msg(key: OutKey, at: Time) -> Box<OutMsg> {
        let proto = Segment { dst_ip: key.0, msg_id: key.1, ..Segment::default() };
        Box::new(OutMsg::new(proto, Arc::new([]), 1, 1, at))
    }

    fn scan_due(out: &OutMsgs, now: Time) -> Vec<OutKey> {
        let mut v: Vec<OutKey> = out.iter().filter(|(_, m)| m.last_progress <= now).map(|(k, _)| k).collect();
        v.sort_unstable();
        v
    }

    /// Random starts, ends and deadline moves (earlier ones noted, as the endpoint does):
    /// at every step the heap gives what scanning every message gives.
    #[test]
    fn agrees_with_a_scan_of_every_message() {
        let (mut rng, mut out, mut d) = (Rng::new(7), OutMsgs::default(), Deadlines::default());
        let deadline = |m: &OutMsg| m.last_progress;
        let mut now = Time::ZERO;
        for step in 0..20_000u64 {
            let key = (1 + rng.below(3) as u32, rng.below(40) as u16);
            let at = now + Time::from_ns(1 + rng.below(500));
            match rng.below(4) {
                0 => {
                    out.insert(key, msg(key, at));
                    d.note(key, out.get_mut(&key).unwrap(), at);
                }
                1 => {
                    out.remove(&key);
                    d.tidy(&mut out);
                    assert!(d.entries() <= 2 * out.len() + 16, "step {step}: {} entries", d.entries());
                }
                _ => {
                    if let Some(m) = out.get_mut(&key) {
                        m.last_progress = at;
                        d.note(key, m, at); // a no-op when later: found lazily
                    }
                }
            }
            if step % 7 == 0 {
                now += Time::from_ns(rng.below(200));
                let want = scan_due(&out, now);
                assert_eq!(d.due(now, &mut out, deadline), want, "step {step}");
                for k in want {
                    let m = out.get_mut(&k).unwrap();
                    m.last_progress = now + Time::from_ns(300);
                    d.note(k, m, m.last_progress);
                }
                let min = out.iter().map(|(_, m)| m.last_progress).min();
                assert_eq!(d.earliest(&mut out, deadline), min, "step {step}");
            }
        }
    }
}
