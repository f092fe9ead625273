//! The messages an endpoint is sending, found by message id without hashing.
//!
//! An endpoint numbers its messages in sequence, so the ids in flight are a window from the
//! oldest unacknowledged one to the newest: a slot per id, a hole where a message is done.
//! A lookup is one index instead of a hash-table probe, which on a busy endpoint missed in
//! the host's caches (`docs/models/network.md`). A message whose id comes round again (ids
//! are 16 bits on the wire) while the window still spans it, because a message 65,536 ids
//! older is still in flight, goes to a map beside the window. Together they behave as one
//! map: a key is found until it is removed, and a message started under a key still in
//! flight replaces the one there.

use super::sender::OutMsg;
use nanopu_sim::hash::IntMap;
use std::collections::VecDeque;

/// A message being sent: (destination IP, message id).
pub type OutKey = (u32, u16);

#[derive(Default)]
pub struct OutMsgs {
    /// Message id of `win[0]`.
    base: u16,
    /// Boxed: the window keeps the capacity of its busiest moment, then only pointers.
    win: VecDeque<Option<Box<OutMsg>>>,
    /// Messages whose id was inside the window when they started (the ids wrapped).
    spill: IntMap<OutKey, Box<OutMsg>>,
    len: usize,
}

impl OutMsgs {
    pub fn len(&self) -> usize {
        self.len
    }

    /// Keep `m` under `key`; as in a map, a message already under `key` is replaced.
    pub fn insert(&mut self, key: OutKey, m: Box<OutMsg>) {
        // A new id past the window's end with nothing spilled (nearly every message) is
        // under no key yet: no call of `remove` to find that out.
        if self.offset(key.1) < self.win.len() || !self.spill.is_empty() {
            self.remove(&key);
        }
        self.len += 1;
        if self.win.is_empty() {
            self.base = key.1;
        }
        let i = self.offset(key.1);
        if i < self.win.len() {
            return drop(self.spill.insert(key, m));
        }
        // Nearly always the id right after the window's last: no holes to make, and no call
        // of `resize_with` to learn that.
        if i > self.win.len() {
            self.win.resize_with(i, || None);
        }
        self.win.push_back(Some(m));
    }

    /// One look at the slot (every ACK, PULL and NACK comes here, so not through
    /// `in_window`, which would index the window twice).
    #[inline]
    pub fn get_mut(&mut self, key: &OutKey) -> Option<&mut OutMsg> {
        match self.win.get_mut(self.offset(key.1)) {
            Some(Some(m)) if m.proto.dst_ip == key.0 => Some(m),
            _ if self.spill.is_empty() => None,
            _ => self.spill.get_mut(key).map(|m| &mut **m),
        }
    }

    /// The window slot holding the message under `key`, if the window holds it.
    #[inline]
    fn in_window(&self, key: &OutKey) -> Option<usize> {
        let i = self.offset(key.1);
        matches!(self.win.get(i), Some(Some(m)) if m.proto.dst_ip == key.0).then_some(i)
    }

    /// The message started first among those in the window (its front, after `trim`).
    /// Nothing goes to the spill while senders keep what is unfinished within
    /// `seqwin::SEQ_WINDOW` ids, so that is the oldest of all.
    #[inline]
    pub fn oldest(&self) -> Option<&OutMsg> {
        self.win.front().and_then(|m| m.as_deref())
    }

    /// Forget the message under `key`, if there is one.
    pub fn remove(&mut self, key: &OutKey) {
        drop(self.take(key));
    }

    /// The message under `key`, if there is one, no longer kept.
    /// (An empty spill, nearly always, is not probed: `insert` comes here with every new
    /// key, and hashing one costs more than the rest of the look.)
    pub fn take(&mut self, key: &OutKey) -> Option<Box<OutMsg>> {
        let m = match self.in_window(key) {
            Some(i) => self.win[i].take(),
            None if self.spill.is_empty() => None,
            None => self.spill.remove(key),
        };
        if m.is_some() {
            self.len -= 1;
            self.trim();
        }
        m
    }

    /// Every message, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (OutKey, &OutMsg)> {
        let win = self.win.iter().flatten().map(|m| ((m.proto.dst_ip, m.proto.msg_id), &**m));
        win.chain(self.spill.iter().map(|(k, m)| (*k, &**m)))
    }

    #[inline]
    fn offset(&self, id: u16) -> usize {
        id.wrapping_sub(self.base) as usize
    }

    /// Drop the holes at the front, so that the window starts at the oldest message.
    fn trim(&mut self) {
        while let Some(None) = self.win.front() {
            self.win.pop_front();
            self.base = self.base.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::segment::Segment;
    use nanopu_sim::Time;
    use std::sync::Arc;

    fn msg(dst: u32, id: u16) -> Box<OutMsg> {
        let mut s = Segment::default();
        (s.dst_ip, s.msg_id) = (dst, id);
        Box::new(OutMsg::new(s, Arc::new([]), 1, 1, Time::ZERO))
    }

    /// Keys are found until removed, whatever the order of removal, across the wrap of
    /// the 16-bit ids and with an id still in flight 65,536 messages later.
    #[test]
    fn finds_what_is_in_flight() {
        let mut m = OutMsgs::default();
        let stuck = (7, 65_530);
        m.insert(stuck, msg(7, 65_530));
        for k in 1..=65_536u32 {
            let id = 65_530u16.wrapping_add(k as u16);
            m.insert((k % 5, id), msg(k % 5, id));
            if k > 3 {
                let old = 65_530u16.wrapping_add((k - 3) as u16);
                m.remove(&((k - 3) % 5, old));
            }
        }
        assert_eq!(m.len(), 4);
        assert!(m.get_mut(&stuck).is_some_and(|x| x.proto.dst_ip == 7));
        assert!(m.get_mut(&(1, 65_530)).is_some(), "the same id again, kept beside the stuck one");
        assert!(m.get_mut(&(3, 65_530)).is_none());
        m.insert((1, 65_530), msg(1, 65_530));
        assert_eq!(m.len(), 4, "the same key again replaces, as in a map");
        assert!(m.take(&stuck).is_some_and(|x| x.proto.dst_ip == 7), "taken out, the message itself");
        assert!(m.get_mut(&stuck).is_none() && m.take(&stuck).is_none());
        assert_eq!(m.iter().count(), 3);
        assert!(m.win.len() <= 4, "the window shrinks to what is in flight: {}", m.win.len());
    }
}
