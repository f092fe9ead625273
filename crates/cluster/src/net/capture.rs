//! Packets as bytes: the frames a capture point saw, written as a pcap or pcapng file that
//! Wireshark, tshark and Scapy read.

use nanopu_net::fabric::Captured;
use nanopu_net::packet::Packet;
use nanopu_net::pcap::PcapWriter;
use nanopu_net::pcapng::PcapngWriter;
use nanopu_net::wire::ethernet::{Mac, ETHERTYPE_IPV4};
use nanopu_net::wire::ipv4::{is_multicast, tos_for_priority, PROTO_HOMA, PROTO_NDP};
use nanopu_net::wire::packet::words_to_payload;
use nanopu_net::wire::{EthernetRepr, Flags, Frame, FrameRepr, Ipv4Repr, TransportRepr};
use nanopu_nic::Message;
use std::io::Write;

/// MAC address of the node with this IPv4 address (02:00 followed by the address).
fn mac_of(ip: u32) -> Mac {
    if is_multicast(ip) {
        return Mac::for_ipv4_multicast(ip);
    }
    let b = ip.to_be_bytes();
    Mac([2, 0, b[0], b[1], b[2], b[3]])
}

/// The bytes of a packet on the wire: a raw frame (IceNIC's) as it is.
pub fn frame_of(p: &Packet, homa: bool) -> Result<Vec<u8>, String> {
    if p.is_frame() {
        return Ok(p.frame_bytes());
    }
    let transport = TransportRepr {
        flags: Flags(p.flags),
        priority: p.prio,
        src_context: p.src_context,
        dst_context: p.dst_context,
        msg_id: p.msg_id,
        msg_len: p.msg_len,
        pkt_offset: p.pkt_offset,
        credit: p.credit,
        mcast_first: p.mcast_first,
        mcast_count: p.mcast_count,
        mcast_seq: p.mcast_seq,
    };
    let protocol = if homa { PROTO_HOMA } else { PROTO_NDP };
    let ip = Ipv4Repr {
        src: p.src_ip,
        dst: p.dst_ip,
        protocol,
        tos: tos_for_priority(p.band.min(7)),
        payload_len: 0,
        ttl: 64,
    };
    let eth = EthernetRepr { src: mac_of(p.src_ip), dst: mac_of(p.dst_ip), ethertype: ETHERTYPE_IPV4 };
    let payload = words_to_payload(p.words(), p.payload_len as usize);
    let repr = FrameRepr { eth, ip, transport };
    let frame = Frame::emit(&repr, &payload, 1024).map_err(|e| format!("packet {}: {e}", p.id))?;
    Ok(frame.into_bytes())
}

/// A message between the test host and a single node, as the DATA frames that would carry
/// it: one per 1,024-byte segment, message id 0 (a single node's port has no transport to
/// number messages), priority 0. The inverse of `host::message_of_frame`. An empty message
/// is an error: the transport header cannot describe it (`msg_len` 0 is invalid).
pub fn frames_of_message(m: &Message) -> Result<Vec<Vec<u8>>, String> {
    let bytes = m.payload_bytes();
    let segments: Vec<&[u8]> = if bytes.is_empty() { vec![&[]] } else { bytes.chunks(1024).collect() };
    let eth = EthernetRepr { src: mac_of(m.src_ip), dst: mac_of(m.dst_ip), ethertype: ETHERTYPE_IPV4 };
    let ip = Ipv4Repr { src: m.src_ip, dst: m.dst_ip, protocol: PROTO_NDP, tos: 0, payload_len: 0, ttl: 64 };
    let frame = |(i, seg): (usize, &&[u8])| {
        let (src_context, dst_context, msg_len, pkt_offset) = (m.src_context, m.dst_context, m.len, i as u16);
        let transport = TransportRepr {
            flags: Flags::DATA,
            src_context,
            dst_context,
            msg_len,
            pkt_offset,
            ..Default::default()
        };
        let repr = FrameRepr { eth, ip, transport };
        Frame::emit(&repr, seg, 1024).map(Frame::into_bytes).map_err(|e| e.to_string())
    };
    segments.iter().enumerate().map(frame).collect()
}

/// The format of a capture file: classic pcap, or pcapng, whose interface is named after
/// the capture point and whose packets say which way they went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureFormat {
    Pcap,
    Pcapng,
}

impl CaptureFormat {
    /// pcapng for a `.pcapng` file, else the classic pcap.
    pub fn of_path(path: &std::path::Path) -> CaptureFormat {
        match path.extension().is_some_and(|e| e == "pcapng") {
            true => CaptureFormat::Pcapng,
            false => CaptureFormat::Pcap,
        }
    }
}

/// Write captured packets as a pcap stream.
pub fn write_pcap<W: Write>(w: W, packets: &[Captured], homa: bool) -> Result<W, String> {
    let mut pcap = PcapWriter::new(w).map_err(|e| e.to_string())?;
    for (t, _, p) in packets {
        pcap.write_packet(t.as_fs(), &frame_of(p, homa)?).map_err(|e| e.to_string())?;
    }
    pcap.flush().map_err(|e| e.to_string())?;
    Ok(pcap.into_inner())
}

/// Write captured packets as a pcapng stream: one interface named `interface` (the capture
/// point), each packet with its direction there.
pub fn write_pcapng<W: Write>(w: W, interface: &str, packets: &[Captured], homa: bool) -> Result<W, String> {
    let e = |e: std::io::Error| e.to_string();
    let mut ng = PcapngWriter::new(w).map_err(e)?;
    let id = ng.add_interface(interface).map_err(e)?;
    for (t, dir, p) in packets {
        ng.write_packet(id, t.as_fs(), *dir, &frame_of(p, homa)?).map_err(e)?;
    }
    ng.flush().map_err(e)?;
    Ok(ng.into_inner())
}
