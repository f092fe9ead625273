//! An output port: strict-priority bands with byte limits, feeding one directed link.

use crate::packet::{Packet, MIN_FRAME};
use std::collections::VecDeque;

/// What happened to a packet offered to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    Queued,
    Trimmed,
    /// Did not fit its band (nor band 0 as a trimmed header).
    Full,
}

#[derive(Clone, Debug, Default)]
pub struct Port {
    /// Queued packets per band (allocated on first use).
    bands: Vec<VecDeque<Packet>>,
    used: Vec<u32>,
    pub busy: bool,
    /// Largest number of bytes queued at once.
    pub max_bytes: u32,
    pub sent_packets: u64,
    pub sent_bytes: u64,
}

impl Port {
    fn ensure(&mut self, bands: usize) {
        if self.bands.len() < bands {
            self.bands.resize_with(bands, VecDeque::new);
            self.used.resize(bands, 0);
        }
    }

    /// Offer a packet. `limits` is None for an unlimited port (a NIC's own queue).
    pub fn offer(&mut self, mut p: Packet, limits: Option<&[u32]>, trim: bool) -> Admit {
        let nb = limits.map_or(8, <[u32]>::len);
        self.ensure(nb);
        let band = (p.band as usize).min(nb - 1);
        let fits = |used: &[u32], b: usize, size: u32| limits.is_none_or(|l| used[b] + size <= l[b]);
        if fits(&self.used, band, p.wire_len()) {
            self.push(band, p);
            return Admit::Queued;
        }
        let trimmable = trim && p.is_data() && !p.is_trimmed() && !p.is_multicast();
        if !trimmable || !fits(&self.used, 0, MIN_FRAME) {
            return Admit::Full;
        }
        p.trim();
        self.push(0, p);
        Admit::Trimmed
    }

    fn push(&mut self, band: usize, p: Packet) {
        self.used[band] += p.wire_len();
        self.bands[band].push_back(p);
        self.max_bytes = self.max_bytes.max(self.used.iter().sum());
    }

    /// The next packet to send: highest band first, FIFO within a band.
    pub fn pop(&mut self) -> Option<Packet> {
        let b = self.bands.iter().position(|q| !q.is_empty())?;
        let p = self.bands[b].pop_front()?;
        self.used[b] -= p.wire_len();
        self.sent_packets += 1;
        self.sent_bytes += p.wire_len() as u64;
        Some(p)
    }
}
