//! The raw frames IceNIC nodes send and receive (docs/models/icenic.md "Frames"): an
//! Ethernet header from the first byte (as the nanoPU artifact's IceNIC programs lay frames
//! out in their buffers), IPv4 (no options) and UDP, then the payload. Used by the test
//! host and the tests to build and check frames.

/// Offsets of the Ethernet, IPv4 and UDP headers and of the payload.
pub const ETH: usize = 0;
pub const IP: usize = 14;
pub const UDP: usize = IP + 20;
pub const PAYLOAD: usize = UDP + 8;

/// Both ends of a UDP frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ends {
    pub mac: u64,
    pub ip: u32,
    pub port: u16,
}

/// A frame from `src` to `dst` carrying `payload` (IPv4 header checksum filled in; UDP
/// checksum 0, "none", as IPv4 allows).
pub fn udp_frame(src: Ends, dst: Ends, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; PAYLOAD + payload.len()];
    f[ETH..ETH + 6].copy_from_slice(&dst.mac.to_be_bytes()[2..]);
    f[ETH + 6..ETH + 12].copy_from_slice(&src.mac.to_be_bytes()[2..]);
    f[ETH + 12..ETH + 14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip_len = (20 + 8 + payload.len()) as u16;
    let ip = [0x45, 0, (ip_len >> 8) as u8, ip_len as u8, 0, 0, 0x40, 0, 64, 17, 0, 0];
    f[IP..IP + 12].copy_from_slice(&ip);
    f[IP + 12..IP + 16].copy_from_slice(&src.ip.to_be_bytes());
    f[IP + 16..IP + 20].copy_from_slice(&dst.ip.to_be_bytes());
    let sum = ip_checksum(&f[IP..UDP]);
    f[IP + 10..IP + 12].copy_from_slice(&sum.to_be_bytes());
    f[UDP..UDP + 2].copy_from_slice(&src.port.to_be_bytes());
    f[UDP + 2..UDP + 4].copy_from_slice(&dst.port.to_be_bytes());
    f[UDP + 4..UDP + 6].copy_from_slice(&(ip_len - 20).to_be_bytes());
    f[PAYLOAD..].copy_from_slice(payload);
    f
}

/// The IPv4 header checksum (RFC 791): ones' complement of the ones' complement sum.
fn ip_checksum(h: &[u8]) -> u16 {
    let mut s: u32 = h.chunks(2).map(|w| u32::from(w[0]) << 8 | u32::from(w[1])).sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

/// The frame's destination IPv4 address, if it is long enough to have one.
pub fn dst_ip(frame: &[u8]) -> Option<u32> {
    ip_at(frame, IP + 16)
}

/// The frame's source IPv4 address, if it is long enough to have one.
pub fn src_ip(frame: &[u8]) -> Option<u32> {
    ip_at(frame, IP + 12)
}

fn ip_at(frame: &[u8], off: usize) -> Option<u32> {
    frame.get(off..off + 4).map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")))
}

/// The IPv4 addresses a switch routes the frame by, (source, destination): none unless
/// it is an IPv4 frame (EtherType 0x0800) long enough to hold them.
pub fn route_ips(frame: &[u8]) -> Option<(u32, u32)> {
    let ipv4 = frame.get(ETH + 12..ETH + 14) == Some(&[0x08, 0x00][..]);
    ipv4.then(|| Some((src_ip(frame)?, dst_ip(frame)?))).flatten()
}

/// What an echo server sends back: the frame with MACs, IP addresses and UDP ports swapped
/// (the IPv4 checksum is unchanged: the sum of its words is).
pub fn turned_around(frame: &[u8]) -> Vec<u8> {
    let mut f = frame.to_vec();
    let swap = |f: &mut Vec<u8>, a: usize, b: usize, n: usize| {
        let t = f[a..a + n].to_vec();
        f.copy_within(b..b + n, a);
        f[b..b + n].copy_from_slice(&t);
    };
    swap(&mut f, ETH, ETH + 6, 6);
    swap(&mut f, IP + 12, IP + 16, 4);
    swap(&mut f, UDP, UDP + 2, 2);
    f
}
