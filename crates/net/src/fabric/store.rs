//! Where the fabric keeps its packets, and what it moves instead of them.
//!
//! A packet is stored once, when it enters the fabric, and taken out when it is delivered or
//! lost. Queues and events carry a [`Pkt`]: the packet's place in the store and the few
//! header fields switches and ports look at. Moving whole 72-byte packets through every
//! queue and event, and reading them back at every hop, would be a large part of a hop's
//! cost.

use crate::packet::Packet;
use nanopu_sim::packet::{trimmed, wire_len, PacketKind, MIN_FRAME};

/// A packet's place in the store.
pub type PktRef = u32;

/// The header fields a switch or port reads (a copy of the stored packet's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hdr {
    pub dst_ip: u32,
    pub payload_len: u16,
    pub band: u8,
    pub flags: u8,
    pub kind: PacketKind,
    /// Bytes on the wire (`wire_len` of the fields above), kept rather than derived: a hop
    /// asks for it four or five times (band limits, queue bytes, serialization).
    wire: u16,
}

// Every queued packet and fabric event carries one: the wire length fits its padding.
const _: () = assert!(std::mem::size_of::<Hdr>() == 12);

impl Hdr {
    pub fn of(p: &Packet) -> Hdr {
        let wire = u16::try_from(p.wire_len()).expect("a packet's wire length fits 16 bits");
        Hdr { dst_ip: p.dst_ip, payload_len: p.payload_len, band: p.band, flags: p.flags, kind: p.kind, wire }
    }
    pub fn wire_len(&self) -> u32 {
        u32::from(self.wire)
    }
    /// A raw frame (IceNIC's): never trimmed, since no transport would recover it.
    pub fn is_frame(&self) -> bool {
        self.kind == PacketKind::Frame
    }
    pub fn is_multicast(&self) -> bool {
        self.flags & nanopu_sim::packet::flags::MCAST != 0
    }
    /// What `Packet::trim` does to the packet.
    pub fn trim(&mut self) {
        (self.flags, self.payload_len, self.band) = trimmed(self.flags);
        self.wire = MIN_FRAME as u16;
        debug_assert_eq!(wire_len(self.kind, self.flags, self.payload_len), MIN_FRAME);
    }
}

/// A stored packet as queues and events carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pkt {
    pub r: PktRef,
    pub hdr: Hdr,
}

/// Slots an emptied store keeps room for. A fabric fills in bursts (the sort's shuffle) and
/// kept its busiest moment's room for the whole run: 8 KiB per node of the 16,384-core sort
/// at the heap's peak (docs/profile.md). As `KEEP_PACKETS` in crates/cluster for the vectors
/// of packets between partitions. One page.
const KEEP_SLOTS: usize = PAGE;

/// Slots per page of the store: 4 KiB of 64-byte packets.
const PAGE: usize = 64;

/// The packets in the fabric, each in a slot until it is delivered or lost. Slots come in
/// pages that never move: a vector of packets doubled its room as it grew, so that a burst
/// left it between half and all unused (8 KiB per node of the 16,384-core sort at its peak,
/// docs/profile.md), and each doubling held the old copy and the new at once.
#[derive(Default)]
pub struct Store {
    pages: Vec<Box<[Packet; PAGE]>>,
    /// Slots handed out so far (the next new one's number).
    len: usize,
    free: Vec<PktRef>,
}

impl Store {
    /// Store `p` (once per packet, and again for each crossing between partitions: inlined,
    /// as `take`).
    #[inline]
    pub fn put(&mut self, p: Packet) -> Pkt {
        let hdr = Hdr::of(&p);
        let r = match self.free.pop() {
            Some(r) => r,
            None => self.new_slot(),
        };
        *self.slot_mut(r) = p;
        Pkt { r, hdr }
    }
    pub fn get(&self, p: Pkt) -> &Packet {
        let r = p.r as usize;
        &self.pages[r / PAGE][r % PAGE]
    }
    pub fn get_mut(&mut self, p: Pkt) -> &mut Packet {
        self.slot_mut(p.r)
    }
    fn slot_mut(&mut self, r: PktRef) -> &mut Packet {
        let r = r as usize;
        &mut self.pages[r / PAGE][r % PAGE]
    }
    /// A slot never used, on a new page if the last is full.
    fn new_slot(&mut self) -> PktRef {
        if self.len == self.pages.len() * PAGE {
            self.pages.push(Box::new(std::array::from_fn(|_| Packet::default())));
        }
        self.len += 1;
        (self.len - 1) as PktRef
    }
    /// Start loading packet `p`'s slot (it leaves its port next; a crossing takes it out).
    pub fn prefetch(&self, p: Pkt) {
        nanopu_sim::hint::prefetch(self.get(p));
    }
    /// Slots the store has room for.
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.pages.len() * PAGE
    }
    /// Packets held.
    pub fn live(&self) -> usize {
        self.len - self.free.len()
    }
    /// Take the packet out, freeing its slot (the payload's reference goes with it).
    #[inline]
    pub fn take(&mut self, p: Pkt) -> Packet {
        self.free.push(p.r);
        let packet = std::mem::take(self.slot_mut(p.r));
        if self.free.len() == self.len && self.pages.len() * PAGE > KEEP_SLOTS {
            self.release();
        }
        packet
    }

    /// The store is empty: give back what it holds beyond `KEEP_SLOTS`. Which slot a packet
    /// takes is invisible outside the fabric (PFC indexes its counts by slot, and finds
    /// them again at the packet's dequeue), so results do not change.
    fn release(&mut self) {
        self.pages.truncate(KEEP_SLOTS / PAGE);
        self.pages.shrink_to(KEEP_SLOTS / PAGE);
        self.len = 0;
        self.free.clear();
        self.free.shrink_to(KEEP_SLOTS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emptied_store_gives_back_its_burst() {
        let mut s = Store::default();
        let held: Vec<Pkt> = (0..1000).map(|_| s.put(Packet::default())).collect();
        assert!(s.capacity() >= 1000 && s.capacity() < 1000 + PAGE, "whole pages, not doubled");
        held[..999].iter().for_each(|&p| _ = s.take(p));
        assert!(s.capacity() >= 1000, "one packet still held: its slot stays put");
        s.take(held[999]);
        assert_eq!((s.live(), s.capacity()), (0, KEEP_SLOTS));
        let (a, b) = (s.put(Packet::default()), s.put(Packet::default()));
        assert_eq!((a.r, b.r, s.live()), (0, 1, 2), "slots are numbered afresh");
    }
}
