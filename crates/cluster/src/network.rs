//! A cluster's network: the packet-level fabric between nodes, the test host's transport
//! endpoint, and the mapping between the fabric's packets and the transport endpoint in
//! each nanoPU node's NIC (`NodeNic`), which the network sets up and drives.

use crate::cluster_config::ClusterFile;
use crate::node::Node;
use crate::sim::{Ev, Simulation};
use nanopu_net::fabric::{
    Fabric, FabricParams, LinkParams, NetEvent, Schedule, SwitchParams, Topology, UplinkChoice,
};
use nanopu_net::packet::Packet;
use nanopu_nic::transport::{Actions, Protocol, TAction, Transport, TransportParams};
use nanopu_nic::Message;
use nanopu_sim::packet::HOST_IP;
use nanopu_sim::{EventQueue, Rng, Time};

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

/// The fabric and the test host's transport endpoint (the nodes' are in their NICs).
pub(crate) struct Network {
    pub fabric: Fabric,
    /// The test host's (10.0.0.1, on switch 0), where switch 0 is simulated.
    pub host: Option<Transport>,
    /// The last packet id given (a partition's ids start at its index times 2^40).
    next_packet: u64,
    /// Packets from other partitions, to enter this one's fabric at the next window.
    pub inbox: Vec<(Time, u32, Packet)>,
    /// Packets the fabric delivers to nodes while handling an event: kept empty between
    /// events and reused, so that handling one allocates nothing.
    delivered: Vec<(u32, Packet)>,
    /// Messages a node's transport completed while handling an event, for the node's NIC
    /// core side at once (empty between events, reused).
    completed: Vec<Message>,
    /// Packets that reached a node whose NIC cannot take them.
    pub strays: Strays,
}

/// Packets that reached a node whose NIC cannot take them, dropped there and counted
/// (docs/models/icenic.md "Clusters"): raw frames at a nanoPU node, the transport's
/// packets at an IceNIC node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
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
    /// `nodes` (the whole cluster, in node order; each its own RNG stream by node number).
    pub fn new(f: &ClusterFile, nodes: &mut [Node]) -> Result<Network, String> {
        let mut fabric = Fabric::new(fabric_params(f)?)?;
        fabric.set_cuts(crate::fault::fabric_faults(&f.checked_faults()?, nodes.len() as u32).1);
        let tp = transport_params(f)?;
        for (n, node) in nodes.iter_mut().filter(|n| !n.nic.is_ice()).map(|n| (n.index, n)) {
            let rng = Rng::stream(f.seed, TRANSPORT_STREAMS + n as u64);
            node.nic.attach_transport(Transport::new(tp.clone(), node.ip, rng)?);
        }
        let host = Transport::new(tp, HOST_IP, Rng::stream(f.seed, HOST_STREAM))?;
        Ok(Network::of(fabric, Some(host), 0))
    }

    pub fn of(fabric: Fabric, host: Option<Transport>, next_packet: u64) -> Network {
        let (inbox, delivered, completed, strays) = (Vec::new(), Vec::new(), Vec::new(), Strays::default());
        Network { fabric, host, next_packet, inbox, delivered, completed, strays }
    }
}

impl Simulation {
    /// Every transport endpoint simulated here: the nanoPU nodes', then the test host's.
    pub(crate) fn transports(&self) -> impl Iterator<Item = &Transport> {
        let nodes = self.nodes.iter().filter_map(|n| n.nic.transport());
        nodes.chain(self.net.as_ref().and_then(|n| n.host.as_ref()))
    }
}

use crate::config::check::{time_ns, time_us};

/// Femtoseconds of a time key, converted with its checks (the file was validated already;
/// converting checked keeps a value set after validation from wrapping).
fn fs(t: Result<Time, String>) -> Result<u64, String> {
    t.map(Time::as_fs)
}

fn fabric_params(f: &ClusterFile) -> Result<FabricParams, String> {
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
        propagation_fs: fs(time_ns(f.link.propagation_ns, "link.propagation_ns"))?,
        drop_prob: f.link.drop_prob,
    };
    Ok(FabricParams {
        topology,
        link,
        switch: switch_params(f)?,
        faults: crate::fault::fabric_faults(&f.checked_faults()?, f.node_count()?).0,
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
    p.latency_fs = s.latency_ns.map_or(Ok(p.latency_fs), |v| fs(time_ns(v, "switch.latency_ns")))?;
    p.multicast = s.multicast.unwrap_or(p.multicast);
    p.mcast_timeout_fs =
        s.mcast_timeout_us.map_or(Ok(p.mcast_timeout_fs), |u| fs(time_us(u, "switch.mcast_timeout_us")))?;
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
    p.rto = t.rto_us.map_or(Ok(p.rto), |u| time_us(u, "transport_params.rto_us"))?;
    p.rtt_bytes = t.rtt_bytes.unwrap_or(p.rtt_bytes);
    p.overcommit = t.overcommit.unwrap_or(p.overcommit);
    p.tail_fraction = t.tail_fraction.unwrap_or(p.tail_fraction);
    p.tail_delay =
        t.tail_delay_us.map_or(Ok(p.tail_delay), |u| time_us(u, "transport_params.tail_delay_us"))?;
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

impl Simulation {
    fn net(&mut self) -> &mut Network {
        self.net.as_mut().expect("cluster run")
    }

    /// A message left node `n`'s TX path towards another node.
    pub(crate) fn transport_send(&mut self, end: End, msg: Message) {
        self.with_transport(end, |t, now, out| t.send_message(now, msg, out));
    }

    pub(crate) fn transport_timer(&mut self, end: End, timer: nanopu_nic::transport::Timer) {
        self.with_transport(end, |t, now, out| t.on_timer(now, timer, out));
    }

    /// Call an endpoint's transport with what carries out its actions as it takes them;
    /// then a node's NIC takes the messages its transport completed, within the same event
    /// (the transport is part of the NIC: docs/models/icenic.md "One NIC component").
    fn with_transport(&mut self, end: End, f: impl FnOnce(&mut Transport, Time, &mut Carry)) {
        self.call_transport(end, f);
        let End::Node(n) = end else { return };
        let mut done = std::mem::take(&mut self.net().completed);
        for msg in done.drain(..) {
            self.nic_arrive(n, Box::new(msg));
        }
        self.net().completed = done;
    }

    fn call_transport(&mut self, end: End, f: impl FnOnce(&mut Transport, Time, &mut Carry)) {
        let net = self.net.as_mut().expect("cluster run");
        let Network { fabric, host, next_packet, completed, .. } = net;
        let (t, node) = match end {
            End::Node(n) => {
                let t = self.nodes[n].nic.transport_mut().expect("only nanoPU nodes send messages");
                (t, (n + self.base) as u32)
            }
            End::Host => (host.as_mut().expect("the host's partition"), fabric.wiring().nodes),
        };
        let (now, q, last_arrival) = (self.now, &mut self.q, &mut self.last_arrival);
        f(t, now, &mut Carry { fabric, next_packet, q, last_arrival, completed, now, end, node });
    }

    /// Which endpoint a packet the fabric delivered to `node` is for.
    fn end_of(&self, node: u32) -> End {
        let host = self.net.as_ref().and_then(|n| n.fabric.wiring().host_node());
        if Some(node) == host {
            End::Host
        } else {
            End::Node(node as usize - self.base)
        }
    }

    pub(crate) fn net_event(&mut self, ev: NetEvent) {
        let now = self.now;
        let net = self.net.as_mut().expect("cluster run");
        let mut delivered = std::mem::take(&mut net.delivered);
        let mut out = Queue { q: &mut self.q, nodes: &self.nodes, base: self.base };
        net.fabric.handle(now, ev, &mut out, &mut delivered);
        for (node, pkt) in delivered.drain(..) {
            let end = self.end_of(node);
            if pkt.is_frame() {
                self.frame_arrived(end, pkt);
            } else if matches!(end, End::Node(n) if self.nodes[n].nic.is_ice()) {
                self.net().strays.transport_at_icenic_nodes += 1;
            } else {
                self.with_transport(end, |t, now, out| t.on_packet(now, pkt, out));
            }
        }
        self.net().delivered = delivered;
    }

    /// A raw frame's last byte reached an endpoint: an IceNIC takes it, the test host
    /// records it, a nanoPU node's NIC cannot (it is counted).
    fn frame_arrived(&mut self, end: End, pkt: Packet) {
        match end {
            End::Host => self.host_frame_arrive(pkt.frame_bytes()),
            End::Node(n) if self.nodes[n].nic.is_ice() => self.ice_arrive(n, pkt.frame_bytes()),
            End::Node(_) => self.net().strays.frames_at_nanopu_nodes += 1,
        }
    }

    /// An endpoint without the transport (an IceNIC node, or the test host sending raw
    /// frames) puts a frame on its link: a packet routed by the frame's IPv4 destination
    /// (none if it is not IPv4: the first switch then drops it as unroutable, counted).
    pub(crate) fn frame_onto_fabric(&mut self, end: End, frame: &[u8]) {
        let (own, node) = match end {
            End::Node(n) => (self.nodes[n].ip, (n + self.base) as u32),
            End::Host => (HOST_IP, self.net().fabric.wiring().nodes),
        };
        let (src, dst) = crate::ice_frame::route_ips(frame).unwrap_or((own, 0));
        let net = self.net.as_mut().expect("cluster run");
        net.next_packet += 1;
        let pkt = Packet { id: net.next_packet, ..Packet::frame(src, dst, frame) };
        let mut out = Queue { q: &mut self.q, nodes: &[], base: 0 };
        net.fabric.send(self.now, node, pkt, &mut out);
    }

    /// Let in the packets other partitions sent here.
    pub(crate) fn accept_inbox(&mut self) {
        let net = self.net.as_mut().expect("cluster run");
        for (t, port, p) in net.inbox.drain(..) {
            self.q.push(t, Ev::Net(net.fabric.accept(port, p)));
        }
    }
}

/// Carries out an endpoint's transport's actions at `now`: packets onto the fabric (numbered
/// here), delivered messages to the NIC (or the host), timers into the queue.
struct Carry<'a> {
    fabric: &'a mut Fabric,
    next_packet: &'a mut u64,
    q: &'a mut EventQueue<Ev>,
    last_arrival: &'a mut Time,
    completed: &'a mut Vec<Message>,
    now: Time,
    /// The endpoint, and its node number in the fabric.
    end: End,
    node: u32,
}

impl Actions for Carry<'_> {
    fn push(&mut self, a: TAction) {
        match a {
            TAction::Transmit(mut s) => {
                *self.next_packet += 1;
                s.id = *self.next_packet;
                self.fabric.send(self.now, self.node, s, &mut Queue { q: self.q, nodes: &[], base: 0 });
            }
            TAction::Deliver(msg) => {
                *self.last_arrival = self.now;
                match self.end {
                    End::Node(_) => self.completed.push(msg),
                    End::Host => self.q.push(self.now, Ev::HostArrive { msg: Box::new(msg) }),
                }
            }
            TAction::Timer(t, timer) => match self.end {
                End::Node(node) => self.q.push(t, Ev::Transport { node, timer }),
                End::Host => self.q.push(t, Ev::HostTimer { timer }),
            },
        }
    }
}

/// The fabric's events go straight into the simulation's queue; a packet about to reach a
/// node has that node's transport start loading the state it will need (`nodes` is empty
/// while a transport is busy sending: a node's own sends arrive nowhere near it).
struct Queue<'a> {
    q: &'a mut EventQueue<Ev>,
    nodes: &'a [Node],
    /// Cluster index of `nodes[0]`.
    base: usize,
}

impl Schedule for Queue<'_> {
    fn at(&mut self, t: Time, ev: NetEvent) {
        self.q.push(t, Ev::Net(ev));
    }
    fn arriving(&mut self, node: u32, pkt: &Packet) {
        if pkt.is_frame() {
            return;
        }
        let node = self.nodes.get((node as usize).wrapping_sub(self.base));
        if let Some(t) = node.and_then(|n| n.nic.transport()) {
            t.prefetch_for(pkt);
        }
    }
}
