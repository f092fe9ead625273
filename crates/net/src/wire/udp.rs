//! UDP (RFC 768), the transport of the raw frames IceNIC nodes exchange.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 2 | source port |
//! | 2 | 2 | destination port |
//! | 4 | 2 | length: header + data, at least 8 |
//! | 6 | 2 | checksum; 0 means "none", which IPv4 allows |
//!
//! Frames built here carry no checksum (0), and a stored one is not verified on parse:
//! checking it needs the IPv4 pseudo-header, and no model depends on it.

use super::field::{read_u16, write_u16};
use super::{Layer, WireError};

/// Length of the UDP header.
pub const HEADER_LEN: usize = 8;

mod off {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const LEN: usize = 4;
    pub const CHECKSUM: usize = 6;
}

/// A zero-copy view of a UDP datagram.
///
/// Accessors of an unchecked view panic on a buffer shorter than 8 bytes, and
/// [`UdpPacket::payload`] also on a length field beyond the buffer; use
/// [`UdpPacket::new_checked`] on untrusted bytes.
#[derive(Debug, Clone)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// Wraps a buffer without checking it.
    pub fn new_unchecked(buffer: T) -> Self {
        UdpPacket { buffer }
    }

    /// Wraps a buffer, checking its length (see [`UdpPacket::check_len`]).
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the buffer holds the 8-byte header and that the length field covers the
    /// header and fits in the buffer (bytes beyond it are ignored).
    pub fn check_len(&self) -> Result<(), WireError> {
        let available = self.buffer.as_ref().len();
        if available < HEADER_LEN {
            return Err(WireError::Truncated { layer: Layer::Udp, len: available, header: HEADER_LEN });
        }
        let len = self.length();
        if usize::from(len) < HEADER_LEN || usize::from(len) > available {
            return Err(WireError::UdpLen { len, available });
        }
        Ok(())
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        read_u16(self.buffer.as_ref(), off::SRC_PORT)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        read_u16(self.buffer.as_ref(), off::DST_PORT)
    }

    /// The length field: header and data.
    pub fn length(&self) -> u16 {
        read_u16(self.buffer.as_ref(), off::LEN)
    }

    /// Stored checksum (0: none).
    pub fn checksum(&self) -> u16 {
        read_u16(self.buffer.as_ref(), off::CHECKSUM)
    }

    /// The data after the header, up to the length field.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..usize::from(self.length())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    /// Sets the source port.
    pub fn set_src_port(&mut self, port: u16) {
        write_u16(self.buffer.as_mut(), off::SRC_PORT, port);
    }

    /// Sets the destination port.
    pub fn set_dst_port(&mut self, port: u16) {
        write_u16(self.buffer.as_mut(), off::DST_PORT, port);
    }

    /// Sets the length field: header and data.
    pub fn set_length(&mut self, len: u16) {
        write_u16(self.buffer.as_mut(), off::LEN, len);
    }

    /// Sets the checksum (0: none).
    pub fn set_checksum(&mut self, sum: u16) {
        write_u16(self.buffer.as_mut(), off::CHECKSUM, sum);
    }

    /// The data after the header, up to the length field, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.length());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// The fields of a UDP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    /// Bytes after the UDP header (length - 8).
    pub payload_len: u16,
}

impl UdpRepr {
    /// Reads a header whose length field is consistent with the buffer.
    pub fn parse<T: AsRef<[u8]>>(packet: &UdpPacket<T>) -> Result<Self, WireError> {
        packet.check_len()?;
        Ok(UdpRepr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            payload_len: packet.length() - HEADER_LEN as u16,
        })
    }

    /// Bytes this header occupies.
    pub fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Header and data: the length field's value.
    ///
    /// Panics if `payload_len` leaves no room for the header in the 16-bit length.
    pub fn total_len(&self) -> u16 {
        let total = self.payload_len.checked_add(HEADER_LEN as u16);
        total.expect("UDP length exceeds 65535")
    }

    /// Writes the header, with checksum 0 ("none"), into a buffer of at least 8 bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut UdpPacket<T>) {
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        packet.set_length(self.total_len());
        packet.set_checksum(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> UdpRepr {
        UdpRepr { src_port: 1234, dst_port: 40000, payload_len: 3 }
    }

    fn emitted() -> Vec<u8> {
        let mut buf = vec![0xaau8; HEADER_LEN + 3];
        repr().emit(&mut UdpPacket::new_unchecked(&mut buf[..]));
        buf
    }

    fn parse(buf: &[u8]) -> Result<UdpRepr, WireError> {
        UdpRepr::parse(&UdpPacket::new_unchecked(buf))
    }

    #[test]
    fn round_trip_and_layout() {
        let buf = emitted();
        assert_eq!(parse(&buf).unwrap(), repr());
        // RFC 768 layout: ports 1234 and 40000, length 11, checksum 0.
        assert_eq!(&buf[..HEADER_LEN], &[0x04, 0xd2, 0x9c, 0x40, 0, 11, 0, 0]);
        assert_eq!(UdpPacket::new_unchecked(&buf[..]).payload(), &[0xaa; 3]);
    }

    #[test]
    fn bytes_beyond_the_length_are_not_payload() {
        let mut buf = emitted();
        buf.push(0x55);
        let packet = UdpPacket::new_checked(&buf[..]).unwrap();
        assert_eq!(packet.payload().len(), 3);
    }

    #[test]
    fn length_errors() {
        let short = WireError::Truncated { layer: Layer::Udp, len: 7, header: 8 };
        assert_eq!(parse(&[0u8; 7]).unwrap_err(), short);
        assert_eq!(short.to_string(), "udp: datagram of 7 bytes is shorter than the 8-byte header");
        let mut buf = emitted();
        buf[5] = 12;
        assert_eq!(parse(&buf).unwrap_err(), WireError::UdpLen { len: 12, available: 11 });
        buf[5] = 7;
        assert_eq!(parse(&buf).unwrap_err(), WireError::UdpLen { len: 7, available: 11 });
    }

    #[test]
    fn length_error_messages() {
        let long = WireError::UdpLen { len: 12, available: 11 };
        assert_eq!(long.to_string(), "udp: length 12 exceeds the 11 bytes available");
        let short = WireError::UdpLen { len: 7, available: 11 };
        assert_eq!(short.to_string(), "udp: length 7 is shorter than the 8-byte header");
    }

    #[test]
    #[should_panic(expected = "UDP length exceeds 65535")]
    fn oversized_payload_panics() {
        UdpRepr { payload_len: 65530, ..repr() }.total_len();
    }
}
