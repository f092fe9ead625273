//! The packet every component agrees on: the nanoPU transport header's fields plus shared
//! payload words. The NIC's transports make and consume them, the fabric moves them, and
//! bytes are produced from them only for capture (`nanopu_net::wire`). It lives here, at the
//! bottom, so that neither the NIC nor the network needs the other to name it.

use std::sync::Arc;

/// Header bytes of every frame: Ethernet 14 + IPv4 20 + transport 30 (docs/platform.md section 3).
pub const HEADER_BYTES: u32 = 64;
/// Control and trimmed frames: headers plus 8 bytes of padding (docs/platform.md section 3).
pub const MIN_FRAME: u32 = 72;
/// IPv4 address of node 0; node n is this plus n: 10.0.0.(2+n) (docs/platform.md section 2).
pub const NODE_IP_BASE: u32 = 0x0a00_0002;
/// IPv4 address of the test host, 10.0.0.1: the prototype's load generator and sort
/// coordinator (docs/models/network.md, "The host").
pub const HOST_IP: u32 = NODE_IP_BASE - 1;
/// First address of the multicast range 224.0.0.0/4: the IP a multicast packet carries.
pub const MULTICAST_IP: u32 = 0xe000_0000;

/// Transport header flag bits (the wire format's values): their one definition in Rust.
/// `nanopu_net::wire::Flags` names the same bits as a newtype.
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

/// What a packet is: one of the nanoPU transport's (its header in the fields below), or a
/// raw Ethernet frame of a NIC without that transport (IceNIC, docs/models/icenic.md
/// "Clusters"), whose bytes are the payload and which only `src_ip`, `dst_ip` and `band`
/// describe besides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PacketKind {
    #[default]
    Transport,
    Frame,
}

/// The band a raw frame takes: the lowest-priority one (ports clamp a band to their last),
/// the best-effort queue of a frame that carries no priority (docs/models/icenic.md).
pub const FRAME_BAND: u8 = 7;

/// One packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    /// Unique per run, assigned when the packet enters the network (tracing).
    pub id: u64,
    pub kind: PacketKind,
    pub src_ip: u32,
    /// A node's IP, or 224.0.0.0/4 for multicast.
    pub dst_ip: u32,
    /// Output band, 0 = highest priority.
    pub band: u8,
    pub flags: u8,
    /// Homa: priority granted for scheduled packets (carried by GRANTs).
    pub prio: u8,
    pub src_context: u16,
    pub dst_context: u16,
    pub msg_id: u16,
    pub msg_len: u16,
    pub pkt_offset: u16,
    /// PULL: transmissions allowed in total; GRANT: grant offset in packets.
    pub credit: u16,
    pub mcast_first: u32,
    pub mcast_count: u32,
    pub mcast_seq: u32,
    /// Payload bytes of this packet (0 for control and trimmed packets).
    pub payload_len: u16,
    /// The words of the whole message this packet carries a part of, shared by all its
    /// packets (no copy per packet); this packet's words start at `payload_start`. None for
    /// control packets, which then cost no reference counting. A slice, the counts and the
    /// words in one allocation: an `Arc` of the message's vector was a 48-byte block of its
    /// own beside the words, in each of the 47 messages a node is sending at the
    /// 16,384-core sort's peak (docs/profile.md). They are the sender's message's own
    /// words (`nanopu_nic::message::Words`), and the words a receiver delivers from a
    /// message that came whole in one packet.
    pub payload: Option<Arc<[u64]>>,
    /// In words: a message is at most 65,535 bytes, 8,192 words. 16 bits where the fat
    /// pointer above takes 8 bytes more than a thin one keep the packet at 64 bytes.
    pub payload_start: u16,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 64);

/// (flags, payload length, band) of a packet with `flags` once trimmed.
pub fn trimmed(flags: u8) -> (u8, u16, u8) {
    (flags | flags::CHOP, 0, 0)
}

/// Bytes on the wire of a packet of `kind` with these flags and payload length: a raw
/// frame's own length (as on the test host's link), a transport packet's `frame_len`.
pub fn wire_len(kind: PacketKind, flags: u8, payload_len: u16) -> u32 {
    match kind {
        PacketKind::Transport => frame_len(flags, payload_len),
        PacketKind::Frame => payload_len as u32,
    }
}

/// Bytes on the wire of a transport packet with these flags and payload length.
pub fn frame_len(flags: u8, payload_len: u16) -> u32 {
    if flags & flags::DATA != 0 && flags & flags::CHOP == 0 {
        HEADER_BYTES + payload_len as u32
    } else {
        MIN_FRAME
    }
}

pub fn is_multicast_ip(ip: u32) -> bool {
    ip >> 28 == 0xe
}

impl Packet {
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    pub fn is_data(&self) -> bool {
        self.has(flags::DATA)
    }
    pub fn is_trimmed(&self) -> bool {
        self.has(flags::CHOP)
    }
    pub fn is_multicast(&self) -> bool {
        self.has(flags::MCAST)
    }
    /// This packet's payload words.
    pub fn words(&self) -> &[u64] {
        let all = self.payload.as_deref().unwrap_or_default();
        let start = (self.payload_start as usize).min(all.len());
        let end = (start + (self.payload_len as usize).div_ceil(8)).min(all.len());
        &all[start..end]
    }
    /// Bytes on the wire.
    pub fn wire_len(&self) -> u32 {
        wire_len(self.kind, self.flags, self.payload_len)
    }
    pub fn is_frame(&self) -> bool {
        self.kind == PacketKind::Frame
    }
    /// A raw Ethernet frame from `src_ip` to `dst_ip` (the addresses it is routed by): its
    /// bytes are the payload, packed 8 to a word, big-endian, as the wire's payload words.
    pub fn frame(src_ip: u32, dst_ip: u32, bytes: &[u8]) -> Packet {
        let len = u16::try_from(bytes.len()).expect("a frame is shorter than 64 KiB");
        let word = |c: &[u8]| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            u64::from_be_bytes(b)
        };
        let payload = Some(bytes.chunks(8).map(word).collect());
        Packet {
            kind: PacketKind::Frame,
            src_ip,
            dst_ip,
            band: FRAME_BAND,
            payload_len: len,
            payload,
            ..Packet::default()
        }
    }
    /// A raw frame's bytes (`Packet::frame`'s inverse).
    pub fn frame_bytes(&self) -> Vec<u8> {
        let mut b: Vec<u8> = self.words().iter().flat_map(|w| w.to_be_bytes()).collect();
        b.truncate(self.payload_len as usize);
        b
    }
    /// Cut to the header, as a switch does when the data band is full (NDP).
    pub fn trim(&mut self) {
        (self.flags, self.payload_len, self.band) = trimmed(self.flags);
    }
    /// A control packet answering `to`: addresses and contexts swapped, message fields kept.
    pub fn reply_to(to: &Packet, flags: u8, credit: u16) -> Packet {
        Packet {
            src_ip: to.dst_ip,
            dst_ip: to.src_ip,
            flags,
            src_context: to.dst_context,
            dst_context: to.src_context,
            msg_id: to.msg_id,
            msg_len: to.msg_len,
            pkt_offset: to.pkt_offset,
            credit,
            ..Packet::default()
        }
    }
}
