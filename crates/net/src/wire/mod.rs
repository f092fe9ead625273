//! Wire formats of the simulated network, one module per header.
//!
//! Each header has a zero-copy view over a byte buffer (`EthernetFrame<T>`,
//! `Ipv4Packet<T>`, `TransportHeader<T>`, generic over `T: AsRef<[u8]>`, writable when `T`
//! is also `AsMut<[u8]>`) and a validated representation (`EthernetRepr`, `Ipv4Repr`,
//! `TransportRepr`) with `parse` and `emit`. [`packet`] stacks the three into whole frames.
//! [`udp`] (`UdpPacket<T>`, `UdpRepr`) takes the transport header's place in the raw
//! Ethernet/IPv4/UDP frames IceNIC nodes exchange.
//! All multi-byte fields are big-endian (network byte order, RFC 791 appendix B).

pub mod error;
pub mod ethernet;
pub mod ipv4;
pub mod packet;
pub mod transport;
pub mod udp;

pub use error::{Layer, WireError};
pub use ethernet::{EthernetFrame, EthernetRepr, Mac};
pub use ipv4::{Ipv4Packet, Ipv4Repr};
pub use packet::{Frame, FrameRepr, ParsedFrame};
pub use transport::{Flags, TransportHeader, TransportRepr};
pub use udp::{UdpPacket, UdpRepr};

/// Big-endian field access shared by the views. Callers guarantee the bounds.
mod field {
    pub fn read_u16(buf: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([buf[at], buf[at + 1]])
    }

    pub fn read_u32(buf: &[u8], at: usize) -> u32 {
        u32::from_be_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
    }

    pub fn write_u16(buf: &mut [u8], at: usize, value: u16) {
        buf[at..at + 2].copy_from_slice(&value.to_be_bytes());
    }

    pub fn write_u32(buf: &mut [u8], at: usize, value: u32) {
        buf[at..at + 4].copy_from_slice(&value.to_be_bytes());
    }
}
