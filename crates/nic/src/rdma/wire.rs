//! RoCEv2 packets as the RDMA NIC sends them: Ethernet, IPv4, UDP to port 4791, then the
//! InfiniBand Base Transport Header (BTH), the RDMA Extended Transport Header (RETH) of a
//! WRITE's first packet, the ACK Extended Transport Header (AETH) of an acknowledgment, the
//! payload and the 4-byte invariant CRC ([IBA] ch. 9; RoCEv2, [IBA] annex
//! A17). The ICRC is carried as zeros: frames are never corrupted in the simulator, only
//! lost (docs/models/rdma-nic.md "Deviations").

use nanopu_net::wire::ethernet::{self, EthernetFrame, EthernetRepr, Mac, ETHERTYPE_IPV4};
use nanopu_net::wire::ipv4::{self, Ipv4Packet, Ipv4Repr, DEFAULT_TTL, PROTO_UDP};
use nanopu_net::wire::udp::{self, UdpPacket, UdpRepr};

/// RoCEv2's UDP destination port (IANA; RoCEv2 annex A17.2.3).
pub const ROCE_PORT: u16 = 4791;
/// Bytes of the headers before the BTH.
const L2L4: usize = ethernet::HEADER_LEN + ipv4::HEADER_LEN + udp::HEADER_LEN;
pub const BTH_LEN: usize = 12;
pub const RETH_LEN: usize = 16;
pub const AETH_LEN: usize = 4;
pub const ICRC_LEN: usize = 4;
/// PSNs are 24 bits (BTH).
pub const PSN_MASK: u32 = 0xff_ffff;

/// RC opcodes ([IBA] ch. 9; Linux `ib_pack.h`), the ones this NIC sends and takes.
pub mod op {
    pub const SEND_FIRST: u8 = 0x00;
    pub const SEND_MIDDLE: u8 = 0x01;
    pub const SEND_LAST: u8 = 0x02;
    pub const SEND_ONLY: u8 = 0x04;
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_MIDDLE: u8 = 0x07;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_ONLY: u8 = 0x0a;
    pub const ACK: u8 = 0x11;
}

/// AETH syndromes ([IBA] ch. 9; Linux rxe `rxe_hdr.h`): ACK, RNR NAK, NAK with a code.
pub mod syndrome {
    pub const ACK: u8 = 0x1f; // ACK with "no credit limit" (credit code 31)
    pub const RNR_NAK: u8 = 0x20;
    pub const NAK_PSN_SEQ: u8 = 0x60;
    pub const NAK_INVALID: u8 = 0x61;
    pub const NAK_ACCESS: u8 = 0x62;
}

/// A packet's transport headers, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bth {
    pub opcode: u8,
    pub dest_qp: u32,
    /// The AckReq bit.
    pub ack_req: bool,
    pub psn: u32,
}

/// A WRITE's target: virtual address, remote key, total length (RETH).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reth {
    pub va: u64,
    pub rkey: u32,
    pub len: u32,
}

/// An acknowledgment's syndrome and message sequence number (AETH).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aeth {
    pub syndrome: u8,
    pub msn: u32,
}

/// A decoded RoCEv2 packet (borrowing its payload).
#[derive(Clone, Copy, Debug)]
pub struct Parsed<'a> {
    pub src_ip: u32,
    pub bth: Bth,
    pub reth: Option<Reth>,
    pub aeth: Option<Aeth>,
    pub payload: &'a [u8],
}

/// Does the opcode carry a RETH, an AETH?
fn has_reth(op: u8) -> bool {
    matches!(op, op::WRITE_FIRST | op::WRITE_ONLY)
}
fn has_aeth(op: u8) -> bool {
    op == op::ACK
}

/// Both ends of a packet: MACs and IPv4 addresses; the UDP source port carries the
/// sending QP (flow entropy, as RoCEv2 NICs vary it per QP).
#[derive(Clone, Copy, Debug)]
pub struct Ends {
    pub src_mac: u64,
    pub dst_mac: u64,
    pub src_ip: u32,
    pub dst_ip: u32,
    pub src_qp: u32,
}

/// Bytes a packet with these headers and `payload` bytes takes on the wire.
pub fn frame_len(op: u8, payload: usize) -> usize {
    L2L4 + BTH_LEN + has_reth(op) as usize * RETH_LEN + has_aeth(op) as usize * AETH_LEN + payload + ICRC_LEN
}

/// A frame: headers, then room for `payload` bytes at the returned offset (filled by the
/// caller once the payload has been read from memory).
pub fn build(e: Ends, bth: Bth, reth: Option<Reth>, aeth: Option<Aeth>, payload: usize) -> (Vec<u8>, usize) {
    let mut f = vec![0u8; frame_len(bth.opcode, payload)];
    let l4 = u16::try_from(f.len() - ethernet::HEADER_LEN - ipv4::HEADER_LEN - udp::HEADER_LEN).expect("MTU");
    let udp = UdpRepr { src_port: 0xc000 | (e.src_qp as u16 & 0x3fff), dst_port: ROCE_PORT, payload_len: l4 };
    let ip = Ipv4Repr {
        src: e.src_ip,
        dst: e.dst_ip,
        protocol: PROTO_UDP,
        tos: 0,
        payload_len: udp.total_len(),
        ttl: DEFAULT_TTL,
    };
    let eth = EthernetRepr {
        src: Mac::from_u64(e.src_mac),
        dst: Mac::from_u64(e.dst_mac),
        ethertype: ETHERTYPE_IPV4,
    };
    eth.emit(&mut EthernetFrame::new_unchecked(&mut f[..]));
    ip.emit(&mut Ipv4Packet::new_unchecked(&mut f[ethernet::HEADER_LEN..]));
    udp.emit(&mut UdpPacket::new_unchecked(&mut f[ethernet::HEADER_LEN + ipv4::HEADER_LEN..]));
    let mut at = L2L4;
    put_bth(&mut f[at..at + BTH_LEN], bth);
    at += BTH_LEN;
    if let Some(r) = reth {
        f[at..at + 8].copy_from_slice(&r.va.to_be_bytes());
        f[at + 8..at + 12].copy_from_slice(&r.rkey.to_be_bytes());
        f[at + 12..at + 16].copy_from_slice(&r.len.to_be_bytes());
        at += RETH_LEN;
    }
    if let Some(a) = aeth {
        f[at..at + 4].copy_from_slice(&((a.syndrome as u32) << 24 | (a.msn & PSN_MASK)).to_be_bytes());
        at += AETH_LEN;
    }
    (f, at)
}

/// BTH: opcode, flags (SE 0, M 0, pad 0, TVer 0), P_Key 0xffff, dest QP, AckReq, PSN.
fn put_bth(b: &mut [u8], h: Bth) {
    b[0] = h.opcode;
    b[2..4].copy_from_slice(&0xffffu16.to_be_bytes());
    b[4..8].copy_from_slice(&(h.dest_qp & PSN_MASK).to_be_bytes());
    b[8..12].copy_from_slice(&((h.ack_req as u32) << 31 | (h.psn & PSN_MASK)).to_be_bytes());
}

/// Decode a RoCEv2 frame: none if it is not IPv4/UDP to port 4791 or is too short for
/// the headers its opcode has.
pub fn parse(f: &[u8]) -> Option<Parsed<'_>> {
    let eth = EthernetFrame::new_checked(f).ok()?;
    let ip = Ipv4Packet::new_checked(f.get(ethernet::HEADER_LEN..)?).ok()?;
    let udp = UdpPacket::new_checked(f.get(ethernet::HEADER_LEN + ipv4::HEADER_LEN..)?).ok()?;
    if eth.ethertype() != ETHERTYPE_IPV4 || ip.protocol() != PROTO_UDP || udp.dst_port() != ROCE_PORT {
        return None;
    }
    let b = f.get(L2L4..L2L4 + BTH_LEN)?;
    let word = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let bth = Bth {
        opcode: b[0],
        dest_qp: word(4) & PSN_MASK,
        ack_req: word(8) >> 31 == 1,
        psn: word(8) & PSN_MASK,
    };
    let mut at = L2L4 + BTH_LEN;
    let reth = has_reth(bth.opcode).then(|| read_reth(f.get(at..at + RETH_LEN))).flatten();
    at += reth.is_some() as usize * RETH_LEN;
    let aeth = has_aeth(bth.opcode).then(|| read_aeth(f.get(at..at + AETH_LEN))).flatten();
    at += aeth.is_some() as usize * AETH_LEN;
    let end = f.len().checked_sub(ICRC_LEN)?;
    let payload = f.get(at..end)?;
    Some(Parsed { src_ip: ip.src(), bth, reth, aeth, payload })
}

fn read_reth(b: Option<&[u8]>) -> Option<Reth> {
    let b = b?;
    let va = u64::from_be_bytes(b[0..8].try_into().ok()?);
    let w = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    Some(Reth { va, rkey: w(8), len: w(12) })
}

fn read_aeth(b: Option<&[u8]>) -> Option<Aeth> {
    let w = u32::from_be_bytes(b?.try_into().ok()?);
    Some(Aeth { syndrome: (w >> 24) as u8, msn: w & PSN_MASK })
}

/// The absolute PSN nearest `reference` whose low 24 bits are `psn` (PSN arithmetic is
/// modulo 2^24, [IBA] ch. 9).
pub fn unwrap_psn(psn: u32, reference: u64) -> u64 {
    let diff = (psn.wrapping_sub(reference as u32) & PSN_MASK) as i64;
    let signed = if diff >= 1 << 23 { diff - (1 << 24) } else { diff };
    (reference as i64 + signed).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends() -> Ends {
        Ends {
            src_mac: 0x0200_0a00_0003,
            dst_mac: 0x0200_0a00_0002,
            src_ip: 0x0a00_0003,
            dst_ip: 0x0a00_0002,
            src_qp: 5,
        }
    }

    #[test]
    fn a_write_first_packet_round_trips() {
        let bth = Bth { opcode: op::WRITE_FIRST, dest_qp: 7, ack_req: true, psn: 0xfffffe };
        let reth = Reth { va: 0x8000_1000, rkey: 3, len: 10_000 };
        let (mut f, at) = build(ends(), bth, Some(reth), None, 100);
        f[at..at + 100].fill(0xab);
        assert_eq!(f.len(), 14 + 20 + 8 + 12 + 16 + 100 + 4);
        let p = parse(&f).unwrap();
        assert_eq!((p.bth, p.reth, p.aeth, p.src_ip), (bth, Some(reth), None, 0x0a00_0003));
        assert!(p.payload.len() == 100 && p.payload.iter().all(|&b| b == 0xab));
    }

    #[test]
    fn an_ack_carries_its_syndrome_and_msn() {
        let bth = Bth { opcode: op::ACK, dest_qp: 1, ack_req: false, psn: 42 };
        let aeth = Aeth { syndrome: syndrome::NAK_PSN_SEQ, msn: 9 };
        let (f, _) = build(ends(), bth, None, Some(aeth), 0);
        let p = parse(&f).unwrap();
        assert_eq!((p.aeth, p.payload.len()), (Some(aeth), 0));
    }

    #[test]
    fn psns_unwrap_around_the_24_bit_boundary() {
        assert_eq!(unwrap_psn(2, (1 << 24) - 3), (1 << 24) + 2);
        assert_eq!(unwrap_psn(0xfffffd, 1 << 24), (1 << 24) - 3);
        assert_eq!(unwrap_psn(5, 3), 5);
        assert_eq!(unwrap_psn(1, 3), 1);
    }
}
