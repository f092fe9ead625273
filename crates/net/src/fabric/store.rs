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

/// Slots per page of the store: 4 KiB of 64-byte packets, one bit each in a word.
const PAGE: usize = 64;

/// The packets in the fabric, each in a slot until it is delivered or lost. Slots come in
/// pages that never move: a vector of packets doubled its room as it grew, so that a burst
/// left it between half and all unused (8 KiB per node of the 16,384-core sort at its peak,
/// docs/profile.md), and each doubling held the old copy and the new at once.
///
/// A packet takes the lowest free slot, so that the packets held gather in the first pages
/// and the last ones empty; the empty pages at the end are given back, but one (so that a
/// count of packets going up and down across a page's end does not make and free a page
/// again and again). Before, a packet took the slot freed last and the store gave its room
/// back only once empty: a burst's tail stayed spread over all its pages, and at the heap's
/// peak of the 16,384-core sort the stores held 312,384 slots for 84,274 packets (3.5 KiB
/// a node unused).
#[derive(Default)]
pub struct Store {
    pages: Vec<Box<[Packet; PAGE]>>,
    /// Bit s of word p set: slot s of page p is free.
    free: Vec<u64>,
    /// Bit q of word w set: page 64w + q has a free slot.
    open: Vec<u64>,
    /// The first word of `open` with a bit set (past the last if none).
    first_open: usize,
    /// Packets held.
    live: usize,
}

impl Store {
    /// Store `p` (once per packet, and again for each crossing between partitions: inlined,
    /// as `take`).
    #[inline]
    pub fn put(&mut self, p: Packet) -> Pkt {
        let hdr = Hdr::of(&p);
        let r = self.lowest_free();
        *self.slot_mut(r) = p;
        self.live += 1;
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

    /// The lowest free slot, taken (on a new page if every page is full).
    #[inline]
    fn lowest_free(&mut self) -> PktRef {
        let w = self.first_open;
        let Some(&pages) = self.open.get(w) else { return self.new_page() };
        let page = w * 64 + pages.trailing_zeros() as usize;
        let free = &mut self.free[page];
        let slot = free.trailing_zeros() as usize;
        *free &= *free - 1;
        if *free == 0 {
            // Full (in a steady state the first page fills at nearly every packet).
            self.open[w] &= !(1 << (page % 64));
            if self.open[w] == 0 {
                self.seek_open();
            }
        }
        (page * PAGE + slot) as PktRef
    }

    /// Move `first_open` up to the first word of `open` with a bit set (its words below
    /// have none). Out of line: once per 64 pages filled.
    #[cold]
    #[inline(never)]
    fn seek_open(&mut self) {
        let from = self.first_open.min(self.open.len());
        self.first_open = from + self.open[from..].iter().take_while(|&&b| b == 0).count();
    }

    /// A new page, its first slot taken.
    #[cold]
    #[inline(never)]
    fn new_page(&mut self) -> PktRef {
        let page = self.pages.len();
        self.pages.push(Box::new(std::array::from_fn(|_| Packet::default())));
        self.free.push(!1);
        if page.is_multiple_of(64) {
            self.open.push(0);
        }
        self.reopen(page);
        (page * PAGE) as PktRef
    }

    /// Page `page` has a free slot again.
    #[inline]
    fn reopen(&mut self, page: usize) {
        self.open[page / 64] |= 1 << (page % 64);
        self.first_open = self.first_open.min(page / 64);
    }

    /// Start loading packet `p`'s slot (it leaves its port next; a crossing takes it out).
    /// Inlined: a call of 15 host instructions around a body of 5, at each hop that leaves
    /// a packet waiting (74% of `nanopu bench network`'s).
    #[inline]
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
        self.live
    }
    /// Take the packet out, freeing its slot (the payload's reference goes with it).
    #[inline]
    pub fn take(&mut self, p: Pkt) -> Packet {
        let packet = std::mem::take(self.slot_mut(p.r));
        let (page, slot) = (p.r as usize / PAGE, p.r as usize % PAGE);
        let free = &mut self.free[page];
        let was_full = *free == 0;
        *free |= 1 << slot;
        let emptied = *free == u64::MAX;
        if was_full {
            self.reopen(page);
        }
        self.live -= 1;
        if emptied && page + 2 >= self.pages.len() {
            self.release();
        }
        packet
    }

    /// Give back the empty pages at the end, but one. Which slot a packet takes is invisible
    /// outside the fabric (PFC indexes its counts by slot, and finds them again at the
    /// packet's dequeue), so results do not change.
    #[cold]
    #[inline(never)]
    fn release(&mut self) {
        let empty = |s: &Store, i: usize| s.free[s.pages.len() - i] == u64::MAX;
        while self.pages.len() > 1 && empty(self, 1) && empty(self, 2) {
            let page = self.pages.len() - 1;
            self.pages.pop();
            self.free.pop();
            self.open[page / 64] &= !(1 << (page % 64));
            if page.is_multiple_of(64) {
                self.open.pop();
            }
        }
        self.seek_open();
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
        held[1..].iter().for_each(|&p| _ = s.take(p));
        assert_eq!((s.live(), s.capacity()), (1, 2 * PAGE), "slot 0 held, one empty page kept");
        let (a, b) = (s.put(Packet::default()), s.put(Packet::default()));
        assert_eq!((a.r, b.r, s.live()), (1, 2, 3), "the lowest free slots");
    }

    /// Packets go to the lowest free slots, so that a burst's last pages empty while
    /// packets come and go in the first ones.
    #[test]
    fn packets_gather_in_the_first_pages() {
        let mut s = Store::default();
        let mut held: Vec<Pkt> = (0..5 * PAGE).map(|_| s.put(Packet::default())).collect();
        for i in 0..4 * PAGE {
            let p = held.remove(i % held.len());
            s.take(p);
            held.push(s.put(Packet::default()));
            s.take(held.remove(0));
        }
        assert_eq!(s.live(), PAGE);
        assert!(held.iter().all(|p| (p.r as usize) < 2 * PAGE), "gathered low");
        assert!(s.capacity() <= 3 * PAGE, "{} slots kept", s.capacity());
    }

    /// Each packet takes the lowest slot not held, through bursts that grow and shrink
    /// the store, and the store keeps no more than one empty page past its last held slot.
    #[test]
    fn each_packet_takes_the_lowest_free_slot() {
        let (mut s, mut rng) = (Store::default(), nanopu_sim::Rng::new(7));
        let mut held: Vec<Pkt> = Vec::new();
        for step in 0..40_000u64 {
            let burst = (step / 5_000) % 2 == 0;
            if !held.is_empty() && rng.below(100) < if burst { 40 } else { 60 } {
                s.take(held.swap_remove(rng.below(held.len() as u64) as usize));
                continue;
            }
            let lowest = (0..).find(|r| !held.iter().any(|p| p.r == *r)).unwrap();
            held.push(s.put(Packet::default()));
            assert_eq!(held.last().unwrap().r, lowest);
            let top = held.iter().map(|p| p.r as usize / PAGE).max().unwrap();
            assert!(s.capacity() <= (top + 2) * PAGE, "step {step}");
        }
        assert_eq!(s.live(), held.len());
    }
}
