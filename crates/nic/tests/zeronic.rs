//! ZeroNIC's state machine (docs/models/zeronic.md): registers, the split of arriving
//! segments (payload placed by flow and sequence number, headers to the control queue only
//! after their payload, in arrival order), and the merge on transmit.

use nanopu_nic::icenic::{reg as ice_reg, send_request, IceAction, IceNic, IceParams};
use nanopu_nic::zeronic::{meta, op, reg, wire, Writes, ZeroAction, ZeroNic, ZeroParams};

const BASE: u64 = 0x1001_6000;
const RING: u64 = 0x8010_0000;

fn nic() -> ZeroNic {
    let p = ZeroParams::default();
    ZeroNic::new(p.clone(), IceNic::new(p.control_queue(&IceParams::default()), 0x02_00_0a_00_00_02))
}

fn cmd(z: &mut ZeroNic, opcode: u64, n: u64, a0: u64, a1: u64) {
    let mut out = Vec::new();
    z.write(0, BASE + reg::ARG0, 8, a0, &mut out).unwrap();
    z.write(0, BASE + reg::ARG1, 8, a1, &mut out).unwrap();
    z.write(0, BASE + reg::CMD, 8, opcode | n << 8, &mut out).unwrap();
}

/// Region 1 of 4,000 bytes at RING; flow 0 from 10.0.0.1:80 to port 0 (as the frames of
/// `frame`), stream from sequence number 1000 on, as two pieces of 2,000 bytes.
fn with_flow() -> ZeroNic {
    let mut z = nic();
    cmd(&mut z, op::REGION, 1, RING, 4000);
    cmd(&mut z, op::FLOW, 0, (0x0a00_0001u64 << 32) | 80 << 16, 1000);
    cmd(&mut z, op::PIECE, 0, 1 << 56, 2000);
    cmd(&mut z, op::PIECE, 0, 1 << 56 | 2000, 2000);
    z
}

/// A TCP/IPv4 frame from 10.0.0.1:80 to 10.0.0.2:0, sequence number `seq`, checksum filled.
fn frame(seq: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0u8; 54];
    f[12..14].copy_from_slice(&[8, 0]);
    f[14] = 0x45;
    f[16..18].copy_from_slice(&((40 + payload.len()) as u16).to_be_bytes());
    f[23] = 6;
    f[26..30].copy_from_slice(&[10, 0, 0, 1]);
    f[30..34].copy_from_slice(&[10, 0, 0, 2]);
    f[34..36].copy_from_slice(&80u16.to_be_bytes());
    f[38..42].copy_from_slice(&seq.to_be_bytes());
    f[46] = 5 << 4;
    f.extend_from_slice(payload);
    let t = wire::parse(&f).unwrap();
    wire::fill_checksum(&mut f, &t);
    f
}

fn places(out: &[ZeroAction]) -> Vec<(u64, Writes)> {
    let f = |a: &ZeroAction| match a {
        ZeroAction::Place { id, writes, .. } => Some((*id, writes.clone())),
        _ => None,
    };
    out.iter().filter_map(f).collect()
}

fn headers_buffered(z: &ZeroNic) -> usize {
    z.ice.buffered()
}

#[test]
fn payload_goes_to_its_place_and_the_header_follows_it() {
    let mut z = with_flow();
    let mut out = Vec::new();
    z.frame_arrived(10, frame(1000 + 1990, &[7; 20]), &mut out);
    let p = places(&out);
    assert_eq!(p.len(), 1);
    assert_eq!(
        p[0].1,
        vec![(RING + 1990, vec![7; 10]), (RING + 2000, vec![7; 10])],
        "split at the pieces' boundary"
    );
    assert_eq!(headers_buffered(&z), 0, "no header before its payload is in memory");
    z.placed(200, p[0].0, &mut out);
    assert_eq!(headers_buffered(&z), 1);
    assert_eq!((z.counters.segments_split, z.counters.bytes_placed), (1, 20));
}

#[test]
fn headers_reach_software_in_arrival_order_with_their_metadata() {
    let mut z = with_flow();
    let (mut io, mut out) = (Vec::new(), Vec::new());
    z.write(0, BASE + ice_reg::RECV_REQ, 8, 0x9000_0000, &mut io).unwrap();
    z.frame_arrived(10, frame(1100, &[1; 100]), &mut out);
    z.frame_arrived(20, frame(1000, &[2; 100]), &mut out); // reordered: the earlier bytes second
    let p = places(&out);
    assert_eq!(p[1].1, vec![(RING, vec![2; 100])], "placed by sequence number, not arrival");
    out.clear();
    z.placed(300, p[1].0, &mut out);
    assert_eq!(headers_buffered(&z), 0, "the second header waits for the first");
    z.placed(301, p[0].0, &mut out);
    let written: Vec<Vec<u8>> = out
        .iter()
        .filter_map(|a| match a {
            ZeroAction::Ice(IceAction::DmaWrite { frame, .. }) => Some(frame.clone()),
            _ => None,
        })
        .collect();
    let m = &written[0][54..];
    assert_eq!(written[0].len(), 54 + meta::BYTES, "the header and metadata only");
    assert_eq!(u16::from_le_bytes([m[0], m[1]]), meta::MAGIC);
    assert_eq!(m[2], meta::SPLIT | meta::CSUM_OK);
    assert_eq!(u32::from_le_bytes([m[4], m[5], m[6], m[7]]), 1100, "the first arrival first");
    assert_eq!(u16::from_le_bytes([m[8], m[9]]), 100);
}

#[test]
fn bytes_outside_the_window_and_bad_checksums_are_not_placed() {
    let mut z = with_flow();
    let mut out = Vec::new();
    z.frame_arrived(10, frame(1000 + 3950, &[3; 100]), &mut out);
    assert_eq!(places(&out)[0].1, vec![(RING + 3950, vec![3; 50])], "cut at the window's end");
    assert_eq!(z.counters.bytes_not_placed, 50);
    cmd(&mut z, op::RETIRE, 0, 3000, 0);
    out.clear();
    z.frame_arrived(20, frame(1000, &[4; 100]), &mut out);
    assert!(places(&out).is_empty(), "below the oldest piece: a duplicate of retired bytes");
    let mut bad = frame(1000 + 2500, &[5; 100]);
    *bad.last_mut().unwrap() ^= 1;
    out.clear();
    z.frame_arrived(30, bad, &mut out);
    assert!(places(&out).is_empty());
    assert_eq!(z.counters.bad_checksums, 1);
}

#[test]
fn a_send_merges_the_posted_header_with_registered_payload() {
    let mut z = with_flow();
    let mut out = Vec::new();
    let header = frame(5000, &[0; 30]); // the IPv4 length already counts the payload
    z.write(0, BASE + reg::TX_PAYLOAD, 8, 100 << 24 | 1 << 16 | 30, &mut out).unwrap();
    z.write(0, BASE + ice_reg::SEND_REQ, 8, send_request(0x9000_0000, 54), &mut out).unwrap();
    assert!(matches!(out[0], IceAction::DmaRead { len: 54, .. }), "the header is read first: {out:?}");
    let mut zo = Vec::new();
    z.header_read(100, header[..54].to_vec(), &mut zo);
    assert!(matches!(zo[0], ZeroAction::ReadPayload { addr, len: 30, .. } if addr == RING + 100), "{zo:?}");
    zo.clear();
    z.payload_read(300, vec![9; 30], &mut zo);
    let sent = zo.iter().find_map(|a| match a {
        ZeroAction::Ice(IceAction::Transmit { frame, .. }) => Some(frame.clone()),
        _ => None,
    });
    let sent = sent.expect("the merged frame goes to the wire");
    assert_eq!(&sent[54..], &[9; 30]);
    assert!(wire::checksum_ok(&sent, &wire::parse(&sent).unwrap()), "the NIC filled in the checksum");
}

#[test]
fn registers_refuse_what_the_tables_cannot_hold() {
    let mut z = with_flow();
    let mut out = Vec::new();
    z.write(0, BASE + reg::ARG0, 8, 1 << 56 | 3000, &mut out).unwrap();
    z.write(0, BASE + reg::ARG1, 8, 2000, &mut out).unwrap();
    let e = z.write(0, BASE + reg::CMD, 8, op::PIECE, &mut out).unwrap_err();
    assert!(e.contains("outside region 1"), "{e}");
    let e = z.write(0, BASE + reg::TX_PAYLOAD, 8, 2 << 16 | 10, &mut out).unwrap_err();
    assert!(e.contains("region 2 is not registered"), "{e}");
}
