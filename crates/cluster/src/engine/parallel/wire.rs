//! Packets and texts as 64-bit words, the form in which they cross MPI ranks.
//!
//! A packet that crossed partitions is (time, port, packet): 9 words of header fields,
//! packed, then its own payload words (not the whole message's, which its other packets
//! carry): 72 bytes plus the payload words.
//! A packet decoded is the same packet for every reader (`Packet::words` reads the same
//! words; only the sharing of one message's words between its packets is not kept).

use nanopu_sim::packet::{Packet, PacketKind};
use nanopu_sim::Time;
use std::sync::Arc;

/// Header words of an encoded packet.
const HEADER: usize = 9;

/// Append (t, port, pkt) to `out`.
pub(crate) fn put_packet(out: &mut Vec<u64>, t: Time, port: u32, p: &Packet) {
    let words = p.words();
    let kind = u64::from(p.kind == PacketKind::Frame);
    out.extend([
        t.0,
        u64::from(port) | u64::from(p.payload.is_some()) << 32 | kind << 33,
        p.id,
        u64::from(p.src_ip) | u64::from(p.dst_ip) << 32,
        u64::from(p.band)
            | u64::from(p.flags) << 8
            | u64::from(p.prio) << 16
            | u64::from(p.src_context) << 24,
        u64::from(p.dst_context)
            | u64::from(p.msg_id) << 16
            | u64::from(p.msg_len) << 32
            | u64::from(p.pkt_offset) << 48,
        u64::from(p.credit) | u64::from(p.payload_len) << 16 | (words.len() as u64) << 32,
        u64::from(p.mcast_first) | u64::from(p.mcast_count) << 32,
    ]);
    out.push(u64::from(p.mcast_seq));
    out.extend_from_slice(words);
}

/// The packets of `words` (as `put_packet` wrote them), in order.
pub(crate) fn packets(words: &[u64]) -> Vec<(Time, u32, Packet)> {
    let mut v = Vec::new();
    let mut rest = words;
    while !rest.is_empty() {
        let (h, tail) = rest.split_at(HEADER);
        let n = (h[6] >> 32) as usize;
        let (payload, tail) = tail.split_at(n);
        v.push((Time(h[0]), h[1] as u32, packet(h, payload)));
        rest = tail;
    }
    v
}

/// One packet from its header words and payload words.
fn packet(h: &[u64], payload: &[u64]) -> Packet {
    let (b, c) = (|w: u64, s: u32| (w >> s) as u8, |w: u64, s: u32| (w >> s) as u16);
    Packet {
        id: h[2],
        kind: if h[1] >> 33 & 1 == 1 { PacketKind::Frame } else { PacketKind::Transport },
        src_ip: h[3] as u32,
        dst_ip: (h[3] >> 32) as u32,
        band: b(h[4], 0),
        flags: b(h[4], 8),
        prio: b(h[4], 16),
        src_context: c(h[4], 24),
        dst_context: c(h[5], 0),
        msg_id: c(h[5], 16),
        msg_len: c(h[5], 32),
        pkt_offset: c(h[5], 48),
        credit: c(h[6], 0),
        payload_len: c(h[6], 16),
        mcast_first: h[7] as u32,
        mcast_count: (h[7] >> 32) as u32,
        mcast_seq: h[8] as u32,
        payload: (h[1] >> 32 & 1 == 1).then(|| Arc::from(payload)),
        payload_start: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Packet {
        Packet {
            id: (3 << 40) + 17,
            src_ip: 0x0a00_0005,
            dst_ip: 0xe000_0001,
            band: 2,
            flags: 0x41,
            prio: 5,
            src_context: 0xfffe,
            dst_context: 7,
            msg_id: 0x1234,
            msg_len: 2048,
            pkt_offset: 3,
            credit: 9,
            mcast_first: 4,
            mcast_count: 60,
            mcast_seq: 0xdead_beef,
            payload_len: 12,
            payload: Some(Arc::new([1, 2, 3, 4, 5])),
            payload_start: 3,
            kind: PacketKind::Transport,
        }
    }

    #[test]
    fn a_packet_crosses_with_every_field_and_only_its_own_words() {
        let (p, ctl) = (sample(), Packet { flags: 2, ..Packet::default() });
        let mut w = Vec::new();
        put_packet(&mut w, Time(123_456), 77, &p);
        put_packet(&mut w, Time(9), u32::MAX, &ctl);
        assert_eq!(w.len(), 2 * HEADER + 2, "headers and the first packet's 2 words");
        let got = packets(&w);
        assert_eq!((got[0].0, got[0].1, got[1].0, got[1].1), (Time(123_456), 77, Time(9), u32::MAX));
        let want = Packet { payload: Some(Arc::new([4, 5])), payload_start: 0, ..p };
        assert_eq!(got[0].2, want);
        assert_eq!(got[0].2.words(), &[4, 5]);
        assert_eq!(got[1].2, ctl);
    }
}
