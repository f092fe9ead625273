//! What the test host exchanges as raw frames: frames from IceNIC nodes with their arrival
//! times, and the nanoPU message a raw transport frame carries.

use nanopu_nic::Message;
use nanopu_sim::Time;

/// A frame the test host received from an IceNIC node, when its last byte arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFrame {
    pub time: Time,
    pub frame: Vec<u8>,
}

/// The message a raw frame carries, or why the NIC drops it.
pub fn message_of_frame(frame: &[u8]) -> Result<Message, String> {
    use nanopu_net::wire::packet::payload_to_words;
    use nanopu_net::wire::{Flags, Frame};
    let p = Frame::parse(frame, 1024).map_err(|e| e.to_string())?;
    let t = &p.repr.transport;
    if !t.flags.contains(Flags::DATA) || t.flags.contains(Flags::CHOP) || t.mcast_count != 0 {
        return Err(format!(
            "{} frame: only untrimmed unicast DATA frames reach a node without a network",
            t.flags
        ));
    }
    if t.pkt_offset != 0 || t.msg_len as usize > 1024 {
        return Err("multi-packet message: needs the network transport (cluster runs)".into());
    }
    Ok(Message {
        src_ip: p.repr.ip.src,
        src_context: t.src_context,
        dst_ip: p.repr.ip.dst,
        dst_context: t.dst_context,
        len: t.msg_len,
        words: payload_to_words(p.payload),
        group: None,
    })
}
