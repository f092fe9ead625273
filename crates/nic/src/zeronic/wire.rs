//! What ZeroNIC reads of a frame to split it, and the TCP checksum it verifies on receive
//! and fills in on transmit (a checksum offload: software never sees the payload, so it
//! cannot sum it). Ethernet II, IPv4 without options or with them (IHL), TCP (RFC 9293
//! 3.1); the checksum is RFC 1071's over the pseudo-header.

/// Ethernet header bytes (no VLAN tag).
pub const ETH: usize = 14;

/// The parts of a TCP/IPv4 frame ZeroNIC needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpFrame {
    pub src_ip: u32,
    pub dst_ip: u32,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    /// Offset of the TCP header in the frame.
    pub tcp_at: usize,
    /// Offset of the payload in the frame: the end of the headers.
    pub payload_at: usize,
    /// Payload bytes (the IPv4 total length less the headers).
    pub payload_len: usize,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The frame as TCP over IPv4, or None (another protocol, or malformed).
pub fn parse(f: &[u8]) -> Option<TcpFrame> {
    if f.len() < ETH + 20 || be16(f, 12) != 0x0800 || f[ETH] >> 4 != 4 || f[ETH + 9] != 6 {
        return None;
    }
    let ihl = usize::from(f[ETH] & 15) * 4;
    let ip_len = usize::from(be16(f, ETH + 2));
    let tcp_at = ETH + ihl;
    if ihl < 20 || ETH + ip_len > f.len() || ip_len < ihl + 20 {
        return None;
    }
    let off = usize::from(f[tcp_at + 12] >> 4) * 4;
    if off < 20 || ihl + off > ip_len {
        return None;
    }
    Some(TcpFrame {
        src_ip: be32(f, ETH + 12),
        dst_ip: be32(f, ETH + 16),
        sport: be16(f, tcp_at),
        dport: be16(f, tcp_at + 2),
        seq: be32(f, tcp_at + 4),
        tcp_at,
        payload_at: tcp_at + off,
        payload_len: ETH + ip_len - (tcp_at + off),
    })
}

/// One's-complement sum of `b` as big-endian 16-bit words (RFC 1071), unfolded.
fn sum(b: &[u8]) -> u64 {
    let pairs = b.chunks(2).map(|c| u64::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])));
    pairs.sum()
}

fn fold(mut s: u64) -> u16 {
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// The checksum field's value for the TCP segment `seg` between the two addresses (the
/// field itself must hold 0 while summing, or its value to verify: then the result is 0).
pub fn tcp_checksum(src: u32, dst: u32, seg: &[u8]) -> u16 {
    let pseudo = u64::from(src >> 16) + u64::from(src & 0xffff) + u64::from(dst >> 16);
    let pseudo = pseudo + u64::from(dst & 0xffff) + 6 + seg.len() as u64;
    !fold(pseudo + sum(seg))
}

/// Does the frame's TCP checksum verify?
pub fn checksum_ok(f: &[u8], t: &TcpFrame) -> bool {
    tcp_checksum(t.src_ip, t.dst_ip, &f[t.tcp_at..t.payload_at + t.payload_len]) == 0
}

/// Fill in the TCP checksum of a frame (the offload on transmit).
pub fn fill_checksum(f: &mut [u8], t: &TcpFrame) {
    f[t.tcp_at + 16..t.tcp_at + 18].copy_from_slice(&[0, 0]);
    let c = tcp_checksum(t.src_ip, t.dst_ip, &f[t.tcp_at..t.payload_at + t.payload_len]);
    f[t.tcp_at + 16..t.tcp_at + 18].copy_from_slice(&c.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCP/IPv4 frame with `payload`, checksum filled.
    pub fn frame(payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; ETH + 40];
        f[12..14].copy_from_slice(&[8, 0]);
        f[ETH] = 0x45;
        f[ETH + 2..ETH + 4].copy_from_slice(&((40 + payload.len()) as u16).to_be_bytes());
        f[ETH + 9] = 6;
        f[ETH + 12..ETH + 16].copy_from_slice(&[10, 0, 0, 1]);
        f[ETH + 16..ETH + 20].copy_from_slice(&[10, 0, 0, 2]);
        f[ETH + 20 + 4..ETH + 20 + 8].copy_from_slice(&1000u32.to_be_bytes());
        f[ETH + 20 + 12] = 5 << 4;
        f.extend_from_slice(payload);
        let t = parse(&f).unwrap();
        fill_checksum(&mut f, &t);
        f
    }

    #[test]
    fn a_filled_checksum_verifies_and_a_flipped_byte_does_not() {
        let mut f = frame(b"hello, odd length");
        let t = parse(&f).unwrap();
        assert_eq!((t.seq, t.payload_at, t.payload_len), (1000, ETH + 40, 17));
        assert!(checksum_ok(&f, &t));
        *f.last_mut().unwrap() ^= 1;
        assert!(!checksum_ok(&f, &t));
    }

    #[test]
    fn not_tcp_is_not_parsed() {
        let mut f = frame(b"x");
        f[ETH + 9] = 17;
        assert_eq!(parse(&f), None);
    }
}
