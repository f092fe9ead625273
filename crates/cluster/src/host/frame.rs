//! What the test host exchanges as raw frames: frames from IceNIC nodes with their arrival
//! times, and the nanoPU message a raw transport frame carries.

use crate::node::boot::{ip_text, mac_text, node_ip, node_mac};
use nanopu_net::wire::ethernet::{EthernetFrame, ETHERTYPE_IPV4};
use nanopu_net::wire::ipv4::{Ipv4Packet, PROTO_HOMA, PROTO_NDP};
use nanopu_net::wire::packet::SEGMENT_BYTES;
use nanopu_net::wire::transport::TransportHeader;
use nanopu_net::wire::Flags;
use nanopu_nic::Message;
use nanopu_sim::Time;

/// A frame the test host received from an IceNIC node, when its last byte arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFrame {
    pub time: Time,
    pub frame: Vec<u8>,
}

/// The message a raw frame from the test host carries to one of `nodes` nodes (0..nodes),
/// or why the NIC drops it. In the order a NIC looks at a frame: its MAC (the node's own,
/// 02:00 and its IPv4 address), then its IPv4 destination, then what kind of transport
/// packet it is (only untrimmed DATA carries a message), then every field.
pub fn message_of_frame(frame: &[u8], nodes: u32) -> Result<Message, String> {
    check_addresses(frame, nodes)?;
    check_kind(frame)?;
    parse_message(frame)
}

/// The destination MAC must be a node's, and the IPv4 destination that same node's (a
/// frame too short for a header is left to `parse_message`, which names what is missing).
fn check_addresses(frame: &[u8], nodes: u32) -> Result<(), String> {
    let Ok(eth) = EthernetFrame::new_checked(frame) else { return Ok(()) };
    let mac = eth.dst().to_u64();
    // Node MACs are consecutive, as their IPv4 addresses are.
    let Some(n) = mac.checked_sub(node_mac(0)).filter(|&n| n < u64::from(nodes)).map(|n| n as u32) else {
        return Err(format!(
            "to MAC {}, which is no node's here ({}: node 0's, 02:00 followed by a node's IPv4 address): \
             the NIC's MAC filter drops it",
            mac_text(mac),
            mac_text(node_mac(0))
        ));
    };
    let Some(ip) = ipv4(&eth) else { return Ok(()) };
    if ip.dst() != node_ip(n) {
        return Err(format!(
            "to IPv4 {}, not {} (node {n}, whose MAC it carries): the NIC drops a packet addressed to another host",
            ip_text(ip.dst()),
            ip_text(node_ip(n))
        ));
    }
    Ok(())
}

/// The IPv4 header of an IPv4 frame, if it holds one (its checksum unchecked).
fn ipv4<'a>(eth: &'a EthernetFrame<&'a [u8]>) -> Option<Ipv4Packet<&'a [u8]>> {
    (eth.ethertype() == ETHERTYPE_IPV4).then(|| Ipv4Packet::new_checked(eth.payload()).ok()).flatten()
}

/// Only an untrimmed DATA packet carries (a segment of) a message; every other kind is one
/// the transport's endpoints exchange about a message (`nanopu_nic::transport`'s
/// `on_packet`: DATA for the receiving half, every other kind an answer for the sending
/// half). The test host's messages need none: on a single node the port has no transport,
/// and in a cluster the host's own transport makes and answers them.
fn check_kind(frame: &[u8]) -> Result<(), String> {
    let Some(flags) = transport_flags(frame) else { return Ok(()) };
    match kind_of(flags) {
        None => Ok(()),
        Some(what) => Err(format!(
            "{flags} packet: {what}; the test host's frames must carry messages (untrimmed DATA), \
             the transport makes and answers its own control packets"
        )),
    }
}

/// The transport flags of a nanoPU frame (IPv4, protocol NDP or Homa), unchecked.
fn transport_flags(frame: &[u8]) -> Option<Flags> {
    let eth = EthernetFrame::new_checked(frame).ok()?;
    let ip = ipv4(&eth).filter(|ip| [PROTO_NDP, PROTO_HOMA].contains(&ip.protocol()))?;
    Some(TransportHeader::new_checked(ip.payload()).ok()?.flags())
}

/// What a packet that carries no message does in the transport (None: DATA, or no kind
/// bit, which `parse_message` names).
fn kind_of(flags: Flags) -> Option<&'static str> {
    let what = if flags.contains(Flags::DATA) && flags.contains(Flags::CHOP) {
        "a DATA packet a switch trimmed to its header (its receiver answers with a NACK)"
    } else if flags.contains(Flags::DATA) {
        return None;
    } else if flags.contains(Flags::ACK) {
        "an acknowledgment, from a message's receiver to its sender"
    } else if flags.contains(Flags::NACK | Flags::RESEND) {
        "a Homa RESEND, a receiver asking the sender for a packet again"
    } else if flags.contains(Flags::NACK) {
        "an NDP NACK, a receiver telling the sender a packet was trimmed"
    } else if flags.contains(Flags::PULL) {
        "an NDP PULL, a receiver letting the sender send more of a message"
    } else if flags.contains(Flags::GRANT) {
        "a Homa GRANT, a receiver granting the sender more of a message"
    } else {
        return None;
    };
    Some(what)
}

/// The message of a valid single-packet unicast DATA frame.
fn parse_message(frame: &[u8]) -> Result<Message, String> {
    use nanopu_net::wire::packet::payload_to_words;
    use nanopu_net::wire::Frame;
    let p = Frame::parse(frame, SEGMENT_BYTES).map_err(|e| e.to_string())?;
    let t = &p.repr.transport;
    if !t.flags.contains(Flags::DATA) || t.flags.contains(Flags::CHOP) || t.mcast_count != 0 {
        return Err(format!(
            "{} frame: the test host's frames carry unicast messages (untrimmed DATA)",
            t.flags
        ));
    }
    if t.pkt_offset != 0 || t.msg_len as usize > SEGMENT_BYTES {
        return Err(format!(
            "a packet of a longer message (msg_len {}, pkt_offset {}): the test host's frames carry \
             single-packet messages, at most one {SEGMENT_BYTES}-byte segment",
            t.msg_len, t.pkt_offset
        ));
    }
    Ok(Message {
        src_ip: p.repr.ip.src,
        src_context: t.src_context,
        dst_ip: p.repr.ip.dst,
        dst_context: t.dst_context,
        len: t.msg_len,
        words: payload_to_words(p.payload).into(),
        group: None,
    })
}
