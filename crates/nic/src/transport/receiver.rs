//! Reassembly of one incoming message.

use super::pktset::PacketSet;
use super::segment::Segment;
use crate::message::{zero_words, Words};
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
    /// Filled packet by packet: this message's alone until delivered (`store`). A message
    /// of one packet (its first transmission trimmed) takes that packet's words when it
    /// comes, shared with the sender, and has none before.
    pub words: Words,
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
            words: zero_words(if packets == 1 { 0 } else { (s.msg_len as usize).div_ceil(8) }),
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
        if self.packets == 1 {
            self.words = one_packet_words(s);
            return true;
        }
        let start = o * seg_words;
        let words = s.words();
        // The words are shared only once delivered (nothing clones an `InMsg`).
        let mine = Words::get_mut(&mut self.words).expect("a message's words are its own until delivered");
        let n = words.len().min(mine.len().saturating_sub(start));
        mine[start..start + n].copy_from_slice(&words[..n]);
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
/// Nearly always the sender's words themselves, shared: the packet carries all of them.
pub fn one_packet_words(s: &Segment) -> Words {
    match (carries_all(s), &s.payload) {
        (true, Some(all)) => Words::clone(all),
        _ => padded_words(s),
    }
}

/// `one_packet_words` of a packet nothing reads after: the sender's words taken out of it,
/// not shared. Sharing them counts a reference on the words' first host line, which by
/// the time the packet arrives is rarely in the host's caches (one miss a message, and an
/// atomic one, which nothing else proceeds past).
pub fn one_packet_words_of(mut s: Segment) -> Words {
    match (carries_all(&s), s.payload.take()) {
        (true, Some(all)) => all,
        (_, payload) => padded_words(&Segment { payload, ..s }),
    }
}

/// Whether `s` carries all of its sender's words, and they are exactly its message's.
fn carries_all(s: &Segment) -> bool {
    let n = (s.msg_len as usize).div_ceil(8);
    s.payload.as_ref().is_some_and(|all| s.payload_start == 0 && all.len() == n && s.words().len() == n)
}

/// `s`'s words, cut or padded with zeros to its message's length, in words of their own.
fn padded_words(s: &Segment) -> Words {
    let n = (s.msg_len as usize).div_ceil(8);
    s.words().iter().copied().chain(std::iter::repeat(0)).take(n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(words: &Words, msg_len: u16, payload_start: u16) -> Segment {
        let payload = Some(Words::clone(words));
        Segment { msg_len, payload_len: msg_len, payload_start, payload, ..Segment::default() }
    }

    #[test]
    fn a_message_whole_in_one_packet_is_delivered_in_its_senders_words() {
        let words: Words = [1, 2, 3].into();
        assert!(Words::ptr_eq(&one_packet_words(&packet(&words, 24, 0)), &words));
        // The last word partly used: still the message's words (the sender masked it).
        assert!(Words::ptr_eq(&one_packet_words(&packet(&words, 17, 0)), &words));
        // Taken out of the packet: the same words, not another reference left behind.
        let taken = one_packet_words_of(packet(&words, 24, 0));
        assert!(Words::ptr_eq(&taken, &words));
        assert_eq!(Words::strong_count(&words), 2);
    }

    #[test]
    fn a_packet_of_part_of_its_words_gives_a_copy_of_the_part() {
        let words: Words = [1, 2, 3, 4].into();
        let (first, later) =
            (one_packet_words(&packet(&words, 16, 0)), one_packet_words(&packet(&words, 16, 2)));
        assert_eq!((&first[..], &later[..]), (&[1, 2][..], &[3, 4][..]));
        assert!(!Words::ptr_eq(&first, &words));
        // Fewer words than the message's length: padded with zeros, as `InMsg::store` pads.
        assert_eq!(&one_packet_words(&packet(&words, 48, 2))[..], &[3, 4, 0, 0, 0, 0][..]);
        assert_eq!(&one_packet_words_of(packet(&words, 48, 2))[..], &[3, 4, 0, 0, 0, 0][..]);
        assert_eq!(&one_packet_words_of(packet(&words, 16, 2))[..], &[3, 4][..]);
    }

    #[test]
    fn a_message_of_one_packet_trimmed_first_takes_the_resent_packets_words() {
        let words: Words = [1, 2, 3].into();
        let mut m = InMsg::new(&packet(&words, 24, 0), 1, Time::ZERO);
        assert!(m.store(&packet(&words, 24, 0), 3, Time::ZERO) && m.complete());
        assert!(Words::ptr_eq(&m.words, &words));
    }

    #[test]
    fn reassembled_words_are_the_packets_words_in_place() {
        let words: Words = [1, 2, 3, 4, 5].into();
        let mut m = InMsg::new(&packet(&words, 40, 0), 3, Time::ZERO);
        for (o, start) in [(2u16, 4u16), (0, 0), (1, 2)] {
            let mut s = packet(&words, 40, start);
            (s.pkt_offset, s.payload_len) = (o, if o == 2 { 8 } else { 16 });
            assert!(m.store(&s, 2, Time::ZERO));
        }
        assert!(m.complete());
        assert_eq!(&m.words[..], &words[..]);
    }
}
