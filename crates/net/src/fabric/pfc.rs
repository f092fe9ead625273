//! Priority flow control (IEEE 802.1Qbb), an option of the switches, off by default
//! (docs/models/network.md "PFC"). A switch counts, per input port, the bytes queued in it
//! that arrived through that port (ingress accounting, as shared-buffer switches do); when
//! the count passes `xoff_bytes` it sends a PAUSE to the port's upstream sender, which
//! stops starting packets once the PAUSE arrives (a link's propagation later); when the
//! count falls to `xon_bytes` it sends a resume (a PAUSE of zero quanta). The model pauses
//! the whole upstream port: the lossless class is every class (the RDMA runs carry one).
//! Nothing else changes: a packet that still finds its band full is dropped and counted.
//! A PAUSE reaches only a port of the same partition (`scope`): in a leaf-spine, links
//! between a leaf and a spine of another partition are never paused.

use super::store::Pkt;
use super::topology::{Peer, Wiring};
use std::collections::{BTreeMap, BTreeSet};

/// PFC's thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcParams {
    /// Bytes queued from one input above which its upstream is paused.
    pub xoff_bytes: u32,
    /// Bytes at or below which a paused upstream resumes.
    pub xon_bytes: u32,
}

impl Default for PfcParams {
    /// XOFF 16 KiB, XON 8 KiB (*estimate*). What arrives after XOFF is passed (the
    /// headroom) is what the link holds both ways plus the frame the upstream is sending
    /// and the one arriving: 2 x propagation x rate + 2 frames, about 11 KB at 200 Gb/s,
    /// 43.75 ns and 4 KiB frames (the rule vendors size headroom by). Inputs x (XOFF +
    /// headroom) within a queue's bytes keeps a switch lossless: three inputs in the
    /// default 80 KiB data band.
    fn default() -> Self {
        PfcParams { xoff_bytes: 16 << 10, xon_bytes: 8 << 10 }
    }
}

/// A switch input: (switch, input port).
type Input = (u32, u32);

/// PFC's state over the whole fabric.
#[derive(Clone, Debug)]
pub(super) struct Pfc {
    p: PfcParams,
    /// The port (global id) whose link feeds each switch input.
    upstream: BTreeMap<Input, u32>,
    /// Bytes queued in the switch that came through each input.
    queued: BTreeMap<Input, u32>,
    /// Inputs whose upstream is paused (or about to be).
    pausing: BTreeSet<Input>,
    /// The input each queued packet came through and its queued length, by store slot.
    came_from: Vec<Option<(Input, u32)>>,
    /// Ports a downstream PAUSE holds.
    pub paused: BTreeSet<u32>,
}

/// What the fabric must do for PFC: send a PAUSE (true) or resume (false) to `port`.
pub(super) type Signal = Option<(u32, bool)>;

impl Pfc {
    pub fn new(p: PfcParams, w: &Wiring) -> Pfc {
        let upstream = (super::Scope::whole(w).ports.ids())
            .filter_map(|port| match w.peer(port) {
                Peer::Switch { sw, inport } => Some(((sw, inport), port)),
                Peer::Node(_) => None,
            })
            .collect();
        let (queued, pausing, paused) = (BTreeMap::new(), BTreeSet::new(), BTreeSet::new());
        Pfc { p, upstream, queued, pausing, came_from: Vec::new(), paused }
    }

    /// Packet `r`, arrived through `input`, was queued with `len` bytes: a PAUSE upstream
    /// if the input's count passes XOFF.
    pub fn queued(&mut self, r: Pkt, input: Input, len: u32) -> Signal {
        let i = r.r as usize;
        if self.came_from.len() <= i {
            self.came_from.resize(i + 1, None);
        }
        self.came_from[i] = Some((input, len));
        let q = self.queued.entry(input).or_insert(0);
        *q += len;
        if *q > self.p.xoff_bytes && self.pausing.insert(input) {
            return self.upstream.get(&input).map(|&u| (u, true));
        }
        None
    }

    /// Packet `r` left its queue: a resume upstream if its input's count fell to XON.
    pub fn dequeued(&mut self, r: Pkt) -> Signal {
        let (input, len) = self.came_from.get_mut(r.r as usize)?.take()?;
        let q = self.queued.get_mut(&input).expect("counted when queued");
        *q -= len;
        if *q <= self.p.xon_bytes && self.pausing.remove(&input) {
            return self.upstream.get(&input).map(|&u| (u, false));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{Hdr, Topology};
    use crate::packet::Packet;

    fn pkt(r: u32) -> Pkt {
        Pkt { r, hdr: Hdr::of(&Packet::frame(1, 2, &[0; 1000])) }
    }

    #[test]
    fn an_input_is_paused_above_xoff_once_and_resumed_at_xon() {
        let w = Wiring::new(Topology::Star { nodes: 2 });
        let mut pfc = Pfc::new(PfcParams { xoff_bytes: 2500, xon_bytes: 1000 }, &w);
        let input = (0, 1); // switch 0's port from node 1, fed by node 1's uplink
        let up = w.uplink_port(1);
        assert_eq!(pfc.queued(pkt(0), input, 1000), None);
        assert_eq!(pfc.queued(pkt(1), input, 1000), None);
        assert_eq!(pfc.queued(pkt(2), input, 1000), Some((up, true)), "3,000 bytes pass XOFF");
        assert_eq!(pfc.queued(pkt(3), input, 1000), None, "one PAUSE per crossing");
        assert_eq!(pfc.dequeued(pkt(0)), None);
        assert_eq!(pfc.dequeued(pkt(1)), None, "2,000 bytes: still above XON");
        assert_eq!(pfc.dequeued(pkt(2)), Some((up, false)), "1,000 bytes: resume");
        assert_eq!(pfc.dequeued(pkt(2)), None, "a packet is counted out once");
    }

    #[test]
    fn inputs_are_counted_apart() {
        let w = Wiring::new(Topology::Star { nodes: 3 });
        let mut pfc = Pfc::new(PfcParams { xoff_bytes: 1500, xon_bytes: 500 }, &w);
        assert_eq!(pfc.queued(pkt(0), (0, 1), 1000), None);
        assert_eq!(pfc.queued(pkt(1), (0, 2), 1000), None, "each input has 1,000 bytes, under XOFF");
        assert_eq!(pfc.queued(pkt(2), (0, 2), 1000), Some((w.uplink_port(2), true)));
    }
}
