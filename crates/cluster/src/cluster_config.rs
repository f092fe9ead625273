//! Cluster configuration files (TOML): topology, link and switch parameters, transport,
//! which program runs on which nodes, faults, seed. Unknown keys are errors; every value is
//! checked against its range when the file is parsed, before anything is built, and an
//! error names its key, the value and the limit. Every key's meaning, unit, default and range
//! is the doc comment of its field below: docs/config.md is generated from them (`schema`).
//!
//! ```toml
//! max_us = 1000.0
//! [topology]
//! kind = "leaf-spine"
//! nodes_per_leaf = 16
//! leaves = 4
//! spines = 4
//! [switch]
//! latency_ns = 263.0
//! [[program]]
//! nodes = "all"
//! elf = "sw/build/apps/incast.elf"
//! args = ["63", "1024"]
//! ```
//!
//! Why these limits: simulated time is a `u64` of femtoseconds (about 5.1 h), so every
//! time-valued key is at most one hour and sums of them stay in range (`config::check`).
//! Topology sizes are bounded by how nodes and ports are numbered (`Topology::MAX_NODES`
//! and the rest in `nanopu_net::fabric`: 2^20 nodes, 2^20 ports per switch, 32-bit port
//! ids), and `Simulation::cluster` also refuses a cluster whose estimated memory exceeds what
//! the machine has. Retransmission (`rto_us`) and multicast hop (`mcast_timeout_us`)
//! timeouts have a floor: one full packet's serialization plus an unloaded round trip (the
//! longest path for `rto_us`, one hop for `mcast_timeout_us`; 0.27 us and 0.13 us at the
//! defaults); a shorter timeout resends before an acknowledgement could possibly arrive,
//! every time. Link rates run from 1 Mb/s (a full packet takes 8.7 ms, most of a default
//! run) to 100 Tb/s (500 times the prototype's 200 Gb/s): outside them the model's switch
//! and NIC timings mean nothing, and far outside them bits per second overflow. A message
//! is written whole into its core's TX queue before it leaves (`NicParams::
//! check_message_fits`), so a larger `max_msg_bytes` needs a larger `tx_queue_bytes`, or it
//! would wait forever. `[node] max_cycles` is refused: the limit is `max_us`.

use crate::config::check::{self, fraction, loss, time_ns, time_us, within};
use crate::config::ExitMode;
use nanopu_net::fabric::{LinkId, SwitchParams, Topology};
use nanopu_nic::NicParams;
use nanopu_riscv::AbiChoice;
use nanopu_sim::packet::{HEADER_BYTES, MIN_FRAME};
use nanopu_sim::time::serialization;
use nanopu_sim::Time;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub use crate::fault::FaultFile;

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ClusterFile {
    /// Seed of the run's random streams. Default 1; any u64.
    #[serde(default = "one")]
    pub seed: u64,
    /// Simulated-time limit, us. Default 10,000; more than 0, at most 3.6e9 (1 h).
    #[serde(default = "default_max_us")]
    pub max_us: f64,
    /// The NIC's transport: "ndp" (default) or "homa".
    #[serde(default = "ndp")]
    pub transport: String,
    /// How nodes and switches are connected (required).
    pub topology: TopologyFile,
    /// Every link's rate, propagation delay and loss.
    #[serde(default)]
    pub link: LinkFile,
    /// Every switch's queues, trimming, latency and multicast.
    #[serde(default)]
    pub switch: SwitchFile,
    /// Every node's cores and NIC.
    #[serde(default)]
    pub node: NodeFile,
    /// The transport's parameters.
    #[serde(default)]
    pub transport_params: TransportFile,
    /// Which program runs on which nodes: one entry per range of nodes; every node runs exactly
    /// one.
    pub program: Vec<ProgramFile>,
    /// Faults injected into the run: links that go down or lose packets, nodes that crash,
    /// network partitions that heal (docs/faults.md). None by default.
    #[serde(default)]
    pub faults: Vec<FaultFile>,
}

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    /// "star" (one switch; `nodes`) or "leaf-spine" (`nodes_per_leaf`, `leaves`, `spines`).
    pub kind: String,
    /// Star: the number of nodes. 1..=1,048,576 (2^20).
    pub nodes: Option<u32>,
    /// Leaf-spine: nodes under each leaf switch; nodes_per_leaf x leaves at most 2^20, and a
    /// leaf's nodes_per_leaf + spines ports at most 2^20.
    pub nodes_per_leaf: Option<u32>,
    /// Leaf-spine: the number of leaf switches.
    pub leaves: Option<u32>,
    /// Leaf-spine: the number of spine switches (each leaf has one uplink to each).
    pub spines: Option<u32>,
}

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct LinkFile {
    /// Line rate of every link, Gb/s. Default 200 (the prototype's); 0.001..=100,000.
    pub rate_gbps: f64,
    /// Propagation delay of every link, ns. Default 43.75; 0..=3.6e12 (1 h).
    pub propagation_ns: f64,
    /// Probability that a link drops a packet, independently per packet. Default 0; [0, 1).
    pub drop_prob: f64,
}

impl Default for LinkFile {
    fn default() -> Self {
        LinkFile { rate_gbps: 200.0, propagation_ns: 43.75, drop_prob: 0.0 }
    }
}

#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchFile {
    /// Priority bands per output port. Default 2 (NDP), 8 (Homa); 1..=8.
    pub bands: Option<u8>,
    /// Queue capacity of each band, bytes, band 0 first (the last repeated). Default [65536,
    /// 81920]; each 72..=268,435,456.
    pub band_bytes: Option<Vec<u32>>,
    /// Trim the payload of a packet that finds its queue full (NDP) instead of dropping it.
    /// Default true (NDP), false (Homa).
    pub trim: Option<bool>,
    /// Switching latency, ns, from a packet's arrival to when it may leave. Default 0;
    /// 0..=3.6e12 (1 h).
    pub latency_ns: Option<f64>,
    /// How a leaf picks a spine: "spray" (default: a random uplink per packet) or "hash" (one
    /// uplink per message: a hash of source, destination, contexts and message id).
    pub uplink: Option<String>,
    /// Switches replicate multicast packets (the reliable multicast). Default true.
    pub multicast: Option<bool>,
    /// Multicast hop timeout, us. Default 10; at least one hop's round-trip floor (one full
    /// packet's serialization plus an unloaded hop round trip), at most 3.6e9.
    pub mcast_timeout_us: Option<f64>,
}

#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct NodeFile {
    /// Cores per node. Default 4; 1..=64.
    pub cores: Option<usize>,
    /// Largest message, bytes. Default 2,048; 8..=65,535, and it must fit the TX queue.
    pub max_msg_bytes: Option<u32>,
    /// TX queue per core, bytes. Default 8,192 (holds an 8,176-byte message); must hold the
    /// largest message.
    pub tx_queue_bytes: Option<u32>,
    /// Refused: the run's limit is the top-level `max_us`.
    pub max_cycles: Option<u64>,
    /// How the NIC picks a core for a message: "jbsq" (default: join-bounded-shortest-queue) or
    /// "rss" (by hash).
    pub core_selection: Option<String>,
    /// JBSQ's bound: messages queued per core. Default 2; at least 1.
    pub jbsq_n: Option<u32>,
    /// Reset value of `lmsgcycles`, the processing bound per message, core cycles (0 turns it
    /// off). Default 3,000; at most 1.152e13 (1 h at 3.2 GHz).
    pub msg_cycles: Option<u64>,
    /// Reset value of `lidlecycles`, core cycles. Default 3,000; at most 1.152e13.
    pub idle_cycles: Option<u64>,
    /// Period of the timer-driven scheduler baseline, us; 0 (default) keeps the NIC-driven
    /// thread scheduler. 0, or 0.05 (a 160-cycle context switch)..=3.6e9.
    pub sched_timer_us: Option<f64>,
    /// What a core's exit ends: "hart" (each core exits on its own), "node" (the first exit
    /// ends the node, as on the prototype) or "auto" (default: "node" unless the program
    /// defines `__nanopu_abi`).
    pub exit: Option<String>,
    /// Write the prototype's latency stamps into messages for context 0x1234 (docs/abi.md
    /// "Latency stamps"). Default true.
    pub latency_stamps: Option<bool>,
}

#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct TransportFile {
    /// NDP: packets a sender sends before the first PULL. Default 2 (the prototype's); 1..=64
    /// (a message has at most 64).
    pub rtt_pkts: Option<u32>,
    /// Sender: resend what is unacknowledged after this long without progress, us. Default 20
    /// (an estimate: many round trips of a two-tier fabric); at least the longest path's
    /// round-trip floor (one full packet's serialization plus an unloaded round trip), at most
    /// 3.6e9.
    pub rto_us: Option<f64>,
    /// Homa: bytes a sender may send unscheduled and the receiver keeps granted ahead. Default
    /// 8,192 (an estimate: about one round trip of a leaf-spine at 200 Gb/s); 1,024 (one
    /// packet)..=65,536 (64).
    pub rtt_bytes: Option<u32>,
    /// Homa: messages granted at once. Default 3 (the prototype's); at least 1.
    pub overcommit: Option<u32>,
    /// Share of messages delayed by `tail_delay_us` at their sender (the tail experiment).
    /// Default 0; [0, 1].
    pub tail_fraction: Option<f64>,
    /// Extra delay of those messages, us. Default 0; 0..=3.6e9.
    pub tail_delay_us: Option<f64>,
}

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ProgramFile {
    /// The nodes that run it: "all", "3" or "0-79", within the topology's nodes.
    pub nodes: String,
    /// The RISC-V ELF program, relative to the config file's directory.
    pub elf: String,
    /// Its arguments (argv[1..]). Default none.
    #[serde(default)]
    pub args: Vec<String>,
    /// x30/x31 as network registers: "auto" (default: yes if the program defines `__nanopu_abi`
    /// or uses the LNIC CSRs), "nanopu" or "plain".
    pub abi: Option<String>,
    /// The NIC of its nodes: "nanopu" (default; messages through x30/x31) or "icenic",
    /// FireSim's DMA NIC of the traditional baseline, whose raw frames share the network,
    /// routed by destination IPv4 (sw/include/icenic.h; docs/models/icenic.md "Clusters").
    pub nic: Option<String>,
    /// IceNIC nodes only: the one-way PCIe latency, ns, of the PCIe-attached variant
    /// (docs/models/icenic.md "PCIe-attached variant"). Default 0: IceNIC on chip.
    pub pcie_ns: Option<f64>,
}

impl ProgramFile {
    /// `elf` with `args` on every node, every other key at its default.
    pub fn on_all(elf: String, args: Vec<String>) -> ProgramFile {
        ProgramFile { nodes: "all".into(), elf, args, abi: None, nic: None, pcie_ns: None }
    }

    /// The `abi` key, checked ("program.abi: ..." when it names no ABI).
    pub fn abi_choice(&self) -> Result<AbiChoice, String> {
        self.abi
            .as_deref()
            .map_or(Ok(AbiChoice::Auto), |s| AbiChoice::parse(s).map_err(|e| format!("program.{e}")))
    }

    /// The `nic` key, checked ("program.nic: ..." when it names no NIC).
    pub fn nic_kind(&self) -> Result<crate::config::NicKind, String> {
        self.nic
            .as_deref()
            .map_or(Ok(Default::default()), |s| s.parse().map_err(|e| format!("program.nic: {e}")))
    }

    /// The `pcie_ns` key, checked: a time, and only with `nic = "icenic"`.
    pub fn pcie(&self) -> Result<f64, String> {
        let ns = self.pcie_ns.unwrap_or(0.0);
        crate::config::check::time_ns(ns, "program.pcie_ns")?;
        if ns > 0.0 && self.nic_kind()? != crate::config::NicKind::IceNic {
            return Err("program.pcie_ns: only IceNIC nodes have a PCIe-attached variant (add nic = \"icenic\"); the nanoPU NIC sits at the core's register file".into());
        }
        Ok(ns)
    }
}

fn one() -> u64 {
    1
}
fn default_max_us() -> f64 {
    10_000.0
}
fn ndp() -> String {
    "ndp".into()
}

impl ClusterFile {
    /// Parse a config and check every value; the error names the key (and line) at fault.
    pub fn parse(text: &str) -> Result<ClusterFile, String> {
        let f: ClusterFile = toml::from_str(text).map_err(|e| e.to_string())?;
        f.validate()?;
        Ok(f)
    }

    /// Read a config file; ELF paths in it are relative to the directory it is in.
    pub fn load(path: &Path) -> Result<(ClusterFile, PathBuf), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let cfg = ClusterFile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let base = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Ok((cfg, base))
    }

    /// Number of nodes the topology has.
    pub fn node_count(&self) -> Result<u32, String> {
        Ok(self.topology()?.size()?.nodes)
    }

    /// The fabric's topology (sizes not yet checked: see `Topology::size`).
    pub fn topology(&self) -> Result<Topology, String> {
        let t = &self.topology;
        let need = |v: Option<u32>, k: &str| {
            v.filter(|&x| x > 0).ok_or(format!("topology.{k}: required and positive for kind \"{}\"", t.kind))
        };
        match t.kind.as_str() {
            "star" => Ok(Topology::Star { nodes: need(t.nodes, "nodes")? }),
            "leaf-spine" => Ok(Topology::LeafSpine {
                nodes_per_leaf: need(t.nodes_per_leaf, "nodes_per_leaf")?,
                leaves: need(t.leaves, "leaves")?,
                spines: need(t.spines, "spines")?,
            }),
            k => Err(format!("topology.kind: \"{k}\" is not \"star\" or \"leaf-spine\"")),
        }
    }
}

impl ClusterFile {
    /// Check every key, in file order; called by `parse` and again by `Simulation::cluster`
    /// (a caller may have changed fields since).
    pub fn validate(&self) -> Result<(), String> {
        self.check_top()?;
        let nodes = self.node_count()?;
        self.link.check()?;
        self.check_switch()?;
        self.node.check()?;
        self.check_transport()?;
        self.program.iter().try_for_each(|p| parse_nodes(&p.nodes, nodes).map(|_| ()))?;
        self.program.iter().try_for_each(|p| p.abi_choice().map(|_| ()))?;
        self.program.iter().try_for_each(|p| p.pcie().map(|_| ()))?;
        self.checked_faults().map(|_| ())
    }

    fn check_top(&self) -> Result<(), String> {
        check::limit_cycles(self.max_us, "max_us", clock_hz())?;
        match self.transport.as_str() {
            "ndp" | "homa" => Ok(()),
            o => Err(format!("transport: \"{o}\" is not \"ndp\" or \"homa\"")),
        }
    }

    fn check_switch(&self) -> Result<(), String> {
        let s = &self.switch;
        let bands = s.bands.unwrap_or(if self.transport == "homa" { 8 } else { 2 });
        within(bands, 1, 8, "switch.bands", "")?;
        if let Some(b) = &s.band_bytes {
            if b.len() != bands as usize {
                return Err(format!("switch.band_bytes: {} limits for {bands} bands", b.len()));
            }
            b.iter().try_for_each(|&x| {
                within(x, 72, SwitchParams::MAX_BAND_BYTES, "switch.band_bytes", " bytes").map(|_| ())
            })?;
        }
        s.latency_ns.map(|v| time_ns(v, "switch.latency_ns")).transpose()?;
        if let Some(v) = s.mcast_timeout_us {
            self.at_least_round_trip(
                time_us(v, "switch.mcast_timeout_us")?,
                v,
                1,
                "switch.mcast_timeout_us",
            )?;
        }
        match s.uplink.as_deref() {
            None | Some("spray") | Some("hash") => Ok(()),
            Some(o) => Err(format!("switch.uplink: \"{o}\" is not \"spray\" or \"hash\"")),
        }
    }

    fn check_transport(&self) -> Result<(), String> {
        let t = &self.transport_params;
        // A message has at most 64 packets (65,535 bytes of 1,024): a larger window sends
        // nothing more, and NDP adds it to 32-bit counts and 16-bit PULL credits.
        t.rtt_pkts.map(|v| within(v, 1, 64, "transport_params.rtt_pkts", "")).transpose()?;
        t.rtt_bytes.map(|v| within(v, 1024, 65_536, "transport_params.rtt_bytes", " bytes")).transpose()?;
        t.overcommit.map(|v| within(v, 1, u32::MAX, "transport_params.overcommit", "")).transpose()?;
        t.tail_fraction.map(|v| fraction(v, "transport_params.tail_fraction")).transpose()?;
        t.tail_delay_us.map(|v| time_us(v, "transport_params.tail_delay_us")).transpose()?;
        let Some(v) = t.rto_us else { return Ok(()) };
        let hops = if self.topology.kind == "star" { 2 } else { 4 };
        self.at_least_round_trip(time_us(v, "transport_params.rto_us")?, v, hops, "transport_params.rto_us")
    }

    pub(crate) fn check_link_exists(&self, link: LinkId, text: &str) -> Result<(), String> {
        let ok = match (link, self.topology()?) {
            (LinkId::Node(n), _) => n < self.node_count()?,
            (LinkId::Uplink { leaf, spine }, Topology::LeafSpine { leaves, spines, .. }) => {
                leaf < leaves && spine < spines
            }
            (LinkId::Uplink { .. }, Topology::Star { .. }) => false,
        };
        if !ok {
            return Err(format!("faults.link: \"{text}\" does not exist in this topology"));
        }
        Ok(())
    }
}

/// Timeout floors.
impl ClusterFile {
    /// The shortest time in which a sender can learn that a packet arrived, over `links`
    /// links one way, unloaded: a full packet (1,024 + 64 bytes, docs/platform.md section 3) serialized
    /// on every link on the way there, a control packet (72 bytes) on every link back, each
    /// link's propagation both ways, and the switching latency of every switch crossed
    /// (one per link but the last, each way). A retransmission timeout below it resends
    /// every packet before its acknowledgement can come back, every time.
    pub fn round_trip_floor(&self, links: u64) -> Time {
        let rate = (self.link.rate_gbps * 1e9).round() as u64;
        let data = serialization((HEADER_BYTES + 1024) as u64, rate).as_fs();
        let ctrl = serialization(MIN_FRAME as u64, rate).as_fs();
        let prop = Time::from_ns_f64(self.link.propagation_ns).as_fs();
        let latency = Time::from_ns_f64(self.switch.latency_ns.unwrap_or(0.0)).as_fs();
        let switches = if links == 1 { 1 } else { links - 1 };
        // In u128: four hour-long propagations pass u64 (the floor then exceeds any rto).
        let fs = links as u128 * (data as u128 + ctrl as u128 + 2 * prop as u128)
            + 2 * switches as u128 * latency as u128;
        Time(u64::try_from(fs).unwrap_or(u64::MAX))
    }

    fn at_least_round_trip(&self, t: Time, v: f64, links: u64, key: &str) -> Result<(), String> {
        let floor = self.round_trip_floor(links);
        if t >= floor {
            return Ok(());
        }
        Err(format!(
            "{key}: {} us is shorter than {:.4} us, one full packet's serialization plus an \
             unloaded round trip over {links} link(s) at {} Gb/s and {} ns propagation: a \
             timeout that short resends before any acknowledgement can arrive",
            nanopu_sim::time::show(v),
            floor.as_us_f64(),
            self.link.rate_gbps,
            self.link.propagation_ns
        ))
    }
}

impl LinkFile {
    fn check(&self) -> Result<(), String> {
        check::within_f64(self.rate_gbps, 0.001, 100_000.0, "link.rate_gbps", " Gb/s")?;
        time_ns(self.propagation_ns, "link.propagation_ns")?;
        loss(self.drop_prob, "link.drop_prob")?;
        Ok(())
    }
}

impl NodeFile {
    /// The `exit` key, checked.
    pub fn exit_mode(&self) -> Result<ExitMode, String> {
        self.exit
            .as_deref()
            .map_or(Ok(ExitMode::Auto), |s| ExitMode::parse(s).map_err(|e| format!("node.{e}")))
    }

    fn check(&self) -> Result<(), String> {
        if let Some(c) = self.max_cycles {
            return Err(format!(
                "node.max_cycles: {c}: a cluster file has no cycle limit; set the simulated-time \
                 limit with the top-level max_us (microseconds; 3.2 cycles per ns)"
            ));
        }
        self.cores.map(|v| within(v, 1, 64, "node.cores", "")).transpose()?;
        self.exit_mode()?;
        self.jbsq_n.map(|v| within(v, 1, u32::MAX, "node.jbsq_n", "")).transpose()?;
        let hz = clock_hz();
        self.msg_cycles.map(|v| check::cycles(v, "node.msg_cycles", hz)).transpose()?;
        self.idle_cycles.map(|v| check::cycles(v, "node.idle_cycles", hz)).transpose()?;
        check::sched_timer_cycles(self.sched_timer_us.unwrap_or(0.0), "node.sched_timer_us", hz)?;
        self.check_tx_queue()
    }

    /// The largest message must fit in the TX queue (`NicParams::check_message_fits`).
    fn check_tx_queue(&self) -> Result<(), String> {
        let mut nic = NicParams::default();
        nic.max_msg_bytes = self.max_msg_bytes.unwrap_or(nic.max_msg_bytes);
        nic.tx_queue_bytes = self.tx_queue_bytes.unwrap_or(nic.tx_queue_bytes);
        within(nic.max_msg_bytes, 8, 65_535, "node.max_msg_bytes", " bytes")?;
        within(nic.tx_queue_bytes, 16, u32::MAX, "node.tx_queue_bytes", " bytes")?;
        nic.check_message_fits("node.max_msg_bytes", "node.tx_queue_bytes")
    }
}

/// The node clock of a cluster, Hz (the default `TimingParams`, 3.2 GHz: files cannot set it).
fn clock_hz() -> u64 {
    nanopu_riscv::TimingParams::default().clock_hz
}

/// Nodes named by a `[[program]].nodes` value: "all", "N" or "A-B" (inclusive).
pub fn parse_nodes(spec: &str, total: u32) -> Result<std::ops::Range<u32>, String> {
    let bad = || format!("program.nodes: \"{spec}\" is not \"all\", \"N\" or \"A-B\" within 0..{total}");
    let r = match spec.trim() {
        "all" => 0..total,
        s => match s.split_once('-') {
            Some((a, b)) => {
                let last = b.trim().parse::<u32>().map_err(|_| bad())?;
                a.trim().parse::<u32>().map_err(|_| bad())?..last.checked_add(1).ok_or_else(bad)?
            }
            None => {
                let n = s.parse::<u32>().map_err(|_| bad())?;
                n..n.checked_add(1).ok_or_else(bad)?
            }
        },
    };
    if r.start >= r.end || r.end > total {
        return Err(bad());
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str =
        "[topology]\nkind = \"star\"\nnodes = 4\n[[program]]\nnodes = \"all\"\nelf = \"x.elf\"\n";

    #[test]
    fn minimal_config_has_defaults() {
        let c = ClusterFile::parse(MIN).unwrap();
        assert_eq!((c.seed, c.transport.as_str(), c.link.rate_gbps), (1, "ndp", 200.0));
        assert_eq!(c.node_count().unwrap(), 4);
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key() {
        let e = ClusterFile::parse(&format!("{MIN}[link]\nrate_gbs = 100.0\n")).unwrap_err();
        assert!(e.contains("rate_gbs"), "{e}");
        let e = ClusterFile::parse(&MIN.replace("nodes = 4", "nodes = \"four\"")).unwrap_err();
        assert!(e.contains("nodes"), "{e}");
        let e = ClusterFile::parse(&MIN.replace("\"star\"", "\"ring\"")).unwrap_err();
        assert!(e.contains("topology.kind"), "{e}");
    }

    /// The error of `MIN` with `extra` appended; it must start with `key`.
    fn refused(extra: &str, key: &str) -> String {
        let e =
            ClusterFile::parse(&format!("{MIN}{extra}")).err().unwrap_or_else(|| panic!("accepted {extra}"));
        assert!(e.starts_with(&format!("{key}: ")), "{extra}: {e}");
        e
    }

    #[test]
    fn abi_and_exit_name_their_choices() {
        let e = ClusterFile::parse(&format!("{MIN}abi = \"rv\"\n")).unwrap_err();
        assert!(e.contains("program.abi: \"rv\" is not one of \"auto\", \"nanopu\", \"plain\""), "{e}");
        let e = refused("[node]\nexit = \"first\"\n", "node.exit");
        assert!(e.contains("\"auto\", \"hart\", \"node\""), "{e}");
        let f = ClusterFile::parse(&format!("{MIN}abi = \"nanopu\"\n[node]\nexit = \"node\"\n")).unwrap();
        assert_eq!(
            (f.program[0].abi_choice(), f.node.exit_mode()),
            (Ok(AbiChoice::NanoPu), Ok(ExitMode::Node))
        );
    }

    #[test]
    fn times_that_wrapped_to_zero_are_refused() {
        // 1e30 ns was 0 fs once converted (`as u64` of a wrapped product).
        let e = refused("[link]\npropagation_ns = 1e30\n", "link.propagation_ns");
        assert!(e.contains("1e30") && e.contains("limit"), "{e}");
        refused("[switch]\nlatency_ns = 1e30\n", "switch.latency_ns");
        refused(
            "[transport_params]\ntail_fraction = 1.0\ntail_delay_us = 1e30\n",
            "transport_params.tail_delay_us",
        );
        refused("[transport_params]\nrto_us = 1e30\n", "transport_params.rto_us");
        refused("[switch]\nmcast_timeout_us = 1e30\n", "switch.mcast_timeout_us");
        refused("[node]\nsched_timer_us = 1e30\n", "node.sched_timer_us");
        refused("[[faults]]\nlink = \"node:1\"\ndown_at_us = 1e30\n", "faults.down_at_us");
        refused("[node]\nmsg_cycles = 9223372036854775807\n", "node.msg_cycles");
        refused("[node]\nidle_cycles = 9223372036854775807\n", "node.idle_cycles");
    }

    #[test]
    fn negative_and_nan_values_are_refused_not_clamped() {
        for (extra, key) in [
            ("[[faults]]\nlink = \"node:1\"\ndown_at_us = -5.0\n", "faults.down_at_us"),
            ("[[faults]]\nlink = \"node:1\"\ndrop_prob = nan\n", "faults.drop_prob"),
            ("[link]\npropagation_ns = -1.0\n", "link.propagation_ns"),
            ("[link]\nrate_gbps = -200.0\n", "link.rate_gbps"),
            ("[link]\nrate_gbps = nan\n", "link.rate_gbps"),
            ("[link]\ndrop_prob = 1.0\n", "link.drop_prob"),
            ("[switch]\nlatency_ns = -263.0\n", "switch.latency_ns"),
            ("[switch]\nmcast_timeout_us = 0.0\n", "switch.mcast_timeout_us"),
            ("[transport_params]\nrto_us = -1.0\n", "transport_params.rto_us"),
            ("[transport_params]\ntail_delay_us = -1.0\n", "transport_params.tail_delay_us"),
            ("[transport_params]\ntail_fraction = 1.5\n", "transport_params.tail_fraction"),
            ("[node]\nsched_timer_us = nan\n", "node.sched_timer_us"),
        ] {
            refused(extra, key);
        }
    }

    #[test]
    fn rates_outside_their_range_are_refused() {
        refused("[link]\nrate_gbps = inf\n", "link.rate_gbps");
        refused("[link]\nrate_gbps = 1e300\n", "link.rate_gbps");
        let e = refused("[link]\nrate_gbps = 1e-6\n", "link.rate_gbps");
        assert!(e.contains("0.001..=100000"), "{e}");
        assert!(ClusterFile::parse(&format!("{MIN}[link]\nrate_gbps = 0.001\n")).is_ok());
    }

    #[test]
    fn max_us_is_named_and_bounded() {
        for v in ["0.0", "-1.0", "nan", "inf", "1e12", "1e-12"] {
            let e = ClusterFile::parse(&format!("max_us = {v}\n{MIN}")).unwrap_err();
            assert!(e.starts_with("max_us: ") && !e.contains("max_cycles"), "{v}: {e}");
        }
        assert!(ClusterFile::parse(&format!("max_us = 3.6e9\n{MIN}")).is_ok());
    }

    #[test]
    fn node_max_cycles_points_to_max_us() {
        let e = refused("[node]\nmax_cycles = 0\n", "node.max_cycles");
        assert!(e.contains("max_us"), "{e}");
    }

    #[test]
    fn retransmission_timeouts_have_a_floor() {
        // 1e-9 us resent every packet at every femtosecond-scale tick until memory ran out.
        let e = refused("[transport_params]\nrto_us = 1e-9\n", "transport_params.rto_us");
        assert!(e.contains("0.2678 us"), "{e}");
        let c = ClusterFile::parse(MIN).unwrap();
        // Star: 2 x (43.52 + 2.88 + 2 x 43.75) ns; leaf-spine 4 links and 2 x 3 switchings.
        assert_eq!(c.round_trip_floor(2), Time::from_ps(267_800));
        assert!(ClusterFile::parse(&format!("{MIN}[transport_params]\nrto_us = 0.2678\n")).is_ok());
        let far = "[link]\npropagation_ns = 3.6e12\n[switch]\nlatency_ns = 3.6e12\n[transport_params]\nrto_us = 3.6e9\n";
        refused(far, "transport_params.rto_us"); // an hour-long hop: the floor passes u64
        refused("[switch]\nmcast_timeout_us = 0.1\n", "switch.mcast_timeout_us");
        refused("[node]\nsched_timer_us = 0.01\n", "node.sched_timer_us");
    }

    #[test]
    fn messages_larger_than_the_tx_queue_are_refused() {
        let e = refused("[node]\nmax_msg_bytes = 16384\n", "node.max_msg_bytes");
        assert!(e.contains("node.tx_queue_bytes") && e.contains("at least 16400"), "{e}");
        refused("[node]\nmax_msg_bytes = 8184\n", "node.max_msg_bytes");
        assert!(ClusterFile::parse(&format!("{MIN}[node]\nmax_msg_bytes = 8176\n")).is_ok());
        let big = format!("{MIN}[node]\nmax_msg_bytes = 38912\ntx_queue_bytes = 38928\n");
        assert!(ClusterFile::parse(&big).is_ok());
    }

    #[test]
    fn topology_sizes_are_refused_before_anything_is_built() {
        let ls = |d: u64, l: u64, s: u64| {
            let t = format!(
                "[topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = {d}\nleaves = {l}\nspines = {s}\n"
            );
            ClusterFile::parse(&MIN.replace("[topology]\nkind = \"star\"\nnodes = 4\n", &t))
        };
        assert!(ls(65_537, 65_537, 1)
            .unwrap_err()
            .starts_with("topology.nodes_per_leaf x topology.leaves: "));
        assert!(ls(65_536, 65_536, 1).unwrap_err().contains("4294967296"));
        assert!(ls(4, 4, 4_294_967_295)
            .unwrap_err()
            .starts_with("topology.nodes_per_leaf + topology.spines: "));
        assert!(ls(4, 4, 100_000).unwrap_err().starts_with("topology: "));
        assert!(ls(4, 4, 4).is_ok());
        let e = ClusterFile::parse(&MIN.replace("nodes = 4", "nodes = 1000000000")).unwrap_err();
        assert!(e.starts_with("topology.nodes: 1000000000") && e.contains("1048576"), "{e}");
    }

    #[test]
    fn program_ranges_do_not_overflow() {
        let e = ClusterFile::parse(&MIN.replace("nodes = \"all\"", "nodes = \"0-4294967295\"")).unwrap_err();
        assert!(e.starts_with("program.nodes: "), "{e}");
        assert!(parse_nodes("4294967295", 8).is_err());
    }

    #[test]
    fn faults_name_links_that_do_not_exist() {
        refused("[[faults]]\nlink = \"node:99\"\ndrop_prob = 0.1\n", "faults.link");
        refused("[[faults]]\nlink = \"leaf:0:up:0\"\ndrop_prob = 0.1\n", "faults.link");
    }

    #[test]
    fn node_ranges() {
        assert_eq!(parse_nodes("all", 8).unwrap(), 0..8);
        assert_eq!(parse_nodes("1-7", 8).unwrap(), 1..8);
        assert_eq!(parse_nodes("3", 8).unwrap(), 3..4);
        assert!(parse_nodes("5-9", 8).unwrap_err().contains("program.nodes"));
    }
}
