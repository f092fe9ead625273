//! Splitting a cluster run into partitions and joining them back (see `parallel`).
//!
//! A partition is a `Simulation` of its own: the nodes of one leaf (with their NICs),
//! its part of the fabric (`nanopu_net::fabric::Scope`), and its own event queues, in which
//! nodes are numbered from 0 (`base` is the cluster index of its first node). The split
//! happens when a run starts and the join when it ends, so that everything read after a
//! run (nodes, transports, fabric counters, captures) sees one whole cluster.

use crate::engine::{Ev, Simulation};
use crate::net::Network;
use nanopu_net::fabric::{Crossing, Fabric};
use std::ops::Range;
use std::sync::{Mutex, PoisonError};

/// Packet ids of partition p start at p << 40 (unique per run, whatever the thread count).
const PACKET_ID_BITS: u32 = 40;

impl Simulation {
    /// How many partitions a run of this simulation advances (1: no split).
    pub fn partitions(&self) -> usize {
        self.net.as_ref().map_or(1, |n| n.fabric.wiring().partitions() as usize)
    }

    /// The partitions `mine` (all, or across MPI ranks this rank's: the nodes and the fabric
    /// built are theirs, nodes from `base` on), each with its nodes, transports, fabric part
    /// and pending events.
    pub(crate) fn split(&mut self, mine: Range<usize>) -> Vec<Simulation> {
        let net = self.net.take().expect("a partitioned run is a cluster run");
        let wiring = net.fabric.wiring().clone();
        let mut nodes = std::mem::take(&mut self.nodes).into_iter();
        let (mut host, host_part) = (net.host, wiring.host_node().map(|h| wiring.part_of_node(h) as usize));
        let mut counts = vec![0; wiring.partitions() as usize];
        (0..wiring.nodes).for_each(|n| counts[wiring.part_of_node(n) as usize] += 1);
        let mut base: usize = counts[..mine.start].iter().sum();
        debug_assert_eq!(base, self.base, "the nodes built are the partitions'");
        let mut parts = Vec::new();
        // The fabric holds the partitions `mine` (all, or across MPI ranks the rank's).
        let fabrics = net.fabric.split();
        debug_assert_eq!(fabrics.len(), mine.len(), "the fabric built is the partitions'");
        for (p, fabric) in mine.clone().zip(fabrics) {
            let count = counts[p];
            let mut part = self.part(nodes.by_ref().take(count).collect(), base);
            debug_assert!(part.nodes.iter().enumerate().all(|(i, n)| n.index as usize == base + i));
            base += count;
            let ids = (p as u64) << PACKET_ID_BITS;
            let host = if host_part == Some(p) { host.take() } else { None };
            part.net = Some(Network::of(fabric, host, ids));
            parts.push(part);
        }
        if let Some(p) = host_part.filter(|p| mine.contains(p)) {
            parts[p - mine.start].host = std::mem::take(&mut self.host);
        }
        self.move_events(&mut parts, &wiring, mine.start);
        parts
    }

    /// Hand the pending events (cores to run, injected messages) to their partitions
    /// (`parts`, the first of which is partition `first`).
    fn move_events(&mut self, parts: &mut [Simulation], wiring: &nanopu_net::fabric::Wiring, first: usize) {
        // A node's index here is its position among the nodes built, from `self.base` on.
        let part_of = |n: usize| wiring.part_of_node((n + self.base) as u32) as usize - first;
        let base = self.base;
        for (t, (n, c)) in self.cores_q.take_all() {
            let p = &mut parts[part_of(n)];
            p.cores_q.push(t, (n + base - p.base, c));
        }
        let host = wiring.host_node().map(|h| wiring.part_of_node(h) as usize);
        for (t, mut ev) in self.q.take_all() {
            let Some(n) = ev.node_mut() else {
                // An event that names no node and is not the network's is the test host's
                // (held by another rank if its partition is another's).
                let p = host
                    .filter(|_| !matches!(ev, Ev::Net(_)))
                    .expect("only node and host events are pending when a partitioned run starts");
                if let Some(p) = p.checked_sub(first).filter(|&p| p < parts.len()) {
                    parts[p].q.push(t, ev);
                }
                continue;
            };
            let p = &mut parts[part_of(*n)];
            *n = *n + base - p.base;
            p.q.push(t, ev);
        }
    }

    /// Put the partitions back together after a run. What was still pending is dropped.
    pub(crate) fn join(&mut self, parts: Vec<Simulation>) {
        let (mut fabrics, mut host) = (Vec::new(), None);
        let mut strays = crate::net::Strays::default();
        self.running_cores = 0;
        for mut p in parts {
            self.nodes.append(&mut p.nodes);
            let net = p.net.take().expect("partitions are cluster runs");
            strays.add(net.strays);
            fabrics.push(net.fabric);
            if net.host.is_some() {
                (host, self.host) = (net.host, std::mem::take(&mut p.host));
            }
            self.core_dispatches += p.core_dispatches;
            self.events_before += p.events();
            self.running_cores += p.running_cores;
            self.last_arrival = self.last_arrival.max(p.last_arrival);
            self.exited_at = self.exited_at.max(p.exited_at);
        }
        self.net = Some(Network::of(Fabric::join(fabrics), host, 0));
        self.net.as_mut().expect("just set").strays = strays;
    }
}

impl Ev {
    /// The node an event belongs to, if it names one.
    fn node_mut(&mut self) -> Option<&mut usize> {
        match self {
            Ev::NicSend { node, .. }
            | Ev::NicArrive { node, .. }
            | Ev::NicUpdate { node, .. }
            | Ev::CoreTimer { node, .. }
            | Ev::Inject { node, .. }
            | Ev::Transport { node, .. }
            | Ev::Crash { node }
            | Ev::IceRead { node, .. }
            | Ev::IceIssued { node, .. }
            | Ev::IceData { node }
            | Ev::IceWrite { node, .. }
            | Ev::IceTx { node, .. }
            | Ev::IceRx { node, .. }
            | Ev::IceIrq { node }
            | Ev::Zero { node, .. } => Some(node),
            Ev::Rdma { node, .. } => Some(node),
            Ev::HostSend { .. }
            | Ev::HostRaw { .. }
            | Ev::HostArrive { .. }
            | Ev::HostTimer { .. }
            | Ev::PortFree
            | Ev::HostFrameSend { .. }
            | Ev::HostFrame { .. }
            | Ev::Net(_) => None,
        }
    }
}

/// What partitions sent each other during a window, taken out of the senders' outboxes and
/// indexed by receiver, for each receiver to let its packets in straight from there (in the
/// order of the sending partitions, each in the order it sent them): every thread at once,
/// each the receivers it takes as it takes partitions for a window, its own block's first
/// (`Plan::exchange`). The letting in is about
/// 410 host instructions a packet, most of it the event queue's; done on the coordinator
/// alone it was 1.56% of a 4,096-core sort's host instructions, which a second thread did
/// not share. Copying the packets into inboxes first held every packet twice at the
/// exchange: the 16,384-core sort's resident peak fell by 3.5 MB without the copy
/// (CHANGELOG); handing each receiver a vector of its own instead (one per pair of
/// partitions, grown anew each window) raised it by 5.5 MB: small blocks of many sizes,
/// freed, that mimalloc's pages kept (and chunks of one size per pair, freed as let in, by
/// 9-11 MB). Letting receivers in sender by sender, each outbox emptied once all had its
/// packets, or outboxes in fixed chunks instead of doubled vectors, left the resident peak
/// unchanged: the outboxes' room is not on its path (CHANGELOG, issue 40).
pub(crate) struct Handoff {
    /// The senders' outboxes, each locked by the receiver taking packets out of it (a
    /// receiver's packets come in runs, one per sender: one lock a run).
    outs: Vec<Mutex<Vec<Crossing>>>,
    /// Receiver p's packets are `at[starts[p]..starts[p + 1]]`, as (sender, index).
    starts: Vec<usize>,
    at: Vec<(u32, u32)>,
}

impl Handoff {
    /// Take every partition's outbox (what it sent during the window) out of its fabric.
    pub(crate) fn take(parts: &mut [&mut Simulation]) -> Handoff {
        let outs: Vec<Vec<Crossing>> = parts.iter_mut().map(|p| net(p).fabric.take_outbox()).collect();
        let (starts, at) = by_receiver(&outs, parts.len());
        Handoff { outs: outs.into_iter().map(Mutex::new).collect(), starts, at }
    }

    /// Let partition p's packets into `sim` (partition p), leaving empty packets behind.
    pub(crate) fn let_in(&self, p: usize, sim: &mut Simulation) {
        let at = &self.at[self.starts[p]..self.starts[p + 1]];
        if !at.is_empty() {
            sim.accept_from(&self.outs, at);
        }
    }

    /// Give the emptied outboxes back to their fabrics, so that their memory is reused.
    pub(crate) fn give_back(self, parts: &mut [&mut Simulation]) {
        for (p, out) in parts.iter_mut().zip(self.outs) {
            // A receiver that panicked holding the lock left it poisoned; the panic is
            // resumed after (`Plan::failure`).
            let mut out = out.into_inner().unwrap_or_else(PoisonError::into_inner);
            out.clear();
            crate::net::release_packets(&mut out);
            net(p).fabric.give_back_outbox(out);
        }
    }
}

/// Where each partition's packets are in the outboxes `outs`, as (sender, index), in the
/// order of arrival: partition p's are `at[starts[p]..starts[p + 1]]` (a counting sort; 8
/// bytes a packet where a copy took 80).
fn by_receiver(outs: &[Vec<Crossing>], parts: usize) -> (Vec<usize>, Vec<(u32, u32)>) {
    let mut starts = vec![0usize; parts + 1];
    outs.iter().flatten().for_each(|c| starts[c.part as usize + 1] += 1);
    (1..=parts).for_each(|p| starts[p] += starts[p - 1]);
    let mut next = starts.clone();
    let mut at = vec![(0, 0); starts[parts]];
    for (i, out) in outs.iter().enumerate() {
        for (j, c) in out.iter().enumerate() {
            at[next[c.part as usize]] = (i as u32, j as u32);
            next[c.part as usize] += 1;
        }
    }
    (starts, at)
}

fn net(s: &mut Simulation) -> &mut Network {
    s.net.as_mut().expect("cluster run")
}
