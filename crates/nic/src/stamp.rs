//! The prototype's latency stamps: a module between the simulated network and the NIC
//! that writes cycle counts into messages from and to the testers' context 0x1234.
//!
//! Source: l-nic/lnic `src/main/scala/SimUtils.scala` (commit cbfa155, `LatencyModule` and
//! `Timestamp`; `TEST_CONTEXT_ID = 0x1234` in `LNIC.scala`), wired between `SimNetwork`
//! and the NIC by `connectSimNetwork` (l-nic/chipyard `LNICTopMixins.scala`). For every
//! DATA packet of the LNIC protocol:
//! - towards the NIC, if its *source* context is 0x1234: the last 4 bytes of the packet
//!   become the cycle at which the packet's first word passed (`reg_ts_start`);
//! - from the NIC, if its *destination* context is 0x1234: the last 4 bytes become the
//!   latency (now minus the 4-byte stamp found there) and the 4 bytes before them now.
//!
//! The counter is 32 bits of the node clock's cycles since reset (`reg_now`), wrapping;
//! the fields are in network byte order (`reverse_bytes(.., 4)`). The prototype's testers
//! (`net-app-tester.py`, `LATENCY_CONTEXT = 0x1234`) sent from that context and read the
//! latency from the replies, so the latency is from a request packet's first word entering
//! to the reply packet's last word leaving. The model hands whole messages to the NIC and
//! takes whole messages from it, so the caller gives each packet's cycle: on arrival the
//! message's last byte less the wire time of that packet and those after it (a message's
//! packets arrive back to back), on departure the message's start plus the wire time of
//! that packet and those before it (as they leave an idle port back to back).

use crate::message::Message;

/// The testers' context: messages from it are stamped, replies to it carry the latency.
pub const TEST_CONTEXT: u16 = 0x1234;

/// Does the port stamp this message on arrival (it comes from [`TEST_CONTEXT`])?
pub fn stamped_on_arrival(msg: &Message) -> bool {
    msg.src_context == TEST_CONTEXT
}

/// Does the port write the latency into this departing message (it goes to [`TEST_CONTEXT`])?
pub fn stamped_on_departure(msg: &Message) -> bool {
    msg.dst_context == TEST_CONTEXT
}

/// Stamp a message arriving from the network, if it comes from [`TEST_CONTEXT`]: packet i
/// gets `cycle(i)`, the cycle its first word passed.
pub fn on_arrival(msg: &mut Message, segment: usize, cycle: impl Fn(usize) -> u64) {
    if stamped_on_arrival(msg) {
        rewrite_packets(msg, segment, |i, p| put(p, 4, cycle(i) as u32));
    }
}

/// Write the latency into a message leaving for the network, if it goes to
/// [`TEST_CONTEXT`]: packet i leaves with its last word at `cycle(i)`.
pub fn on_departure(msg: &mut Message, segment: usize, cycle: impl Fn(usize) -> u64) {
    if stamped_on_departure(msg) {
        rewrite_packets(msg, segment, |i, p| departure(p, cycle(i) as u32));
    }
}

/// The last 8 bytes of a departing packet: now, then now minus the stamp it carried.
fn departure(packet: &mut [u8], now: u32) {
    let stamp = get(packet, 4);
    put(packet, 8, now);
    put(packet, 4, now.wrapping_sub(stamp));
}

/// Apply `f` to each packet's index and payload (`segment` bytes each, the last one shorter).
fn rewrite_packets(msg: &mut Message, segment: usize, f: impl Fn(usize, &mut [u8])) {
    let mut bytes = msg.payload_bytes();
    bytes.chunks_mut(segment.max(1)).enumerate().for_each(|(i, p)| f(i, p));
    msg.words = Message::words_from_bytes(&bytes).into();
}

/// Write `v` big-endian `from_end` bytes before the end of `p` (clipped to `p`: the
/// prototype assumed 8-byte aligned packets; a shorter one keeps what fits).
fn put(p: &mut [u8], from_end: usize, v: u32) {
    let at = p.len() as isize - from_end as isize;
    for (i, b) in v.to_be_bytes().into_iter().enumerate() {
        if let Some(slot) = usize::try_from(at + i as isize).ok().and_then(|j| p.get_mut(j)) {
            *slot = b;
        }
    }
}

/// The big-endian u32 `from_end` bytes before the end of `p` (missing bytes read as 0).
fn get(p: &[u8], from_end: usize) -> u32 {
    let at = p.len() as isize - from_end as isize;
    let byte = |i: isize| usize::try_from(at + i).ok().and_then(|j| p.get(j)).copied().unwrap_or(0);
    u32::from_be_bytes([byte(0), byte(1), byte(2), byte(3)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(src_context: u16, dst_context: u16, words: Vec<u64>) -> Message {
        let len = (words.len() * 8) as u16;
        Message { src_ip: 1, src_context, dst_ip: 2, dst_context, len, group: None, words: words.into() }
    }

    #[test]
    fn arrival_stamps_the_last_four_bytes_of_each_packet() {
        let mut m = msg(TEST_CONTEXT, 0, vec![0x1111_1111_2222_2222; 256]);
        on_arrival(&mut m, 1024, |i| 0x1_0000_00ab + 10 * i as u64);
        assert_eq!(m.words[127], 0x1111_1111_0000_00ab, "first packet's last word");
        assert_eq!(m.words[255], 0x1111_1111_0000_00b5, "second packet's last word, its own cycle");
        assert_eq!(m.words[126], 0x1111_1111_2222_2222);
    }

    #[test]
    fn departure_writes_now_and_the_latency() {
        let mut m = msg(5, TEST_CONTEXT, vec![7, 0x0000_0000_0000_0100]);
        on_departure(&mut m, 1024, |_| 0x350);
        assert_eq!(*m.words, [7, 0x0000_0350_0000_0250]);
    }

    #[test]
    fn other_contexts_pass_unchanged() {
        let mut m = msg(1, 2, vec![9, 9]);
        on_arrival(&mut m, 1024, |_| 5);
        on_departure(&mut m, 1024, |_| 5);
        assert_eq!(*m.words, [9, 9]);
    }
}
