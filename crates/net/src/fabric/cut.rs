//! Faults of endpoints the fabric enforces: a node that crashed, and a network partition
//! (docs/faults.md has the semantics; the cluster configuration's `[[faults]]` sets them).
//!
//! Both are decided where a packet leaves a port (`Fabric::start`), like a link that went
//! down, from the packet and the time alone: a packet crosses a cut when its last bit would
//! reach the endpoint at the far end of its last link at or after the cut begins (and, for a
//! partition, before it heals); a crashed node's NIC also sends nothing more from its crash
//! on. The same decision in whatever partition of a parallel run owns the port.

use super::{Fabric, Peer, Pkt};
use nanopu_sim::Time;

/// One fault of endpoints. Endpoints are fabric node numbers: nodes 0..N, the host N.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Node `node` stops at `at`: nothing reaches it, nothing leaves it, from then on.
    Crash { node: u32, at: Time },
    /// From `from` until `to`, the endpoints in `members` (sorted) are cut off from every
    /// endpoint not in it: packets between the two sides are lost.
    Partition { members: Vec<u32>, from: Time, to: Time },
}

impl Cut {
    /// Does it drop a packet from `src` (None: not an endpoint of this fabric) to `dst`
    /// whose last bit reaches `dst` at `at`?
    fn drops(&self, src: Option<u32>, dst: u32, at: Time) -> bool {
        match self {
            Cut::Crash { node, at: t } => *node == dst && at >= *t,
            Cut::Partition { members, from, to } => {
                let side = |n: u32| members.binary_search(&n).is_ok();
                (*from..*to).contains(&at) && src.is_some_and(|s| side(s) != side(dst))
            }
        }
    }

    /// Does it stop what node `n` starts sending at `now` (a crashed NIC sends nothing)?
    fn silences(&self, n: u32, now: Time) -> bool {
        matches!(self, Cut::Crash { node, at } if *node == n && now >= *at)
    }
}

impl Fabric {
    /// Enforce these cuts (their drops are counted per cut, in this order, in
    /// `FabricStats::cut_drops`).
    pub fn set_cuts(&mut self, cuts: Vec<Cut>) {
        self.stats.cut_drops = vec![0; cuts.len()];
        self.cuts = cuts;
        self.lossless = self.no_losses();
    }

    pub fn cuts(&self) -> &[Cut] {
        &self.cuts
    }

    /// The first cut that loses packet `r` leaving `port` at `now`, its last bit reaching
    /// the far end at `at`, if one does.
    pub(super) fn cut_by(&self, port: u32, r: Pkt, now: Time, at: Time) -> Option<usize> {
        if self.wiring.is_uplink(port) {
            let n = port.min(self.wiring.nodes);
            return self.cuts.iter().position(|c| c.silences(n, now));
        }
        let Peer::Node(dst) = self.wiring.peer(port) else { return None };
        let src = self.wiring.node_of(self.packets.get(r).src_ip);
        self.cuts.iter().position(|c| c.drops(src, dst, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{FabricParams, LinkParams, NetEvent, SwitchParams, Topology, NODE_IP_BASE};
    use crate::packet::Packet;

    /// When one full packet node 0 sends at 0 reaches node 1 of a two-node star under
    /// `cuts` (None: lost), with the cuts' drop counts.
    fn one_packet(cuts: Vec<Cut>) -> (Option<Time>, Vec<u64>) {
        let (topology, link, switch) =
            (Topology::Star { nodes: 2 }, LinkParams::default(), SwitchParams::default());
        let p = FabricParams { topology, link, switch, faults: vec![], seed: 1, host: false };
        let mut f = Fabric::new(p).unwrap();
        f.set_cuts(cuts);
        let pkt = Packet {
            src_ip: NODE_IP_BASE,
            dst_ip: NODE_IP_BASE + 1,
            payload_len: 1024,
            ..Default::default()
        };
        let mut q: Vec<(Time, NetEvent)> = Vec::new();
        f.send(Time::ZERO, 0, pkt, &mut q);
        let mut arrived = None;
        while let Some(i) = (0..q.len()).min_by_key(|&i| q[i].0) {
            let (t, ev) = q.swap_remove(i);
            let mut delivered = Vec::new();
            f.handle(t, ev, &mut q, &mut delivered);
            arrived = arrived.or(delivered.first().map(|_| t));
        }
        (arrived, f.stats().cut_drops)
    }

    /// The cut is where the packet's last link (switch to node 1) ends: a nanosecond before
    /// it arrives, it is on that link (43.75 ns of propagation).
    #[test]
    fn a_packet_is_judged_by_when_it_reaches_its_destination() {
        let at = one_packet(vec![]).0.unwrap();
        let on_the_wire = Time(at.0 - 1_000_000);
        let cut = |from: Time, to: Time| vec![Cut::Partition { members: vec![0], from, to }];
        let ns = Time::from_ns;
        assert_eq!(one_packet(cut(on_the_wire, ns(200))), (None, vec![1]), "on the wire when the cut began");
        assert_eq!(one_packet(cut(at, ns(200))).0, None, "arriving as it begins");
        assert_eq!(one_packet(cut(Time(at.0 + 1), ns(200))).0, Some(at), "arrived just before");
        assert_eq!(one_packet(cut(ns(0), at)), (Some(at), vec![0]), "arriving as it heals");
        let crash = |node: u32, t: Time| vec![Cut::Crash { node, at: t }];
        assert_eq!(one_packet(crash(1, on_the_wire)), (None, vec![1]), "its destination crashed meanwhile");
        assert_eq!(one_packet(crash(0, ns(1))).0, Some(at), "it left before its sender crashed");
        assert_eq!(one_packet(crash(0, Time::ZERO)), (None, vec![1]), "a crashed NIC sends nothing");
    }

    #[test]
    fn a_crash_drops_what_reaches_the_node_from_its_time_on() {
        let c = Cut::Crash { node: 2, at: Time::from_us(5) };
        assert!(!c.drops(Some(0), 2, Time::from_ns(4_999)));
        assert!(c.drops(Some(0), 2, Time::from_us(5)));
        assert!(!c.drops(Some(2), 0, Time::from_us(9)), "what it sent before is not its to stop");
        assert!(c.silences(2, Time::from_us(5)) && !c.silences(2, Time::from_ns(4_999)));
        assert!(!c.silences(1, Time::from_us(9)));
    }

    #[test]
    fn a_partition_drops_across_the_cut_while_it_lasts() {
        let c = Cut::Partition { members: vec![0, 1], from: Time::from_us(2), to: Time::from_us(8) };
        let mid = Time::from_us(3);
        assert!(c.drops(Some(0), 2, mid) && c.drops(Some(2), 1, mid));
        assert!(!c.drops(Some(0), 1, mid) && !c.drops(Some(2), 3, mid), "same side");
        assert!(!c.drops(Some(0), 2, Time::from_ns(1_999)) && !c.drops(Some(0), 2, Time::from_us(8)));
        assert!(!c.drops(None, 2, mid), "a packet from no endpoint is no side's");
    }
}
