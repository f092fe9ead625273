//! Unit tests of the transport header: layout, round trips and every validation error.

use super::*;

const SEG: usize = 1024;

fn data(msg_len: u16, pkt_offset: u16) -> TransportRepr {
    TransportRepr {
        flags: Flags::DATA,
        src_context: 1,
        dst_context: 2,
        msg_id: 0x1234,
        msg_len,
        pkt_offset,
        ..Default::default()
    }
}

fn emit(repr: &TransportRepr, after: usize) -> Vec<u8> {
    let mut buf = vec![0u8; HEADER_LEN + after];
    repr.emit(&mut TransportHeader::new_unchecked(&mut buf[..]));
    buf
}

fn parse(buf: &[u8]) -> Result<TransportRepr, WireError> {
    TransportRepr::parse(&TransportHeader::new_unchecked(buf), SEG)
}

#[test]
fn layout_is_big_endian_at_the_documented_offsets() {
    let repr = TransportRepr {
        flags: Flags::GRANT | Flags::MCAST,
        priority: 5,
        src_context: 0x0102,
        dst_context: 0x0304,
        msg_id: 0x0506,
        msg_len: 0x0708,
        pkt_offset: 0x090a,
        credit: 0x0b0c,
        mcast_first: 0x0d0e0f10,
        mcast_count: 0x11121314,
        mcast_seq: 0x15161718,
    };
    let buf = emit(&repr, PADDING_BYTES);
    let want: Vec<u8> = [0x50, 5].into_iter().chain(1..=0x18).chain([0; 4]).collect();
    assert_eq!(&buf[..HEADER_LEN], &want[..]);
    assert_eq!(parse(&buf).unwrap(), repr);
}

#[test]
fn data_round_trips_for_every_segment() {
    // 2,500 bytes: segments of 1024, 1024 and 452.
    for (offset, len) in [(0, 1024), (1, 1024), (2, 452)] {
        let repr = data(2500, offset);
        assert_eq!(repr.packets(SEG), 3);
        assert_eq!(repr.segment_len(SEG), len);
        assert_eq!(parse(&emit(&repr, len)).unwrap(), repr);
    }
}

#[test]
fn reserved_field_is_ignored_on_parse() {
    let mut buf = emit(&data(8, 0), 8);
    buf[26..30].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    let header = TransportHeader::new_checked(&buf[..]).unwrap();
    assert_eq!(header.reserved(), 0xdeadbeef);
    assert_eq!(TransportRepr::parse(&header, SEG).unwrap(), data(8, 0));
}

#[test]
fn control_and_trimmed_packets_carry_eight_bytes_of_padding() {
    let ack = TransportRepr { flags: Flags::ACK, ..data(3000, 2) };
    let chopped = TransportRepr { flags: Flags::DATA | Flags::CHOP, ..data(3000, 2) };
    for repr in [ack, chopped] {
        assert_eq!(repr.wire_payload_len(SEG), PADDING_BYTES);
        assert_eq!(repr.payload_len(SEG), 0);
        assert_eq!(parse(&emit(&repr, 8)).unwrap(), repr);
        assert_eq!(parse(&emit(&repr, 0)), Err(WireError::PaddingLen { len: 0 }));
        assert_eq!(parse(&emit(&repr, 9)), Err(WireError::PaddingLen { len: 9 }));
    }
}

#[test]
fn short_header_is_rejected() {
    let err = parse(&[0u8; 29]).unwrap_err();
    assert_eq!(err.to_string(), "transport: segment of 29 bytes is shorter than the 30-byte header");
}

#[test]
fn msg_len_zero_is_rejected() {
    let err = parse(&emit(&data(0, 0), 0)).unwrap_err();
    assert_eq!(err, WireError::MsgLenZero);
    assert_eq!(err.to_string(), "transport: msg_len 0 is invalid");
}

#[test]
fn a_kind_bit_is_required() {
    for flags in [Flags(0), Flags::CHOP, Flags::MCAST, Flags::RESEND] {
        let repr = TransportRepr { flags, ..data(8, 0) };
        let err = parse(&emit(&repr, 8)).unwrap_err();
        assert_eq!(err, WireError::NoKind { flags: flags.bits() });
    }
    let msg = WireError::NoKind { flags: 0x80 }.to_string();
    assert_eq!(msg, "transport: flags 0x80 set none of DATA, ACK, NACK, PULL, GRANT");
    let resend = TransportRepr { flags: Flags::NACK | Flags::RESEND, ..data(8, 0) };
    assert!(parse(&emit(&resend, 8)).is_ok());
}

#[test]
fn chop_requires_data() {
    let repr = TransportRepr { flags: Flags::NACK | Flags::CHOP, ..data(8, 0) };
    let err = parse(&emit(&repr, 8)).unwrap_err();
    assert_eq!(err, WireError::ChopWithoutData { flags: 0x24 });
}

#[test]
fn priority_must_be_a_homa_priority() {
    let repr = TransportRepr { priority: 8, ..data(8, 0) };
    assert_eq!(parse(&emit(&repr, 8)), Err(WireError::Priority(8)));
    let ok = TransportRepr { priority: 7, ..data(8, 0) };
    assert!(parse(&emit(&ok, 8)).is_ok());
}

#[test]
fn data_offset_must_lie_inside_the_message() {
    let err = parse(&emit(&data(2048, 2), 0)).unwrap_err();
    assert_eq!(err, WireError::PktOffset { offset: 2, packets: 2, msg_len: 2048 });
    let msg = "transport: pkt_offset 2 is out of range for a 2-packet message (msg_len 2048)";
    assert_eq!(err.to_string(), msg);
    // Control packets may name any offset (a PULL's offset is not a data index).
    let pull = TransportRepr { flags: Flags::PULL, credit: 9, ..data(2048, 7) };
    assert!(parse(&emit(&pull, 8)).is_ok());
}

#[test]
fn data_payload_must_match_its_segment() {
    let err = parse(&emit(&data(2500, 2), 1024)).unwrap_err();
    let want = WireError::DataPayloadLen { offset: 2, msg_len: 2500, len: 1024, expected: 452 };
    assert_eq!(err, want);
    let msg = "transport: payload of 1024 bytes, expected 452 for pkt_offset 2 of msg_len 2500";
    assert_eq!(err.to_string(), msg);
}

#[test]
fn segment_size_is_a_parameter() {
    let repr = data(100, 3);
    let buf = emit(&repr, 16);
    assert!(TransportRepr::parse(&TransportHeader::new_unchecked(&buf[..]), 28).is_ok());
    assert!(parse(&buf).is_err());
}

#[test]
fn multicast_fields_must_agree_with_the_flag() {
    let flagged = TransportRepr { flags: Flags::DATA | Flags::MCAST, ..data(8, 0) };
    let err = parse(&emit(&flagged, 8)).unwrap_err();
    assert_eq!(err, WireError::McastCount { mcast_flag: true, count: 0 });
    assert_eq!(err.to_string(), "transport: MCAST flag is set but mcast_count is 0");
    let counted = TransportRepr { mcast_count: 4, ..data(8, 0) };
    let err = parse(&emit(&counted, 8)).unwrap_err();
    assert_eq!(err, WireError::McastCount { mcast_flag: false, count: 4 });
    let overflow = TransportRepr { mcast_first: u32::MAX, mcast_count: 2, ..flagged };
    let err = parse(&emit(&overflow, 8)).unwrap_err();
    assert_eq!(err, WireError::McastRange { first: u32::MAX, count: 2 });
    let group = TransportRepr { mcast_first: 16, mcast_count: 64, mcast_seq: 3, ..flagged };
    assert_eq!(parse(&emit(&group, 8)).unwrap(), group);
}

#[test]
#[should_panic(expected = "segment size 0")]
fn zero_segment_size_panics() {
    let _ = data(8, 0).check(0);
}

#[test]
fn flags_display_and_ops() {
    assert_eq!((Flags::DATA | Flags::CHOP).to_string(), "DATA|CHOP");
    assert_eq!(Flags(0).to_string(), "-");
    assert_eq!(format!("{:?}", Flags(0xff)), "Flags(DATA|ACK|NACK|PULL|GRANT|CHOP|MCAST|RESEND)");
    let mut f = Flags::DATA;
    f.insert(Flags::CHOP);
    assert!(f.contains(Flags::DATA | Flags::CHOP));
    f.remove(Flags::DATA);
    assert_eq!(f, Flags::CHOP);
    assert!(!f.intersects(Flags::KINDS));
}
