//! The packet the fabric moves is the shared [`nanopu_sim::packet::Packet`] (header fields
//! plus shared payload words); bytes are made from it only for capture (`wire`).

pub use nanopu_sim::packet::{Packet, HEADER_BYTES, MIN_FRAME};
