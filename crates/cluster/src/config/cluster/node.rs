//! `[node]` and `[transport_params]`: every node's cores, NIC (the settings of
//! `config::nic`, flattened into `[node]`) and transport: what sits at the ends of the links.

use super::{clock_hz, ClusterFile};
use crate::config::bounds::{refused, Bounds, OneOf};
use crate::config::check::{fraction, time_us, FRACTION, TIME_US};
use crate::config::keys::Given;
use crate::config::keys::NoOtherKeys;
use crate::config::nic::NicSection;
use crate::config::ExitMode;
use schemars::JsonSchema;
use serde::Deserialize;

/// Cores per node (the nanoPU NIC's core mask and JBSQ state hold 64).
pub const CORES: Bounds<usize> = Bounds::closed(1, 64);
/// What a core's exit ends.
pub const EXITS: OneOf = OneOf(&ExitMode::NAMES);
/// The core engines.
pub const ENGINES: OneOf = OneOf(&nanopu_riscv::Engine::NAMES);
/// The memory systems.
pub const MEMORIES: OneOf = OneOf(&nanopu_riscv::MemorySystem::NAMES);
/// NDP's window, packets: a message has at most 64.
pub const RTT_PKTS: Bounds<u32> = Bounds::closed(1, 64);
/// Homa's unscheduled bytes: one packet to a largest message.
pub const RTT_BYTES: Bounds<u32> = Bounds::closed(1024, 65_536);
/// Homa's messages granted at once.
pub const OVERCOMMIT: Bounds<u32> = Bounds::closed(1, u32::MAX);

#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(default)]
#[schemars(deny_unknown_fields)]
pub struct NodeFile {
    /// Cores per node. Default 4; 1..=64.
    #[schemars(transform = CORES.schema())]
    pub cores: Option<usize>,
    /// Refused: the run's limit is the top-level `max_us`.
    #[schemars(transform = refused)]
    pub max_cycles: Option<u64>,
    /// What a core's exit ends: "hart" (each core exits on its own), "node" (the first exit
    /// ends the node, as on the prototype) or "auto" (default: "node" unless the program
    /// defines `__nanopu_abi`).
    #[schemars(transform = EXITS.schema())]
    pub exit: Option<String>,
    /// Which engine executes the cores' instructions: "fast" (default), "interp" (the
    /// reference interpreter) or "jit" (fast, with hot code translated to host code); the
    /// simulated results are the same (docs/profile.md "Core engines").
    #[schemars(transform = ENGINES.schema())]
    pub engine: Option<String>,
    /// The memory system the cores' timing follows: "prototype" (default: the prototype's
    /// dirty write-backs, its L2's one response path and DDR3 refresh; docs/models/node.md
    /// "Write-backs, the L2's one path and refresh") or "simple" (the L2, LLC and DRAM see
    /// reads only, no refresh: the model before 2026-12-03, kept to compare).
    #[schemars(transform = MEMORIES.schema())]
    pub memory: Option<String>,
    /// The NIC's settings (`config::nic`).
    #[serde(flatten)]
    pub nic_settings: NicSection,
    #[serde(flatten)]
    #[schemars(skip)]
    pub other: NoOtherKeys<NodeFile>,
}

#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct TransportFile {
    /// NDP: packets a sender sends before the first PULL. Default 2 (the prototype's); 1..=64
    /// (a message has at most 64).
    #[schemars(transform = RTT_PKTS.schema())]
    pub rtt_pkts: Option<u32>,
    /// Sender: resend what is unacknowledged after this long without progress, us. Default 20
    /// (an estimate: many round trips of a two-tier fabric); at least the longest path's
    /// round-trip floor (one full packet's serialization plus an unloaded round trip), at most
    /// 3.6e9.
    #[schemars(transform = TIME_US.schema())]
    pub rto_us: Option<f64>,
    /// Homa: bytes a sender may send unscheduled and the receiver keeps granted ahead. Default
    /// 8,192 (an estimate: about one round trip of a leaf-spine at 200 Gb/s); 1,024 (one
    /// packet)..=65,536 (64).
    #[schemars(transform = RTT_BYTES.schema())]
    pub rtt_bytes: Option<u32>,
    /// Homa: messages granted at once. Default 3 (the prototype's); at least 1.
    #[schemars(transform = OVERCOMMIT.schema())]
    pub overcommit: Option<u32>,
    /// Share of messages delayed by `tail_delay_us` at their sender (the tail experiment).
    /// Default 0; [0, 1].
    #[schemars(transform = FRACTION.schema())]
    pub tail_fraction: Option<f64>,
    /// Extra delay of those messages, us. Default 0; 0..=3.6e9, and more than 0 only with a
    /// tail_fraction above 0.
    #[schemars(transform = TIME_US.schema())]
    pub tail_delay_us: Option<f64>,
}

impl NodeFile {
    /// The `exit` key, checked.
    pub fn exit_mode(&self) -> Result<ExitMode, String> {
        self.exit
            .as_deref()
            .map_or(Ok(ExitMode::Auto), |s| ExitMode::parse(s).map_err(|e| format!("node.{e}")))
    }

    /// The `engine` key, checked.
    pub fn engine(&self) -> Result<nanopu_riscv::Engine, String> {
        let Some(s) = self.engine.as_deref() else {
            return Ok(Default::default());
        };
        ENGINES.position(s, "engine").map_err(|e| format!("node.{e}"))?;
        s.parse()
    }

    /// The `memory` key, checked.
    pub fn memory(&self) -> Result<nanopu_riscv::MemorySystem, String> {
        memory_system(self.memory.as_deref(), "node")
    }

    pub(super) fn check(&self) -> Result<(), String> {
        self.engine()?;
        self.memory()?;
        if let Some(c) = self.max_cycles {
            return Err(format!(
                "node.max_cycles: {c}: a cluster file has no cycle limit; set the simulated-time \
                 limit with the top-level max_us (microseconds; 3.2 cycles per ns)"
            ));
        }
        self.cores.map(|v| CORES.check(v, "node.cores", "")).transpose()?;
        self.exit_mode()?;
        self.nic_settings.check(Given::Section("node"), clock_hz())
    }
}

/// A `memory` key of section `section` (`[node]`, `[server]`), checked; prototype if absent.
pub fn memory_system(v: Option<&str>, section: &str) -> Result<nanopu_riscv::MemorySystem, String> {
    let Some(s) = v else {
        return Ok(Default::default());
    };
    MEMORIES.position(s, "memory").map_err(|e| format!("{section}.{e}"))?;
    s.parse()
}

impl ClusterFile {
    pub(super) fn check_transport(&self) -> Result<(), String> {
        let t = &self.transport_params;
        t.check(Given::Section("transport_params"))?;
        let Some(v) = t.rto_us else { return Ok(()) };
        let hops = if self.topology.kind == "star" { 2 } else { 4 };
        self.at_least_round_trip(time_us(v, "transport_params.rto_us")?, v, hops, "transport_params.rto_us")
    }
}

impl TransportFile {
    /// Each key against its range, named as `at` (the timeout's floor depends on the
    /// links: `ClusterFile::check_transport`).
    pub fn check(&self, at: Given) -> Result<(), String> {
        // A message has at most 64 packets (65,535 bytes of 1,024): a larger window sends
        // nothing more, and NDP adds it to 32-bit counts and 16-bit PULL credits.
        self.rtt_pkts.map(|v| RTT_PKTS.check(v, &at.name("rtt_pkts"), "")).transpose()?;
        self.rtt_bytes.map(|v| RTT_BYTES.check(v, &at.name("rtt_bytes"), " bytes")).transpose()?;
        self.overcommit.map(|v| OVERCOMMIT.check(v, &at.name("overcommit"), "")).transpose()?;
        self.tail_fraction.map(|v| fraction(v, &at.name("tail_fraction"))).transpose()?;
        self.tail_delay_us.map(|v| time_us(v, &at.name("tail_delay_us"))).transpose()?;
        self.check_tail_applies(at)
    }

    /// A tail delay only with a share of messages to delay: else it delays none.
    fn check_tail_applies(&self, at: Given) -> Result<(), String> {
        if self.tail_delay_us.unwrap_or(0.0) > 0.0 && self.tail_fraction.unwrap_or(0.0) == 0.0 {
            return Err(format!(
                "{}: delays no message while {} (the share of messages delayed) is 0",
                at.name("tail_delay_us"),
                at.name("tail_fraction")
            ));
        }
        Ok(())
    }
}
