//! The transport's packets are the shared [`nanopu_sim::packet::Packet`]; `Segment` is its
//! name on this side.

pub use nanopu_sim::packet::{flags, is_multicast_ip, Packet as Segment, MULTICAST_IP};
