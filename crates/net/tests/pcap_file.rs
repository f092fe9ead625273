//! A capture of real frames written to a file and read back. The bytes are checked against
//! the libpcap file format by hand; if `tshark` is installed it must read the file too.

use std::io::BufWriter;
use std::process::Command;

use nanopu_net::pcap::{read_pcap, PcapWriter, FILE_HEADER_LEN, RECORD_HEADER_LEN};
use nanopu_net::wire::ethernet::{Mac, ETHERTYPE_IPV4};
use nanopu_net::wire::ipv4::PROTO_NDP;
use nanopu_net::wire::{EthernetRepr, Flags, Frame, FrameRepr, Ipv4Repr, TransportRepr};

const SEG: usize = 1024;

fn frames() -> Vec<Frame> {
    let repr = |flags, pkt_offset| FrameRepr {
        eth: EthernetRepr {
            src: Mac([2, 0, 0, 0, 0, 2]),
            dst: Mac([2, 0, 0, 0, 0, 3]),
            ethertype: ETHERTYPE_IPV4,
        },
        ip: Ipv4Repr {
            src: 0x0a00_0002,
            dst: 0x0a00_0003,
            protocol: PROTO_NDP,
            tos: 0,
            payload_len: 0,
            ttl: 64,
        },
        transport: TransportRepr { flags, msg_len: 1500, pkt_offset, ..Default::default() },
    };
    let data = Frame::emit(&repr(Flags::DATA, 0), &[0x5a; 1024], SEG).unwrap();
    let mut trimmed = Frame::emit(&repr(Flags::DATA, 1), &[0xa5; 476], SEG).unwrap();
    trimmed.trim().unwrap();
    let ack = Frame::emit(&repr(Flags::ACK, 0), &[], SEG).unwrap();
    vec![data, trimmed, ack]
}

/// Times in femtoseconds: 0, 1 us + 1 fs, 2 s + 43.75 ns.
const TIMES_FS: [u64; 3] = [0, 1_000_000_001, 2_000_000_043_750_000];
const TIMES_NS: [u64; 3] = [0, 1_000, 2_000_000_043];

fn write_capture(path: &std::path::Path) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = PcapWriter::new(BufWriter::new(file)).unwrap();
    for (t, f) in TIMES_FS.iter().zip(frames()) {
        w.write_packet(*t, f.as_bytes()).unwrap();
    }
    w.flush().unwrap();
}

fn temp_path() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("nanopu-net-pcap-{}.pcap", std::process::id()))
}

#[test]
fn capture_file_follows_the_libpcap_format() {
    let path = temp_path();
    write_capture(&path);
    let bytes = std::fs::read(&path).unwrap();
    // File header: nanosecond magic (little-endian), v2.4, zone 0, sigfigs 0, snaplen
    // 65535, LINKTYPE_ETHERNET.
    assert_eq!(&bytes[..8], &[0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0]);
    assert_eq!(&bytes[8..24], &[0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0]);
    let sizes: usize = frames().iter().map(|f| RECORD_HEADER_LEN + f.wire_len()).sum();
    assert_eq!(bytes.len(), FILE_HEADER_LEN + sizes);
    // Second record: 1 us exactly (the extra femtosecond is floored), 72-byte frame.
    let second = FILE_HEADER_LEN + RECORD_HEADER_LEN + 1088;
    assert_eq!(&bytes[second..second + 16], &[0, 0, 0, 0, 0xe8, 3, 0, 0, 72, 0, 0, 0, 72, 0, 0, 0]);
    let read = read_pcap(&bytes).unwrap();
    let want: Vec<(u64, Vec<u8>)> =
        TIMES_NS.iter().zip(frames()).map(|(t, f)| (*t, f.into_bytes())).collect();
    assert_eq!(read, want);
    for (_, frame) in &read {
        Frame::parse(frame, SEG).unwrap();
    }
    check_with_tshark(&path);
    std::fs::remove_file(&path).unwrap();
}

/// Lets tshark read the file when it is installed; skipped (with a note) otherwise.
fn check_with_tshark(path: &std::path::Path) {
    let fields = ["-T", "fields", "-e", "frame.len", "-e", "ip.proto", "-e", "frame.time_epoch"];
    let out = match Command::new("tshark").arg("-r").arg(path).args(fields).output() {
        Ok(out) => out,
        Err(_) => return eprintln!("tshark not installed: checked the pcap bytes by hand only"),
    };
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    for (line, len) in lines.iter().zip(["1088", "72", "72"]) {
        assert!(line.starts_with(&format!("{len}\t153\t")), "{line}");
    }
    assert!(lines[2].ends_with("2.000000043"), "{}", lines[2]);
}
