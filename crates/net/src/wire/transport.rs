//! The 30-byte nanoPU transport header, shared by the NDP-style and Homa-style transports
//! (docs/platform.md section 3; the IP protocol number tells them apart). All fields are big-endian.
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 0 | 1 | flags | bit0 DATA, bit1 ACK, bit2 NACK, bit3 PULL, bit4 GRANT, bit5 CHOP (trimmed), bit6 MCAST, bit7 RESEND |
//! | 1 | 1 | priority | Homa: priority granted for scheduled packets (0..=7); NDP: 0 |
//! | 2 | 2 | src_context | sending context |
//! | 4 | 2 | dst_context | receiving context |
//! | 6 | 2 | msg_id | sender-assigned; (src IP, src_context, msg_id) names a message |
//! | 8 | 2 | msg_len | message payload bytes, 1..=65535 |
//! | 10 | 2 | pkt_offset | index of this packet in the message, from 0 |
//! | 12 | 2 | credit | PULL: packets the receiver allows in total; GRANT: grant offset in packets |
//! | 14 | 4 | mcast_first | multicast: first node index of the group range |
//! | 18 | 4 | mcast_count | multicast: nodes in the range; 0 = unicast |
//! | 22 | 4 | mcast_seq | multicast: per-source sequence number for switch retransmission caches |
//! | 26 | 4 | reserved | zero on emit, ignored on parse |
//!
//! What follows the header:
//! - a DATA packet carries segment `pkt_offset` of the message: `seg` bytes (1,024 by
//!   default), fewer for the last one;
//! - a trimmed DATA packet (CHOP) and every control packet (no DATA bit) carry exactly
//!   [`PADDING_BYTES`] = 8 bytes of zero padding instead, so that they are 72-byte frames
//!   (docs/platform.md section 3: "a trimmed packet is 72 bytes"). The padding is written as zeros and
//!   its contents are ignored on parse, like Ethernet padding.
//!
//! RESEND (bit 7) is a modifier: it travels with one of the five kind bits (for instance
//! NACK|RESEND for a Homa RESEND request), never alone.

use std::fmt;
use std::ops::BitOr;

use nanopu_sim::packet::flags as bits;

use super::field::{read_u16, read_u32, write_u16, write_u32};
use super::{Layer, WireError};

/// Length of the transport header.
pub const HEADER_LEN: usize = 30;
/// Zero bytes that follow the header of control and trimmed packets.
pub const PADDING_BYTES: usize = 8;
/// The largest segment that fits a 16-bit IPv4 total length with both headers.
pub const MAX_SEGMENT_BYTES: usize = 65535 - 20 - HEADER_LEN;
/// Homa priorities are 0..NUM_PRIORITIES (the three IP precedence bits).
const NUM_PRIORITIES: u8 = 8;

mod off {
    pub const FLAGS: usize = 0;
    pub const PRIORITY: usize = 1;
    pub const SRC_CONTEXT: usize = 2;
    pub const DST_CONTEXT: usize = 4;
    pub const MSG_ID: usize = 6;
    pub const MSG_LEN: usize = 8;
    pub const PKT_OFFSET: usize = 10;
    pub const CREDIT: usize = 12;
    pub const MCAST_FIRST: usize = 14;
    pub const MCAST_COUNT: usize = 18;
    pub const MCAST_SEQ: usize = 22;
    pub const RESERVED: usize = 26;
}

/// The flags byte. Every `u8` is a valid value; [`TransportRepr`] checks the combination.
/// The bit values are `nanopu_sim::packet::flags`, the one place they are defined.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(pub u8);

impl Flags {
    pub const DATA: Flags = Flags(bits::DATA);
    pub const ACK: Flags = Flags(bits::ACK);
    pub const NACK: Flags = Flags(bits::NACK);
    pub const PULL: Flags = Flags(bits::PULL);
    pub const GRANT: Flags = Flags(bits::GRANT);
    /// The packet was trimmed to its header by a switch (NDP).
    pub const CHOP: Flags = Flags(bits::CHOP);
    /// The packet is addressed to a multicast group range.
    pub const MCAST: Flags = Flags(bits::MCAST);
    /// Homa RESEND: asks the peer to resend.
    pub const RESEND: Flags = Flags(bits::RESEND);
    /// The bits that say what kind of packet this is; at least one must be set.
    pub const KINDS: Flags = Flags(bits::DATA | bits::ACK | bits::NACK | bits::PULL | bits::GRANT);

    /// Each flag with its name, lowest bit first (the order `Display` lists them in).
    const NAMES: [(Flags, &'static str); 8] = [
        (Self::DATA, "DATA"),
        (Self::ACK, "ACK"),
        (Self::NACK, "NACK"),
        (Self::PULL, "PULL"),
        (Self::GRANT, "GRANT"),
        (Self::CHOP, "CHOP"),
        (Self::MCAST, "MCAST"),
        (Self::RESEND, "RESEND"),
    ];

    /// The raw byte.
    pub fn bits(self) -> u8 {
        self.0
    }

    /// True if every bit of `other` is set.
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// True if any bit of `other` is set.
    pub fn intersects(self, other: Flags) -> bool {
        self.0 & other.0 != 0
    }

    /// Sets the bits of `other`.
    pub fn insert(&mut self, other: Flags) {
        self.0 |= other.0;
    }

    /// Clears the bits of `other`.
    pub fn remove(&mut self, other: Flags) {
        self.0 &= !other.0;
    }
}

impl BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

/// Names joined by `|` ("DATA|CHOP"), or "-" when no bit is set.
impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("-");
        }
        let set = Self::NAMES.iter().filter(|(flag, _)| self.contains(*flag));
        let names: Vec<&str> = set.map(|&(_, name)| name).collect();
        f.write_str(&names.join("|"))
    }
}

impl fmt::Debug for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Flags({self})")
    }
}

/// A zero-copy view of a transport header and what follows it.
///
/// Accessors of an unchecked view panic on a buffer shorter than 30 bytes.
#[derive(Debug, Clone)]
pub struct TransportHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> TransportHeader<T> {
    /// Wraps a buffer without checking its length.
    pub fn new_unchecked(buffer: T) -> Self {
        TransportHeader { buffer }
    }

    /// Wraps a buffer, checking that it holds the whole header.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let header = Self::new_unchecked(buffer);
        header.check_len()?;
        Ok(header)
    }

    /// Checks that the buffer holds the 30-byte header.
    pub fn check_len(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated { layer: Layer::Transport, len, header: HEADER_LEN });
        }
        Ok(())
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn u16_at(&self, at: usize) -> u16 {
        read_u16(self.buffer.as_ref(), at)
    }

    fn u32_at(&self, at: usize) -> u32 {
        read_u32(self.buffer.as_ref(), at)
    }

    /// The flags byte.
    pub fn flags(&self) -> Flags {
        Flags(self.buffer.as_ref()[off::FLAGS])
    }

    /// The priority byte.
    pub fn priority(&self) -> u8 {
        self.buffer.as_ref()[off::PRIORITY]
    }

    pub fn src_context(&self) -> u16 {
        self.u16_at(off::SRC_CONTEXT)
    }

    pub fn dst_context(&self) -> u16 {
        self.u16_at(off::DST_CONTEXT)
    }

    pub fn msg_id(&self) -> u16 {
        self.u16_at(off::MSG_ID)
    }

    pub fn msg_len(&self) -> u16 {
        self.u16_at(off::MSG_LEN)
    }

    pub fn pkt_offset(&self) -> u16 {
        self.u16_at(off::PKT_OFFSET)
    }

    pub fn credit(&self) -> u16 {
        self.u16_at(off::CREDIT)
    }

    pub fn mcast_first(&self) -> u32 {
        self.u32_at(off::MCAST_FIRST)
    }

    pub fn mcast_count(&self) -> u32 {
        self.u32_at(off::MCAST_COUNT)
    }

    pub fn mcast_seq(&self) -> u32 {
        self.u32_at(off::MCAST_SEQ)
    }

    pub fn reserved(&self) -> u32 {
        self.u32_at(off::RESERVED)
    }

    /// Everything after the header: the segment, or the padding.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TransportHeader<T> {
    fn set_u16(&mut self, at: usize, value: u16) {
        write_u16(self.buffer.as_mut(), at, value);
    }

    fn set_u32(&mut self, at: usize, value: u32) {
        write_u32(self.buffer.as_mut(), at, value);
    }

    pub fn set_flags(&mut self, flags: Flags) {
        self.buffer.as_mut()[off::FLAGS] = flags.0;
    }

    pub fn set_priority(&mut self, priority: u8) {
        self.buffer.as_mut()[off::PRIORITY] = priority;
    }

    pub fn set_src_context(&mut self, v: u16) {
        self.set_u16(off::SRC_CONTEXT, v);
    }

    pub fn set_dst_context(&mut self, v: u16) {
        self.set_u16(off::DST_CONTEXT, v);
    }

    pub fn set_msg_id(&mut self, v: u16) {
        self.set_u16(off::MSG_ID, v);
    }

    pub fn set_msg_len(&mut self, v: u16) {
        self.set_u16(off::MSG_LEN, v);
    }

    pub fn set_pkt_offset(&mut self, v: u16) {
        self.set_u16(off::PKT_OFFSET, v);
    }

    pub fn set_credit(&mut self, v: u16) {
        self.set_u16(off::CREDIT, v);
    }

    pub fn set_mcast_first(&mut self, v: u32) {
        self.set_u32(off::MCAST_FIRST, v);
    }

    pub fn set_mcast_count(&mut self, v: u32) {
        self.set_u32(off::MCAST_COUNT, v);
    }

    pub fn set_mcast_seq(&mut self, v: u32) {
        self.set_u32(off::MCAST_SEQ, v);
    }

    pub fn set_reserved(&mut self, v: u32) {
        self.set_u32(off::RESERVED, v);
    }

    /// Everything after the header, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
}

/// The fields of a transport header. `Default` gives an all-zero header, which is not
/// valid by itself (msg_len 0, no kind bit): set at least those two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TransportRepr {
    pub flags: Flags,
    pub priority: u8,
    pub src_context: u16,
    pub dst_context: u16,
    pub msg_id: u16,
    pub msg_len: u16,
    pub pkt_offset: u16,
    pub credit: u16,
    pub mcast_first: u32,
    pub mcast_count: u32,
    pub mcast_seq: u32,
}

/// Panics on a segment size no packet could carry: it comes from a validated config, so a
/// bad one here is a model bug.
fn assert_segment(seg: usize) {
    assert!((1..=MAX_SEGMENT_BYTES).contains(&seg), "segment size {seg} is not in 1..={MAX_SEGMENT_BYTES}");
}

impl TransportRepr {
    /// Reads and validates a header and the length of what follows it, for segments of
    /// `seg` bytes (see [`TransportRepr::check`] and [`TransportRepr::check_payload`]).
    pub fn parse<T: AsRef<[u8]>>(header: &TransportHeader<T>, seg: usize) -> Result<Self, WireError> {
        header.check_len()?;
        let repr = Self::read(header);
        repr.check(seg)?;
        repr.check_payload(header.payload().len(), seg)?;
        Ok(repr)
    }

    fn read<T: AsRef<[u8]>>(h: &TransportHeader<T>) -> Self {
        TransportRepr {
            flags: h.flags(),
            priority: h.priority(),
            src_context: h.src_context(),
            dst_context: h.dst_context(),
            msg_id: h.msg_id(),
            msg_len: h.msg_len(),
            pkt_offset: h.pkt_offset(),
            credit: h.credit(),
            mcast_first: h.mcast_first(),
            mcast_count: h.mcast_count(),
            mcast_seq: h.mcast_seq(),
        }
    }

    /// Validates the header fields: msg_len, kind bits, CHOP, priority, the DATA offset
    /// against the `seg`-byte segmentation, and the multicast fields.
    ///
    /// Panics if `seg` is 0 or above [`MAX_SEGMENT_BYTES`].
    pub fn check(&self, seg: usize) -> Result<(), WireError> {
        assert_segment(seg);
        self.check_kind()?;
        self.check_offset(seg)?;
        self.check_mcast()
    }

    fn check_kind(&self) -> Result<(), WireError> {
        let flags = self.flags.bits();
        if self.msg_len == 0 {
            Err(WireError::MsgLenZero)
        } else if !self.flags.intersects(Flags::KINDS) {
            Err(WireError::NoKind { flags })
        } else if self.flags.contains(Flags::CHOP) && !self.is_data() {
            Err(WireError::ChopWithoutData { flags })
        } else if self.priority >= NUM_PRIORITIES {
            Err(WireError::Priority(self.priority))
        } else {
            Ok(())
        }
    }

    fn check_offset(&self, seg: usize) -> Result<(), WireError> {
        let packets = self.packets(seg);
        if self.is_data() && usize::from(self.pkt_offset) >= packets {
            let (offset, msg_len) = (self.pkt_offset, self.msg_len);
            return Err(WireError::PktOffset { offset, packets, msg_len });
        }
        Ok(())
    }

    fn check_mcast(&self) -> Result<(), WireError> {
        let (mcast_flag, count) = (self.is_multicast(), self.mcast_count);
        if mcast_flag != (count != 0) {
            return Err(WireError::McastCount { mcast_flag, count });
        }
        if self.mcast_first.checked_add(count).is_none() {
            return Err(WireError::McastRange { first: self.mcast_first, count });
        }
        Ok(())
    }

    /// Checks the number of bytes that follow the header on the wire: the segment for a
    /// DATA packet, exactly 8 bytes of padding for a trimmed or control packet.
    pub fn check_payload(&self, wire_len: usize, seg: usize) -> Result<(), WireError> {
        let expected = self.wire_payload_len(seg);
        match (wire_len == expected, self.carries_payload()) {
            (true, _) => Ok(()),
            (false, true) => Err(self.data_len_error(wire_len, expected)),
            (false, false) => Err(WireError::PaddingLen { len: wire_len }),
        }
    }

    fn data_len_error(&self, len: usize, expected: usize) -> WireError {
        let (offset, msg_len) = (self.pkt_offset, self.msg_len);
        WireError::DataPayloadLen { offset, msg_len, len, expected }
    }

    /// True if the DATA bit is set (trimmed or not).
    pub fn is_data(&self) -> bool {
        self.flags.contains(Flags::DATA)
    }

    /// True if the packet was trimmed by a switch.
    pub fn is_trimmed(&self) -> bool {
        self.flags.contains(Flags::CHOP)
    }

    /// True if the packet goes to a multicast group range.
    pub fn is_multicast(&self) -> bool {
        self.flags.contains(Flags::MCAST)
    }

    /// True for an untrimmed DATA packet, the only kind that carries message bytes.
    pub fn carries_payload(&self) -> bool {
        self.is_data() && !self.is_trimmed()
    }

    /// Packets in the message: ceil(msg_len / seg).
    pub fn packets(&self, seg: usize) -> usize {
        usize::from(self.msg_len).div_ceil(seg)
    }

    /// Bytes of the message in packet `pkt_offset`: `seg`, less for the last packet, 0 past
    /// the end.
    pub fn segment_len(&self, seg: usize) -> usize {
        let start = usize::from(self.pkt_offset) * seg;
        usize::from(self.msg_len).saturating_sub(start).min(seg)
    }

    /// Application bytes this packet carries: its segment if it carries a payload, else 0.
    pub fn payload_len(&self, seg: usize) -> usize {
        if self.carries_payload() {
            self.segment_len(seg)
        } else {
            0
        }
    }

    /// Bytes after the header on the wire: the payload, or the 8 bytes of padding.
    pub fn wire_payload_len(&self, seg: usize) -> usize {
        if self.carries_payload() {
            self.segment_len(seg)
        } else {
            PADDING_BYTES
        }
    }

    /// Bytes this header occupies.
    pub fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the 30-byte header (reserved = 0) into a buffer at least that long. Padding
    /// and payload are the caller's (see `Frame::emit`).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut TransportHeader<T>) {
        h.set_flags(self.flags);
        h.set_priority(self.priority);
        h.set_src_context(self.src_context);
        h.set_dst_context(self.dst_context);
        h.set_msg_id(self.msg_id);
        h.set_msg_len(self.msg_len);
        h.set_pkt_offset(self.pkt_offset);
        h.set_credit(self.credit);
        h.set_mcast_first(self.mcast_first);
        h.set_mcast_count(self.mcast_count);
        h.set_mcast_seq(self.mcast_seq);
        h.set_reserved(0);
    }
}

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
