//! Whole nanoPU frames: Ethernet (14) + IPv4 (20) + transport (30) + payload (docs/platform.md section 3).
//!
//! | frame | bytes |
//! |---|---|
//! | DATA, segment of n bytes | 64 + n (n <= 1,024 by default) |
//! | trimmed DATA (CHOP) | 72: headers + 8 bytes of zero padding |
//! | control (ACK, NACK, PULL, GRANT) | 72: headers + 8 bytes of zero padding |
//!
//! [`Frame::parse`] validates all three layers and what ties them together: the ethertype
//! is IPv4, the protocol is NDP or Homa, the IPv4 packet ends where the frame ends, and the
//! MCAST flag goes with a class D destination and only with one. [`Frame`] owns bytes that
//! passed those checks, so switches can peek at fields and [`Frame::trim`] without
//! re-validating. Payload words travel as big-endian u64s (docs/platform.md section 2):
//! [`payload_to_words`] and [`words_to_payload`] convert.

use super::ethernet::{self, EthernetFrame, EthernetRepr};
use super::ipv4::{self, Ipv4Packet, Ipv4Repr};
use super::transport::{self, Flags, TransportHeader, TransportRepr};
use super::WireError;

/// Ethernet + IPv4 + transport headers.
pub const HEADER_BYTES: usize = ethernet::HEADER_LEN + ipv4::HEADER_LEN + transport::HEADER_LEN;
/// A trimmed DATA frame: headers and 8 bytes of padding (docs/platform.md section 3).
pub const TRIMMED_BYTES: usize = HEADER_BYTES + transport::PADDING_BYTES;
/// The smallest valid frame; control frames have this size too.
pub const MIN_FRAME: usize = TRIMMED_BYTES;
/// Default payload bytes per packet (docs/platform.md section 3: 1,024-byte segments).
pub const SEGMENT_BYTES: usize = 1024;
/// The largest frame with the default segment size.
pub const MAX_FRAME_BYTES: usize = HEADER_BYTES + SEGMENT_BYTES;

const IP_AT: usize = ethernet::HEADER_LEN;
const TRANSPORT_AT: usize = IP_AT + ipv4::HEADER_LEN;

/// The three headers of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameRepr {
    pub eth: EthernetRepr,
    pub ip: Ipv4Repr,
    pub transport: TransportRepr,
}

impl FrameRepr {
    /// Checks what ties the layers together: IPv4 ethertype, a nanoPU protocol, and the
    /// MCAST flag set exactly when the destination is class D.
    pub fn check_layers(&self) -> Result<(), WireError> {
        if self.eth.ethertype != ethernet::ETHERTYPE_IPV4 {
            return Err(WireError::EtherType(self.eth.ethertype));
        }
        check_protocol(self.ip.protocol)?;
        let (dst, mcast_flag) = (self.ip.dst, self.transport.is_multicast());
        if ipv4::is_multicast(dst) != mcast_flag {
            return Err(WireError::McastAddr { dst, mcast_flag });
        }
        Ok(())
    }

    /// Checks the headers and the length of an application payload before emitting.
    pub fn check(&self, payload_len: usize, seg: usize) -> Result<(), WireError> {
        self.check_layers()?;
        let t = &self.transport;
        t.check(seg)?;
        match (t.carries_payload(), t.payload_len(seg)) {
            (true, expected) if payload_len != expected => Err(WireError::DataPayloadLen {
                offset: t.pkt_offset,
                msg_len: t.msg_len,
                len: payload_len,
                expected,
            }),
            (false, _) if payload_len != 0 => Err(WireError::UnexpectedPayload { len: payload_len }),
            _ => Ok(()),
        }
    }

    /// Bytes of the frame these headers describe.
    pub fn wire_len(&self, seg: usize) -> usize {
        HEADER_BYTES + self.transport.wire_payload_len(seg)
    }
}

/// A validated frame borrowed from a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedFrame<'a> {
    pub repr: FrameRepr,
    /// The message bytes of an untrimmed DATA packet; empty for trimmed and control
    /// packets (their padding is not payload).
    pub payload: &'a [u8],
}

/// An owned frame that passed [`Frame::parse`]: the bytes a link carries and pcap records.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    bytes: Vec<u8>,
}

impl Frame {
    /// Validates every layer of `bytes` for segments of `seg` bytes. Never panics on any
    /// input except a `seg` outside 1..=MAX_SEGMENT_BYTES.
    pub fn parse(bytes: &[u8], seg: usize) -> Result<ParsedFrame<'_>, WireError> {
        let eth = EthernetFrame::new_checked(bytes)?;
        let eth_repr = EthernetRepr::parse(&eth)?;
        if eth_repr.ethertype != ethernet::ETHERTYPE_IPV4 {
            return Err(WireError::EtherType(eth_repr.ethertype));
        }
        let ip = Ipv4Packet::new_checked(eth.payload())?;
        let ip_repr = Ipv4Repr::parse(&ip)?;
        check_protocol(ip_repr.protocol)?;
        check_no_trailing_bytes(bytes.len(), ip.total_len())?;
        let header = TransportHeader::new_checked(ip.payload())?;
        let transport = TransportRepr::parse(&header, seg)?;
        let repr = FrameRepr { eth: eth_repr, ip: ip_repr, transport };
        repr.check_layers()?;
        // The frame ends where the IPv4 packet does, so the rest of `bytes` is the segment.
        let payload = if transport.carries_payload() { &bytes[HEADER_BYTES..] } else { &[] };
        Ok(ParsedFrame { repr, payload })
    }

    /// Builds a frame from headers and the application payload (empty for control and
    /// trimmed packets, whose 8 bytes of padding are added here). `repr.ip.payload_len` is
    /// not consulted: the IPv4 total length is derived from the transport header.
    pub fn emit(repr: &FrameRepr, payload: &[u8], seg: usize) -> Result<Frame, WireError> {
        repr.check(payload.len(), seg)?;
        let mut bytes = vec![0u8; repr.wire_len(seg)];
        let ip_payload = bytes.len() - TRANSPORT_AT;
        let ip = Ipv4Repr { payload_len: ip_payload as u16, ..repr.ip };
        repr.eth.emit(&mut EthernetFrame::new_unchecked(&mut bytes[..]));
        ip.emit(&mut Ipv4Packet::new_unchecked(&mut bytes[IP_AT..]));
        repr.transport.emit(&mut TransportHeader::new_unchecked(&mut bytes[TRANSPORT_AT..]));
        bytes[HEADER_BYTES..HEADER_BYTES + payload.len()].copy_from_slice(payload);
        Ok(Frame { bytes })
    }

    /// Takes ownership of bytes that pass [`Frame::parse`] with segments of `seg` bytes.
    pub fn from_bytes(bytes: Vec<u8>, seg: usize) -> Result<Frame, WireError> {
        Frame::parse(&bytes, seg)?;
        Ok(Frame { bytes })
    }

    /// Parses this frame again, for its headers and payload.
    pub fn parsed(&self, seg: usize) -> Result<ParsedFrame<'_>, WireError> {
        Frame::parse(&self.bytes, seg)
    }

    /// The frame's bytes, from the destination MAC to the end of payload or padding.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Gives the bytes back.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Frame length in bytes, as pcap records it: without preamble, FCS and inter-frame
    /// gap, whose serialization time is the link model's to add.
    pub fn wire_len(&self) -> usize {
        self.bytes.len()
    }

    /// The transport flags.
    pub fn transport_flags(&self) -> Flags {
        TransportHeader::new_unchecked(&self.bytes[TRANSPORT_AT..]).flags()
    }

    /// True if the frame was trimmed.
    pub fn is_trimmed(&self) -> bool {
        self.transport_flags().contains(Flags::CHOP)
    }

    /// The IPv4 TOS byte, which carries the Homa priority.
    pub fn tos(&self) -> u8 {
        Ipv4Packet::new_unchecked(&self.bytes[IP_AT..]).tos()
    }

    /// The IPv4 destination address.
    pub fn ip_dst(&self) -> u32 {
        Ipv4Packet::new_unchecked(&self.bytes[IP_AT..]).dst()
    }

    /// Cuts a DATA frame to its 72-byte trimmed form, as an NDP switch does when the data
    /// band is full: payload replaced by 8 zero bytes, CHOP set, IPv4 total length and
    /// checksum fixed. A frame already trimmed is left as it is; a control frame is an error.
    pub fn trim(&mut self) -> Result<(), WireError> {
        let flags = self.transport_flags();
        if !flags.contains(Flags::DATA) {
            return Err(WireError::NotTrimmable { flags: flags.bits() });
        }
        if flags.contains(Flags::CHOP) {
            return Ok(());
        }
        self.bytes.truncate(HEADER_BYTES);
        self.bytes.resize(TRIMMED_BYTES, 0);
        let mut t = TransportHeader::new_unchecked(&mut self.bytes[TRANSPORT_AT..]);
        t.set_flags(flags | Flags::CHOP);
        let mut ip = Ipv4Packet::new_unchecked(&mut self.bytes[IP_AT..]);
        ip.set_total_len((TRIMMED_BYTES - IP_AT) as u16);
        ip.fill_checksum();
        Ok(())
    }
}

/// Only the two nanoPU transports ride on our IPv4 packets.
fn check_protocol(protocol: u8) -> Result<(), WireError> {
    match protocol {
        ipv4::PROTO_NDP | ipv4::PROTO_HOMA => Ok(()),
        other => Err(WireError::Ipv4Protocol(other)),
    }
}

fn check_no_trailing_bytes(frame: usize, ip_total: u16) -> Result<(), WireError> {
    if frame != IP_AT + usize::from(ip_total) {
        return Err(WireError::TrailingBytes { frame, ip_total });
    }
    Ok(())
}

/// Splits a payload into the big-endian u64 words a program reads from netRX
/// (docs/platform.md section 2); a short last word is padded with zero bytes at its low end.
pub fn payload_to_words(payload: &[u8]) -> Vec<u64> {
    payload.chunks(8).map(word_of).collect()
}

fn word_of(chunk: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word[..chunk.len()].copy_from_slice(chunk);
    u64::from_be_bytes(word)
}

/// The first `len` bytes of `words` laid out big-endian: the inverse of
/// [`payload_to_words`]. Bytes past `len` are dropped.
///
/// Panics if the words hold fewer than `len` bytes.
pub fn words_to_payload(words: &[u64], len: usize) -> Vec<u8> {
    assert!(len <= words.len() * 8, "{len} bytes asked of {} words", words.len());
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
    bytes.truncate(len);
    bytes
}

#[cfg(test)]
#[path = "packet_tests.rs"]
mod tests;
