//! `[server]`: the server node (program, cores, NIC and its scheduler options), the node
//! configuration it makes, and what an IceNIC server refuses. Apart from the load because
//! it configures a node, checked against the node's own limits, not a workload.

use super::{jbsq, LoadFile};
use nanopu_cluster::config::check::{self, time_ns, within};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::NodeConfig;
use nanopu_nic::params::CoreSelection;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ServerFile {
    /// The server program, relative to the config file's directory (required).
    pub elf: String,
    /// Its arguments (argv[1..]). Default none; refused with `[load.kv]`, `[load.rdma]` and
    /// `[load.setalg]`, which give them.
    #[serde(default)]
    pub args: Vec<String>,
    /// Cores of the server node. Default 4; 1..=64.
    #[serde(default = "four")]
    pub cores: usize,
    /// The server node's NIC: "nanopu" (default) or "icenic", the traditional baseline's DMA
    /// NIC (docs/models/icenic.md), whose requests and replies are UDP frames. An IceNIC
    /// server takes only the checked workloads (`[load.kv]` with `steering = "static"`,
    /// `[load.rdma]`, `[load.setalg]`), one core, and none of the nanoPU NIC's options
    /// (`core_selection`, `jbsq_n`, `sched_timer_us`, `msg_cycles`, `idle_cycles`); its
    /// program is the workload's IceNIC build, `mica_ice.elf`, `rdma_ice.elf` or
    /// `setalg_ice.elf` (docs/apps/mica.md, rdma.md, setalg.md "On IceNIC").
    #[serde(default = "nanopu_nic")]
    pub nic: String,
    /// How the NIC picks a core: "jbsq" (default) or "rss".
    #[serde(default = "jbsq")]
    pub core_selection: String,
    /// JBSQ's bound: messages queued per core. Default 2; at least 1.
    pub jbsq_n: Option<u32>,
    /// Period of the timer-driven scheduler baseline, us; 0 (default) keeps the NIC-driven
    /// scheduler. 0, or 0.05 (a 160-cycle context switch)..=3.6e9.
    #[serde(default)]
    pub sched_timer_us: f64,
    /// Reset value of `lmsgcycles`, core cycles; 0 turns the processing bound off. Default
    /// 3,000; at most 1.152e13 (1 h at 3.2 GHz).
    pub msg_cycles: Option<u64>,
    /// Reset value of `lidlecycles`, core cycles. Default 3,000; at most 1.152e13.
    pub idle_cycles: Option<u64>,
    /// Ethernet MAC and serial I/O latency each way, ns. Default 0; 0..=3.6e12 (1 h).
    #[serde(default)]
    pub mac_ns: f64,
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
        const CORES: &str = "the nanoPU NIC's core selection (JBSQ, RSS); an IceNIC server has one core";
        const SCHED: &str = "an option of the nanoPU NIC's scheduler, not of an IceNIC server";
        let nanopu_only = [
            (s.core_selection != "jbsq", "core_selection", CORES),
            (s.jbsq_n.is_some(), "jbsq_n", CORES),
            (s.sched_timer_us != 0.0, "sched_timer_us", SCHED),
            (s.msg_cycles.is_some(), "msg_cycles", SCHED),
            (s.idle_cycles.is_some(), "idle_cycles", SCHED),
        ];
        if let Some((_, key, why)) = nanopu_only.iter().find(|(set, _, _)| *set) {
            return Err(format!("server.{key}: {why}"));
        }
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
        cfg.nic.core_selection =
            CoreSelection::parse(&s.core_selection).map_err(|e| format!("server.{e}"))?;
        cfg.nic.jbsq_n = s.jbsq_n.unwrap_or(cfg.nic.jbsq_n);
        cfg.nic.msg_cycles = s.msg_cycles.unwrap_or(cfg.nic.msg_cycles);
        cfg.nic.idle_cycles = s.idle_cycles.unwrap_or(cfg.nic.idle_cycles);
        cfg.nic.sched_timer_cycles =
            check::sched_timer_cycles(s.sched_timer_us, "server.sched_timer_us", hz)?;
        cfg.port.mac_fs = time_ns(s.mac_ns, "server.mac_ns")?.as_fs();
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
        if let Some(kv) = self.kv_spec()? {
            p = (program("mica", nic), kv.server_args());
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
        self.nic.parse().map_err(|e| format!("server.nic: {e}"))
    }

    pub(super) fn check(&self) -> Result<(), String> {
        self.nic_kind()?;
        let hz = NodeConfig::default().timing.clock_hz;
        within(self.cores, 1, 64, "server.cores", "")?;
        self.jbsq_n.map(|v| within(v, 1, u32::MAX, "server.jbsq_n", "")).transpose()?;
        self.msg_cycles.map(|v| check::cycles(v, "server.msg_cycles", hz)).transpose()?;
        self.idle_cycles.map(|v| check::cycles(v, "server.idle_cycles", hz)).transpose()?;
        check::sched_timer_cycles(self.sched_timer_us, "server.sched_timer_us", hz)?;
        time_ns(self.mac_ns, "server.mac_ns")?;
        Ok(())
    }
}
