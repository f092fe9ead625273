//! Per-message send state.
//!
//! NDP (`docs/models/network.md`, "NDP's rules"): a packet is *in flight* from a
//! transmission until the receiver answers that transmission (ACK or NACK). Only packets in
//! flight can time out; a NACKed packet waits in `resend` for a PULL however long the
//! receiver's pacer takes. Each data packet carries its transmission number (in `credit`)
//! and the answer echoes it, so an answer to an older transmission of the same packet (a
//! duplicate, or one a timeout already gave up on) is told apart from the answer to the
//! latest.

use super::params::TransportParams;
use super::pktset::PacketSet;
use super::segment::{flags, Segment};
use nanopu_sim::Time;
use std::sync::Arc;

/// A message being sent, until every packet is acknowledged.
///
/// Its small methods are `#[inline]`: the `fast` build (the tests', and the profiles')
/// splits the crate into 16 code units without link-time optimisation, where an unmarked
/// function in another unit is a call, dearer than its body, on every packet sent and
/// answered (docs/profile.md).
#[derive(Clone, Debug)]
pub struct OutMsg {
    /// Template of every data packet (addresses, contexts, id, length, band, and the
    /// message's words as its payload: one pointer where a field beside it took another).
    pub proto: Segment,
    /// Packets in the message (`packets`): 16 bits, as their offsets on the wire.
    packets: u16,
    /// Next packet never sent yet (offsets are 16 bits on the wire).
    pub next_new: u16,
    /// The packets to send again and the transmissions in flight, boxed at the first
    /// need (`Extra`): most messages never resend and are one packet.
    extra: Option<Box<Extra>>,
    pub acked: PacketSet,
    /// NDP: transmissions allowed in total; Homa: packets below this offset may be sent.
    pub allowed: u32,
    /// Transmissions so far (NDP credit accounting; the latest one's number).
    pub sent: u32,
    /// Homa: when the sender last heard of progress (the timeout's reference).
    pub last_progress: Time,
    /// NDP: a one-packet message's `Extra::in_flight` (nearly every NanoSort message): no
    /// allocation per message for it.
    in_flight_one: u16,
    /// NDP: packets in flight.
    flying: u16,
    /// NDP: the latest of the in-flight packets' departures and the answers since (the
    /// timeout's reference: RFC 6298 section 5 restarts the timer on an answer).
    flight_base: Time,
    /// When this message's entry among the endpoint's deadlines is (`deadlines`); `Time::MAX`
    /// when it has none (no deadline is that late; 8 bytes where an `Option` takes 16, room
    /// the 128 bytes of a message's state do not have).
    pub(crate) rto_entry: Time,
}

/// What only some messages being sent need, in one box: 8 bytes in every message's state
/// where the two fields took 24 (a thin pointer and a boxed slice), which with the 16-byte
/// `PacketSet` brings the state from 160 bytes to 128, the allocator's next size class
/// down (about 47 messages a node at the 16,384-core sort's peak; docs/profile.md).
#[derive(Clone, Debug, Default)]
struct Extra {
    /// Packets to send again before new ones (NACKed or asked for), the next first
    /// (`resends`). A vector, not a deque: it is short.
    resend: Vec<u16>,
    /// NDP: per packet, the number of its transmission in flight (0: none); allocated at
    /// the first launch, and only for a message of more than one packet (`flights`).
    in_flight: Box<[u16]>,
}

impl OutMsg {
    /// Start loading the host cache line of the words' reference counts, which dropping
    /// the message writes (`retired`). They sit just before the words in the standard
    /// library's `Arc` (its layout, not a promise of it: a wrong guess only wastes the
    /// hint).
    pub fn prefetch_counts(&self) {
        if let Some(w) = &self.proto.payload {
            nanopu_sim::hint::prefetch_line((Arc::as_ptr(w) as *const u64 as *const u8).wrapping_sub(16));
        }
    }

    #[inline]
    pub fn new(mut proto: Segment, words: Arc<[u64]>, packets: u32, allowed: u32, now: Time) -> OutMsg {
        proto.payload = Some(words);
        OutMsg {
            proto,
            packets: u16::try_from(packets).expect("offsets are 16 bits on the wire"),
            next_new: 0,
            extra: None,
            acked: PacketSet::default(),
            allowed,
            sent: 0,
            last_progress: now,
            in_flight_one: 0,
            flying: 0,
            flight_base: now,
            rto_entry: Time::MAX,
        }
    }

    /// The data packet at `offset`.
    #[inline]
    pub fn packet(&self, p: &TransportParams, offset: u32) -> Segment {
        let wps = (p.segment_bytes / 8) as usize;
        let start = offset as usize * wps;
        let mut s = self.proto.clone();
        s.pkt_offset = offset as u16;
        s.payload_len = p.payload_len(s.msg_len, offset);
        s.payload_start = start as u16;
        s.flags |= flags::DATA;
        s
    }

    /// Mark `offset` acknowledged; true when the whole message is. An ACK of any of its
    /// transmissions is the truth about the packet, so it is no longer in flight either.
    #[inline]
    pub fn ack(&mut self, offset: u16, now: Time) -> bool {
        if (offset as u32) < self.packets() && self.acked.insert(offset as usize) {
            self.last_progress = now;
            self.land(offset as usize, now);
        }
        self.acked.len() == self.packets()
    }

    /// NDP: a NACK of transmission `tx` of `offset`. Only the answer to the packet's latest
    /// transmission in flight queues it for a resend (on a PULL); an answer to an older one
    /// changes nothing, as the latest may still arrive.
    pub fn nack_ndp(&mut self, offset: u16, tx: u16, now: Time) {
        let o = offset as usize;
        self.last_progress = now;
        if self.flights().get(o).is_some_and(|&t| t != 0 && t == tx) {
            self.land(o, now);
            self.nack(offset);
        }
    }

    /// NDP: transmission number `tx` of `offset` leaves the NIC at `departs`.
    #[inline]
    pub fn launched(&mut self, offset: u32, tx: u16, departs: Time) {
        if self.packets() > 1 && self.flights().is_empty() {
            self.extra_mut().in_flight = vec![0; self.packets as usize].into_boxed_slice();
        }
        let slot = &mut self.flights_mut()[offset as usize];
        let fresh = *slot == 0;
        *slot = tx;
        self.flying += fresh as u16;
        self.flight_base = self.flight_base.max(departs);
    }

    /// Packets in the message.
    #[inline]
    pub fn packets(&self) -> u32 {
        u32::from(self.packets)
    }

    /// Packets to send again before new ones, the next first.
    #[inline]
    pub fn resends(&self) -> &[u16] {
        self.extra.as_deref().map_or(&[], |e| &e.resend[..])
    }

    fn resend_mut(&mut self) -> &mut Vec<u16> {
        &mut self.extra_mut().resend
    }

    fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// Per packet, the number of its transmission in flight (0: none).
    #[inline]
    fn flights(&self) -> &[u16] {
        if self.packets() == 1 {
            std::slice::from_ref(&self.in_flight_one)
        } else {
            self.extra.as_deref().map_or(&[], |e| &e.in_flight[..])
        }
    }

    #[inline]
    fn flights_mut(&mut self) -> &mut [u16] {
        if self.packets() == 1 {
            std::slice::from_mut(&mut self.in_flight_one)
        } else {
            self.extra.as_deref_mut().map_or(&mut [], |e| &mut e.in_flight[..])
        }
    }

    /// `o` is answered (or acknowledged): no longer in flight.
    #[inline]
    fn land(&mut self, o: usize, now: Time) {
        if let Some(t) = self.flights_mut().get_mut(o).filter(|t| **t != 0) {
            *t = 0;
            self.flying -= 1;
        }
        self.flight_base = self.flight_base.max(now);
    }

    /// NDP: when the message times out: `rto` after its packets in flight left or were last
    /// answered; with none in flight (waiting for PULLs), `pull_wait` after the receiver
    /// last said anything about it.
    #[inline]
    pub fn ndp_deadline(&self, rto: Time, pull_wait: Time) -> Time {
        if self.flying > 0 {
            self.flight_base + rto
        } else {
            self.last_progress + pull_wait
        }
    }

    /// NDP, after a timeout: every packet in flight is taken for lost and queued to go again;
    /// how many were.
    pub fn requeue_in_flight(&mut self, now: Time) -> u32 {
        let lost: Vec<usize> = (0..self.flights().len()).filter(|&o| self.flights()[o] != 0).collect();
        // Ahead of the NACKed packets that wait for their PULLs: the timeout sends these.
        for &o in lost.iter().rev() {
            self.land(o, now);
            let resend = self.resend_mut();
            resend.retain(|&r| r as usize != o);
            resend.insert(0, o as u16);
        }
        lost.len() as u32
    }

    /// Queue `offset` to be sent again (unless already acknowledged or queued).
    pub fn nack(&mut self, offset: u16) {
        let known = offset < self.next_new && !self.acked.contains(offset as usize);
        if known && !self.resends().contains(&offset) {
            self.resend_mut().push(offset);
        }
    }

    /// NDP: the next packet the credit allows, resends first.
    #[inline]
    pub fn next_ndp(&mut self) -> Option<u32> {
        if self.sent >= self.allowed {
            return None;
        }
        let o = self.take_resend().or_else(|| self.take_new(self.packets()))?;
        self.sent += 1;
        Some(o)
    }

    /// Homa: the next packet below the grant, resends first.
    #[inline]
    pub fn next_homa(&mut self) -> Option<u32> {
        self.take_resend().or_else(|| self.take_new(self.allowed.min(self.packets())))
    }

    #[inline]
    fn take_resend(&mut self) -> Option<u32> {
        while !self.resends().is_empty() {
            let o = self.resend_mut().remove(0);
            if !self.acked.contains(o as usize) {
                return Some(o as u32);
            }
        }
        None
    }

    #[inline]
    fn take_new(&mut self, limit: u32) -> Option<u32> {
        (u32::from(self.next_new) < limit).then(|| {
            self.next_new += 1;
            u32::from(self.next_new - 1)
        })
    }

    /// Homa, after a timeout: every packet sent and not acknowledged goes again.
    pub fn requeue_unacked(&mut self) {
        for o in 0..self.next_new {
            self.nack(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message's state fits the allocator's 128-byte size class (docs/profile.md).
    #[test]
    fn a_message_being_sent_is_at_most_128_bytes() {
        assert!(std::mem::size_of::<OutMsg>() <= 128, "{}", std::mem::size_of::<OutMsg>());
    }

    /// A message of several packets keeps its transmissions in flight and its resends in
    /// the one box, made at its first launch; a one-packet message needs none.
    #[test]
    fn a_long_message_keeps_its_flights_and_resends_in_one_box() {
        let mut m = OutMsg::new(Segment::default(), Arc::new([0; 3]), 3, 3, Time::ZERO);
        assert!(m.extra.is_none());
        for o in 0..3 {
            assert_eq!(m.next_ndp(), Some(o));
            m.launched(o, 1, Time::ZERO);
        }
        assert_eq!(m.flights(), &[1, 1, 1]);
        m.nack_ndp(1, 1, Time::ZERO);
        assert_eq!((m.flying, m.resends()), (2, &[1u16][..]));
        assert!(!m.ack(0, Time::ZERO));
        assert_eq!(m.requeue_in_flight(Time::ZERO), 1, "offset 2 was still in flight");
        assert_eq!((m.flying, m.resends()), (0, &[2u16, 1][..]));
        let mut one = OutMsg::new(Segment::default(), Arc::new([0]), 1, 1, Time::ZERO);
        one.launched(0, 1, Time::ZERO);
        assert!(one.ack(0, Time::ZERO) && one.extra.is_none());
    }
}
