//! Cluster configuration files (TOML): topology, link and switch parameters, transport,
//! which program runs on which nodes, faults, seed. Unknown keys are errors; every value is
//! checked against its range when the file is parsed, before anything is built, and an
//! error names its key, the value and the limit. Every key's meaning, unit, default and range
//! is the doc comment of its field: docs/config.md is generated from them (`schema`).
//!
//! The top-level keys are here, each section with its checks in its own file: `topology`
//! (`[topology]`, and which links exist), `links` (`[link]`, `[switch]` and the round-trip
//! floor of timeouts), `node` (`[node]`, `[transport_params]`), `programs` (`[[program]]`)
//! and `faults` (`[[faults]]`).
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

mod faults;
mod links;
mod node;
mod programs;
#[cfg(test)]
mod tests;
mod topology;

use crate::config::bounds::OneOf;
use crate::config::check::{self, LIMIT_US};
use crate::config::keys::Given;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub use faults::{Fault, FaultFile};
pub use links::{LinkFile, SwitchFile};
pub use node::{memory_system, NodeFile, TransportFile, CORES, MEMORIES};
pub use programs::{ordered_range, parse_nodes, ProgramFile, APP_NICS, NICS};
pub use topology::TopologyFile;

/// The NIC's transports.
pub const TRANSPORTS: OneOf = OneOf(&["ndp", "homa"]);

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ClusterFile {
    /// Seed of the run's random streams. Default 1; any u64.
    #[serde(default = "one")]
    pub seed: u64,
    /// Simulated-time limit, us. Default 10,000; more than 0, at most 3.6e9 (1 h).
    #[serde(default = "default_max_us")]
    #[schemars(transform = LIMIT_US.schema())]
    pub max_us: f64,
    /// The NIC's transport: "ndp" (default) or "homa".
    #[serde(default = "ndp")]
    #[schemars(transform = TRANSPORTS.schema())]
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
    /// Not a key: the run's limit in core cycles when the command line sets it
    /// (`nanopu run PROGRAM.elf --nodes N --max-cycles C`), within a single node's range of
    /// one cycle to two hours (`check::cycle_limit`), where the file's `max_us` is at most
    /// one hour. None: `max_us` sets the limit.
    #[serde(skip)]
    #[schemars(skip)]
    pub cycle_limit: Option<u64>,
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

    /// `nodes` nodes on one switch running `program`, every other key at its default (not
    /// yet validated: `parse` and `Simulation::cluster` do that).
    pub fn star(nodes: u32, program: ProgramFile) -> ClusterFile {
        ClusterFile {
            seed: one(),
            max_us: default_max_us(),
            transport: ndp(),
            topology: TopologyFile::star(nodes),
            link: LinkFile::default(),
            switch: SwitchFile::default(),
            node: NodeFile::default(),
            transport_params: TransportFile::default(),
            program: vec![program],
            faults: Vec::new(),
            cycle_limit: None,
        }
    }

    /// Number of nodes the topology has.
    pub fn node_count(&self) -> Result<u32, String> {
        Ok(self.topology()?.size()?.nodes)
    }
}

impl ClusterFile {
    /// Check every key, in file order; called by `parse` and again by `Simulation::cluster`
    /// (a caller may have changed fields since).
    pub fn validate(&self) -> Result<(), String> {
        self.check_top()?;
        let nodes = self.node_count()?;
        self.link.check(Given::Section("link"))?;
        self.check_switch()?;
        self.node.check()?;
        self.check_transport()?;
        programs::check_disjoint(&self.program, nodes)?;
        self.program.iter().try_for_each(|p| p.abi_choice().map(|_| ()))?;
        self.program.iter().try_for_each(|p| p.nic_kind().map(|_| ()))?;
        self.program.iter().try_for_each(|p| p.pcie().map(|_| ()))?;
        self.program.iter().try_for_each(|p| p.zero_params(clock_hz()).map(|_| ()))?;
        self.program.iter().try_for_each(|p| p.rdma_params(&Default::default()).map(|_| ()))?;
        self.program.iter().try_for_each(|p| p.ice_params(&Default::default()).map(|_| ()))?;
        self.check_no_nanopu_node()?;
        self.checked_faults().map(|_| ())
    }

    /// Only nanoPU nodes take `[node]`'s nanoPU NIC settings: in a cluster without one (every
    /// program on IceNIC, ZeroNIC or the RDMA NIC), a setting given would apply to no node
    /// and is refused by name (in a mixed cluster the nanoPU nodes take them).
    fn check_no_nanopu_node(&self) -> Result<(), String> {
        let other = |p: &ProgramFile| p.nic_kind().is_ok_and(|k| k != crate::config::NicKind::Nanopu);
        match self.program.first() {
            Some(p) if self.program.iter().all(other) => {
                let nic = p.nic.as_deref().unwrap_or_default();
                (self.node.nic_settings.none_on_icenic(Given::Section("node")))
                    .map_err(|e| format!("{e} (program.nodes \"{}\" has nic = \"{nic}\")", p.nodes))
            }
            _ => Ok(()),
        }
    }

    /// The run's limit, core cycles: `--max-cycles` if the command line set it, else
    /// `max_us`; an error names the one the user wrote.
    pub fn limit_cycles(&self) -> Result<u64, String> {
        match self.cycle_limit {
            Some(c) => check::cycle_limit(c, "--max-cycles", clock_hz()),
            None => check::limit_cycles(self.max_us, "max_us", clock_hz()),
        }
    }

    fn check_top(&self) -> Result<(), String> {
        self.limit_cycles()?;
        TRANSPORTS.check(&self.transport, "transport").map(|_| ())
    }
}

/// The node clock of a cluster, Hz (the default `TimingParams`, 3.2 GHz: files cannot set it).
fn clock_hz() -> u64 {
    check::files_clock_hz()
}
