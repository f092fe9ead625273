//! Packet capture in the pcapng format (IETF draft-ietf-opsawg-pcapng), which the classic
//! pcap cannot say: each capture point is a named interface, and each packet says whether
//! it came in or went out there. Wireshark, tshark and Scapy read it.
//!
//! What is written, little-endian, every block padded to 32 bits:
//!
//! | block | contents |
//! |---|---|
//! | Section Header (0x0A0D0D0A) | byte-order magic 0x1A2B3C4D, version 1.0, section length -1 (unknown) |
//! | Interface Description (1) per interface | LINKTYPE_ETHERNET, snaplen 65535; options `if_name` (2), `if_tsresol` (9) = 9: nanoseconds |
//! | Enhanced Packet (6) per packet | interface id, 64-bit timestamp in ns, captured and original length, frame; option `epb_flags` (2): bits 0-1 = 1 inbound, 2 outbound |
//!
//! Time comes from the simulator in femtoseconds and is floored to whole nanoseconds, as in
//! the classic pcap writer (`pcap`).

use crate::pcap::{LINKTYPE_ETHERNET, SNAPLEN};
use std::io::{self, Write};

const SHB: u32 = 0x0A0D_0D0A;
const IDB: u32 = 1;
const EPB: u32 = 6;
const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
const OPT_END: u16 = 0;
const IF_NAME: u16 = 2;
const IF_TSRESOL: u16 = 9;
const EPB_FLAGS: u16 = 2;
const FS_PER_NS: u64 = 1_000_000;

/// Which way a packet crossed the capture point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Inbound,
    Outbound,
}

/// Writes a pcapng stream: the section header at once, then interfaces and packets.
#[derive(Debug)]
pub struct PcapngWriter<W: Write> {
    out: W,
    interfaces: u32,
}

impl<W: Write> PcapngWriter<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut body = BYTE_ORDER_MAGIC.to_le_bytes().to_vec();
        body.extend([1u16.to_le_bytes(), 0u16.to_le_bytes()].concat());
        body.extend((-1i64).to_le_bytes());
        out.write_all(&block(SHB, &body))?;
        Ok(PcapngWriter { out, interfaces: 0 })
    }

    /// Describe an Ethernet interface named `name`; returns its id for `write_packet`.
    pub fn add_interface(&mut self, name: &str) -> io::Result<u32> {
        let mut body = (LINKTYPE_ETHERNET as u16).to_le_bytes().to_vec();
        body.extend(0u16.to_le_bytes());
        body.extend(SNAPLEN.to_le_bytes());
        body.extend(option(IF_NAME, name.as_bytes()));
        body.extend(option(IF_TSRESOL, &[9]));
        body.extend(option(OPT_END, &[]));
        self.out.write_all(&block(IDB, &body))?;
        self.interfaces += 1;
        Ok(self.interfaces - 1)
    }

    /// Write one frame seen on `interface` at `time_fs`, going `dir`.
    pub fn write_packet(
        &mut self,
        interface: u32,
        time_fs: u64,
        dir: Direction,
        frame: &[u8],
    ) -> io::Result<()> {
        let ns = time_fs / FS_PER_NS;
        let saved = &frame[..frame.len().min(SNAPLEN as usize)];
        let mut body = interface.to_le_bytes().to_vec();
        body.extend(((ns >> 32) as u32).to_le_bytes());
        body.extend((ns as u32).to_le_bytes());
        body.extend((saved.len() as u32).to_le_bytes());
        body.extend((frame.len() as u32).to_le_bytes());
        body.extend(padded(saved));
        let flags: u32 = if dir == Direction::Inbound { 1 } else { 2 };
        body.extend(option(EPB_FLAGS, &flags.to_le_bytes()));
        body.extend(option(OPT_END, &[]));
        self.out.write_all(&block(EPB, &body))
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// A block: type, total length, body (already padded), total length again.
fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let len = (12 + body.len()) as u32;
    let mut b = kind.to_le_bytes().to_vec();
    b.extend(len.to_le_bytes());
    b.extend(body);
    b.extend(len.to_le_bytes());
    b
}

/// An option: code, length, value padded to 32 bits.
fn option(code: u16, value: &[u8]) -> Vec<u8> {
    let mut o = code.to_le_bytes().to_vec();
    o.extend((value.len() as u16).to_le_bytes());
    o.extend(padded(value));
    o
}

fn padded(bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    v.resize(bytes.len().div_ceil(4) * 4, 0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    /// The blocks in order, as (type, body), checking that both lengths agree and that
    /// every block ends on a 32-bit boundary.
    fn blocks(mut b: &[u8]) -> Vec<(u32, Vec<u8>)> {
        let mut out = Vec::new();
        while !b.is_empty() {
            let len = u32_at(b, 4) as usize;
            assert_eq!(len % 4, 0);
            assert_eq!(u32_at(b, len - 4) as usize, len, "trailing length");
            out.push((u32_at(b, 0), b[8..len - 4].to_vec()));
            b = &b[len..];
        }
        out
    }

    #[test]
    fn section_interface_and_packets_with_their_direction() {
        let mut w = PcapngWriter::new(Vec::new()).unwrap();
        let id = w.add_interface("node:0").unwrap();
        w.write_packet(id, 3_000_000_123, Direction::Inbound, &[0xab; 5]).unwrap();
        w.write_packet(id, 1 << 62, Direction::Outbound, &[1, 2, 3, 4]).unwrap();
        let b = blocks(&w.into_inner());
        assert_eq!(b.iter().map(|(t, _)| *t).collect::<Vec<_>>(), vec![SHB, IDB, EPB, EPB]);
        assert_eq!(u32_at(&b[0].1, 0), BYTE_ORDER_MAGIC);
        let idb = &b[1].1;
        assert_eq!(u32_at(idb, 0) & 0xffff, 1, "Ethernet");
        assert_eq!(
            &idb[12..18],
            b"node:0",
            "if_name after linktype, reserved, snaplen and its option header"
        );
        let first = &b[2].1;
        assert_eq!((u32_at(first, 4), u32_at(first, 8)), (0, 3000), "3,000 ns");
        assert_eq!((u32_at(first, 12), u32_at(first, 16)), (5, 5));
        assert_eq!(&first[20..28], &[0xab, 0xab, 0xab, 0xab, 0xab, 0, 0, 0], "padded frame");
        assert_eq!((u32_at(first, 28), u32_at(first, 32)), (2 | 4 << 16, 1), "epb_flags: inbound");
        let second = &b[3].1;
        let ns = (1u64 << 62) / FS_PER_NS;
        assert_eq!((u32_at(second, 4), u32_at(second, 8)), ((ns >> 32) as u32, ns as u32));
        assert_eq!(u32_at(second, 28 - 4), 2 | 4 << 16, "epb_flags after a 4-byte frame");
        assert_eq!(u32_at(second, 32 - 4), 2, "outbound");
    }
}
