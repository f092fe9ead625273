//! The simulator's in-memory packet: the header fields plus shared payload words. Bytes are
//! produced only for capture (`wire`), never on the hot path.

use std::sync::Arc;

/// Header bytes of every frame: Ethernet 14 + IPv4 20 + transport 30 (SPEC section 3).
pub const HEADER_BYTES: u32 = 64;
/// Control and trimmed frames: headers plus 8 bytes of padding (SPEC section 3).
pub const MIN_FRAME: u32 = 72;

const DATA: u8 = 1;
const CHOP: u8 = 32;
const MCAST: u8 = 64;

/// One packet in flight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique per run, assigned by whoever creates it.
    pub id: u64,
    pub src_ip: u32,
    /// A node's IP, or 224.0.0.0/4 for multicast.
    pub dst_ip: u32,
    /// Output band, 0 = highest priority.
    pub band: u8,
    /// Transport flag bits (`wire::Flags`).
    pub flags: u8,
    pub prio: u8,
    pub src_context: u16,
    pub dst_context: u16,
    pub msg_id: u16,
    pub msg_len: u16,
    pub pkt_offset: u16,
    pub credit: u16,
    pub mcast_first: u32,
    pub mcast_count: u32,
    pub mcast_seq: u32,
    /// Payload bytes of this packet (0 for control and trimmed packets).
    pub payload_len: u16,
    pub payload: Arc<[u64]>,
}

impl Packet {
    pub fn is_data(&self) -> bool {
        self.flags & DATA != 0
    }
    pub fn is_trimmed(&self) -> bool {
        self.flags & CHOP != 0
    }
    pub fn is_multicast(&self) -> bool {
        self.flags & MCAST != 0
    }
    /// Bytes on the wire.
    pub fn wire_len(&self) -> u32 {
        if self.is_data() && !self.is_trimmed() {
            HEADER_BYTES + self.payload_len as u32
        } else {
            MIN_FRAME
        }
    }
    /// Cut to the header, as a switch does when the data band is full (NDP).
    pub fn trim(&mut self) {
        self.flags |= CHOP;
        self.payload_len = 0;
        self.payload = Arc::from([]);
        self.band = 0;
    }
}
