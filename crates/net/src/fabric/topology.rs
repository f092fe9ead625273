//! Wiring: which port's link leads where, and where a switch sends a packet.

use super::params::{Size, Topology, UplinkChoice};
use crate::packet::Packet;
use nanopu_sim::div::Div32;
use nanopu_sim::Rng;

pub use nanopu_sim::packet::{HOST_IP, NODE_IP_BASE};

/// Where a directed link ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    Node(u32),
    /// Input port `inport` of switch `sw`.
    Switch {
        sw: u32,
        inport: u32,
    },
}

/// The shape of the network. Port ids: node n's uplink is port n; switch s's port k is
/// port `nodes + s * ports_per_switch + k`, where the stride `ports_per_switch` is the
/// largest switch's port count. A switch has [`Wiring::ports_of`] ports (a leaf its down
/// and up links, a spine one per leaf): the ids past those, up to the stride, are never
/// built (`Scope`), so the ids stay those of every earlier build (port statistics, random
/// streams) while memory follows the ports that exist. With the test host attached, two
/// ports follow: the host's uplink into switch 0 (which sees it as input
/// `ports_per_switch`) and switch 0's port down to the host; the host is node `nodes` to
/// the fabric.
#[derive(Clone, Debug)]
pub struct Wiring {
    pub topology: Topology,
    pub nodes: u32,
    pub switches: u32,
    /// The stride of switch port ids (the largest switch's port count).
    pub ports_per_switch: u32,
    /// Is the test host (10.0.0.1) attached to switch 0?
    pub host: bool,
    /// `ports_per_switch` and nodes per leaf (1 for a star) as divisors, and the rejection
    /// threshold of a random uplink: asked at every hop, so computed once (see `Div32`).
    per_switch: Div32,
    per_leaf: Div32,
    spray_threshold: u64,
    /// The host's port id, past every switch's (`host_uplink`): asked at every hop.
    host_port: u32,
}

impl Wiring {
    /// The wiring of a topology [`Topology::size`] accepts (`Fabric::new` checks it first:
    /// past the limits its counts would wrap).
    pub fn new(topology: Topology) -> Wiring {
        let size = topology.size().expect("a topology within the limits (FabricParams::validate)");
        // Nodes per leaf and spines; a star is one leaf under one spine.
        let (d, spines) = match topology {
            Topology::Star { .. } => (1, 1),
            Topology::LeafSpine { nodes_per_leaf: d, spines: s, .. } => (d, s),
        };
        let (per_switch, per_leaf) = (Div32::new(size.ports_per_switch), Div32::new(d));
        let spines = spines as u64;
        let spray_threshold = spines.wrapping_neg() % spines;
        let Size { nodes, switches, ports_per_switch, .. } = size;
        Wiring {
            topology,
            nodes,
            switches,
            ports_per_switch,
            host: false,
            per_switch,
            per_leaf,
            spray_threshold,
            host_port: nodes + switches * ports_per_switch,
        }
    }

    /// The same wiring with the test host attached (or not).
    pub fn with_host(self, host: bool) -> Wiring {
        Wiring { host, ..self }
    }

    /// One past the largest port id. Ids are sparse (a switch's ids past its
    /// [`ports_of`](Wiring::ports_of) are not ports): [`port_count`](Wiring::port_count)
    /// counts the ports.
    pub fn port_id_end(&self) -> u32 {
        self.host_uplink() + if self.host { 2 } else { 0 }
    }

    /// How many ports switch `sw` has: a star's one per node, a leaf one per node below it
    /// and one per spine, a spine one per leaf.
    pub fn ports_of(&self, sw: u32) -> u32 {
        match self.topology {
            Topology::Star { nodes } => nodes,
            Topology::LeafSpine { nodes_per_leaf: d, leaves, spines } if sw < leaves => d + spines,
            Topology::LeafSpine { leaves, .. } => leaves,
        }
    }

    /// The port ids of switch `sw`, as (first, end).
    pub fn switch_ports(&self, sw: u32) -> (u32, u32) {
        let first = self.switch_port(sw, 0);
        (first, first + self.ports_of(sw))
    }

    /// The ports that exist: the nodes', every switch's own, the host's.
    pub fn port_count(&self) -> u64 {
        let switches: u64 = (0..self.switches).map(|sw| self.ports_of(sw) as u64).sum();
        self.nodes as u64 + switches + if self.host { 2 } else { 0 }
    }

    /// The host's uplink port id (the first after the switches' ports, host or not).
    fn host_uplink(&self) -> u32 {
        self.host_port
    }

    /// The host's node number to the fabric, if it is attached.
    pub fn host_node(&self) -> Option<u32> {
        self.host.then_some(self.nodes)
    }

    /// The port a node (or the host) sends on.
    pub fn uplink_port(&self, n: u32) -> u32 {
        if n < self.nodes {
            n
        } else {
            self.host_uplink()
        }
    }

    /// Is `port` the link out of a node or the host (unlimited queue), not a switch's?
    pub fn is_uplink(&self, port: u32) -> bool {
        port < self.nodes || (self.host && port == self.host_uplink())
    }

    pub fn switch_port(&self, sw: u32, k: u32) -> u32 {
        self.nodes + sw * self.ports_per_switch + k
    }

    /// Where the link of `port` leads.
    pub fn peer(&self, port: u32) -> Peer {
        if port < self.nodes {
            return self.node_attachment(port);
        }
        if port >= self.host_uplink() {
            return self.host_peer(port);
        }
        let (sw, k) = (self.per_switch.div(port - self.nodes), self.per_switch.rem(port - self.nodes));
        match self.topology {
            Topology::Star { .. } => Peer::Node(k),
            Topology::LeafSpine { nodes_per_leaf: d, leaves, .. } if sw < leaves => {
                if k < d {
                    Peer::Node(sw * d + k)
                } else {
                    Peer::Switch { sw: leaves + k - d, inport: sw }
                }
            }
            Topology::LeafSpine { nodes_per_leaf: d, leaves, .. } => {
                Peer::Switch { sw: k, inport: d + sw - leaves }
            }
        }
    }

    /// Where the host's two links lead: its uplink into switch 0, switch 0's down to it.
    fn host_peer(&self, port: u32) -> Peer {
        match port == self.host_uplink() {
            true => Peer::Switch { sw: 0, inport: self.ports_per_switch },
            false => Peer::Node(self.nodes),
        }
    }

    /// The switch input a node's uplink leads to.
    fn node_attachment(&self, n: u32) -> Peer {
        match self.topology {
            Topology::Star { .. } => Peer::Switch { sw: 0, inport: n },
            Topology::LeafSpine { .. } => {
                Peer::Switch { sw: self.per_leaf.div(n), inport: self.per_leaf.rem(n) }
            }
        }
    }

    /// The switch port (global id) that leads to node `n`.
    pub fn port_to_node(&self, n: u32) -> u32 {
        match self.node_attachment(n) {
            Peer::Switch { sw, inport } => self.switch_port(sw, inport),
            Peer::Node(_) => unreachable!("nodes attach to switches"),
        }
    }

    /// Node index of a unicast IP, if it names a node.
    pub fn node_of(&self, ip: u32) -> Option<u32> {
        match ip.checked_sub(NODE_IP_BASE) {
            Some(n) if n < self.nodes => Some(n),
            _ if ip == HOST_IP => self.host_node(),
            _ => None,
        }
    }

    /// Output port (global id) at switch `sw` of a unicast packet to node `dst`: towards
    /// the host, the way to node 0 up to switch 0, then the host's own port. Inlined: asked
    /// at every switch hop, and the compiler's own choice moved with unrelated changes to
    /// the crate (a call of 55 host instructions where inlined it cost about 30).
    #[inline]
    pub fn out_port(
        &self,
        sw: u32,
        dst: u32,
        flow: impl FnOnce() -> u64,
        choice: UplinkChoice,
        rng: &mut Rng,
    ) -> u32 {
        if dst >= self.nodes && sw == 0 {
            return self.host_uplink() + 1;
        }
        let to = if dst < self.nodes { dst } else { 0 };
        self.switch_port(sw, self.route(sw, to, flow, choice, rng))
    }

    /// Output port (local to `sw`) of a unicast packet to node `dst`.
    /// `flow` gives the packet's flow hash (asked for only when uplinks are chosen by it).
    #[inline]
    fn route(
        &self,
        sw: u32,
        dst: u32,
        flow: impl FnOnce() -> u64,
        choice: UplinkChoice,
        rng: &mut Rng,
    ) -> u32 {
        match self.topology {
            Topology::Star { .. } => dst,
            Topology::LeafSpine { nodes_per_leaf: d, leaves, spines } if sw < leaves => {
                if self.per_leaf.div(dst) == sw {
                    self.per_leaf.rem(dst)
                } else {
                    d + self.uplink(flow, spines, choice, rng)
                }
            }
            Topology::LeafSpine { .. } => self.per_leaf.div(dst),
        }
    }

    /// Output ports (local to `sw`) of a multicast packet that came in on `inport`: the
    /// members below, and from a leaf one uplink if members live under other leaves.
    pub fn replicate(
        &self,
        sw: u32,
        inport: u32,
        pkt: &Packet,
        choice: UplinkChoice,
        rng: &mut Rng,
    ) -> Vec<u32> {
        let (first, end) = (pkt.mcast_first, pkt.mcast_first.saturating_add(pkt.mcast_count).min(self.nodes));
        let src = self.node_of(pkt.src_ip);
        let members = move |lo: u32, hi: u32| (first.max(lo)..end.min(hi)).filter(move |&m| Some(m) != src);
        match self.topology {
            Topology::Star { nodes } => members(0, nodes).collect(),
            Topology::LeafSpine { nodes_per_leaf: d, leaves, spines } if sw < leaves => {
                let mut out: Vec<u32> = members(sw * d, sw * d + d).map(|m| m % d).collect();
                let elsewhere = first < sw * d || end > sw * d + d;
                if inport < d && elsewhere {
                    out.push(d + self.uplink(|| flow_hash(pkt), spines, choice, rng));
                }
                out
            }
            Topology::LeafSpine { nodes_per_leaf: d, leaves, .. } => {
                let last = end.saturating_sub(1) / d;
                (first / d..=last.min(leaves - 1)).filter(|&l| l != inport && first < end).collect()
            }
        }
    }

    /// The uplink (0..spines) a packet takes (inlined: at every hop up from a leaf).
    #[inline]
    fn uplink(&self, flow: impl FnOnce() -> u64, spines: u32, choice: UplinkChoice, rng: &mut Rng) -> u32 {
        match choice {
            UplinkChoice::Spray => rng.below_with(spines as u64, self.spray_threshold) as u32,
            UplinkChoice::Hash => (flow() % spines as u64) as u32,
        }
    }
}

/// FNV-1a over the fields that name a flow (a message).
pub fn flow_hash(p: &Packet) -> u64 {
    let fields =
        [p.src_ip as u64, p.dst_ip as u64, p.src_context as u64, p.dst_context as u64, p.msg_id as u64];
    fields.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, f| (h ^ f).wrapping_mul(0x0100_0000_01b3))
}
