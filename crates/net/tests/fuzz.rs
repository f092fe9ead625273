//! Fuzz-style tests of the frame parser: random bytes, random fields under valid IPv4
//! headers, and every single-byte mutation and truncation of valid frames. Parsing must
//! never panic; whatever it accepts must re-emit to the same bytes (up to the fields parse
//! ignores) and stay valid when trimmed.
//!
//! Also the frame and pcap fuzz targets (`fuzz/fuzz_targets/`) driven on stable Rust:
//! `fuzz_smoke_frame` and `fuzz_smoke_pcap` (ignored; `make fuzz-smoke` runs them) fuzz
//! for NANOPU_FUZZ_SECS seconds each from the valid frames below.

#[path = "../../../fuzz/driver.rs"]
mod driver;

use nanopu_net::fuzzing;
use nanopu_net::pcap::PcapWriter;
use nanopu_net::wire::ethernet::{Mac, ETHERTYPE_IPV4};
use nanopu_net::wire::ipv4::{tos_for_priority, Ipv4Packet, PROTO_HOMA, PROTO_NDP};
use nanopu_net::wire::packet::SEGMENT_BYTES;
use nanopu_net::wire::{EthernetRepr, Flags, Frame, FrameRepr, Ipv4Repr, Layer, TransportRepr};

const SEG: usize = SEGMENT_BYTES;

use driver::Rng as XorShift;

/// Parses, and checks what an accepted frame promises (see `nanopu_net::fuzzing`).
fn parse_and_check(bytes: &[u8]) -> Result<(), Layer> {
    fuzzing::parse_and_check(bytes, SEG).map_err(|e| e.layer())
}

#[test]
fn random_byte_strings_never_panic() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..100_000 {
        let len = rng.below(200);
        let _ = parse_and_check(&rng.bytes(len));
    }
}

/// Random bytes behind a valid Ethernet header and a valid IPv4 header, so that the
/// transport checks see random fields rather than everything dying at the checksum.
fn random_below_ip(rng: &mut XorShift) -> Vec<u8> {
    // Half of them have the length of a control frame, so some get all the way through.
    let len = [72, 36 + rng.below(100)][rng.below(2)];
    let mut b = rng.bytes(len);
    b[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    b[14] = 0x45;
    b[20..22].fill(0);
    b[23] = [PROTO_NDP, PROTO_HOMA][rng.below(2)];
    b[34] &= 0x7f; // keep MCAST rarer so unicast checks are reached
    b[35] &= 0x07;
    if rng.below(4) != 0 && len >= 60 {
        b[48..60].fill(0); // unicast: no multicast range
    }
    let mut ip = Ipv4Packet::new_unchecked(&mut b[14..]);
    ip.set_total_len((len - 14) as u16);
    ip.fill_checksum();
    b
}

#[test]
fn random_transport_fields_reach_every_layer_check() {
    let mut rng = XorShift(42);
    let mut outcomes = std::collections::BTreeMap::new();
    for _ in 0..100_000 {
        let b = random_below_ip(&mut rng);
        let outcome = parse_and_check(&b).map_err(|l| l.name());
        *outcomes.entry(outcome).or_insert(0u32) += 1;
    }
    eprintln!("outcomes of random transport fields: {outcomes:?}");
    for key in [Ok(()), Err("transport"), Err("frame")] {
        assert!(outcomes.contains_key(&key), "never saw {key:?}: {outcomes:?}");
    }
}

fn base(flags: Flags, msg_len: u16, pkt_offset: u16) -> FrameRepr {
    FrameRepr {
        eth: EthernetRepr {
            src: Mac([2, 0, 0, 0, 0, 2]),
            dst: Mac([2, 0, 0, 0, 0, 3]),
            ethertype: ETHERTYPE_IPV4,
        },
        ip: Ipv4Repr {
            src: 0x0a00_0002,
            dst: 0x0a00_0003,
            protocol: PROTO_HOMA,
            tos: tos_for_priority(6),
            payload_len: 0,
            ttl: 64,
        },
        transport: TransportRepr {
            flags,
            msg_len,
            pkt_offset,
            msg_id: 3,
            src_context: 1,
            ..Default::default()
        },
    }
}

fn valid_frames() -> Vec<Frame> {
    let mut mcast = base(Flags::DATA | Flags::MCAST, 100, 0);
    mcast.ip.dst = 0xef00_0001;
    mcast.transport.mcast_count = 8;
    let cases = [
        (base(Flags::DATA, 3000, 2), 952),
        (base(Flags::DATA, 20, 0), 20),
        (base(Flags::DATA | Flags::CHOP, 3000, 1), 0),
        (base(Flags::ACK, 3000, 1), 0),
        (base(Flags::GRANT, 3000, 0), 0),
        (mcast, 100),
    ];
    let payload = |n: usize| (0..n).map(|i| i as u8).collect::<Vec<u8>>();
    cases.iter().map(|(r, n)| Frame::emit(r, &payload(*n), SEG).unwrap()).collect()
}

#[test]
fn every_single_byte_mutation_of_valid_frames_is_handled() {
    let mut rng = XorShift(7);
    for frame in valid_frames() {
        let good = frame.as_bytes();
        assert_eq!(parse_and_check(good), Ok(()));
        for at in 0..good.len() {
            for mask in [0x01, 0x80, 0xff, rng.next() as u8 | 1] {
                let mut b = good.to_vec();
                b[at] ^= mask;
                let _ = parse_and_check(&b);
            }
        }
    }
}

#[test]
fn every_truncation_and_extension_of_valid_frames_is_rejected() {
    for frame in valid_frames() {
        let good = frame.as_bytes();
        for len in 0..good.len() {
            assert!(Frame::parse(&good[..len], SEG).is_err(), "prefix of {len} bytes");
        }
        let mut longer = good.to_vec();
        longer.push(0);
        assert!(Frame::parse(&longer, SEG).is_err());
    }
}

#[test]
fn header_mutations_are_caught() {
    // Any single-byte change to the IPv4 header breaks its checksum (RFC 1071: a ones'
    // complement sum misses only 0x0000 <-> 0xffff swaps of whole words).
    for frame in valid_frames() {
        for at in 14..34 {
            let mut b = frame.as_bytes().to_vec();
            b[at] ^= 0x10;
            assert_eq!(Frame::parse(&b, SEG).unwrap_err().layer(), Layer::Ipv4, "byte {at}");
        }
    }
}

/// The fuzz targets' seeds: each valid frame behind each segment-size choice byte of
/// `fuzzing::frame` (only the default size, choice 0, accepts them all).
fn frame_seeds() -> Vec<Vec<u8>> {
    let frames = valid_frames();
    (0..4u8).flat_map(|choice| frames.iter().map(move |f| [&[choice][..], f.as_bytes()].concat())).collect()
}

/// A capture of the valid frames, and an empty one.
fn pcap_seeds() -> Vec<Vec<u8>> {
    let mut w = PcapWriter::new(Vec::new()).unwrap();
    for (i, f) in valid_frames().iter().enumerate() {
        w.write_packet(i as u64 * 43_750_000, f.as_bytes()).unwrap();
    }
    vec![w.into_inner(), PcapWriter::new(Vec::new()).unwrap().into_inner()]
}

#[test]
fn the_fuzz_targets_accept_their_seeds() {
    let accepted = frame_seeds().iter().filter(|s| fuzzing::frame(s)).count();
    assert!(accepted >= valid_frames().len(), "{accepted} seeds accepted");
    assert!(pcap_seeds().iter().all(|s| fuzzing::pcap(s)));
}

#[test]
#[ignore = "a bounded fuzz run: `make fuzz-smoke`, or --ignored with NANOPU_FUZZ_SECS"]
fn fuzz_smoke_frame() {
    let stats = driver::run("frame", frame_seeds(), &[], fuzzing::frame);
    assert!(stats.accepted > 0, "{stats:?}");
}

#[test]
#[ignore = "a bounded fuzz run: `make fuzz-smoke`, or --ignored with NANOPU_FUZZ_SECS"]
fn fuzz_smoke_pcap() {
    let stats = driver::run("pcap", pcap_seeds(), &[], fuzzing::pcap);
    assert!(stats.accepted > 0, "{stats:?}");
}
