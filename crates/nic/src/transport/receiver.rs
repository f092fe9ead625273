//! Reassembly of one incoming message.

use super::pktset::PacketSet;
use super::segment::Segment;
use nanopu_sim::Time;

/// A message being received.
#[derive(Clone, Debug)]
pub struct InMsg {
    pub src_ip: u32,
    pub src_context: u16,
    pub dst_context: u16,
    pub msg_id: u16,
    pub len: u16,
    pub packets: u32,
    pub got: PacketSet,
    pub got_count: u32,
    pub words: Vec<u64>,
    /// Transmissions the sender needs in total: packets plus one per trimmed arrival.
    pub needed: u32,
    /// NDP: PULLs queued (including those sent).
    pub pulled: u32,
    /// NDP: PULLs sent.
    pub pull_sent: u32,
    /// NDP: a `ReceiverRto` timer is pending (armed when a PULL goes).
    pub pull_timer: bool,
    /// Homa: grant offset sent so far (packets).
    pub granted: u32,
    pub multicast: bool,
    /// The last arrival; NDP: or the last PULL sent, if later.
    pub last_progress: Time,
}

impl InMsg {
    pub fn new(s: &Segment, packets: u32, now: Time) -> InMsg {
        InMsg {
            src_ip: s.src_ip,
            src_context: s.src_context,
            dst_context: s.dst_context,
            msg_id: s.msg_id,
            len: s.msg_len,
            packets,
            got: PacketSet::default(),
            got_count: 0,
            words: vec![0; (s.msg_len as usize).div_ceil(8)],
            needed: packets,
            pulled: 0,
            pull_sent: 0,
            pull_timer: false,
            granted: 0,
            multicast: s.mcast_count != 0,
            last_progress: now,
        }
    }

    /// Store a data packet; false if it was a duplicate.
    pub fn store(&mut self, s: &Segment, seg_words: usize, now: Time) -> bool {
        let o = s.pkt_offset as usize;
        if o >= self.packets as usize || !self.got.insert(o) {
            return false;
        }
        self.got_count += 1;
        self.last_progress = now;
        let start = o * seg_words;
        let words = s.words();
        let n = words.len().min(self.words.len().saturating_sub(start));
        self.words[start..start + n].copy_from_slice(&words[..n]);
        true
    }

    pub fn complete(&self) -> bool {
        self.got_count == self.packets
    }

    /// Offsets not yet received below `limit`.
    pub fn missing_below(&self, limit: u32) -> impl Iterator<Item = u16> + '_ {
        let limit = limit.min(self.packets) as usize;
        (0..limit).filter(|&o| !self.got.contains(o)).map(|o| o as u16)
    }
}

/// The payload of a message that came whole in `s`, one packet: what `InMsg::store` would
/// have made of it (the packet's words, cut or padded with zeros to the message's length).
pub fn one_packet_words(s: &Segment) -> Vec<u64> {
    let n = (s.msg_len as usize).div_ceil(8);
    let w = s.words();
    // Room for exactly the message's words, once: the words stay with the message until
    // its core reads them.
    if w.len() >= n {
        // Nearly always: one allocation and one copy, with no growth or padding to check.
        return w[..n].to_vec();
    }
    let mut words = Vec::with_capacity(n);
    words.extend_from_slice(w);
    words.resize(n, 0);
    words
}
