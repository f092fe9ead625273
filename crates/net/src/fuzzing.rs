//! Fuzz target bodies: the one-line cargo-fuzz targets in `fuzz/` and the stable-Rust
//! driver in `tests/fuzz.rs` both call these, so the same code is fuzzed either way. A
//! body must never panic on any input; it panics only when an input the parsers accepted
//! breaks one of their promises, which is a bug the fuzzer should report.

use crate::pcap::{read_pcap, PcapWriter};
use crate::wire::ipv4::Ipv4Packet;
use crate::wire::packet::{payload_to_words, words_to_payload, SEGMENT_BYTES};
use crate::wire::transport::MAX_SEGMENT_BYTES;
use crate::wire::{EthernetFrame, EthernetRepr, Frame, Ipv4Repr, TransportHeader, TransportRepr, WireError};

/// Segment sizes the first input byte chooses between: the default and the extremes.
const SEGS: [usize; 4] = [SEGMENT_BYTES, 1, 64, MAX_SEGMENT_BYTES];

/// `data[0]` chooses the segment size, the rest is a frame: each layer's parser on its
/// header, then the whole-frame parser and what it promises. Returns whether the frame
/// was accepted.
pub fn frame(data: &[u8]) -> bool {
    let Some((&choice, bytes)) = data.split_first() else { return false };
    let seg = SEGS[usize::from(choice) % SEGS.len()];
    layers(bytes, seg);
    parse_and_check(bytes, seg).is_ok()
}

/// Each layer's own parser on the bytes where its header would be.
fn layers(b: &[u8], seg: usize) {
    if let Ok(eth) = EthernetFrame::new_checked(b) {
        let _ = EthernetRepr::parse(&eth);
    }
    if let Ok(ip) = Ipv4Packet::new_checked(b.get(14..).unwrap_or_default()) {
        let _ = Ipv4Repr::parse(&ip);
    }
    if let Ok(t) = TransportHeader::new_checked(b.get(34..).unwrap_or_default()) {
        let _ = TransportRepr::parse(&t, seg);
    }
}

/// Parses `bytes` as a frame of segments of `seg` bytes and checks what an accepted one
/// promises: it re-emits to the same bytes (up to the fields parse ignores), it is a valid
/// `Frame`, trimming keeps it valid, and its payload survives the trip through words.
pub fn parse_and_check(bytes: &[u8], seg: usize) -> Result<(), WireError> {
    let parsed = Frame::parse(bytes, seg)?;
    let again = Frame::emit(&parsed.repr, parsed.payload, seg).expect("an accepted frame re-emits");
    assert_eq!(again.as_bytes(), &canonical(bytes, parsed.payload.is_empty())[..]);
    let words = payload_to_words(parsed.payload);
    assert_eq!(words_to_payload(&words, parsed.payload.len()), parsed.payload);
    let mut frame = Frame::from_bytes(bytes.to_vec(), seg).expect("accepted bytes make a Frame");
    if frame.trim().is_ok() {
        Frame::parse(frame.as_bytes(), seg).expect("a trimmed frame parses");
    }
    Ok(())
}

/// `bytes` with the fields parse ignores as emit writes them: IPv4 identification 0 and
/// DF set (checksum refreshed), reserved word and padding zero.
pub fn canonical(bytes: &[u8], padded: bool) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[18..22].copy_from_slice(&[0, 0, 0x40, 0]);
    Ipv4Packet::new_unchecked(&mut b[14..]).fill_checksum();
    b[60..64].fill(0);
    if padded {
        b[64..].fill(0);
    }
    b
}

/// Reads `data` as a pcap file; an accepted file's records must write out and read back
/// unchanged. Returns whether it was accepted.
pub fn pcap(data: &[u8]) -> bool {
    let Ok(records) = read_pcap(data) else { return false };
    let mut w = PcapWriter::new(Vec::new()).expect("writing to memory");
    // Nanosecond times past what femtoseconds in a u64 can hold cannot be written back.
    let fits = records.iter().all(|(ns, bytes)| ns.checked_mul(1_000_000).is_some() && bytes.len() <= 65535);
    if fits {
        for (ns, bytes) in &records {
            w.write_packet(ns * 1_000_000, bytes).expect("writing to memory");
        }
        assert_eq!(read_pcap(&w.into_inner()).as_ref(), Ok(&records), "a pcap round trip");
    }
    true
}
