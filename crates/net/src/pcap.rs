//! Packet capture in the classic libpcap file format, with nanosecond timestamps, so that
//! Wireshark, tshark, tcpdump and Scapy open simulated traffic directly.
//!
//! Layout (libpcap file format, pcap-savefile(5); IETF draft-ietf-opsawg-pcap):
//!
//! | file header, 24 bytes | |
//! |---|---|
//! | magic u32 | 0xa1b23c4d: timestamps in nanoseconds (0xa1b2c3d4 would be microseconds) |
//! | version u16, u16 | 2, 4 |
//! | thiszone i32, sigfigs u32 | 0, 0 |
//! | snaplen u32 | 65535 |
//! | linktype u32 | 1 = LINKTYPE_ETHERNET (frames from the destination MAC, no FCS) |
//!
//! | record header, 16 bytes, then incl_len bytes of frame | |
//! |---|---|
//! | ts_sec u32, ts_nsec u32 | capture time |
//! | incl_len u32, orig_len u32 | bytes saved, bytes on the wire |
//!
//! Fields are written little-endian; readers learn the byte order from the magic. Time
//! comes from the simulator in femtoseconds and is floored to whole nanoseconds.

use std::io::{self, Write};

/// Magic of a pcap file with nanosecond timestamps.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Magic of a pcap file with microsecond timestamps (read only).
pub const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
/// Link type of Ethernet frames (tcpdump.org link-layer header types).
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Largest number of bytes saved per packet; longer frames are cut (orig_len keeps the truth).
pub const SNAPLEN: u32 = 65535;
/// Bytes of the file header.
pub const FILE_HEADER_LEN: usize = 24;
/// Bytes of a record header.
pub const RECORD_HEADER_LEN: usize = 16;

const FS_PER_NS: u64 = 1_000_000;
const NS_PER_SEC: u64 = 1_000_000_000;

/// Writes frames to a pcap stream. Wrap files in a `BufWriter`: every record is two writes.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
}

impl<W: Write> PcapWriter<W> {
    /// Starts a capture by writing the file header.
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(&file_header())?;
        Ok(PcapWriter { out })
    }

    /// Appends one Ethernet frame captured at `time_fs` femtoseconds of simulated time.
    pub fn write_packet(&mut self, time_fs: u64, frame: &[u8]) -> io::Result<()> {
        let saved = frame.len().min(SNAPLEN as usize);
        self.out.write_all(&record_header(time_fs, saved, frame.len()))?;
        self.out.write_all(&frame[..saved])
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Gives the writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

fn file_header() -> [u8; FILE_HEADER_LEN] {
    let mut h = [0u8; FILE_HEADER_LEN];
    h[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone and sigfigs stay 0.
    h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
    h
}

/// Femtoseconds as (seconds, nanoseconds), floored. A u64 of femtoseconds spans about
/// 18,446 s, so the seconds always fit the 32-bit field.
pub fn fs_to_sec_nsec(time_fs: u64) -> (u32, u32) {
    let ns = time_fs / FS_PER_NS;
    ((ns / NS_PER_SEC) as u32, (ns % NS_PER_SEC) as u32)
}

fn record_header(time_fs: u64, saved: usize, len: usize) -> [u8; RECORD_HEADER_LEN] {
    let (sec, nsec) = fs_to_sec_nsec(time_fs);
    let fields = [sec, nsec, saved as u32, len as u32];
    let mut h = [0u8; RECORD_HEADER_LEN];
    for (chunk, field) in h.chunks_mut(4).zip(fields) {
        chunk.copy_from_slice(&field.to_le_bytes());
    }
    h
}

/// Reads a classic pcap file of Ethernet frames, in either byte order and either timestamp
/// resolution, into (timestamp in ns, saved bytes) pairs. Meant for tests and tools.
pub fn read_pcap(data: &[u8]) -> Result<Vec<(u64, Vec<u8>)>, String> {
    let header = data
        .get(..FILE_HEADER_LEN)
        .ok_or_else(|| format!("pcap: file of {} bytes is shorter than the 24-byte header", data.len()))?;
    let (order, ns_per_tick) = read_magic(header)?;
    let linktype = order.u32(&header[20..24]);
    if linktype != LINKTYPE_ETHERNET {
        return Err(format!("pcap: link type {linktype} is not Ethernet (1)"));
    }
    read_records(&data[FILE_HEADER_LEN..], order, ns_per_tick)
}

/// The byte order a file was written in.
#[derive(Clone, Copy)]
enum Order {
    Little,
    Big,
}

impl Order {
    fn u32(self, b: &[u8]) -> u32 {
        let b: [u8; 4] = b.try_into().expect("4-byte field");
        match self {
            Order::Little => u32::from_le_bytes(b),
            Order::Big => u32::from_be_bytes(b),
        }
    }
}

/// The byte order and the nanoseconds per timestamp tick a magic number announces.
fn read_magic(header: &[u8]) -> Result<(Order, u64), String> {
    for order in [Order::Little, Order::Big] {
        match order.u32(&header[0..4]) {
            MAGIC_NANOS => return Ok((order, 1)),
            MAGIC_MICROS => return Ok((order, 1000)),
            _ => {}
        }
    }
    let magic = Order::Little.u32(&header[0..4]);
    Err(format!("pcap: magic 0x{magic:08x} (little-endian) is not a pcap magic"))
}

fn read_records(mut rest: &[u8], order: Order, ns_per_tick: u64) -> Result<Vec<(u64, Vec<u8>)>, String> {
    let mut out = Vec::new();
    while !rest.is_empty() {
        let at = out.len();
        let h = rest.get(..RECORD_HEADER_LEN).ok_or(format!("pcap: record {at} header is truncated"))?;
        let f = |i: usize| u64::from(order.u32(&h[4 * i..4 * i + 4]));
        let time = f(0) * NS_PER_SEC + f(1) * ns_per_tick;
        let end = RECORD_HEADER_LEN + f(2) as usize;
        let bytes = rest.get(RECORD_HEADER_LEN..end).ok_or(format!("pcap: record {at} data is truncated"))?;
        out.push((time, bytes.to_vec()));
        rest = &rest[end..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(packets: &[(u64, &[u8])]) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        for (t, frame) in packets {
            w.write_packet(*t, frame).unwrap();
        }
        w.into_inner()
    }

    #[test]
    fn file_header_matches_the_format() {
        let file = capture(&[]);
        let want = [0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0];
        assert_eq!(file, want);
    }

    #[test]
    fn record_layout_and_time_conversion() {
        // 2.5 s + 1,234,567 fs: the 567 fs below a nanosecond are floored away.
        let t = 2_500_000_000 * FS_PER_NS + 1_234_567;
        let file = capture(&[(t, &[0xaa, 0xbb, 0xcc])]);
        let rec = &file[FILE_HEADER_LEN..];
        assert_eq!(&rec[0..4], &2u32.to_le_bytes());
        assert_eq!(&rec[4..8], &500_000_001u32.to_le_bytes());
        assert_eq!(&rec[8..16], &[3, 0, 0, 0, 3, 0, 0, 0]);
        assert_eq!(&rec[16..], &[0xaa, 0xbb, 0xcc]);
        assert_eq!(fs_to_sec_nsec(999_999), (0, 0));
        assert_eq!(fs_to_sec_nsec(u64::MAX), (18_446, 744_073_709));
    }

    #[test]
    fn reader_round_trips_the_writer() {
        let frames: Vec<(u64, Vec<u8>)> =
            (0..5u8).map(|i| (u64::from(i) * 43_750_000, vec![i; 72 + usize::from(i)])).collect();
        let borrowed: Vec<(u64, &[u8])> = frames.iter().map(|(t, f)| (*t, &f[..])).collect();
        let read = read_pcap(&capture(&borrowed)).unwrap();
        let want: Vec<(u64, Vec<u8>)> = frames.iter().map(|(t, f)| (t / FS_PER_NS, f.clone())).collect();
        assert_eq!(read, want);
    }

    #[test]
    fn long_frames_are_cut_at_the_snaplen() {
        let big = vec![7u8; SNAPLEN as usize + 10];
        let file = capture(&[(0, &big)]);
        let rec = &file[FILE_HEADER_LEN..];
        assert_eq!(&rec[8..12], &SNAPLEN.to_le_bytes());
        assert_eq!(&rec[12..16], &(SNAPLEN + 10).to_le_bytes());
        assert_eq!(read_pcap(&file).unwrap()[0].1.len(), SNAPLEN as usize);
    }

    #[test]
    fn reader_accepts_big_endian_microsecond_files() {
        let mut file = MAGIC_MICROS.to_be_bytes().to_vec();
        file.extend_from_slice(&[0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 1]);
        file.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 1, 0x42]);
        assert_eq!(read_pcap(&file).unwrap(), vec![(1_000_005_000, vec![0x42])]);
    }

    #[test]
    fn reader_rejects_damaged_files() {
        assert!(read_pcap(&[0; 10]).unwrap_err().contains("shorter than the 24-byte header"));
        assert!(read_pcap(&[0; 24]).unwrap_err().contains("not a pcap magic"));
        let mut file = capture(&[(0, &[1, 2, 3])]);
        file.pop();
        assert_eq!(read_pcap(&file).unwrap_err(), "pcap: record 0 data is truncated");
        file.truncate(FILE_HEADER_LEN + 5);
        assert_eq!(read_pcap(&file).unwrap_err(), "pcap: record 0 header is truncated");
        let mut raw = capture(&[]);
        raw[20] = 101;
        assert!(read_pcap(&raw).unwrap_err().contains("link type 101"));
    }
}
