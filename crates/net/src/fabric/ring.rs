//! A port band's queue: the packets' references and headers in a ring.
//!
//! `VecDeque` did the same, but its `push_back` and `pop_front` stayed calls at every hop
//! (the `fast` profile: 147 M and 126 M host instructions of `nanopu bench network`,
//! cachegrind). The room grows as `VecDeque`'s does (4 packets, then doubling), so the
//! allocations are the same sizes.

use super::store::Pkt;

/// Room of a ring's first allocation (`VecDeque`'s first for 16-byte entries).
const FIRST_ROOM: usize = 4;

/// A FIFO of packets in a power-of-two room (an index wraps with a mask).
#[derive(Clone, Debug, Default)]
pub struct Ring {
    buf: Box<[Pkt]>,
    head: u32,
    len: u32,
}

impl Ring {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Packets the ring has room for.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    #[inline]
    pub fn push_back(&mut self, p: Pkt) {
        if self.len as usize == self.buf.len() {
            self.grow(p);
        }
        let at = (self.head + self.len) as usize & (self.buf.len() - 1);
        self.buf[at] = p;
        self.len += 1;
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<Pkt> {
        let p = self.front()?;
        self.head = (self.head + 1) & (self.buf.len() as u32 - 1);
        self.len -= 1;
        Some(p)
    }

    #[inline]
    pub fn front(&self) -> Option<Pkt> {
        (self.len > 0).then(|| self.buf[self.head as usize])
    }

    /// The host address of the front packet's entry (read nowhere: a prefetch hint).
    #[inline]
    pub fn front_at(&self) -> usize {
        self.buf.as_ptr().wrapping_add(self.head as usize) as usize
    }

    /// Give back the room beyond `keep` packets (a power of two) if they all fit in it.
    pub fn shrink_to(&mut self, keep: usize) {
        debug_assert!(keep.is_power_of_two());
        if self.buf.len() > keep && self.len as usize <= keep {
            self.move_to(keep, self.buf[0]);
        }
    }

    /// Twice the room (out of line: a band's room grows rarely).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, fill: Pkt) {
        self.move_to((2 * self.buf.len()).max(FIRST_ROOM), fill);
    }

    /// The packets moved into a room of `room`, in order from its start; `fill` fills the
    /// rest (never read: a slot is written before it is read).
    fn move_to(&mut self, room: usize, fill: Pkt) {
        let mask = self.buf.len().wrapping_sub(1);
        let mut v = Vec::with_capacity(room);
        v.extend((0..self.len as usize).map(|k| self.buf[(self.head as usize + k) & mask]));
        v.resize(room, fill);
        self.buf = v.into_boxed_slice();
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::Hdr;
    use crate::packet::Packet;
    use std::collections::VecDeque;

    fn pkt(r: u32) -> Pkt {
        Pkt { r, hdr: Hdr::of(&Packet::default()) }
    }

    /// The same order and the same room as `VecDeque` through pushes and pops that wrap
    /// around, grow while wrapped, and a shrink.
    #[test]
    fn a_ring_is_a_fifo_with_vecdeques_room() {
        let (mut ring, mut deque) = (Ring::default(), VecDeque::new());
        let mut next = 0;
        for round in 0..40u32 {
            for _ in 0..(round * 7) % 11 {
                ring.push_back(pkt(next));
                deque.push_back(pkt(next));
                next += 1;
            }
            for _ in 0..(round * 5) % 9 {
                assert_eq!(ring.pop_front(), deque.pop_front());
            }
            assert_eq!((ring.front(), ring.capacity()), (deque.front().copied(), deque.capacity()));
        }
        while let Some(p) = deque.pop_front() {
            assert_eq!(ring.pop_front(), Some(p));
        }
        assert!(ring.is_empty() && ring.pop_front().is_none());
        ring.shrink_to(8);
        deque.shrink_to(8);
        assert_eq!(ring.capacity(), deque.capacity());
    }
}
