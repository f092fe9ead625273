//! `[server]`: the server node (program, cores, NIC and its scheduler options), the node
//! configuration it makes, and what an IceNIC server refuses. Separate from the load because
//! it configures a node, checked against the node's own limits, not a workload.

use super::LoadFile;
use crate::workload::kv::KvFormat;
use nanopu_cluster::config::check::{self, time_ns, TIME_NS};
use nanopu_cluster::config::cluster::{memory_system, APP_NICS, CORES, MEMORIES};
use nanopu_cluster::config::keys::Given;
use nanopu_cluster::config::keys::NoOtherKeys;
use nanopu_cluster::config::nic::NicSection;
use nanopu_cluster::config::NicKind;
use nanopu_cluster::NodeConfig;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[schemars(deny_unknown_fields)]
pub struct ServerFile {
    /// The server program, relative to the config file's directory (required).
    pub elf: String,
    /// Its arguments (argv[1..]). Default none; refused with `[load.kv]`, `[load.rdma]` and
    /// `[load.setalg]`, which give them.
    #[serde(default)]
    pub args: Vec<String>,
    /// Cores of the server node. Default 4; 1..=64.
    #[serde(default = "four")]
    #[schemars(transform = CORES.schema())]
    pub cores: usize,
    /// The server node's NIC: "nanopu" (default) or "icenic", the traditional baseline's DMA
    /// NIC (docs/models/icenic.md), whose requests and replies are UDP frames. An IceNIC
    /// server takes only the checked workloads (`[load.kv]` with `steering = "static"`,
    /// `[load.rdma]`, `[load.setalg]`), one core, and none of the nanoPU NIC's options
    /// (`core_selection`, `jbsq_n`, `sched_timer_us`, `msg_cycles`, `idle_cycles`, ...); its
    /// program is the workload's IceNIC build, `mica_ice.elf`, `rdma_ice.elf` or
    /// `setalg_ice.elf` (docs/apps/mica.md, rdma.md, setalg.md "On IceNIC").
    #[serde(default = "nanopu_nic")]
    #[schemars(transform = APP_NICS.schema())]
    pub nic: String,
    /// Ethernet MAC and serial I/O latency each way, ns. Default 0; 0..=3.6e12 (1 h).
    #[serde(default)]
    #[schemars(transform = TIME_NS.schema())]
    pub mac_ns: f64,
    /// Propagation delay of the link between the load generator and the server, each way,
    /// ns. Default 0 (the load generator attached directly); the nanoPU prototype's MICA
    /// runs put it behind a 140-cycle link, 43.75 ns at 3.2 GHz (docs/apps/mica.md
    /// "The prototype's setup"). 0..=3.6e12 (1 h).
    #[serde(default)]
    #[schemars(transform = TIME_NS.schema())]
    pub link_ns: f64,
    /// The memory system the server's cores' timing follows: "prototype" (default) or
    /// "simple" (as `[node] memory` of a cluster file; docs/models/node.md "Write-backs,
    /// the L2's one path and refresh").
    #[serde(default)]
    #[schemars(transform = MEMORIES.schema())]
    pub memory: Option<String>,
    /// The nanoPU NIC's settings (`nanopu_cluster::config::nic`); an IceNIC server takes none.
    #[serde(flatten)]
    pub nic_settings: NicSection,
    #[serde(flatten)]
    #[schemars(skip)]
    pub other: NoOtherKeys<ServerFile>,
}

fn four() -> usize {
    4
}
fn nanopu_nic() -> String {
    "nanopu".into()
}

impl LoadFile {
    /// What an IceNIC server cannot take yet, refused by name (`loadgen::ice_supported`).
    pub(super) fn nic_check(&self) -> Result<(), String> {
        let s = &self.server;
        if s.nic_kind()? == NicKind::Nanopu {
            return Ok(());
        }
        s.nic_settings.none_on_icenic(Given::Section("server"))?;
        let kv = self.kv_spec()?;
        let checked = kv.is_some() || self.load.rdma.is_some() || self.load.setalg.is_some();
        crate::loadgen::ice_supported(kv.as_ref(), checked, s.cores)
    }

    /// The server node's configuration.
    pub fn node_config(&self) -> Result<NodeConfig, String> {
        let s = &self.server;
        s.check()?;
        let mut cfg = NodeConfig::default();
        let hz = cfg.timing.clock_hz;
        cfg.nic.cores = s.cores;
        cfg.nic_kind = s.nic_kind()?;
        cfg.timing = memory_system(s.memory.as_deref(), "server")?.apply(cfg.timing);
        s.nic_settings.apply(&mut cfg.nic, Given::Section("server"), hz)?;
        cfg.port.mac_fs = time_ns(s.mac_ns, "server.mac_ns")?.as_fs();
        cfg.port.propagation_fs = time_ns(s.link_ns, "server.link_ns")?.as_fs();
        (cfg.program_name, cfg.args) = self.server_program(cfg.nic_kind)?;
        // Each run ends at its deadline (last send + drain, at most two hours: both keys
        // are at most one); the cycle limit only has to lie beyond it.
        cfg.max_cycles = check::max_cycles(hz);
        cfg.validate().map_err(|e| format!("server: {e}"))?;
        Ok(cfg)
    }

    /// The server's program and its arguments: the synthetic service's, unless a checked
    /// workload gives them.
    fn server_program(&self, nic: NicKind) -> Result<(String, Vec<String>), String> {
        let mut p = ("service".to_string(), self.server.args.clone());
        match self.kv_spec()? {
            Some(kv) if kv.format == KvFormat::Ours => p = (program("mica", nic), kv.server_args()),
            Some(_) => p.0 = self.server.elf.rsplit('/').next().unwrap_or("program").into(),
            None => {}
        }
        if let Some(r) = self.rdma_spec()? {
            p = (program("rdma", nic), r.server_args());
        }
        if let Some(q) = self.setalg_spec()? {
            p = (program("setalg", nic), q.corpus.server_args());
        }
        Ok(p)
    }
}

/// The name of a checked workload's server program on this NIC (`mica` or `mica_ice`).
fn program(name: &str, nic: NicKind) -> String {
    crate::apps::elf_name(name, nic).trim_end_matches(".elf").into()
}

impl ServerFile {
    /// The server's NIC.
    pub(super) fn nic_kind(&self) -> Result<NicKind, String> {
        Ok(APP_NICS.check(&self.nic, "server.nic")?.parse().expect("listed"))
    }

    pub(super) fn check(&self) -> Result<(), String> {
        self.nic_kind()?;
        let hz = NodeConfig::default().timing.clock_hz;
        CORES.check(self.cores, "server.cores", "")?;
        self.nic_settings.check(Given::Section("server"), hz)?;
        time_ns(self.mac_ns, "server.mac_ns")?;
        time_ns(self.link_ns, "server.link_ns")?;
        memory_system(self.memory.as_deref(), "server")?;
        Ok(())
    }
}
