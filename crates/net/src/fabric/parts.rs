//! Splitting a fabric into its partitions (see `scope`) and joining them back.
//!
//! Each partition is a `Fabric` of its own over the same wiring, holding only its ports and
//! switches. An arrival over a link whose far end is in another partition leaves through
//! [`Fabric::take_outbox`] and enters the other side through [`Fabric::accept`]; the caller
//! moves it between the two at a window boundary.

use super::{CapturePoint, Fabric, FabricStats, NetEvent, Peer, Pkt, Scope};
use crate::packet::Packet;
use nanopu_sim::Time;

/// A packet for another partition.
#[derive(Debug)]
pub struct Crossing {
    /// When the switch at the far end forwards it.
    pub at: Time,
    /// The port whose link it crossed.
    pub port: u32,
    /// The partition that handles it (`Scope::crosses`).
    pub part: u32,
    pub pkt: Packet,
}

impl Fabric {
    /// The partition this fabric simulates (None: all of it).
    pub fn part(&self) -> Option<u32> {
        self.scope.part
    }

    /// One fabric per partition this one holds (every partition, or across MPI ranks the
    /// rank's: `of_parts`), in partition order. The fabric must hold no packet (split before
    /// a run).
    pub fn split(mut self) -> Vec<Fabric> {
        assert!(self.scope.part.is_none() && self.packets.live() == 0, "fabric: split a whole, idle fabric");
        let mut first = Some((std::mem::take(&mut self.stats), std::mem::take(&mut self.captured)));
        (self.scope.parts.clone())
            .map(|p| self.piece(Scope::part(&self.wiring, p), first.take().unwrap_or_default()))
            .collect()
    }

    /// The partition of `scope`, taking its ports and random streams out of `self`.
    fn piece(&mut self, scope: Scope, (mut stats, captured): (FabricStats, Vec<super::Captured>)) -> Fabric {
        stats.cut_drops.resize(self.cuts.len(), 0);
        stats.link_fault_drops.resize(self.p.faults.len(), 0);
        let (mine, sws) = (&self.scope.ports, &self.scope.switches);
        let ports = scope.ports.ids().map(|g| std::mem::take(&mut self.ports[mine.local(g)])).collect();
        let link_rng = scope.ports.ids().map(|g| self.link_rng[mine.local(g)].clone()).collect();
        let switch_rng = scope.switches.ids().map(|s| self.switch_rng[sws.local(s)].clone()).collect();
        Fabric {
            p: self.p.clone(),
            wiring: self.wiring.clone(),
            ports,
            links: super::links(&self.wiring, &scope),
            link_rng,
            switch_rng,
            down_at: self.down_at.clone(),
            loss: self.loss.clone(),
            cuts: self.cuts.clone(),
            lossless: self.lossless,
            stats,
            capture: self.capture,
            captured,
            packets: Default::default(),
            scope,
            outbox: Vec::new(),
            fs_per_byte: self.fs_per_byte,
            pfc: self.pfc.clone(),
            node_pauses: Vec::new(),
        }
    }

    /// The fabric of partitions `parts` (consecutive, in order: every partition, or across
    /// MPI ranks the rank's) again, with their ports, counters and captures. Packets still in
    /// flight are dropped: a joined fabric is for reading results.
    pub fn join(parts: Vec<Fabric>) -> Fabric {
        let held = parts[0].scope.parts.start..parts[parts.len() - 1].scope.parts.end;
        let mut whole = Fabric::of_parts(parts[0].p.clone(), Some(held)).expect("parameters were valid");
        whole.capture = parts[0].capture;
        whole.set_cuts(parts[0].cuts.clone());
        for f in parts {
            let (ports, sws) = (&whole.scope.ports, &whole.scope.switches);
            for (g, (port, rng)) in f.scope.ports.ids().zip(f.ports.into_iter().zip(f.link_rng)) {
                let i = ports.local(g);
                (whole.ports[i], whole.link_rng[i]) = (port, rng);
            }
            for (s, rng) in f.scope.switches.ids().zip(f.switch_rng) {
                whole.switch_rng[sws.local(s)] = rng;
            }
            whole.stats.add(&f.stats);
            whole.captured.extend(f.captured);
        }
        whole.captured.sort_by_key(|(t, _, _)| *t);
        whole
    }

    /// The least time from a packet starting on a link between partitions to the far switch
    /// acting on it: the serialization of a bare header, the propagation and the switching
    /// latency. What one partition does reaches another no sooner.
    pub fn lookahead(&self) -> Time {
        let header = nanopu_sim::packet::HEADER_BYTES as u64;
        let ser = nanopu_sim::time::serialization(header, self.p.link.rate_bps);
        Time(self.p.link.propagation_fs) + ser + Time(self.p.switch.latency_fs)
    }

    /// A packet whose link (`port`'s, to `peer`) leads to another partition's switch (of
    /// partition `part`), arriving at `at`: what the switch does on arrival (capture)
    /// happens here, and its forwarding, a switching latency later, there (`accept`).
    /// Partitions meet only at switches.
    pub(super) fn cross(&mut self, at: Time, port: u32, part: u32, peer: Peer, r: Pkt) {
        let Peer::Switch { sw, inport } = peer else { unreachable!("partitions meet at switches") };
        let seen = self.capture == Some(CapturePoint::SwitchPort { sw, port: inport });
        self.capture_if(at, seen, r, super::Direction::Inbound);
        let at = at + Time(self.p.switch.latency_fs);
        self.outbox.push(Crossing { at, port, part, pkt: self.packets.take(r) });
    }

    /// Arrivals that another partition handles, in the order they were sent.
    pub fn take_outbox(&mut self) -> Vec<Crossing> {
        std::mem::take(&mut self.outbox)
    }

    /// The packets sent to other partitions so far (each `Crossing::part` names one).
    pub fn outbox(&self) -> &[Crossing] {
        &self.outbox
    }

    /// Return the emptied outbox, so that its memory is reused.
    pub fn give_back_outbox(&mut self, v: Vec<Crossing>) {
        debug_assert!(v.is_empty() && self.outbox.is_empty());
        self.outbox = v;
    }

    /// A packet from another partition, which crossed `port`'s link: its forwarding by the
    /// switch there, the event to handle at its time (see `cross`).
    pub fn accept(&mut self, port: u32, pkt: Packet) -> NetEvent {
        let Peer::Switch { sw, inport } = self.wiring.peer(port) else {
            unreachable!("partitions meet at switches")
        };
        NetEvent::Forward { sw, inport, pkt: self.packets.put(pkt) }
    }
}

impl FabricStats {
    /// Add another partition's counters (the largest queue is recomputed from the ports).
    fn add(&mut self, o: &FabricStats) {
        self.packet_hops += o.packet_hops;
        self.delivered += o.delivered;
        self.trims += o.trims;
        self.drops_band_full += o.drops_band_full;
        self.drops_random += o.drops_random;
        self.drops_link_down += o.drops_link_down;
        self.drops_no_route += o.drops_no_route;
        self.frames_no_route += o.frames_no_route;
        self.frames_band_full += o.frames_band_full;
        self.first_no_route = [self.first_no_route, o.first_no_route].into_iter().flatten().min();
        self.drops_multicast_disabled += o.drops_multicast_disabled;
        self.multicast_resends += o.multicast_resends;
        self.ecn_marks += o.ecn_marks;
        self.pfc_pauses += o.pfc_pauses;
        self.pfc_resumes += o.pfc_resumes;
        self.cut_drops.resize(self.cut_drops.len().max(o.cut_drops.len()), 0);
        self.cut_drops.iter_mut().zip(&o.cut_drops).for_each(|(a, b)| *a += b);
        self.link_fault_drops.resize(self.link_fault_drops.len().max(o.link_fault_drops.len()), 0);
        self.link_fault_drops.iter_mut().zip(&o.link_fault_drops).for_each(|(a, b)| *a += b);
    }
}

#[cfg(test)]
mod tests {
    use crate::fabric::{Fabric, FabricParams, LinkParams, Scope, SwitchParams, Topology};

    fn params() -> FabricParams {
        let topology = Topology::LeafSpine { nodes_per_leaf: 4, leaves: 4, spines: 4 };
        let (link, switch) = (LinkParams::default(), SwitchParams::default());
        FabricParams { topology, link, switch, faults: vec![], seed: 1, host: true }
    }

    /// A rank's share of the fabric holds only its partitions' ports, splits into exactly
    /// those partitions, each with the random streams a whole fabric's split gives it, and
    /// joins back into the same share.
    #[test]
    fn a_share_of_partitions_splits_into_them_and_joins_back() {
        let share = Fabric::of_parts(params(), Some(1..3)).unwrap();
        let whole = Fabric::new(params()).unwrap();
        assert_eq!(share.ports.len(), Scope::parts(whole.wiring(), 1..3).ports.len());
        assert!(share.ports.len() < whole.ports.len() / 2 + 2);
        let (mine, all) = (share.split(), whole.split());
        assert_eq!(mine.len(), 2);
        for (m, a) in mine.iter().zip(&all[1..3]) {
            assert_eq!(m.scope, a.scope);
            let draws = |f: &Fabric| f.link_rng.iter().map(|r| r.clone().next_f64()).collect::<Vec<_>>();
            assert_eq!(draws(m), draws(a), "partition {:?}", m.part());
        }
        let back = Fabric::join(mine);
        assert_eq!(back.scope, Scope::parts(back.wiring(), 1..3));
        assert_eq!(Fabric::join(all).scope, Scope::whole(back.wiring()));
    }

    /// Leaves and spines of different port counts (3 down + 2 up against 6 leaves; 2 down +
    /// 5 up against 3 leaves): each switch builds only its own ports, fewer than the ids
    /// its stride spans, and one packet from every node to every other arrives, whole or
    /// split into partitions and joined back.
    #[test]
    fn switches_of_different_widths_build_their_own_ports_only() {
        for (d, leaves, spines) in [(3, 6, 2), (2, 3, 5)] {
            let mut p = params();
            p.topology = Topology::LeafSpine { nodes_per_leaf: d, leaves, spines };
            let whole = Fabric::new(p.clone()).unwrap();
            let w = whole.wiring().clone();
            assert_eq!(whole.ports.len() as u64, w.port_count());
            assert!(w.port_count() < w.port_id_end() as u64, "a narrower switch builds fewer ports");
            assert_eq!(every_pair(whole, &w), (d * leaves) * (d * leaves - 1));
            let parts = Fabric::new(p).unwrap().split();
            assert_eq!(parts.iter().map(|f| f.ports.len() as u64).sum::<u64>(), w.port_count());
            assert_eq!(Fabric::join(parts).ports.len() as u64, w.port_count());
        }
    }

    /// Packets delivered when every node sends one to every other node through `f`.
    fn every_pair(mut f: Fabric, w: &crate::fabric::Wiring) -> u32 {
        use crate::fabric::{NetEvent, NODE_IP_BASE};
        use crate::packet::Packet;
        use nanopu_sim::Time;
        let mut q: Vec<(Time, NetEvent)> = Vec::new();
        for (a, b) in (0..w.nodes).flat_map(|a| (0..w.nodes).map(move |b| (a, b))).filter(|(a, b)| a != b) {
            let pkt = Packet {
                src_ip: NODE_IP_BASE + a,
                dst_ip: NODE_IP_BASE + b,
                payload_len: 64,
                ..Default::default()
            };
            f.send(Time::ZERO, a, pkt, &mut q);
        }
        let mut delivered = Vec::new();
        while let Some(i) = (0..q.len()).min_by_key(|&i| q[i].0) {
            let (t, ev) = q.swap_remove(i);
            f.handle(t, ev, &mut q, &mut delivered);
        }
        assert!(delivered.iter().all(|(n, p)| p.dst_ip == NODE_IP_BASE + n), "each at its destination");
        delivered.len() as u32
    }
}
