//! IPv4 without options (RFC 791 section 3.1).
//!
//! | offset | size | field | nanoPU use |
//! |---|---|---|---|
//! | 0 | 1 | version (4) and IHL (5) | options are never sent and are rejected |
//! | 1 | 1 | type of service | Homa priority in the precedence bits: TOS = p << 5 |
//! | 2 | 2 | total length | header + transport header + payload |
//! | 4 | 2 | identification | 0 (nothing is fragmented) |
//! | 6 | 2 | flags and fragment offset | DF set on emit; MF or an offset is rejected |
//! | 8 | 1 | time to live | [`DEFAULT_TTL`] unless the sender says otherwise |
//! | 9 | 1 | protocol | [`PROTO_NDP`] or [`PROTO_HOMA`]; [`PROTO_UDP`] in IceNIC frames |
//! | 10 | 2 | header checksum | RFC 1071 ones' complement sum, checked on parse |
//! | 12 | 4 | source address | |
//! | 16 | 4 | destination address | class D (224.0.0.0/4) for multicast packets |
//!
//! Protocol numbers: the nanoPU prototype sends NDP as IP protocol 0x99; we give the
//! Homa-style transport 0x98, its neighbour. Both lie in the range IANA leaves unassigned
//! (144..=252), so captures never collide with a real protocol's dissector.

use super::field::{read_u16, read_u32, write_u16, write_u32};
use super::{Layer, WireError};

/// Length of an IPv4 header without options.
pub const HEADER_LEN: usize = 20;
/// IP protocol of the NDP-style transport (nanoPU prototype).
pub const PROTO_NDP: u8 = 0x99;
/// IP protocol of the Homa-style transport (our choice, next to NDP's; unassigned by IANA).
pub const PROTO_HOMA: u8 = 0x98;
/// IP protocol of UDP (RFC 768), which IceNIC frames carry.
pub const PROTO_UDP: u8 = 17;
/// TTL written when nothing else is asked for (the usual Unix default).
pub const DEFAULT_TTL: u8 = 64;
/// Number of Homa priority levels the TOS byte carries (the 3 IP precedence bits).
pub const NUM_PRIORITIES: u8 = 8;

/// The "don't fragment" bit of the flags/fragment-offset field (RFC 791 section 3.1).
const FLAG_DF: u16 = 0x4000;
/// "More fragments" plus the 13-bit fragment offset: any of them marks a fragment.
const FRAGMENT_MASK: u16 = 0x3fff;

mod off {
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const TOTAL_LEN: usize = 2;
    pub const IDENT: usize = 4;
    pub const FLAGS_FRAG: usize = 6;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: usize = 10;
    pub const SRC: usize = 12;
    pub const DST: usize = 16;
}

/// The TOS byte that carries Homa priority `p`: the three IP precedence bits (RFC 791).
///
/// Panics if `p` is not below [`NUM_PRIORITIES`]: a priority out of range is a model bug.
pub fn tos_for_priority(p: u8) -> u8 {
    assert!(p < NUM_PRIORITIES, "Homa priority {p} is not in 0..8");
    p << 5
}

/// The Homa priority a TOS byte carries (its precedence bits; the low 5 bits are ignored).
pub fn priority_of_tos(tos: u8) -> u8 {
    tos >> 5
}

/// True for class D addresses, 224.0.0.0/4 (RFC 1112 section 4, RFC 5771).
pub fn is_multicast(addr: u32) -> bool {
    addr >> 28 == 0xe
}

/// The Internet checksum of `data`: ones' complement of the ones' complement sum of its
/// 16-bit big-endian words, an odd last byte padded with zero (RFC 1071 section 4.1).
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in data.chunks(2) {
        let word = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A zero-copy view of an IPv4 packet.
///
/// Accessors of an unchecked view panic on a buffer shorter than 20 bytes, and
/// [`Ipv4Packet::payload`] also on a total length beyond the buffer; use
/// [`Ipv4Packet::new_checked`] on untrusted bytes.
#[derive(Debug, Clone)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Wraps a buffer without checking it.
    pub fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }

    /// Wraps a buffer, checking the header's structure (see [`Ipv4Packet::check_len`]).
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks, in this order: the buffer holds 20 bytes, version is 4, IHL is 5, and the
    /// total length covers the header and fits in the buffer (bytes beyond it are ignored).
    pub fn check_len(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated { layer: Layer::Ipv4, len, header: HEADER_LEN });
        }
        if self.version() != 4 {
            return Err(WireError::Ipv4Version(self.version()));
        }
        if self.ihl() != 5 {
            return Err(WireError::Ipv4Options { ihl: self.ihl() });
        }
        self.check_total_len(len)
    }

    fn check_total_len(&self, available: usize) -> Result<(), WireError> {
        let total = self.total_len();
        let t = usize::from(total);
        if t < HEADER_LEN || t > available {
            return Err(WireError::Ipv4TotalLen { total, available });
        }
        Ok(())
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// Version nibble.
    pub fn version(&self) -> u8 {
        self.bytes()[off::VER_IHL] >> 4
    }

    /// Header length in 32-bit words.
    pub fn ihl(&self) -> u8 {
        self.bytes()[off::VER_IHL] & 0x0f
    }

    /// Type of service byte.
    pub fn tos(&self) -> u8 {
        self.bytes()[off::TOS]
    }

    /// Total length of header and payload.
    pub fn total_len(&self) -> u16 {
        read_u16(self.bytes(), off::TOTAL_LEN)
    }

    /// Identification.
    pub fn ident(&self) -> u16 {
        read_u16(self.bytes(), off::IDENT)
    }

    /// The raw flags (3 bits) and fragment offset (13 bits).
    pub fn flags_frag(&self) -> u16 {
        read_u16(self.bytes(), off::FLAGS_FRAG)
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.bytes()[off::TTL]
    }

    /// Protocol of the payload.
    pub fn protocol(&self) -> u8 {
        self.bytes()[off::PROTOCOL]
    }

    /// Stored header checksum.
    pub fn checksum(&self) -> u16 {
        read_u16(self.bytes(), off::CHECKSUM)
    }

    /// Source address.
    pub fn src(&self) -> u32 {
        read_u32(self.bytes(), off::SRC)
    }

    /// Destination address.
    pub fn dst(&self) -> u32 {
        read_u32(self.bytes(), off::DST)
    }

    /// The checksum the header should carry: the sum with the checksum field read as zero.
    pub fn compute_checksum(&self) -> u16 {
        let mut header = [0u8; HEADER_LEN];
        header.copy_from_slice(&self.bytes()[..HEADER_LEN]);
        header[off::CHECKSUM..off::CHECKSUM + 2].fill(0);
        checksum(&header)
    }

    /// True if the stored checksum is right (the sum over the whole header is then zero).
    pub fn verify_checksum(&self) -> bool {
        checksum(&self.bytes()[..HEADER_LEN]) == 0
    }

    /// The bytes after the header, up to the total length.
    pub fn payload(&self) -> &[u8] {
        &self.bytes()[HEADER_LEN..usize::from(self.total_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    fn bytes_mut(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }

    /// Sets version 4 and IHL 5, the only header shape nanoPU sends.
    pub fn set_version_ihl(&mut self) {
        self.bytes_mut()[off::VER_IHL] = 0x45;
    }

    /// Sets the type of service byte.
    pub fn set_tos(&mut self, tos: u8) {
        self.bytes_mut()[off::TOS] = tos;
    }

    /// Sets the total length.
    pub fn set_total_len(&mut self, len: u16) {
        write_u16(self.bytes_mut(), off::TOTAL_LEN, len);
    }

    /// Sets identification and flags/fragment offset for an unfragmented packet.
    pub fn set_unfragmented(&mut self) {
        write_u16(self.bytes_mut(), off::IDENT, 0);
        write_u16(self.bytes_mut(), off::FLAGS_FRAG, FLAG_DF);
    }

    /// Sets the time to live.
    pub fn set_ttl(&mut self, ttl: u8) {
        self.bytes_mut()[off::TTL] = ttl;
    }

    /// Sets the protocol.
    pub fn set_protocol(&mut self, protocol: u8) {
        self.bytes_mut()[off::PROTOCOL] = protocol;
    }

    /// Sets the source address.
    pub fn set_src(&mut self, addr: u32) {
        write_u32(self.bytes_mut(), off::SRC, addr);
    }

    /// Sets the destination address.
    pub fn set_dst(&mut self, addr: u32) {
        write_u32(self.bytes_mut(), off::DST, addr);
    }

    /// Recomputes and stores the header checksum; call after changing any header field.
    pub fn fill_checksum(&mut self) {
        let sum = self.compute_checksum();
        write_u16(self.bytes_mut(), off::CHECKSUM, sum);
    }

    /// The bytes after the header, up to the total length, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.total_len());
        &mut self.bytes_mut()[HEADER_LEN..end]
    }
}

/// The fields of an IPv4 header that nanoPU packets vary. Addresses are host-order `u32`
/// (`std::net::Ipv4Addr` converts both ways).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Repr {
    pub src: u32,
    pub dst: u32,
    pub protocol: u8,
    pub tos: u8,
    /// Bytes after the IPv4 header (total length - 20).
    pub payload_len: u16,
    pub ttl: u8,
}

impl Ipv4Repr {
    /// Validates a header: structure (see [`Ipv4Packet::check_len`]), no fragmentation,
    /// then the checksum. Any protocol is accepted; the frame parser restricts it.
    pub fn parse<T: AsRef<[u8]>>(packet: &Ipv4Packet<T>) -> Result<Self, WireError> {
        packet.check_len()?;
        if packet.flags_frag() & FRAGMENT_MASK != 0 {
            return Err(WireError::Ipv4Fragment { flags_frag: packet.flags_frag() });
        }
        if !packet.verify_checksum() {
            let (stored, computed) = (packet.checksum(), packet.compute_checksum());
            return Err(WireError::Ipv4Checksum { stored, computed });
        }
        Ok(Self::read(packet))
    }

    fn read<T: AsRef<[u8]>>(p: &Ipv4Packet<T>) -> Self {
        Ipv4Repr {
            src: p.src(),
            dst: p.dst(),
            protocol: p.protocol(),
            tos: p.tos(),
            payload_len: p.total_len() - HEADER_LEN as u16,
            ttl: p.ttl(),
        }
    }

    /// Bytes this header occupies.
    pub fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// The Homa priority the TOS byte carries.
    pub fn priority(&self) -> u8 {
        priority_of_tos(self.tos)
    }

    /// Writes the header, checksum included, into a buffer of at least 20 bytes.
    ///
    /// Panics if `payload_len` leaves no room for the header in the 16-bit total length.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Ipv4Packet<T>) {
        let total = self.payload_len.checked_add(HEADER_LEN as u16);
        packet.set_version_ihl();
        packet.set_tos(self.tos);
        packet.set_total_len(total.expect("IPv4 total length exceeds 65535"));
        packet.set_unfragmented();
        packet.set_ttl(self.ttl);
        packet.set_protocol(self.protocol);
        packet.set_src(self.src);
        packet.set_dst(self.dst);
        packet.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> Ipv4Repr {
        Ipv4Repr {
            src: u32::from_be_bytes([10, 0, 0, 2]),
            dst: u32::from_be_bytes([10, 0, 0, 3]),
            protocol: PROTO_NDP,
            tos: tos_for_priority(3),
            payload_len: 8,
            ttl: DEFAULT_TTL,
        }
    }

    fn emitted() -> Vec<u8> {
        let mut buf = vec![0u8; HEADER_LEN + 8];
        repr().emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        buf
    }

    fn parse(buf: &[u8]) -> Result<Ipv4Repr, WireError> {
        Ipv4Repr::parse(&Ipv4Packet::new_unchecked(buf))
    }

    #[test]
    fn round_trip_and_layout() {
        let buf = emitted();
        assert_eq!(parse(&buf).unwrap(), repr());
        // RFC 791 layout: 0x45, TOS 0x60, length 28, ident 0, DF, TTL 64, proto 0x99.
        assert_eq!(&buf[..10], &[0x45, 0x60, 0, 28, 0, 0, 0x40, 0, 64, 0x99]);
        assert_eq!(Ipv4Packet::new_unchecked(&buf[..]).payload().len(), 8);
    }

    #[test]
    fn checksum_matches_rfc1071_example() {
        // The worked example commonly quoted for the IPv4 header checksum (a UDP packet
        // 192.168.0.1 -> 192.168.0.199), whose checksum is 0xb861.
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0, 0, 0xc0, 0xa8, 0x00, 0x01, 0xc0,
            0xa8, 0x00, 0xc7,
        ];
        assert_eq!(checksum(&h), 0xb861);
        h[10..12].copy_from_slice(&0xb861u16.to_be_bytes());
        assert!(Ipv4Packet::new_unchecked(&h[..]).verify_checksum());
        assert_eq!(checksum(&[0x01]), !0x0100);
    }

    #[test]
    fn bad_checksum_is_reported() {
        let mut buf = emitted();
        let good = Ipv4Packet::new_unchecked(&buf[..]).checksum();
        buf[10] ^= 0x12;
        let stored = good ^ 0x1200;
        let err = parse(&buf).unwrap_err();
        assert_eq!(err, WireError::Ipv4Checksum { stored, computed: good });
        let want = format!("ipv4: header checksum 0x{stored:04x} does not match 0x{good:04x}");
        assert_eq!(err.to_string(), want);
    }

    #[test]
    fn structural_errors() {
        let buf = emitted();
        let err = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = buf.clone();
            f(&mut b);
            parse(&b).unwrap_err()
        };
        assert_eq!(
            err(&|b| b.truncate(19)),
            WireError::Truncated { layer: Layer::Ipv4, len: 19, header: 20 }
        );
        assert_eq!(err(&|b| b[0] = 0x65), WireError::Ipv4Version(6));
        assert_eq!(err(&|b| b[0] = 0x46), WireError::Ipv4Options { ihl: 6 });
        assert_eq!(err(&|b| b[0] = 0x44), WireError::Ipv4Options { ihl: 4 });
        let long = WireError::Ipv4TotalLen { total: 29, available: 28 };
        assert_eq!(err(&|b| b[3] = 29), long);
        let short = WireError::Ipv4TotalLen { total: 19, available: 28 };
        assert_eq!(err(&|b| b[3] = 19), short);
        assert_eq!(err(&|b| b[6] = 0x20), WireError::Ipv4Fragment { flags_frag: 0x2000 });
        assert_eq!(err(&|b| b[7] = 0x01), WireError::Ipv4Fragment { flags_frag: 0x4001 });
    }

    #[test]
    fn error_messages_name_the_field() {
        assert_eq!(
            WireError::Ipv4Options { ihl: 6 }.to_string(),
            "ipv4: IHL 6 is not 5 (nanoPU packets carry no IPv4 options)"
        );
        let long = WireError::Ipv4TotalLen { total: 29, available: 28 };
        assert_eq!(long.to_string(), "ipv4: total length 29 exceeds the 28 bytes available");
        assert!(WireError::Ipv4Protocol(6).to_string().starts_with("ipv4: protocol 0x06"));
    }

    #[test]
    fn trailing_bytes_beyond_total_length_are_not_payload() {
        let mut buf = emitted();
        buf.extend_from_slice(&[0xaa; 5]);
        let packet = Ipv4Packet::new_checked(&buf[..]).unwrap();
        assert_eq!(packet.payload(), &[0u8; 8]);
    }

    #[test]
    fn priority_tos_mapping() {
        for p in 0..NUM_PRIORITIES {
            assert_eq!(priority_of_tos(tos_for_priority(p)), p);
        }
        assert_eq!(tos_for_priority(7), 0xe0);
        assert_eq!(tos_for_priority(1), 0x20);
        // ECN and DSCP low bits do not disturb the priority.
        assert_eq!(priority_of_tos(0xa3), 5);
        assert_eq!(repr().priority(), 3);
    }

    #[test]
    #[should_panic(expected = "Homa priority 8")]
    fn priority_out_of_range_panics() {
        tos_for_priority(8);
    }

    #[test]
    fn multicast_addresses_are_class_d() {
        let a = |o: [u8; 4]| u32::from_be_bytes(o);
        assert!(is_multicast(a([224, 0, 0, 0])));
        assert!(is_multicast(a([239, 255, 255, 255])));
        assert!(!is_multicast(a([223, 255, 255, 255])));
        assert!(!is_multicast(a([240, 0, 0, 0])));
        assert!(!is_multicast(a([10, 0, 0, 2])));
    }
}
