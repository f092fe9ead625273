//! `nanopu bench network`'s `fabric_alone` figure: the fabric and the event queue with no
//! transports, nodes or partitions, on the benchmark's leaf-spine. Set beside the network
//! run, it says how much of a hop's host time is the switching itself and how much the
//! transports and per-message state around it (`docs/models/network.md`).
//!
//! Every node sends one 1 KiB data packet to every other node at 1 us, in band 1 as the
//! transports send data; each data packet that arrives, trimmed or not, is answered at once
//! with an ACK in band 0. Nothing is resent: every packet is delivered exactly once or the
//! benchmark fails.

use nanopu_net::fabric::{Fabric, FabricParams, NetEvent, Schedule, Topology, NODE_IP_BASE};
use nanopu_net::packet::Packet;
use nanopu_sim::packet::flags;
use nanopu_sim::{EventQueue, Time};
use serde_json::{json, Value};

/// Runs; the figure is their median (one run takes tens of milliseconds).
const RUNS: usize = 5;

enum Ev {
    Net(NetEvent),
    /// A data packet from the first node to the second enters the fabric.
    Send(u32, u32),
}

struct Queue<'a>(&'a mut EventQueue<Ev>);

impl Schedule for Queue<'_> {
    fn at(&mut self, t: Time, ev: NetEvent) {
        self.0.push(t, Ev::Net(ev));
    }
}

/// A data packet (1,024 bytes of payload, band 1) or an ACK (band 0) from `src` to `dst`.
fn packet(src: u32, dst: u32, data: bool) -> Packet {
    let mut p = Packet { src_ip: NODE_IP_BASE + src, dst_ip: NODE_IP_BASE + dst, ..Packet::default() };
    (p.flags, p.payload_len, p.band) = if data { (flags::DATA, 1024, 1) } else { (flags::ACK, 0, 0) };
    p
}

/// On the network benchmark's leaf-spine: `leaves` of `per_leaf` nodes under `spines`.
pub fn fabric_alone(per_leaf: u32, leaves: u32, spines: u32) -> Result<Value, String> {
    let runs: Result<Vec<Value>, String> = (0..RUNS).map(|_| one_run(per_leaf, leaves, spines)).collect();
    let mut runs = runs?;
    let rate = |v: &Value| v["million_packet_hops_per_host_second"].as_f64().unwrap_or(0.0);
    runs.sort_by(|a, b| rate(a).total_cmp(&rate(b)));
    let mut median = runs.swap_remove(RUNS / 2);
    median["runs"] = json!(RUNS);
    median["definition"] = json!("the fabric and event queue alone, one host thread, no partitions: one 1 KiB data packet per ordered pair of nodes, an ACK per arrival, nothing resent; host time of the event loop alone (building the fabric and queuing the sends excluded); median of the runs");
    Ok(median)
}

fn one_run(per_leaf: u32, leaves: u32, spines: u32) -> Result<Value, String> {
    let nodes = per_leaf * leaves;
    let topology = Topology::LeafSpine { nodes_per_leaf: per_leaf, leaves, spines };
    let p = FabricParams {
        topology,
        link: Default::default(),
        switch: Default::default(),
        faults: vec![],
        seed: 1,
        host: false,
    };
    let mut fabric = Fabric::new(p)?;
    let mut q = EventQueue::new();
    let pairs = (0..nodes).flat_map(|s| (0..nodes).filter(move |&d| d != s).map(move |d| (s, d)));
    pairs.for_each(|(s, d)| q.push(Time::from_us(1), Ev::Send(s, d)));
    let (start, cpu) = (std::time::Instant::now(), super::common::cpu_seconds());
    let (data, acks) = drive(&mut fabric, &mut q);
    let (wall, cpu) = (start.elapsed().as_secs_f64(), super::common::cpu_seconds() - cpu);
    let s = fabric.stats();
    let expected = (nodes * (nodes - 1)) as u64;
    if data != expected || acks != expected {
        return Err(format!(
            "fabric alone: {data} data packets and {acks} ACKs arrived, expected {expected} each"
        ));
    }
    let rate = s.packet_hops as f64 / wall / 1e6;
    Ok(json!({ "packet_hops": s.packet_hops, "events": q.popped(), "trims": s.trims, "host_seconds": wall,
        "host_cpu_seconds": cpu, "million_packet_hops_per_host_second": rate }))
}

/// Run until nothing is left; (data packets, ACKs) that arrived. Not inlined, so that a
/// profile shows the timed loop on its own.
#[inline(never)]
fn drive(fabric: &mut Fabric, q: &mut EventQueue<Ev>) -> (u64, u64) {
    let (mut delivered, mut data, mut acks) = (Vec::new(), 0, 0);
    while let Some((t, ev)) = q.pop() {
        match ev {
            Ev::Send(s, d) => fabric.send(t, s, packet(s, d, true), &mut Queue(q)),
            Ev::Net(e) => fabric.handle(t, e, &mut Queue(q), &mut delivered),
        }
        // Most events deliver nothing: skip the drain (54 host instructions an event when
        // empty, a tenth of this loop's, callgrind), as the cluster's `net_event` does.
        if delivered.is_empty() {
            continue;
        }
        for (node, p) in delivered.drain(..) {
            if p.flags & flags::DATA == 0 {
                acks += 1;
                continue;
            }
            data += 1;
            fabric.send(t, node, packet(node, p.src_ip - NODE_IP_BASE, false), &mut Queue(q));
        }
    }
    (data, acks)
}
