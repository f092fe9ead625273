//! The nanoPU's network: wire formats, capture, and the packet-level fabric.
//!
//! A tour:
//!
//! - [`wire`]: the bytes on the simulated wire. A frame is Ethernet (14 bytes) + IPv4
//!   (20 bytes, no options) + the 30-byte nanoPU transport header + a payload of up to one
//!   1,024-byte segment; trimmed and control frames carry 8 bytes of padding instead and are
//!   72 bytes (docs/platform.md sections 3 and 4). Each header has a zero-copy view over a
//!   byte buffer (checked once, then read field by field) and a validated representation
//!   (what a model builds and emits):
//!   - [`wire::ethernet`]: [`wire::EthernetFrame`], [`wire::EthernetRepr`], [`wire::Mac`];
//!   - [`wire::ipv4`]: [`wire::Ipv4Packet`], [`wire::Ipv4Repr`], the NDP and Homa protocol
//!     numbers, Homa priority in the TOS byte, class D multicast addresses;
//!   - [`wire::transport`]: [`wire::TransportHeader`], [`wire::TransportRepr`],
//!     [`wire::Flags`], with the field layout in its module doc;
//!   - [`wire::packet`]: whole frames: [`wire::Frame`] (owned, always valid) with parse,
//!     emit and switch-style trimming, and payload bytes to and from the big-endian u64
//!     words programs see;
//!   - [`wire::udp`]: [`wire::UdpPacket`], [`wire::UdpRepr`], the UDP header (RFC 768) of
//!     the raw Ethernet/IPv4/UDP frames IceNIC nodes exchange.
//!
//!   Every rejection is a [`wire::WireError`] whose message names the layer and the field.
//! - [`fuzzing`]: the fuzz targets' bodies (`fuzz/`), which must never panic.
//! - [`pcap`]: captures in the classic libpcap format with nanosecond timestamps, which
//!   Wireshark and Scapy open, and a small reader for tests.
//! - [`pcapng`]: captures in pcapng, with the capture point as a named interface and each
//!   packet's direction.
//!
//! - [`packet`]: the in-memory packet the fabric moves (header fields plus shared payload
//!   words); bytes are made from it only for capture.
//! - [`fabric`]: links (serialization, propagation, loss, going down), output-queued
//!   switches with strict-priority bands, per-band limits and trimming, star and leaf-spine
//!   topologies with spraying or flow hashing, multicast replication made reliable hop by
//!   hop, capture points and statistics (docs/models/network.md).
//!
//! ```
//! use nanopu_net::pcap::{read_pcap, PcapWriter};
//! use nanopu_net::wire::ethernet::{Mac, ETHERTYPE_IPV4};
//! use nanopu_net::wire::ipv4::{tos_for_priority, PROTO_HOMA};
//! use nanopu_net::wire::packet::{SEGMENT_BYTES, TRIMMED_BYTES};
//! use nanopu_net::wire::{EthernetRepr, Flags, Frame, FrameRepr, Ipv4Repr, TransportRepr};
//!
//! let repr = FrameRepr {
//!     eth: EthernetRepr { src: Mac([2, 0, 0, 0, 0, 2]), dst: Mac([2, 0, 0, 0, 0, 3]), ethertype: ETHERTYPE_IPV4 },
//!     ip: Ipv4Repr {
//!         src: u32::from_be_bytes([10, 0, 0, 2]),
//!         dst: u32::from_be_bytes([10, 0, 0, 3]),
//!         protocol: PROTO_HOMA,
//!         tos: tos_for_priority(7),
//!         payload_len: 0, // derived by `Frame::emit`
//!         ttl: 64,
//!     },
//!     transport: TransportRepr { flags: Flags::DATA, msg_len: 16, src_context: 1, ..Default::default() },
//! };
//! let mut frame = Frame::emit(&repr, &[7; 16], SEGMENT_BYTES)?;
//! assert_eq!(frame.wire_len(), 64 + 16);
//! frame.trim()?; // what a switch does when the data band is full
//! let parsed = Frame::parse(frame.as_bytes(), SEGMENT_BYTES)?;
//! assert!(parsed.repr.transport.is_trimmed() && parsed.payload.is_empty());
//! assert_eq!(frame.wire_len(), TRIMMED_BYTES);
//!
//! let mut pcap = PcapWriter::new(Vec::new())?;
//! pcap.write_packet(43_750_000, frame.as_bytes())?; // at 43.75 ns, in femtoseconds
//! assert_eq!(read_pcap(&pcap.into_inner())?[0].0, 43);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

pub mod fabric;
pub mod fuzzing;
pub mod packet;
pub mod pcap;
pub mod pcapng;
pub mod wire;
