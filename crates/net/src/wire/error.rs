//! The one error type of the wire layer.
//!
//! Every variant knows the layer it belongs to, and its message names that layer and the
//! offending field, so a rejected frame in a log or a pcap can be found at a glance
//! ("ipv4: header checksum 0x1234 does not match 0x5678").

use std::fmt;
use std::net::Ipv4Addr;

/// The protocol layer an error was found in; it prefixes every message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Ethernet,
    Ipv4,
    /// UDP (RFC 768), in the raw frames IceNIC nodes exchange.
    Udp,
    Transport,
    /// Checks that span layers (IP address vs transport flags, trimming, trailing bytes).
    Frame,
}

impl Layer {
    /// The name used as the message prefix.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Ethernet => "ethernet",
            Layer::Ipv4 => "ipv4",
            Layer::Udp => "udp",
            Layer::Transport => "transport",
            Layer::Frame => "frame",
        }
    }

    /// What a buffer of this layer is called (an Ethernet frame, an IP packet, ...).
    fn unit(self) -> &'static str {
        match self {
            Layer::Ethernet | Layer::Frame => "frame",
            Layer::Ipv4 => "packet",
            Layer::Udp => "datagram",
            Layer::Transport => "segment",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a buffer is not a valid nanoPU frame, or why a representation cannot be emitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The buffer is shorter than the fixed header of `layer`.
    Truncated { layer: Layer, len: usize, header: usize },
    /// The Ethernet type is not IPv4 (IEEE 802.3 clause 3.2.6, RFC 894).
    EtherType(u16),
    /// The IPv4 version nibble is not 4 (RFC 791 section 3.1).
    Ipv4Version(u8),
    /// IHL is not 5: options are present (or IHL < 5), which nanoPU packets never carry.
    Ipv4Options { ihl: u8 },
    /// The IPv4 total length is below the header size or beyond the buffer.
    Ipv4TotalLen { total: u16, available: usize },
    /// MF is set or the fragment offset is non-zero; nanoPU packets are never fragmented.
    Ipv4Fragment { flags_frag: u16 },
    /// The stored header checksum differs from the computed one (RFC 791, RFC 1071).
    Ipv4Checksum { stored: u16, computed: u16 },
    /// The IP protocol is neither NDP nor Homa.
    Ipv4Protocol(u8),
    /// The UDP length is below the header size or beyond the buffer (RFC 768).
    UdpLen { len: u16, available: usize },
    /// Bytes follow the IPv4 packet inside the Ethernet frame.
    TrailingBytes { frame: usize, ip_total: u16 },
    /// The MCAST flag and the class of the IPv4 destination disagree.
    McastAddr { dst: u32, mcast_flag: bool },
    /// `trim` was asked to cut a frame that carries no data.
    NotTrimmable { flags: u8 },
    /// msg_len is 0; messages carry at least one byte.
    MsgLenZero,
    /// None of DATA, ACK, NACK, PULL, GRANT is set.
    NoKind { flags: u8 },
    /// CHOP (trimmed) is set on a packet that is not a DATA packet.
    ChopWithoutData { flags: u8 },
    /// The granted priority is not a Homa priority (0..8).
    Priority(u8),
    /// A DATA packet's offset is past the last packet of its message.
    PktOffset { offset: u16, packets: usize, msg_len: u16 },
    /// The MCAST flag and mcast_count disagree (count 0 means unicast).
    McastCount { mcast_flag: bool, count: u32 },
    /// mcast_first + mcast_count does not fit in 32 bits.
    McastRange { first: u32, count: u32 },
    /// A DATA packet's payload is not the segment its offset calls for.
    DataPayloadLen { offset: u16, msg_len: u16, len: usize, expected: usize },
    /// A control or trimmed packet does not carry exactly the 8 bytes of padding.
    PaddingLen { len: usize },
    /// An application payload was given for a control or trimmed packet.
    UnexpectedPayload { len: usize },
}

impl WireError {
    /// The layer the error belongs to.
    pub fn layer(&self) -> Layer {
        use WireError::*;
        match self {
            Truncated { layer, .. } => *layer,
            EtherType(_) => Layer::Ethernet,
            Ipv4Version(_) | Ipv4Options { .. } | Ipv4TotalLen { .. } => Layer::Ipv4,
            Ipv4Fragment { .. } | Ipv4Checksum { .. } | Ipv4Protocol(_) => Layer::Ipv4,
            UdpLen { .. } => Layer::Udp,
            TrailingBytes { .. } | McastAddr { .. } | NotTrimmable { .. } => Layer::Frame,
            _ => Layer::Transport,
        }
    }

    /// The message after the layer prefix: one arm per variant, a table rather than logic.
    fn detail(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use WireError::*;
        match *self {
            Truncated { layer, len, header } => write!(
                f,
                "{} of {len} bytes is shorter than the {header}-byte header",
                layer.unit()
            ),
            EtherType(t) => write!(f, "ethertype 0x{t:04x} is not IPv4 (0x0800)"),
            Ipv4Version(v) => write!(f, "version {v} is not 4"),
            Ipv4Options { ihl } => write!(
                f,
                "IHL {ihl} is not 5 (nanoPU packets carry no IPv4 options)"
            ),
            Ipv4TotalLen { total, available } if usize::from(total) < 20 => write!(
                f,
                "total length {total} is shorter than the 20-byte header ({available} bytes available)"
            ),
            Ipv4TotalLen { total, available } => write!(
                f,
                "total length {total} exceeds the {available} bytes available"
            ),
            Ipv4Fragment { flags_frag } => write!(
                f,
                "flags/fragment offset 0x{flags_frag:04x} marks a fragment; nanoPU packets are never fragmented"
            ),
            Ipv4Checksum { stored, computed } => write!(
                f,
                "header checksum 0x{stored:04x} does not match 0x{computed:04x}"
            ),
            Ipv4Protocol(p) => write!(
                f,
                "protocol 0x{p:02x} is neither NDP (0x99) nor Homa (0x98)"
            ),
            UdpLen { len, .. } if usize::from(len) < 8 => write!(
                f,
                "length {len} is shorter than the 8-byte header"
            ),
            UdpLen { len, available } => write!(
                f,
                "length {len} exceeds the {available} bytes available"
            ),
            TrailingBytes { frame, ip_total } => write!(
                f,
                "{} bytes follow the {ip_total}-byte IPv4 packet in the {frame}-byte frame",
                frame.saturating_sub(14 + usize::from(ip_total))
            ),
            McastAddr { dst, mcast_flag: true } => write!(
                f,
                "MCAST packet addressed to {}, which is not a multicast (224.0.0.0/4) address",
                Ipv4Addr::from(dst)
            ),
            McastAddr { dst, mcast_flag: false } => write!(
                f,
                "multicast address {} on a packet without the MCAST flag",
                Ipv4Addr::from(dst)
            ),
            NotTrimmable { flags } => write!(
                f,
                "only DATA frames can be trimmed (transport flags 0x{flags:02x})"
            ),
            MsgLenZero => write!(f, "msg_len 0 is invalid"),
            NoKind { flags } => write!(
                f,
                "flags 0x{flags:02x} set none of DATA, ACK, NACK, PULL, GRANT"
            ),
            ChopWithoutData { flags } => write!(
                f,
                "flags 0x{flags:02x} set CHOP (trimmed) without DATA"
            ),
            Priority(p) => write!(f, "priority {p} is not a Homa priority (0..=7)"),
            PktOffset { offset, packets, msg_len } => write!(
                f,
                "pkt_offset {offset} is out of range for a {packets}-packet message (msg_len {msg_len})"
            ),
            McastCount { mcast_flag: true, .. } => {
                write!(f, "MCAST flag is set but mcast_count is 0")
            }
            McastCount { count, .. } => {
                write!(f, "mcast_count {count} given without the MCAST flag")
            }
            McastRange { first, count } => write!(
                f,
                "multicast range mcast_first {first} + mcast_count {count} overflows 32 bits"
            ),
            DataPayloadLen { offset, msg_len, len, expected } => write!(
                f,
                "payload of {len} bytes, expected {expected} for pkt_offset {offset} of msg_len {msg_len}"
            ),
            PaddingLen { len } => write!(
                f,
                "control or trimmed packet carries {len} bytes after the header, expected 8 bytes of padding"
            ),
            UnexpectedPayload { len } => write!(
                f,
                "control or trimmed packet cannot carry a payload ({len} bytes given)"
            ),
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.layer())?;
        self.detail(f)
    }
}

impl std::error::Error for WireError {}
