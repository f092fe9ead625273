//! A cluster's network: the packet-level fabric between nodes, the test host's transport
//! endpoint, and the mapping between the fabric's packets and the transport endpoint in
//! each nanoPU node's NIC (`NodeNic`), which the network sets up and drives.

pub mod capture;
pub(crate) mod fault;
pub mod frame;
pub(crate) mod link;
pub(crate) mod port_tx;

use crate::config::cluster::ClusterFile;
use crate::node::Node;
use nanopu_net::fabric::{Crossing, Fabric, FabricParams, LinkParams, SwitchParams, Topology, UplinkChoice};
use nanopu_net::packet::Packet;
use nanopu_nic::transport::{Protocol, Transport, TransportParams};
use nanopu_nic::Message;
use nanopu_sim::packet::HOST_IP;
use nanopu_sim::{Rng, Time};

/// A transport endpoint of this simulation: a node's (by local index) or the test host's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    Node(usize),
    Host,
}

/// RNG stream ids of the transports start here (the fabric numbers its own from 0).
const TRANSPORT_STREAMS: u64 = 1 << 40;
/// The test host's transport stream: past every node's (nodes stay below 2^20).
const HOST_STREAM: u64 = TRANSPORT_STREAMS + (1 << 32);

/// Packets an emptied outbox or inbox (packets between partitions; inboxes across MPI
/// ranks only) keeps room for. Both fill in a window's bursts (a multicast's copies
/// crossing to other leaves) and kept the room of their busiest window for the whole run:
/// 18.5 KiB per node at the heap's peak of a 16,384-core sort (docs/profile.md). Keeping
/// room for twice the last window's packets instead saved 0.5% of the network benchmark's
/// host instructions (no regrowing by doubling) but raised that sort's peak by 12 MB
/// (1.8%; CHANGELOG, 2026-12-04).
pub(crate) const KEEP_PACKETS: usize = 64;

/// Give back what an emptied vector of packets between partitions holds beyond
/// `KEEP_PACKETS`.
pub(crate) fn release_packets<T>(v: &mut Vec<T>) {
    debug_assert!(v.is_empty());
    if v.capacity() > KEEP_PACKETS {
        v.shrink_to(KEEP_PACKETS);
    }
}

/// The fabric and the test host's transport endpoint (the nodes' are in their NICs).
pub(crate) struct Network {
    pub fabric: Fabric,
    /// The test host's (10.0.0.1, on switch 0), where switch 0 is simulated.
    pub host: Option<Transport>,
    /// The last packet id given (a partition's ids start at its index times 2^40).
    pub(crate) next_packet: u64,
    /// Packets from other MPI ranks' partitions, to enter this one's fabric at the next
    /// window (a threaded run's enter at the exchange: `partition::Handoff`).
    pub inbox: Vec<Crossing>,
    /// Packets the fabric delivers to nodes while handling an event: kept empty between
    /// events and reused, so that handling one allocates nothing.
    pub(crate) delivered: Vec<(u32, Packet)>,
    /// Messages a node's transport completed while handling an event, for the node's NIC
    /// core side at once (empty between events, reused).
    pub(crate) completed: Vec<Message>,
    /// Messages the transports finished sending, dropped a few later (`Retired`).
    pub(crate) retired: nanopu_nic::transport::retired::Retired,
    /// Packets that reached a node whose NIC cannot take them.
    pub strays: Strays,
}

/// Packets that reached a node whose NIC cannot take them, dropped there and counted
/// (docs/models/icenic.md "Clusters"): raw frames at a nanoPU node, the transport's
/// packets at an IceNIC node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Strays {
    pub frames_at_nanopu_nodes: u64,
    pub transport_at_icenic_nodes: u64,
}

impl Strays {
    pub fn add(&mut self, o: Strays) {
        self.frames_at_nanopu_nodes += o.frames_at_nanopu_nodes;
        self.transport_at_icenic_nodes += o.transport_at_icenic_nodes;
    }
}

impl Network {
    /// The network of `f`, and a transport endpoint in the NIC of each nanoPU node of
    /// `nodes` (the whole cluster, or across MPI ranks this rank's nodes; each its own RNG
    /// stream by node number); the fabric of partitions `parts` (None: all of it).
    pub fn new(
        f: &ClusterFile,
        nodes: &mut [Node],
        parts: Option<std::ops::Range<u32>>,
    ) -> Result<Network, String> {
        let mut fabric = Fabric::of_parts(fabric_params(f)?, parts)?;
        fabric.set_cuts(crate::net::fault::fabric_faults(&f.checked_faults()?, f.node_count()?).1);
        let tp = transport_params(f)?;
        for (n, node) in nodes.iter_mut().filter(|n| !n.nic.takes_frames()).map(|n| (n.index, n)) {
            let rng = Rng::stream(f.seed, TRANSPORT_STREAMS + n as u64);
            node.nic.attach_transport(Transport::new(tp.clone(), node.ip, rng)?);
        }
        let host = Transport::new(tp, HOST_IP, Rng::stream(f.seed, HOST_STREAM))?;
        Ok(Network::of(fabric, Some(host), 0))
    }

    pub fn of(fabric: Fabric, host: Option<Transport>, next_packet: u64) -> Network {
        let (inbox, delivered, completed, strays) = (Vec::new(), Vec::new(), Vec::new(), Strays::default());
        let retired = Default::default();
        Network { fabric, host, next_packet, inbox, delivered, completed, retired, strays }
    }
}

/// Femtoseconds of a time key in ns. The file's keys were checked by
/// `ClusterFile::validate`, which `Simulation::cluster` runs just before building the
/// network: each setting has that one check.
fn fs(ns: f64) -> u64 {
    Time::from_ns_f64(ns).as_fs()
}

/// A time key in us (checked as [`fs`]'s, so within `Time`'s range).
fn us(us: f64) -> Time {
    Time::checked_from_us_f64(us, "a checked key").expect("ClusterFile::validate checked it")
}

pub(crate) fn fabric_params(f: &ClusterFile) -> Result<FabricParams, String> {
    let t = &f.topology;
    let topology = match t.kind.as_str() {
        "star" => Topology::Star { nodes: f.node_count()? },
        _ => Topology::LeafSpine {
            nodes_per_leaf: t.nodes_per_leaf.unwrap_or(0),
            leaves: t.leaves.unwrap_or(0),
            spines: t
                .spines
                .filter(|&s| s > 0)
                .ok_or("topology.spines: required and positive for kind \"leaf-spine\"")?,
        },
    };
    let link = LinkParams {
        rate_bps: (f.link.rate_gbps * 1e9).round() as u64,
        propagation_fs: fs(f.link.propagation_ns),
        drop_prob: f.link.drop_prob,
    };
    Ok(FabricParams {
        topology,
        link,
        switch: switch_params(f)?,
        faults: crate::net::fault::fabric_faults(&f.checked_faults()?, f.node_count()?).0,
        seed: f.seed,
        host: true,
    })
}

fn switch_params(f: &ClusterFile) -> Result<SwitchParams, String> {
    let s = &f.switch;
    let mut p = SwitchParams::default();
    if f.transport == "homa" {
        p.bands = 8;
        p.trim = false;
    }
    p.bands = s.bands.unwrap_or(p.bands);
    if let Some(b) = &s.band_bytes {
        p.band_bytes = b.clone();
    } else {
        p.band_bytes.resize(p.bands as usize, *p.band_bytes.last().unwrap_or(&65536));
    }
    p.trim = s.trim.unwrap_or(p.trim);
    p.header_weight = s.header_weight.unwrap_or(p.header_weight);
    p.latency_fs = s.latency_ns.map_or(p.latency_fs, fs);
    p.multicast = s.multicast.unwrap_or(p.multicast);
    p.mcast_timeout_fs = s.mcast_timeout_us.map_or(p.mcast_timeout_fs, |u| us(u).as_fs());
    p.pfc = s.pfc_params(crate::config::keys::Given::Section("switch"))?;
    p.ecn_k_bytes = s.ecn_k_bytes;
    p.uplink = match s.uplink.as_deref() {
        None | Some("spray") => UplinkChoice::Spray,
        Some("hash") => UplinkChoice::Hash,
        Some(o) => return Err(format!("switch.uplink: \"{o}\" is not \"spray\" or \"hash\"")),
    };
    Ok(p)
}

fn transport_params(f: &ClusterFile) -> Result<TransportParams, String> {
    let protocol = match f.transport.as_str() {
        "ndp" => Protocol::Ndp,
        "homa" => Protocol::Homa,
        o => return Err(format!("transport: \"{o}\" is not \"ndp\" or \"homa\"")),
    };
    let mut p = TransportParams { protocol, ..TransportParams::default() };
    let t = &f.transport_params;
    p.rtt_pkts = t.rtt_pkts.unwrap_or(p.rtt_pkts);
    p.rto = t.rto_us.map_or(p.rto, us);
    p.rtt_bytes = t.rtt_bytes.unwrap_or(p.rtt_bytes);
    p.overcommit = t.overcommit.unwrap_or(p.overcommit);
    p.tail_fraction = t.tail_fraction.unwrap_or(p.tail_fraction);
    p.tail_delay = t.tail_delay_us.map_or(p.tail_delay, us);
    p.multicast = f.switch.multicast.unwrap_or(true);
    p.pull_interval = pull_interval(f.link.rate_gbps);
    p.byte_time = Time::from_ns_f64(8.0 / f.link.rate_gbps);
    p.validate()?;
    Ok(p)
}

/// One MTU time (1,024 + 64 bytes) at the link rate (docs/platform.md section 3).
fn pull_interval(rate_gbps: f64) -> Time {
    Time::from_ns_f64((1024.0 + 64.0) * 8.0 / rate_gbps)
}
