//! Unit tests of whole frames: round trips, cross-layer checks, trimming, words.

use super::*;
use crate::wire::ethernet::{Mac, ETHERTYPE_IPV4};
use crate::wire::ipv4::{tos_for_priority, DEFAULT_TTL, PROTO_HOMA, PROTO_NDP};
use crate::wire::Layer;

const SEG: usize = SEGMENT_BYTES;

fn ip(a: [u8; 4]) -> u32 {
    u32::from_be_bytes(a)
}

fn repr(flags: Flags, msg_len: u16, pkt_offset: u16) -> FrameRepr {
    FrameRepr {
        eth: EthernetRepr {
            src: Mac([2, 0, 0, 0, 0, 2]),
            dst: Mac([2, 0, 0, 0, 0, 3]),
            ethertype: ETHERTYPE_IPV4,
        },
        ip: Ipv4Repr {
            src: ip([10, 0, 0, 2]),
            dst: ip([10, 0, 0, 3]),
            protocol: PROTO_NDP,
            tos: 0,
            payload_len: 0,
            ttl: DEFAULT_TTL,
        },
        transport: TransportRepr {
            flags,
            src_context: 1,
            dst_context: 0,
            msg_id: 7,
            msg_len,
            pkt_offset,
            ..Default::default()
        },
    }
}

/// `repr` with the IPv4 payload length a parse of its frame reports.
fn as_parsed(mut r: FrameRepr) -> FrameRepr {
    r.ip.payload_len = (r.wire_len(SEG) - 34) as u16;
    r
}

fn multicast_data() -> FrameRepr {
    let mut r = repr(Flags::DATA | Flags::MCAST, 16, 0);
    r.ip.dst = ip([239, 0, 0, 1]);
    r.eth.dst = Mac::for_ipv4_multicast(r.ip.dst);
    r.transport.mcast_first = 64;
    r.transport.mcast_count = 64;
    r.transport.mcast_seq = 9;
    r
}

fn homa_grant() -> FrameRepr {
    let mut r = repr(Flags::GRANT, 40_000, 0);
    r.ip.protocol = PROTO_HOMA;
    r.ip.tos = tos_for_priority(7);
    r.transport.priority = 2;
    r.transport.credit = 12;
    r
}

fn emit(r: &FrameRepr, payload: &[u8]) -> Frame {
    Frame::emit(r, payload, SEG).unwrap()
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + 3) as u8).collect()
}

#[test]
fn round_trips_for_each_kind_of_frame() {
    let cases = [
        (repr(Flags::DATA, 2500, 0), pattern(1024)),
        (repr(Flags::DATA, 2500, 2), pattern(452)),
        (repr(Flags::DATA | Flags::CHOP, 2500, 1), vec![]),
        (repr(Flags::ACK, 2500, 1), vec![]),
        (repr(Flags::PULL, 2500, 0), vec![]),
        (multicast_data(), pattern(16)),
        (homa_grant(), vec![]),
    ];
    for (r, payload) in cases {
        let frame = emit(&r, &payload);
        assert_eq!(frame.wire_len(), r.wire_len(SEG));
        let parsed = frame.parsed(SEG).unwrap();
        assert_eq!(parsed.repr, as_parsed(r));
        assert_eq!(parsed.payload, &payload[..]);
        let again = Frame::emit(&parsed.repr, parsed.payload, SEG).unwrap();
        assert_eq!(again, frame);
    }
}

#[test]
fn frame_sizes_follow_the_spec() {
    assert_eq!((HEADER_BYTES, TRIMMED_BYTES, MIN_FRAME), (64, 72, 72));
    assert_eq!(MAX_FRAME_BYTES, 1088);
    assert_eq!(emit(&repr(Flags::DATA, 2500, 0), &pattern(1024)).wire_len(), 1088);
    assert_eq!(emit(&repr(Flags::DATA, 1, 0), &[9]).wire_len(), 65);
    assert_eq!(emit(&repr(Flags::NACK, 9, 0), &[]).wire_len(), 72);
    assert_eq!(emit(&homa_grant(), &[]).wire_len(), 72);
}

#[test]
fn layers_sit_at_their_offsets() {
    let frame = emit(&homa_grant(), &[]);
    let b = frame.as_bytes();
    assert_eq!(&b[12..16], &[0x08, 0x00, 0x45, 0xe0]);
    assert_eq!(&b[16..18], &58u16.to_be_bytes());
    assert_eq!(b[23], PROTO_HOMA);
    assert_eq!(&b[34..36], &[0x10, 2]);
    assert_eq!(&b[64..], &[0; 8]);
    assert_eq!((frame.tos(), frame.ip_dst()), (0xe0, ip([10, 0, 0, 3])));
    assert_eq!(frame.transport_flags(), Flags::GRANT);
}

#[test]
fn trimming_yields_a_valid_72_byte_chop_frame() {
    let r = repr(Flags::DATA, 2500, 1);
    let mut frame = emit(&r, &pattern(1024));
    frame.trim().unwrap();
    assert_eq!(frame.wire_len(), TRIMMED_BYTES);
    assert!(frame.is_trimmed());
    let parsed = frame.parsed(SEG).unwrap();
    let mut want = r;
    want.transport.flags.insert(Flags::CHOP);
    assert_eq!(parsed.repr, as_parsed(want));
    assert_eq!(parsed.repr.ip.payload_len, 38);
    assert!(parsed.payload.is_empty());
    assert_eq!(&frame.as_bytes()[64..], &[0; 8]);
    let before = frame.clone();
    frame.trim().unwrap();
    assert_eq!(frame, before);
}

#[test]
fn trimming_keeps_multicast_and_short_segments_valid() {
    for (r, n) in [(multicast_data(), 16), (repr(Flags::DATA, 3, 0), 3)] {
        let mut frame = emit(&r, &pattern(n));
        frame.trim().unwrap();
        assert_eq!(frame.wire_len(), 72);
        assert!(frame.parsed(SEG).is_ok());
    }
}

#[test]
fn control_frames_cannot_be_trimmed() {
    let mut frame = emit(&repr(Flags::ACK, 8, 0), &[]);
    let err = frame.trim().unwrap_err();
    assert_eq!(err, WireError::NotTrimmable { flags: 0x02 });
    assert_eq!(err.to_string(), "frame: only DATA frames can be trimmed (transport flags 0x02)");
}

fn parse_err(bytes: &[u8]) -> WireError {
    Frame::parse(bytes, SEG).unwrap_err()
}

fn ack_bytes() -> Vec<u8> {
    emit(&repr(Flags::ACK, 8, 0), &[]).into_bytes()
}

/// Rewrites the IPv4 total length and checksum after surgery on `b`.
fn fix_ip(b: &mut [u8], total: u16) {
    let mut packet = Ipv4Packet::new_unchecked(&mut b[14..]);
    packet.set_total_len(total);
    packet.fill_checksum();
}

#[test]
fn each_layer_reports_its_own_truncation() {
    let layer = |e: WireError| match e {
        WireError::Truncated { layer, len, .. } => (layer, len),
        other => panic!("not a truncation: {other}"),
    };
    let b = ack_bytes();
    assert_eq!(layer(parse_err(&b[..10])), (Layer::Ethernet, 10));
    assert_eq!(layer(parse_err(&b[..30])), (Layer::Ipv4, 16));
    let mut short = b[..44].to_vec();
    fix_ip(&mut short, 30);
    assert_eq!(layer(parse_err(&short)), (Layer::Transport, 10));
}

#[test]
fn cross_layer_errors() {
    let mut b = ack_bytes();
    b[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
    let err = parse_err(&b);
    assert_eq!(err.to_string(), "ethernet: ethertype 0x86dd is not IPv4 (0x0800)");
    let mut b = ack_bytes();
    b[23] = 6;
    fix_ip(&mut b, 58);
    assert_eq!(parse_err(&b), WireError::Ipv4Protocol(6));
    // A TCP-sized packet is reported by its protocol, not by what our transport makes of it.
    let mut tcp = b[..54].to_vec();
    fix_ip(&mut tcp, 40);
    assert_eq!(parse_err(&tcp), WireError::Ipv4Protocol(6));
    let mut b = ack_bytes();
    b.push(0);
    let err = parse_err(&b);
    assert_eq!(err, WireError::TrailingBytes { frame: 73, ip_total: 58 });
    let msg = "frame: 1 bytes follow the 58-byte IPv4 packet in the 73-byte frame";
    assert_eq!(err.to_string(), msg);
}

#[test]
fn multicast_flag_and_class_d_go_together() {
    let mut unflagged = repr(Flags::ACK, 8, 0);
    unflagged.ip.dst = ip([224, 0, 0, 1]);
    let err = Frame::emit(&unflagged, &[], SEG).unwrap_err();
    assert_eq!(err.to_string(), "frame: multicast address 224.0.0.1 on a packet without the MCAST flag");
    let mut unicast = multicast_data();
    unicast.ip.dst = ip([10, 0, 0, 9]);
    let err = Frame::emit(&unicast, &pattern(16), SEG).unwrap_err();
    assert_eq!(err, WireError::McastAddr { dst: ip([10, 0, 0, 9]), mcast_flag: true });
    // The same check guards parsing: flip the flag of a valid multicast frame.
    let mut b = emit(&multicast_data(), &pattern(16)).into_bytes();
    b[34] &= !Flags::MCAST.bits();
    b[52..56].fill(0);
    assert!(matches!(parse_err(&b), WireError::McastAddr { mcast_flag: false, .. }));
}

#[test]
fn emit_checks_the_payload_it_is_given() {
    let err = Frame::emit(&repr(Flags::DATA, 2500, 2), &pattern(451), SEG).unwrap_err();
    assert_eq!(err, WireError::DataPayloadLen { offset: 2, msg_len: 2500, len: 451, expected: 452 });
    let err = Frame::emit(&repr(Flags::PULL, 8, 0), &[1], SEG).unwrap_err();
    assert_eq!(err, WireError::UnexpectedPayload { len: 1 });
    assert_eq!(err.layer(), Layer::Transport);
    let mut r = repr(Flags::ACK, 8, 0);
    r.eth.ethertype = 0x0806;
    assert_eq!(Frame::emit(&r, &[], SEG), Err(WireError::EtherType(0x0806)));
    let err = Frame::emit(&repr(Flags::ACK, 0, 0), &[], SEG).unwrap_err();
    assert_eq!(err, WireError::MsgLenZero);
}

#[test]
fn from_bytes_accepts_only_valid_frames() {
    let b = ack_bytes();
    assert_eq!(Frame::from_bytes(b.clone(), SEG).unwrap().as_bytes(), &b[..]);
    let mut bad = b;
    bad[24] ^= 1;
    assert!(matches!(Frame::from_bytes(bad, SEG), Err(WireError::Ipv4Checksum { .. })));
}

#[test]
fn words_and_payload_convert_both_ways() {
    let payload: Vec<u8> = (1..=10).collect();
    let words = payload_to_words(&payload);
    assert_eq!(words, vec![0x0102030405060708, 0x090a000000000000]);
    assert_eq!(words_to_payload(&words, 10), payload);
    assert_eq!(words_to_payload(&[u64::MAX, 0x1122334455667788], 11), {
        let mut v = vec![0xff; 8];
        v.extend_from_slice(&[0x11, 0x22, 0x33]);
        v
    });
    assert!(payload_to_words(&[]).is_empty());
    assert!(words_to_payload(&[], 0).is_empty());
    for n in 0..40 {
        let p = pattern(n);
        assert_eq!(words_to_payload(&payload_to_words(&p), n), p);
    }
}

#[test]
#[should_panic(expected = "9 bytes asked of 1 words")]
fn words_to_payload_needs_enough_words() {
    words_to_payload(&[0], 9);
}
