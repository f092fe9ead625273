//! ECN marking in the switches' output queues, DCTCP's step function (docs/models/network.md
//! "ECN"): a packet arriving at a switch output port whose queue already holds more than
//! `K` bytes is marked Congestion Experienced, if it is an ECN-capable IPv4 packet.
//!
//! - DCTCP (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, section 3.1 "Simple
//!   Marking at the Switch"): "an arriving packet is marked with the CE codepoint if the
//!   queue occupancy is greater than K upon its arrival", the instantaneous queue, not an
//!   average as RED's; K is the one parameter.
//! - RFC 3168 section 5: the ECN field is the two low bits of the IPv4 TOS byte: 00
//!   Not-ECT, 10 ECT(0), 01 ECT(1), 11 CE. A router sets CE only in an ECT packet; a
//!   Not-ECT packet is left as it is (it would be dropped where marking applies, and here it
//!   simply queues or finds its band full as before). A CE packet stays CE.
//!
//! Only raw frames (IceNIC, ZeroNIC and RDMA NIC traffic, Ethernet + IPv4 bytes) carry an
//! ECN field; the nanoPU transport's packets have none of their own and are never marked.

use crate::packet::Packet;
use crate::wire::{ethernet, ipv4};
use std::sync::Arc;

/// The ECN field's code points (RFC 3168 section 5).
pub const NOT_ECT: u8 = 0b00;
pub const ECT1: u8 = 0b01;
pub const ECT0: u8 = 0b10;
pub const CE: u8 = 0b11;
/// The ECN field within the TOS byte.
const ECN_MASK: u8 = 0b11;

/// Should a packet arriving to a queue of `queued` bytes be marked, with threshold `k`
/// bytes? DCTCP's step: strictly more than K upon arrival.
pub fn above_threshold(k: Option<u32>, queued: u32) -> bool {
    k.is_some_and(|k| queued > k)
}

/// Mark packet `p` CE if it is an ECN-capable IPv4 frame (ECT(0) or ECT(1)), fixing the
/// IPv4 header checksum; true if it was marked. Not-ECT, CE, non-IPv4 and transport
/// packets are left alone.
pub fn mark(p: &mut Packet) -> bool {
    let Some(mut hdr) = ip_header(p) else { return false };
    let tos = hdr[1];
    if !matches!(tos & ECN_MASK, ECT0 | ECT1) {
        return false;
    }
    let mut ip = ipv4::Ipv4Packet::new_unchecked(&mut hdr[..]);
    ip.set_tos(tos | CE);
    ip.fill_checksum();
    put_ip_header(p, &hdr);
    true
}

/// The ECN code point of a frame's IPv4 header, if it is one (tests and counters).
pub fn codepoint(p: &Packet) -> Option<u8> {
    ip_header(p).map(|h| h[1] & ECN_MASK)
}

/// Byte `i` of a frame (its words are big-endian, 8 bytes each: `Packet::frame`).
fn byte(words: &[u64], i: usize) -> u8 {
    words[i / 8].to_be_bytes()[i % 8]
}

/// The 20-byte IPv4 header of an Ethernet frame carrying IPv4 without options.
fn ip_header(p: &Packet) -> Option<[u8; ipv4::HEADER_LEN]> {
    let (e, end) = (ethernet::HEADER_LEN, ethernet::HEADER_LEN + ipv4::HEADER_LEN);
    if !p.is_frame() || (p.payload_len as usize) < end || p.payload_start != 0 {
        return None;
    }
    let w = p.payload.as_deref()?;
    let ethertype = u16::from_be_bytes([byte(w, e - 2), byte(w, e - 1)]);
    if ethertype != ethernet::ETHERTYPE_IPV4 || byte(w, e) != 0x45 {
        return None;
    }
    Some(std::array::from_fn(|i| byte(w, e + i)))
}

/// Write a frame's IPv4 header back (the words are copied first if another packet shares
/// them: a multicast copy's).
fn put_ip_header(p: &mut Packet, hdr: &[u8; ipv4::HEADER_LEN]) {
    let w = Arc::make_mut(p.payload.as_mut().expect("ip_header found a payload"));
    for (k, &b) in hdr.iter().enumerate() {
        let i = ethernet::HEADER_LEN + k;
        let mut bytes = w[i / 8].to_be_bytes();
        bytes[i % 8] = b;
        w[i / 8] = u64::from_be_bytes(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet + IPv4 + 40-byte payload frame whose TOS carries `ecn`.
    fn frame(ecn: u8) -> Packet {
        frame_of(ecn, 74, 0x0a00_0003, 0x0a00_0002)
    }

    /// A `len`-byte Ethernet + IPv4 frame from `src` to `dst` whose TOS carries `ecn`.
    fn frame_of(ecn: u8, len: usize, src: u32, dst: u32) -> Packet {
        let mut b = vec![0u8; len];
        b[12..14].copy_from_slice(&ethernet::ETHERTYPE_IPV4.to_be_bytes());
        let mut ip = ipv4::Ipv4Packet::new_unchecked(&mut b[14..34]);
        ip.set_version_ihl();
        ip.set_tos(ecn);
        ip.set_total_len((len - 14) as u16);
        ip.set_ttl(64);
        ip.set_protocol(6);
        ip.set_src(src);
        ip.set_dst(dst);
        ip.fill_checksum();
        Packet::frame(src, dst, &b)
    }

    /// Nodes 1 and 2 of a three-node star each send eight 1,000-byte frames with `ecn` to
    /// node 0 at once: the switch's port to node 0 takes two frames per frame time and sends
    /// one, so its queue grows a frame (1,000 bytes) at a time. The frames node 0 received
    /// marked CE and the fabric's count of marks.
    fn incast(k: Option<u32>, ecn: u8) -> (usize, u64) {
        use crate::fabric::{
            Fabric, FabricParams, LinkParams, NetEvent, SwitchParams, Topology, NODE_IP_BASE,
        };
        use nanopu_sim::Time;
        let switch = SwitchParams { ecn_k_bytes: k, ..SwitchParams::default() };
        let (topology, link) = (Topology::Star { nodes: 3 }, LinkParams::default());
        let p = FabricParams { topology, link, switch, faults: vec![], seed: 1, host: false };
        let mut f = Fabric::new(p).unwrap();
        let mut q: Vec<(Time, NetEvent)> = Vec::new();
        for (node, _) in (1..3).flat_map(|n| (0..8).map(move |i| (n, i))) {
            f.send(Time::ZERO, node, frame_of(ecn, 1000, NODE_IP_BASE + node, NODE_IP_BASE), &mut q);
        }
        let mut got = Vec::new();
        while let Some(i) = (0..q.len()).min_by_key(|&i| (q[i].0, i)) {
            let (t, ev) = q.swap_remove(i);
            f.handle(t, ev, &mut q, &mut got);
        }
        assert_eq!(got.len(), 16, "nothing dropped: the band holds 16 KB");
        assert!(got.iter().all(|(_, p)| checksum_ok(p)), "every header checksum right");
        (got.iter().filter(|(_, p)| codepoint(p) == Some(CE)).count(), f.stats().ecn_marks)
    }

    #[test]
    fn a_switch_marks_what_arrives_to_a_queue_longer_than_k() {
        let marks = |k| incast(k, ECT0);
        assert_eq!(marks(None), (0, 0), "off by default");
        let (at_0, counted) = marks(Some(0));
        assert!(at_0 > 0 && at_0 < 16, "a packet that finds the queue empty is not marked: {at_0}");
        assert_eq!(counted as usize, at_0, "the fabric counts what it marked");
        // The queue holds whole 1,000-byte frames: K = 999 marks what K = 0 does, K = 1,000
        // spares the packets that found exactly 1,000 bytes (greater than K, not equal).
        assert_eq!(marks(Some(999)).0, at_0);
        let at_1000 = marks(Some(1000)).0;
        assert!(at_1000 < at_0, "{at_1000} vs {at_0}");
        assert!(marks(Some(4000)).0 < at_1000);
        assert_eq!(marks(Some(144 * 1024 - 1)).0, 0, "the queue (16 KB at most) never passes K");
        assert_eq!(incast(Some(0), NOT_ECT), (0, 0), "Not-ECT frames are never marked");
        assert_eq!(incast(Some(0), ECT1).0, at_0, "ECT(1) as ECT(0)");
    }

    fn checksum_ok(p: &Packet) -> bool {
        ipv4::Ipv4Packet::new_unchecked(&p.frame_bytes()[14..34]).verify_checksum()
    }

    #[test]
    fn the_step_marks_strictly_above_k_and_never_when_off() {
        assert!(!above_threshold(Some(30_000), 29_999));
        assert!(!above_threshold(Some(30_000), 30_000), "at K: not marked (greater than K)");
        assert!(above_threshold(Some(30_000), 30_001));
        assert!(!above_threshold(None, u32::MAX), "no K: marking is off");
    }

    #[test]
    fn ect_packets_become_ce_with_a_right_checksum() {
        for ect in [ECT0, ECT1] {
            let mut p = frame(ect | 0xb8); // DSCP bits are kept
            assert!(mark(&mut p));
            assert_eq!(codepoint(&p), Some(CE));
            assert_eq!(p.frame_bytes()[15], 0xb8 | CE);
            assert!(checksum_ok(&p), "the IPv4 header checksum is updated");
        }
    }

    #[test]
    fn not_ect_ce_and_other_packets_are_left_alone() {
        let mut p = frame(NOT_ECT);
        assert!(!mark(&mut p), "RFC 3168: Not-ECT packets are never marked");
        assert_eq!(p, frame(NOT_ECT));
        let mut p = frame(CE);
        assert!(!mark(&mut p));
        let mut t = Packet::default(); // a nanoPU transport packet: no ECN field
        assert!(!mark(&mut t));
        let mut arp = frame(ECT0);
        let mut b = arp.frame_bytes();
        b[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        arp = Packet::frame(1, 2, &b);
        assert!(!mark(&mut arp), "not IPv4");
    }

    #[test]
    fn a_shared_payload_is_copied_before_marking() {
        let p = frame(ECT0);
        let mut q = p.clone();
        assert!(mark(&mut q));
        assert_eq!(codepoint(&p), Some(ECT0), "the other copy keeps its code point");
        assert_eq!(codepoint(&q), Some(CE));
    }
}
