//! Per-message send state.

use super::params::TransportParams;
use super::pktset::PacketSet;
use super::segment::{flags, Segment};
use nanopu_sim::Time;
use std::collections::VecDeque;
use std::sync::Arc;

/// A message being sent, until every packet is acknowledged.
#[derive(Clone, Debug)]
pub struct OutMsg {
    /// Template of every data packet (addresses, contexts, id, length, band).
    pub proto: Segment,
    pub words: Arc<Vec<u64>>,
    pub packets: u32,
    /// Next packet never sent yet.
    pub next_new: u32,
    /// Packets to send again before new ones (NACKed or asked for).
    pub resend: VecDeque<u16>,
    pub acked: PacketSet,
    pub acked_count: u32,
    /// NDP: transmissions allowed in total; Homa: packets below this offset may be sent.
    pub allowed: u32,
    /// Transmissions so far (NDP credit accounting).
    pub sent: u32,
    pub last_progress: Time,
}

impl OutMsg {
    pub fn new(proto: Segment, words: Arc<Vec<u64>>, packets: u32, allowed: u32, now: Time) -> OutMsg {
        OutMsg {
            proto,
            words,
            packets,
            next_new: 0,
            resend: VecDeque::new(),
            acked: PacketSet::default(),
            acked_count: 0,
            allowed,
            sent: 0,
            last_progress: now,
        }
    }

    /// The data packet at `offset`.
    pub fn packet(&self, p: &TransportParams, offset: u32) -> Segment {
        let wps = (p.segment_bytes / 8) as usize;
        let start = offset as usize * wps;
        let mut s = self.proto.clone();
        s.pkt_offset = offset as u16;
        s.payload_len = p.payload_len(s.msg_len, offset);
        s.payload = Some(self.words.clone());
        s.payload_start = start as u32;
        s.flags |= flags::DATA;
        s
    }

    /// Mark `offset` acknowledged; true when the whole message is.
    pub fn ack(&mut self, offset: u16, now: Time) -> bool {
        if (offset as u32) < self.packets && self.acked.insert(offset as usize) {
            self.acked_count += 1;
            self.last_progress = now;
        }
        self.acked_count == self.packets
    }

    /// Queue `offset` to be sent again (unless already acknowledged or queued).
    pub fn nack(&mut self, offset: u16) {
        let known = (offset as u32) < self.next_new && !self.acked.contains(offset as usize);
        if known && !self.resend.contains(&offset) {
            self.resend.push_back(offset);
        }
    }

    /// NDP: the next packet the credit allows, resends first.
    pub fn next_ndp(&mut self) -> Option<u32> {
        if self.sent >= self.allowed {
            return None;
        }
        let o = self.take_resend().or_else(|| self.take_new(self.packets))?;
        self.sent += 1;
        Some(o)
    }

    /// Homa: the next packet below the grant, resends first.
    pub fn next_homa(&mut self) -> Option<u32> {
        self.take_resend().or_else(|| self.take_new(self.allowed.min(self.packets)))
    }

    fn take_resend(&mut self) -> Option<u32> {
        while let Some(o) = self.resend.pop_front() {
            if !self.acked.contains(o as usize) {
                return Some(o as u32);
            }
        }
        None
    }

    fn take_new(&mut self, limit: u32) -> Option<u32> {
        (self.next_new < limit).then(|| {
            self.next_new += 1;
            self.next_new - 1
        })
    }

    /// After a timeout: every packet sent and not acknowledged goes again.
    pub fn requeue_unacked(&mut self) {
        for o in 0..self.next_new as u16 {
            self.nack(o);
        }
    }
}
