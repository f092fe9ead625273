//! Cluster configuration files (TOML): topology, link and switch parameters, transport,
//! which program runs on which nodes, faults, seed. Unknown keys are errors; every value is
//! checked and an error names its key.
//!
//! ```toml
//! seed = 1
//! max_us = 1000.0               # simulated-time limit
//! transport = "ndp"             # or "homa"
//! [topology]
//! kind = "star"                 # or "leaf-spine" with nodes_per_leaf, leaves, spines
//! nodes = 81
//! [link]
//! rate_gbps = 200.0
//! propagation_ns = 43.75
//! drop_prob = 0.0
//! [switch]
//! bands = 2
//! band_bytes = [65536, 80000]   # per band, band 0 first
//! trim = true
//! latency_ns = 0.0
//! uplink = "spray"              # or "hash"
//! multicast = true
//! [node]
//! cores = 4
//! core_selection = "jbsq"       # or "rss"; also jbsq_n, msg_cycles, idle_cycles,
//!                               # sched_timer_us (timer-driven scheduler baseline)
//! [[program]]
//! nodes = "all"                 # "all", "3" or "0-79"
//! elf = "sw/build/apps/incast.elf"
//! args = ["80", "1024"]
//! ```

use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ClusterFile {
    #[serde(default = "one")]
    pub seed: u64,
    /// Simulated-time limit in microseconds.
    #[serde(default = "default_max_us")]
    pub max_us: f64,
    #[serde(default = "ndp")]
    pub transport: String,
    pub topology: TopologyFile,
    #[serde(default)]
    pub link: LinkFile,
    #[serde(default)]
    pub switch: SwitchFile,
    #[serde(default)]
    pub node: NodeFile,
    #[serde(default)]
    pub transport_params: TransportFile,
    pub program: Vec<ProgramFile>,
    #[serde(default)]
    pub faults: Vec<FaultFile>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    pub kind: String,
    pub nodes: Option<u32>,
    pub nodes_per_leaf: Option<u32>,
    pub leaves: Option<u32>,
    pub spines: Option<u32>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct LinkFile {
    pub rate_gbps: f64,
    pub propagation_ns: f64,
    pub drop_prob: f64,
}

impl Default for LinkFile {
    fn default() -> Self {
        LinkFile { rate_gbps: 200.0, propagation_ns: 43.75, drop_prob: 0.0 }
    }
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchFile {
    pub bands: Option<u8>,
    pub band_bytes: Option<Vec<u32>>,
    pub trim: Option<bool>,
    pub latency_ns: Option<f64>,
    pub uplink: Option<String>,
    pub multicast: Option<bool>,
    pub mcast_timeout_us: Option<f64>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct NodeFile {
    pub cores: Option<usize>,
    pub max_msg_bytes: Option<u32>,
    pub max_cycles: Option<u64>,
    /// "jbsq" (default) or "rss".
    pub core_selection: Option<String>,
    pub jbsq_n: Option<u32>,
    /// Reset values of `lmsgcycles` (0: no bound) and `lidlecycles`, cycles.
    pub msg_cycles: Option<u64>,
    pub idle_cycles: Option<u64>,
    /// Timer-driven scheduler baseline period, us (absent or 0: NIC-driven).
    pub sched_timer_us: Option<f64>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct TransportFile {
    pub rtt_pkts: Option<u32>,
    pub rto_us: Option<f64>,
    pub rtt_bytes: Option<u32>,
    pub overcommit: Option<u32>,
    pub tail_fraction: Option<f64>,
    pub tail_delay_us: Option<f64>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ProgramFile {
    pub nodes: String,
    pub elf: String,
    #[serde(default)]
    pub args: Vec<String>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct FaultFile {
    /// "node:N" (node N's link to its switch), or "leaf:L:up:S" (leaf L's uplink to spine S).
    pub link: String,
    /// When the link goes down, us (absent: it stays up).
    pub down_at_us: Option<f64>,
    /// Its own loss probability, replacing `link.drop_prob` (absent: the default).
    pub drop_prob: Option<f64>,
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
    /// Parse a config; the error names the key (and line) at fault.
    pub fn parse(text: &str) -> Result<ClusterFile, String> {
        toml::from_str(text).map_err(|e| e.to_string())
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
        let t = &self.topology;
        let need = |v: Option<u32>, k: &str| {
            v.filter(|&x| x > 0).ok_or(format!("topology.{k}: required and positive for kind \"{}\"", t.kind))
        };
        match t.kind.as_str() {
            "star" => need(t.nodes, "nodes"),
            "leaf-spine" => Ok(need(t.nodes_per_leaf, "nodes_per_leaf")? * need(t.leaves, "leaves")?),
            k => Err(format!("topology.kind: \"{k}\" is not \"star\" or \"leaf-spine\"")),
        }
    }
}

/// Nodes named by a `[[program]].nodes` value: "all", "N" or "A-B" (inclusive).
pub fn parse_nodes(spec: &str, total: u32) -> Result<std::ops::Range<u32>, String> {
    let bad = || format!("program.nodes: \"{spec}\" is not \"all\", \"N\" or \"A-B\" within 0..{total}");
    let r = match spec.trim() {
        "all" => 0..total,
        s => match s.split_once('-') {
            Some((a, b)) => {
                a.trim().parse::<u32>().map_err(|_| bad())?..b.trim().parse::<u32>().map_err(|_| bad())? + 1
            }
            None => {
                let n = s.parse::<u32>().map_err(|_| bad())?;
                n..n + 1
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
        let c = ClusterFile::parse(&MIN.replace("\"star\"", "\"ring\"")).unwrap();
        assert!(c.node_count().unwrap_err().contains("topology.kind"));
    }

    #[test]
    fn node_ranges() {
        assert_eq!(parse_nodes("all", 8).unwrap(), 0..8);
        assert_eq!(parse_nodes("1-7", 8).unwrap(), 1..8);
        assert_eq!(parse_nodes("3", 8).unwrap(), 3..4);
        assert!(parse_nodes("5-9", 8).unwrap_err().contains("program.nodes"));
    }
}
