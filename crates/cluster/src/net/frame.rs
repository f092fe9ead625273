//! The raw frames IceNIC nodes send and receive (docs/models/icenic.md "Frames"): an
//! Ethernet header from the first byte (as the nanoPU artifact's IceNIC programs lay frames
//! out in their buffers), IPv4 (no options) and UDP, then the payload. Used by the test
//! host and the tests to build and check frames; the headers are `nanopu_net::wire`'s.

use nanopu_net::wire::ethernet::{self, EthernetFrame, EthernetRepr, Mac, ETHERTYPE_IPV4};
use nanopu_net::wire::ipv4::{self, Ipv4Packet, Ipv4Repr, DEFAULT_TTL, PROTO_UDP};
use nanopu_net::wire::udp::{self, UdpPacket, UdpRepr};

/// Offsets of the Ethernet, IPv4 and UDP headers and of the payload.
pub const ETH: usize = 0;
pub const IP: usize = ETH + ethernet::HEADER_LEN;
pub const UDP: usize = IP + ipv4::HEADER_LEN;
pub const PAYLOAD: usize = UDP + udp::HEADER_LEN;

/// Both ends of a UDP frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ends {
    /// The MAC address in the low 48 bits.
    pub mac: u64,
    pub ip: u32,
    pub port: u16,
}

/// A frame from `src` to `dst` carrying `payload`: IPv4 with DF set, TTL 64 and its header
/// checksum filled in (RFC 791); UDP with checksum 0, "none", as RFC 768 allows over IPv4.
///
/// Panics if the payload does not fit a 16-bit UDP length.
pub fn udp_frame(src: Ends, dst: Ends, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; PAYLOAD + payload.len()];
    let udp = udp_repr(src, dst, payload.len());
    eth_repr(src, dst).emit(&mut EthernetFrame::new_unchecked(&mut f[ETH..]));
    ip_repr(src, dst, &udp).emit(&mut Ipv4Packet::new_unchecked(&mut f[IP..]));
    udp.emit(&mut UdpPacket::new_unchecked(&mut f[UDP..]));
    f[PAYLOAD..].copy_from_slice(payload);
    f
}

fn eth_repr(src: Ends, dst: Ends) -> EthernetRepr {
    let (src, dst) = (Mac::from_u64(src.mac), Mac::from_u64(dst.mac));
    EthernetRepr { src, dst, ethertype: ETHERTYPE_IPV4 }
}

fn ip_repr(src: Ends, dst: Ends, udp: &UdpRepr) -> Ipv4Repr {
    let (protocol, tos, ttl) = (PROTO_UDP, 0, DEFAULT_TTL);
    Ipv4Repr { src: src.ip, dst: dst.ip, protocol, tos, payload_len: udp.total_len(), ttl }
}

fn udp_repr(src: Ends, dst: Ends, payload_len: usize) -> UdpRepr {
    let payload_len = u16::try_from(payload_len).expect("UDP payload exceeds 65535 bytes");
    UdpRepr { src_port: src.port, dst_port: dst.port, payload_len }
}

/// The frame's IPv4 header, if the frame is long enough to hold one (its contents are not
/// checked).
fn ip_header(frame: &[u8]) -> Option<Ipv4Packet<&[u8]>> {
    frame.get(IP..UDP).map(Ipv4Packet::new_unchecked)
}

/// The frame's UDP header, if the frame is long enough to hold one (its contents are not
/// checked).
fn udp_header(frame: &[u8]) -> Option<UdpPacket<&[u8]>> {
    frame.get(UDP..PAYLOAD).map(UdpPacket::new_unchecked)
}

/// The frame's destination UDP port, if it is long enough to have a UDP header.
pub fn dst_port(frame: &[u8]) -> Option<u16> {
    udp_header(frame).map(|udp| udp.dst_port())
}

/// The (source, destination) ends of an IPv4/UDP frame (EtherType 0x0800, IP protocol 17):
/// none for a frame that is not one or is too short for the headers. Lengths and checksums
/// are not checked.
pub fn udp_ends(frame: &[u8]) -> Option<(Ends, Ends)> {
    let (eth, ip, udp) = (EthernetFrame::new_checked(frame).ok()?, ip_header(frame)?, udp_header(frame)?);
    let is_udp = eth.ethertype() == ETHERTYPE_IPV4 && ip.protocol() == PROTO_UDP;
    let src = Ends { mac: eth.src().to_u64(), ip: ip.src(), port: udp.src_port() };
    let dst = Ends { mac: eth.dst().to_u64(), ip: ip.dst(), port: udp.dst_port() };
    is_udp.then_some((src, dst))
}

/// The frame's destination IPv4 address, if it is long enough to have an IPv4 header.
pub fn dst_ip(frame: &[u8]) -> Option<u32> {
    ip_header(frame).map(|ip| ip.dst())
}

/// The frame's source IPv4 address, if it is long enough to have an IPv4 header.
pub fn src_ip(frame: &[u8]) -> Option<u32> {
    ip_header(frame).map(|ip| ip.src())
}

/// The IPv4 addresses a switch routes the frame by, (source, destination): none unless
/// it is an IPv4 frame (EtherType 0x0800) long enough to hold them.
pub fn route_ips(frame: &[u8]) -> Option<(u32, u32)> {
    let eth = EthernetFrame::new_checked(frame).ok()?;
    let ip = ip_header(frame).filter(|_| eth.ethertype() == ETHERTYPE_IPV4)?;
    Some((ip.src(), ip.dst()))
}

/// What an echo server sends back: the frame with MACs, IP addresses and UDP ports swapped.
/// The IPv4 header checksum stays as it is: swapping the addresses only reorders the 16-bit
/// words it sums (RFC 791).
///
/// Panics if the frame ends before the UDP ports do.
pub fn turned_around(frame: &[u8]) -> Vec<u8> {
    let mut f = frame.to_vec();
    swap_macs(&mut EthernetFrame::new_unchecked(&mut f[ETH..]));
    swap_ips(&mut Ipv4Packet::new_unchecked(&mut f[IP..]));
    swap_ports(&mut UdpPacket::new_unchecked(&mut f[UDP..]));
    f
}

fn swap_macs(eth: &mut EthernetFrame<&mut [u8]>) {
    let (src, dst) = (eth.src(), eth.dst());
    eth.set_src(dst);
    eth.set_dst(src);
}

fn swap_ips(ip: &mut Ipv4Packet<&mut [u8]>) {
    let (src, dst) = (ip.src(), ip.dst());
    ip.set_src(dst);
    ip.set_dst(src);
}

fn swap_ports(udp: &mut UdpPacket<&mut [u8]>) {
    let (src, dst) = (udp.src_port(), udp.dst_port());
    udp.set_src_port(dst);
    udp.set_dst_port(src);
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Ends = Ends { mac: 0x0200_0000_0002, ip: 0x0a00_0002, port: 1234 };
    const B: Ends = Ends { mac: 0x0200_0000_0103, ip: 0x0a00_0103, port: 40000 };
    const C: Ends = Ends { mac: 0xfedc_ba98_7654, ip: 0xc0a8_ffee, port: 0xffff };

    fn payload() -> Vec<u8> {
        (0u8..13).map(|i| i.wrapping_mul(37)).collect()
    }

    /// Headers as IceNIC programs and the artifact lay them out, byte for byte.
    #[rustfmt::skip]
    const A_TO_B: [u8; PAYLOAD] = [
        0x02, 0x00, 0x00, 0x00, 0x01, 0x03, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x00,
        0x45, 0x00, 0x00, 0x29, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x25, 0xc0,
        0x0a, 0x00, 0x00, 0x02, 0x0a, 0x00, 0x01, 0x03,
        0x04, 0xd2, 0x9c, 0x40, 0x00, 0x15, 0x00, 0x00,
    ];
    #[rustfmt::skip]
    const B_TO_A: [u8; PAYLOAD] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x01, 0x03, 0x08, 0x00,
        0x45, 0x00, 0x00, 0x29, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x25, 0xc0,
        0x0a, 0x00, 0x01, 0x03, 0x0a, 0x00, 0x00, 0x02,
        0x9c, 0x40, 0x04, 0xd2, 0x00, 0x15, 0x00, 0x00,
    ];
    #[rustfmt::skip]
    const C_TO_A: [u8; PAYLOAD] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x08, 0x00,
        0x45, 0x00, 0x00, 0x5c, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x6f, 0xf8,
        0xc0, 0xa8, 0xff, 0xee, 0x0a, 0x00, 0x00, 0x02,
        0xff, 0xff, 0x04, 0xd2, 0x00, 0x48, 0x00, 0x00,
    ];
    #[rustfmt::skip]
    const A_TO_C: [u8; PAYLOAD] = [
        0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x08, 0x00,
        0x45, 0x00, 0x00, 0x5c, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x6f, 0xf8,
        0x0a, 0x00, 0x00, 0x02, 0xc0, 0xa8, 0xff, 0xee,
        0x04, 0xd2, 0xff, 0xff, 0x00, 0x48, 0x00, 0x00,
    ];

    fn bytes(headers: &[u8], payload: &[u8]) -> Vec<u8> {
        [headers, payload].concat()
    }

    #[test]
    fn frames_are_byte_exact() {
        let f = udp_frame(A, B, &payload());
        assert_eq!(f, bytes(&A_TO_B, &payload()));
        assert_eq!(turned_around(&f), bytes(&B_TO_A, &payload()));
        let g = udp_frame(C, A, &[0xff; 64]);
        assert_eq!(g, bytes(&C_TO_A, &[0xff; 64]));
        assert_eq!(turned_around(&g), bytes(&A_TO_C, &[0xff; 64]));
    }

    #[test]
    fn frames_parse_as_ipv4_and_udp() {
        let f = turned_around(&udp_frame(A, C, &payload()));
        let ip = Ipv4Repr::parse(&Ipv4Packet::new_checked(&f[IP..]).unwrap()).unwrap();
        assert_eq!((ip.src, ip.dst, ip.protocol, ip.payload_len), (C.ip, A.ip, PROTO_UDP, 8 + 13));
        let udp = UdpPacket::new_checked(&f[UDP..]).unwrap();
        assert_eq!(
            UdpRepr::parse(&udp).unwrap(),
            UdpRepr { src_port: C.port, dst_port: A.port, payload_len: 13 }
        );
        assert_eq!(udp.payload(), &payload()[..]);
    }

    #[test]
    fn route_ips_need_an_ipv4_header() {
        let f = udp_frame(A, B, &[]);
        assert_eq!(route_ips(&f), Some((A.ip, B.ip)));
        assert_eq!((src_ip(&f), dst_ip(&f)), (Some(A.ip), Some(B.ip)));
        assert_eq!(route_ips(&f[..UDP - 1]), None);
        assert_eq!(dst_ip(&f[..UDP - 1]), None);
        assert_eq!(dst_port(&f[..PAYLOAD]), Some(B.port));
        assert_eq!(dst_port(&f[..PAYLOAD - 1]), None);
        let mut arp = f.clone();
        arp[ETH + 13] = 0x06;
        assert_eq!(route_ips(&arp), None);
    }

    #[test]
    fn udp_ends_read_back_what_udp_frame_wrote() {
        let f = udp_frame(C, B, &[]);
        assert_eq!(udp_ends(&f), Some((C, B)));
        assert_eq!(udp_ends(&f[..PAYLOAD - 1]), None);
        let mut tcp = f.clone();
        tcp[IP + 9] = 6;
        assert_eq!(udp_ends(&tcp), None);
        let mut arp = f;
        arp[ETH + 13] = 0x06;
        assert_eq!(udp_ends(&arp), None);
    }
}
