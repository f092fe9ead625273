//! Ethernet II framing (IEEE 802.3 clause 3.2, with the type interpretation of RFC 894).
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 6 | destination MAC |
//! | 6 | 6 | source MAC |
//! | 12 | 2 | ethertype, big-endian (0x0800 = IPv4) |
//! | 14 | .. | payload |
//!
//! Frames here stop before the frame check sequence: like a pcap capture, the simulator
//! never materialises preamble, FCS or inter-frame gap (the link model accounts for their
//! time). nanoPU frames are at least 72 bytes, above the 60-byte IEEE 802.3 minimum
//! without FCS, so no padding ever follows the payload.

use std::fmt;

use super::field::{read_u16, write_u16};
use super::{Layer, WireError};

/// Length of the Ethernet II header.
pub const HEADER_LEN: usize = 14;
/// Ethertype of IPv4 (RFC 894).
pub const ETHERTYPE_IPV4: u16 = 0x0800;

const DST: std::ops::Range<usize> = 0..6;
const SRC: std::ops::Range<usize> = 6..12;
const ETHERTYPE: usize = 12;

/// A 48-bit IEEE 802 MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Mac(pub [u8; 6]);

impl Mac {
    /// ff:ff:ff:ff:ff:ff.
    pub const BROADCAST: Mac = Mac([0xff; 6]);

    /// The MAC in the low 48 bits of `value`, most significant octet first (the upper 16
    /// bits are ignored).
    pub fn from_u64(value: u64) -> Mac {
        Mac(value.to_be_bytes()[2..].try_into().expect("6 bytes"))
    }

    /// The MAC as the low 48 bits of a `u64`, the inverse of [`Mac::from_u64`].
    pub fn to_u64(self) -> u64 {
        let mut b = [0u8; 8];
        b[2..].copy_from_slice(&self.0);
        u64::from_be_bytes(b)
    }

    /// True if the individual/group bit (the least significant bit of the first octet,
    /// IEEE 802.3 clause 3.2.3) marks a group address; broadcast is a group address too.
    pub fn is_multicast(self) -> bool {
        self.0[0] & 0x01 != 0
    }

    /// True for ff:ff:ff:ff:ff:ff.
    pub fn is_broadcast(self) -> bool {
        self == Mac::BROADCAST
    }

    /// The group MAC an IPv4 multicast address maps to: 01:00:5e followed by the low 23
    /// bits of the address (RFC 1112 section 6.4).
    pub fn for_ipv4_multicast(addr: u32) -> Mac {
        let a = (addr & 0x007f_ffff).to_be_bytes();
        Mac([0x01, 0x00, 0x5e, a[1], a[2], a[3]])
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
    }
}

/// A zero-copy view of an Ethernet II frame in a byte buffer.
///
/// Accessors of a view made with [`EthernetFrame::new_unchecked`] panic on a buffer shorter
/// than the header; [`EthernetFrame::new_checked`] rules that out.
#[derive(Debug, Clone)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Wraps a buffer without checking its length.
    pub fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }

    /// Wraps a buffer, checking that it holds the whole header.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let frame = Self::new_unchecked(buffer);
        frame.check_len()?;
        Ok(frame)
    }

    /// Checks that the buffer holds the 14-byte header.
    pub fn check_len(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated { layer: Layer::Ethernet, len, header: HEADER_LEN });
        }
        Ok(())
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Destination MAC.
    pub fn dst(&self) -> Mac {
        Mac(self.buffer.as_ref()[DST].try_into().expect("6-byte range"))
    }

    /// Source MAC.
    pub fn src(&self) -> Mac {
        Mac(self.buffer.as_ref()[SRC].try_into().expect("6-byte range"))
    }

    /// Ethertype.
    pub fn ethertype(&self) -> u16 {
        read_u16(self.buffer.as_ref(), ETHERTYPE)
    }

    /// Everything after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    /// Sets the destination MAC.
    pub fn set_dst(&mut self, mac: Mac) {
        self.buffer.as_mut()[DST].copy_from_slice(&mac.0);
    }

    /// Sets the source MAC.
    pub fn set_src(&mut self, mac: Mac) {
        self.buffer.as_mut()[SRC].copy_from_slice(&mac.0);
    }

    /// Sets the ethertype.
    pub fn set_ethertype(&mut self, ethertype: u16) {
        write_u16(self.buffer.as_mut(), ETHERTYPE, ethertype);
    }

    /// Everything after the header, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[HEADER_LEN..]
    }
}

/// The fields of an Ethernet II header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EthernetRepr {
    pub src: Mac,
    pub dst: Mac,
    pub ethertype: u16,
}

impl EthernetRepr {
    /// Reads the header of a checked frame. Any ethertype is accepted here; the frame
    /// parser is the one that insists on IPv4.
    pub fn parse<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> Result<Self, WireError> {
        frame.check_len()?;
        Ok(EthernetRepr { src: frame.src(), dst: frame.dst(), ethertype: frame.ethertype() })
    }

    /// Bytes this header occupies.
    pub fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header into a frame at least 14 bytes long.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut EthernetFrame<T>) {
        frame.set_dst(self.dst);
        frame.set_src(self.src);
        frame.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> EthernetRepr {
        EthernetRepr {
            src: Mac([0x02, 0, 0, 0, 0, 0x02]),
            dst: Mac([0x02, 0, 0, 0, 0, 0x03]),
            ethertype: ETHERTYPE_IPV4,
        }
    }

    #[test]
    fn round_trip() {
        let mut buf = [0u8; HEADER_LEN + 4];
        repr().emit(&mut EthernetFrame::new_unchecked(&mut buf[..]));
        let frame = EthernetFrame::new_checked(&buf[..]).unwrap();
        assert_eq!(EthernetRepr::parse(&frame).unwrap(), repr());
        assert_eq!(frame.payload().len(), 4);
        assert_eq!(&buf[..HEADER_LEN], &[2, 0, 0, 0, 0, 3, 2, 0, 0, 0, 0, 2, 0x08, 0x00]);
    }

    #[test]
    fn short_frame_is_rejected() {
        let err = EthernetFrame::new_checked(&[0u8; 10][..]).unwrap_err();
        assert_eq!(err.to_string(), "ethernet: frame of 10 bytes is shorter than the 14-byte header");
    }

    #[test]
    fn mac_display_and_groups() {
        assert_eq!(Mac([0x02, 0xab, 0, 0, 0x10, 0xff]).to_string(), "02:ab:00:00:10:ff");
        assert!(Mac::BROADCAST.is_broadcast() && Mac::BROADCAST.is_multicast());
        assert!(!repr().src.is_multicast());
        // 239.129.2.3 maps to 01:00:5e:01:02:03: the top bit of the second octet is lost.
        let m = Mac::for_ipv4_multicast(u32::from_be_bytes([239, 129, 2, 3]));
        assert_eq!(m.to_string(), "01:00:5e:01:02:03");
        assert!(m.is_multicast());
    }

    #[test]
    fn mac_from_u64_takes_the_low_48_bits() {
        let m = Mac::from_u64(0xffff_0211_2233_4455);
        assert_eq!(m.to_string(), "02:11:22:33:44:55");
        assert_eq!(m.to_u64(), 0x0211_2233_4455);
    }
}
