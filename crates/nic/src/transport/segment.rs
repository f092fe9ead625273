//! The packet descriptor of the transport: header fields plus shared payload words.
//! The cluster maps it one to one onto the network's packet.

use std::sync::Arc;

/// Transport header flag bits (same values as the wire format's).
pub mod flags {
    pub const DATA: u8 = 1;
    pub const ACK: u8 = 2;
    pub const NACK: u8 = 4;
    pub const PULL: u8 = 8;
    pub const GRANT: u8 = 16;
    pub const CHOP: u8 = 32;
    pub const MCAST: u8 = 64;
    pub const RESEND: u8 = 128;
}

/// One packet as the transport sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub src_ip: u32,
    pub dst_ip: u32,
    /// Output band, 0 = highest.
    pub band: u8,
    pub flags: u8,
    /// Homa: priority granted for scheduled packets (carried by GRANTs).
    pub prio: u8,
    pub src_context: u16,
    pub dst_context: u16,
    pub msg_id: u16,
    pub msg_len: u16,
    pub pkt_offset: u16,
    /// PULL: packets allowed in total; GRANT: grant offset in packets; RESEND: packet asked.
    pub credit: u16,
    pub mcast_first: u32,
    pub mcast_count: u32,
    pub mcast_seq: u32,
    pub payload_len: u16,
    pub payload: Arc<[u64]>,
}

/// First address of the multicast range 224.0.0.0/4: the IP a multicast message carries.
pub const MULTICAST_IP: u32 = 0xe000_0000;

pub fn is_multicast_ip(ip: u32) -> bool {
    ip >> 28 == 0xe
}

impl Segment {
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    /// A control packet answering `to` (addresses and message fields swapped back).
    pub fn reply_to(to: &Segment, flags: u8, credit: u16) -> Segment {
        Segment {
            src_ip: to.dst_ip,
            dst_ip: to.src_ip,
            band: 0,
            flags,
            prio: 0,
            src_context: to.dst_context,
            dst_context: to.src_context,
            msg_id: to.msg_id,
            msg_len: to.msg_len,
            pkt_offset: to.pkt_offset,
            credit,
            mcast_first: 0,
            mcast_count: 0,
            mcast_seq: 0,
            payload_len: 0,
            payload: Arc::from([]),
        }
    }
}
