//! What a cluster run reports: exits, message and packet counts, the transports' work.

use crate::engine::outcome::Outcome;
use crate::engine::Simulation;
use crate::node::CoreState;
use nanopu_nic::transport::TransportCounters;
use serde::{Deserialize, Serialize};

/// A cluster run, summed over nodes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ClusterSummary {
    pub outcome: String,
    /// False when the run has a problem (`judge::Judgement`): its figures are partial.
    pub complete: bool,
    /// How the run ended badly, each naming the limit, setting, node or context involved
    /// (`judge::judge`); a non-empty list fails the run.
    pub problems: Vec<String>,
    /// The exit status `nanopu run` gives this run (`judge::Judgement`).
    pub exit_status: u8,
    pub simulated_ns: f64,
    pub nodes: usize,
    pub cores: usize,
    /// Cores that exited with code 0.
    pub cores_ok: usize,
    /// Cores whose node crashed before they exited (fault injection).
    pub cores_crashed: usize,
    /// Each fault of the run and the packets it lost (`fault::FaultReport`).
    pub faults: Vec<crate::engine::fault::FaultReport>,
    /// Every core that did not exit with 0: node, core, state or code, first console line.
    pub failures: Vec<String>,
    /// Messages the cores wrote / the NICs received and handed to cores.
    pub messages_sent: u64,
    pub messages_received: u64,
    pub messages_delivered: u64,
    /// Messages still held in some NIC at the end (nobody registered their context).
    pub messages_held: u64,
    /// Arrival of the last message at any NIC, ns.
    pub last_arrival_ns: f64,
    pub transport: TransportTotals,
    pub fabric: FabricTotals,
    /// Console output of every core that printed, as "node N core C: text".
    pub consoles: Vec<String>,
    /// What reached the test host at 10.0.0.1 (on switch 0).
    pub host_received: Vec<crate::report::HostRecord>,
    /// Raw frames the test host was to send that no node takes, and why (`send_raw_at`);
    /// absent when there were none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_rejected: Vec<crate::report::RejectedFrame>,
    /// The IceNIC nodes' frames (docs/models/icenic.md "Clusters"); absent when the cluster
    /// has no IceNIC node and no frame strayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icenic: Option<IceTotals>,
    /// Each ZeroNIC node's data path and the payload bytes its cores touched
    /// (docs/models/zeronic.md); absent without ZeroNIC nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zeronic: Vec<ZeroNodeSummary>,
    /// The RDMA NIC nodes' transport (docs/models/rdma-nic.md); absent without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdma: Option<crate::report::rdma::RdmaTotals>,
    /// Raw frames the test host received, in arrival order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_frames: Vec<crate::report::FrameRecord>,
}

/// A ZeroNIC node's data path (`ZeroCounters`) and the payload bytes (loads and stores in
/// registered regions) each of its cores touched.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ZeroNodeSummary {
    pub node: u32,
    pub segments_split: u64,
    pub bytes_placed: u64,
    pub bytes_not_placed: u64,
    pub bad_checksums: u64,
    pub dropped_full: u64,
    pub frames_merged: u64,
    pub bytes_merged: u64,
    pub payload_bytes_touched: Vec<u64>,
}

impl ZeroNodeSummary {
    pub(crate) fn of(node: &crate::node::Node) -> Option<ZeroNodeSummary> {
        let c = &node.nic.zero()?.counters;
        Some(ZeroNodeSummary {
            node: node.index,
            segments_split: c.segments_split,
            bytes_placed: c.bytes_placed,
            bytes_not_placed: c.bytes_not_placed,
            bad_checksums: c.bad_checksums,
            dropped_full: c.dropped_full,
            frames_merged: c.frames_merged,
            bytes_merged: c.bytes_merged,
            payload_bytes_touched: node.cores.iter().map(|c| c.watched_bytes()).collect(),
        })
    }

    pub(crate) fn line(&self) -> String {
        let touched: Vec<String> = self.payload_bytes_touched.iter().map(|b| b.to_string()).collect();
        format!(
            "zeronic: node {}: {} segments split, {} bytes placed, {} not placed, {} bad checksums, {} dropped (buffer full), {} frames merged ({} bytes); payload bytes touched per core: {}\n",
            self.node, self.segments_split, self.bytes_placed, self.bytes_not_placed, self.bad_checksums,
            self.dropped_full, self.frames_merged, self.bytes_merged, touched.join(" ")
        )
    }
}

/// IceNIC nodes' frames over a cluster run: their NICs' counters summed, and the frames
/// the fabric or a node dropped (each also in the problems).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct IceTotals {
    pub nodes: usize,
    pub frames_sent: u64,
    pub frames_received: u64,
    /// Frames their receive packet buffers had no room for.
    pub dropped_buffer_full: u64,
    /// Frames too long or too short for them.
    pub dropped_size: u64,
    /// Frames switches dropped: to an address that is no node's, or to a full queue.
    pub fabric_no_route: u64,
    pub fabric_queue_full: u64,
    /// Packets that reached a node whose NIC cannot take them.
    #[serde(flatten)]
    pub strays: crate::net::Strays,
}

impl IceTotals {
    fn add(&mut self, ice: &nanopu_nic::icenic::IceNic) {
        let c = &ice.counters;
        self.nodes += 1;
        self.frames_sent += c.frames_sent;
        self.frames_received += c.frames_received;
        self.dropped_buffer_full += c.dropped_full;
        self.dropped_size += c.dropped_size;
    }

    fn line(&self) -> String {
        let s = &self.strays;
        format!(
            "icenic: {} nodes, {} frames sent, {} received, {} dropped (buffer full), {} dropped (size), {} dropped by switches (no route), {} (queue full), {} reached nanoPU nodes; {} transport packets reached IceNIC nodes\n",
            self.nodes, self.frames_sent, self.frames_received, self.dropped_buffer_full, self.dropped_size,
            self.fabric_no_route, self.fabric_queue_full, s.frames_at_nanopu_nodes, s.transport_at_icenic_nodes
        )
    }
}

/// The IceNIC totals of a cluster, if it has IceNIC nodes or a frame strayed.
fn ice_totals(sim: &Simulation) -> Option<IceTotals> {
    let mut t = IceTotals::default();
    sim.nodes.iter().filter_map(|n| n.ice()).for_each(|i| t.add(i));
    if let Some(net) = &sim.net {
        let f = net.fabric.stats();
        (t.fabric_no_route, t.fabric_queue_full, t.strays) =
            (f.frames_no_route, f.frames_band_full, net.strays);
    }
    (t != IceTotals::default()).then_some(t)
}

/// What the fabric did (`nanopu_net::fabric::FabricStats`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FabricTotals {
    pub packet_hops: u64,
    pub delivered: u64,
    pub trims: u64,
    pub drops: u64,
    pub drops_band_full: u64,
    pub drops_random: u64,
    pub drops_link_down: u64,
    pub drops_no_route: u64,
    pub drops_multicast_disabled: u64,
    /// Lost to a crashed node or a partition (`faults` says which).
    pub drops_fault: u64,
    pub multicast_resends: u64,
    pub max_switch_queue_bytes: u32,
    /// Packets the switches marked CE (`[switch] ecn_k_bytes`; 0 without ECN marking).
    pub ecn_marks: u64,
    /// The largest time-averaged queue of any switch output port, bytes, each averaged from
    /// its first queued packet to its last change (0 if none queued).
    pub mean_switch_queue_bytes: u64,
}

impl From<nanopu_net::fabric::FabricStats> for FabricTotals {
    fn from(f: nanopu_net::fabric::FabricStats) -> Self {
        let drops_fault = f.cut_drops.iter().sum();
        let drops = f.drops_band_full
            + drops_fault
            + f.drops_random
            + f.drops_link_down
            + f.drops_no_route
            + f.drops_multicast_disabled;
        FabricTotals {
            packet_hops: f.packet_hops,
            delivered: f.delivered,
            trims: f.trims,
            drops,
            drops_band_full: f.drops_band_full,
            drops_random: f.drops_random,
            drops_link_down: f.drops_link_down,
            drops_no_route: f.drops_no_route,
            drops_multicast_disabled: f.drops_multicast_disabled,
            drops_fault,
            multicast_resends: f.multicast_resends,
            max_switch_queue_bytes: f.max_switch_queue_bytes,
            ecn_marks: f.ecn_marks,
            mean_switch_queue_bytes: f.mean_switch_queue_bytes,
        }
    }
}

/// Transport counters summed over nodes.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TransportTotals {
    pub data_packets_sent: u64,
    pub retransmissions: u64,
    pub timeouts: u64,
    pub pull_timeouts: u64,
    pub trimmed_received: u64,
    pub duplicates_received: u64,
    pub pulls_sent: u64,
    pub grants_sent: u64,
    pub tail_delayed: u64,
}

impl TransportTotals {
    fn add(&mut self, c: &TransportCounters) {
        self.data_packets_sent += c.data_packets_sent;
        self.retransmissions += c.retransmissions;
        self.timeouts += c.timeouts;
        self.pull_timeouts += c.pull_timeouts;
        self.trimmed_received += c.trimmed_received;
        self.duplicates_received += c.duplicates_received;
        self.pulls_sent += c.pulls_sent;
        self.grants_sent += c.grants_sent;
        self.tail_delayed += c.tail_delayed;
    }
}

/// Summarise a finished cluster run.
pub fn summarize_cluster(sim: &mut Simulation, outcome: Outcome) -> ClusterSummary {
    let j = crate::report::judge::judge(sim, outcome);
    let mut s = ClusterSummary {
        outcome: outcome.name().into(),
        complete: j.complete,
        problems: j.problems,
        exit_status: j.exit_status,
        simulated_ns: sim.now().as_ns_f64(),
        nodes: sim.nodes.len(),
        cores: 0,
        cores_ok: 0,
        cores_crashed: 0,
        faults: sim.fault_reports(),
        failures: Vec::new(),
        messages_sent: 0,
        messages_received: 0,
        messages_delivered: 0,
        messages_held: 0,
        last_arrival_ns: sim.last_arrival.as_ns_f64(),
        transport: TransportTotals::default(),
        fabric: FabricTotals::default(),
        consoles: Vec::new(),
        host_received: sim.host.received.iter().map(crate::report::host_record).collect(),
        host_rejected: crate::report::rejected_frames(sim),
        icenic: ice_totals(sim),
        zeronic: sim.nodes.iter().filter_map(ZeroNodeSummary::of).collect(),
        rdma: crate::report::rdma::RdmaTotals::of(sim),
        host_frames: sim.host.frames_received.iter().map(crate::report::frame_record).collect(),
    };
    for node in &mut sim.nodes {
        count_node(&mut s, node);
    }
    sim.transports().for_each(|t| s.transport.add(&t.counters));
    if let Some(net) = &sim.net {
        s.fabric = net.fabric.stats().into();
    }
    s
}

fn count_node(s: &mut ClusterSummary, node: &mut crate::node::Node) {
    let c = node.nic.message_counters();
    s.messages_sent += c.msgs_sent;
    s.messages_received += c.msgs_received;
    s.messages_delivered += c.msgs_delivered;
    s.messages_held += node.nic.held().iter().map(|&(_, n)| n as u64).sum::<u64>();
    for (core, state) in node.cores.iter_mut().zip(&node.state) {
        s.cores += 1;
        let console = String::from_utf8_lossy(&core.take_console()).into_owned();
        if !console.is_empty() {
            s.consoles.push(format!("node {} core {}: {}", node.index, core.hart(), console.trim_end()));
        }
        match state {
            CoreState::Halted(0) | CoreState::Stopped(_) => s.cores_ok += 1,
            CoreState::Crashed(_) => s.cores_crashed += 1,
            st => {
                // The first line the core printed, if any, says in its own words why.
                let said = console.lines().next().filter(|l| !l.is_empty());
                let said = said.map(|l| format!(": {l}")).unwrap_or_default();
                s.failures.push(format!(
                    "node {} core {}: {}{said}",
                    node.index,
                    core.hart(),
                    failed(core, *st)
                ));
            }
        }
    }
}

impl ClusterSummary {
    /// Human-readable summary.
    pub fn text(&self) -> String {
        let t = &self.transport;
        let mut s = format!(
            "outcome: {}, simulated time {:.3} us, last arrival {:.3} us\n{} nodes, {} cores, {} exited with 0{}\nmessages: {} sent, {} received, {} delivered to cores, {} held\n",
            self.outcome, self.simulated_ns / 1e3, self.last_arrival_ns / 1e3, self.nodes, self.cores, self.cores_ok,
            if self.cores_crashed > 0 { format!(", {} crashed", self.cores_crashed) } else { String::new() },
            self.messages_sent, self.messages_received, self.messages_delivered, self.messages_held
        );
        s += &format!(
            "transport: {} data packets, {} retransmissions, {} timeouts, {} PULL timeouts, {} trimmed received, {} duplicates, {} pulls, {} grants\n",
            t.data_packets_sent, t.retransmissions, t.timeouts, t.pull_timeouts, t.trimmed_received, t.duplicates_received, t.pulls_sent, t.grants_sent
        );
        let f = &self.fabric;
        s += &format!(
            "fabric: {} packet hops, {} trims, {} drops ({} queue full, {} random, {} link down, {} no route, {} crash or partition), {} multicast resends, largest switch queue {} bytes\n",
            f.packet_hops, f.trims, f.drops, f.drops_band_full, f.drops_random, f.drops_link_down, f.drops_no_route, f.drops_fault, f.multicast_resends, f.max_switch_queue_bytes
        );
        if f.ecn_marks > 0 {
            s += &format!(
                "ecn: {} packets marked CE; busiest switch port's mean queue {} bytes\n",
                f.ecn_marks, f.mean_switch_queue_bytes
            );
        }
        self.icenic.iter().for_each(|i| s += &i.line());
        self.zeronic.iter().for_each(|z| s += &z.line());
        self.rdma.iter().for_each(|r| s += &r.line());
        self.faults.iter().for_each(|f| s += &f.line());
        self.problems.iter().for_each(|p| s += &format!("{p}\n"));
        self.host_received.iter().take(20).for_each(|m| s += &m.line());
        if self.host_received.len() > 20 {
            s += &format!("  ... and {} more messages to the host\n", self.host_received.len() - 20);
        }
        self.host_frames.iter().take(20).for_each(|f| s += &f.line());
        for r in &self.host_rejected {
            s += &format!("host frame at {:.3} ns dropped: {}\n", r.time_ns, r.reason);
        }
        self.consoles.iter().take(20).for_each(|c| s += &format!("{c}\n"));
        if self.consoles.len() > 20 {
            s += &format!(
                "  ... and {} more cores printed (--json lists every console)\n",
                self.consoles.len() - 20
            );
        }
        self.failures.iter().take(20).for_each(|f| s += &format!("  {f}\n"));
        if self.failures.len() > 20 {
            s += &format!("  ... and {} more\n", self.failures.len() - 20);
        }
        s
    }
}

/// A failed core's state, with where it exited from (`super::exited_from`).
fn failed(core: &nanopu_riscv::Core, st: CoreState) -> String {
    match st {
        CoreState::Halted(_) => format!("{}{}", st.describe(), super::exited_from(core)),
        _ => st.describe(),
    }
}
