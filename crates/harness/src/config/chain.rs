//! Chain replication configuration files (TOML) for `nanopu chain`: the chain, the load
//! (the `[load]` and `[load.kv]` sections of `nanopu load`, `config::load`, with the same
//! keys, defaults and checks) and the faults (the `[[faults]]` of a cluster file,
//! `nanopu_cluster::config::cluster`). Unknown keys are errors; an error names its key. Each key: example,
//! default, range.
//!
//! ```toml
//! [chain]
//! elf = "../../sw/build/apps/chain.elf"   # relative to the file's directory
//! replicas = 3              # default 3 (the nanoPU paper's chain); 1..=8 (chain.c)
//! ping_us = 5               # the master pings each replica this often, whole us (its timer
//!                           # ticks at 1 MHz); default 5; 1..=1,000,000
//! timeout_us = 20.0         # a replica silent this long is removed, us; default 20;
//!                           # more than ping_us, ..=3.6e9 (1 h)
//! poll_us = 1.0             # the client reads reconfigurations this often, us; default 1;
//!                           # 0.001..=1,000
//! nic = "nanopu"            # the nodes' NIC: "nanopu" (default) or "icenic" (then elf is
//!                           # chain_ice.elf: messages are UDP frames)
//! [load]                    # as nanopu load's: seed, rates_mrps, requests, warmup,
//!                           # arrivals, drain_us, start_us (preloading must be done by then)
//! [load.kv]                 # as nanopu load's, but steering (one core per replica) and
//!                           # items_per_core is the store's size on every replica
//! [[faults]]                # as a cluster file's; a crash of node 1..=replicas
//! ```
//!
//! The cluster is a star of `replicas + 1` one-core nodes (node 0 the master) with the
//! default link and switch of a cluster file (docs/models/network.md), seeded by `load.seed`.

use crate::clients::chain::ChainSpec;
use crate::config::load::{LoadFile, LoadSection, ServerFile};
use crate::loadgen::LoadSpec;
use crate::workload::kv::KvFormat;
use nanopu_cluster::config::bounds::{Bounds, OneOf};
use nanopu_cluster::config::check::{time_us, TIME_US};
use nanopu_cluster::config::cluster::{ClusterFile, FaultFile, ProgramFile, TopologyFile, APP_NICS};
use nanopu_cluster::config::NicKind;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Replicas: `chain.c` holds 8.
pub const REPLICAS: Bounds<u32> = Bounds::closed(1, 8);
/// The master's ping period, whole us (its timer ticks at 1 MHz).
pub const PING_US: Bounds<u64> = Bounds::closed(1, 1_000_000);
/// The client's polling period, us.
pub const POLL_US: Bounds<f64> = Bounds::closed(0.001, 1000.0);

/// The faults' schema: a cluster file's, but a chain takes crashes of replicas only
/// (`ChainFile::check_faults`), each with its kind, node and time.
fn crashes_only(s: &mut schemars::Schema) {
    let node = serde_json::json!({"minimum": REPLICAS.min, "maximum": REPLICAS.max});
    if let Some(items) = s.get_mut("items").and_then(serde_json::Value::as_object_mut) {
        items.insert("properties".into(), serde_json::json!({"kind": {"const": "crash"}, "node": node}));
        items.insert("required".into(), serde_json::json!(["kind", "node", "at_us"]));
    }
}

/// The load's schema: a load file's `[load]`, with `[load.kv]` steered by JBSQ and no other
/// workload (`ChainFile::validate`).
fn key_value_only(s: &mut schemars::Schema) {
    let kv = serde_json::json!({"properties": {"steering": {"const": "jbsq"}}});
    let none = serde_json::json!({"not": {}});
    let properties = serde_json::json!({"kv": kv, "class": {"maxItems": 0}, "rdma": none, "setalg": none});
    s.insert("properties".into(), properties);
    s.insert("required".into(), serde_json::json!(["kv"]));
}

/// A chain replication run (`nanopu chain CONFIG.toml`).
#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ChainFile {
    /// The chain: its program, replicas and failure detector (docs/apps/chain.md).
    pub chain: ChainSection,
    /// The load, as a load-generator file's `[load]` with `[load.kv]` (required; no
    /// `[[load.class]]` or `[load.rdma]`, no `load.kv.steering`: one core per replica).
    #[schemars(transform = key_value_only)]
    pub load: LoadSection,
    /// Faults, as a cluster file's: crashes of replicas (nodes 1..=replicas) during the load.
    #[serde(default)]
    #[schemars(transform = crashes_only)]
    pub faults: Vec<FaultFile>,
}

/// `[chain]`: the master (node 0) and the replicas (nodes 1..=replicas), one core each.
#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ChainSection {
    /// `chain.elf`, relative to the file's directory (required).
    pub elf: String,
    /// Replicas, chained 1 -> 2 -> ... in node order. Default 3 (the nanoPU paper's chain);
    /// 1..=8.
    #[serde(default = "three")]
    #[schemars(transform = REPLICAS.schema())]
    pub replicas: u32,
    /// The master pings every replica this often, whole us (its timer ticks at 1 MHz).
    /// Default 5; 1..=1,000,000.
    #[serde(default = "five")]
    #[schemars(transform = PING_US.schema())]
    pub ping_us: u64,
    /// A replica that has not answered a ping for this long is removed, us. Default 20; more
    /// than `ping_us`, at most 3.6e9 (1 h).
    #[serde(default = "twenty")]
    #[schemars(transform = TIME_US.schema())]
    pub timeout_us: f64,
    /// The client reads the master's reconfigurations this often, us: requests sent from the
    /// next read on go to the new head and tail. Default 1; 0.001..=1,000.
    #[serde(default = "one_us")]
    #[schemars(transform = POLL_US.schema())]
    pub poll_us: f64,
    /// The NIC of every node: "nanopu" (default) or "icenic", the traditional baseline's DMA
    /// NIC (docs/models/icenic.md), with `elf` the IceNIC build of the same program,
    /// `chain_ice.elf`: every message is then one UDP frame (docs/apps/chain.md "On IceNIC").
    #[serde(default = "nanopu_nic")]
    #[schemars(transform = APP_NICS.schema())]
    pub nic: String,
    /// Whose chain: "ours" (default: `sw/apps/chain.c`, a master and the replicas) or
    /// "prototype", the nanoPU prototype's `lnic-multi-core-chain-rep.cc` driven as its load
    /// generator drives it: node 0 its proxy client, nodes 1-3 its replicas, one core each,
    /// every write sent to the proxy; three replicas, writes only, uniform keys, 64-byte
    /// values, no faults (docs/apps/chain.md "The prototype's chain").
    #[serde(default = "ours")]
    #[schemars(transform = FORMATS.schema())]
    pub format: String,
}

/// `[chain] format`.
pub const FORMATS: OneOf = OneOf(&["ours", "prototype"]);

fn three() -> u32 {
    3
}
fn five() -> u64 {
    5
}
fn twenty() -> f64 {
    20.0
}
fn one_us() -> f64 {
    1.0
}
fn nanopu_nic() -> String {
    "nanopu".into()
}
fn ours() -> String {
    "ours".into()
}

/// Longest simulated time a chain run may take, us (the cluster's limit; each run ends at
/// its own deadline long before).
const MAX_US: f64 = 3.6e9;

impl ChainFile {
    /// Parse a config and check every value; the error names the key.
    pub fn parse(text: &str) -> Result<ChainFile, String> {
        let f: ChainFile = toml::from_str(text).map_err(|e| e.to_string())?;
        f.validate()?;
        Ok(f)
    }

    /// Read a config; the ELF path in it is relative to the directory it is in.
    pub fn load(path: &Path) -> Result<(ChainFile, PathBuf), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let cfg = ChainFile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let base = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Ok((cfg, base))
    }

    /// Check every value (`specs` and `cluster` check again: a caller may have changed the
    /// load since).
    pub fn validate(&self) -> Result<(), String> {
        self.chain.check()?;
        self.load_file().validate()?;
        if self.load.kv.is_none() {
            return Err("load.kv: the chain serves the key-value workload; add [load.kv]".into());
        }
        if self.load.kv.as_ref().is_some_and(|k| k.steering != "jbsq") {
            return Err("load.kv.steering: not for a chain, whose replicas run on one core each".into());
        }
        self.check_faults()?;
        self.check_prototype()?;
        self.cluster()?.validate()
    }

    /// The prototype's chain is three replicas on nanoPU nodes, with no master to survive a
    /// crash; the load's format follows the chain's.
    fn check_prototype(&self) -> Result<(), String> {
        let kv = self.load.kv.as_ref().expect("checked: [load.kv]");
        if !self.chain.prototype() {
            return Ok(());
        }
        let why = if self.chain.replicas != 3 {
            "chain.replicas: must be 3 (its load generator and replicas list a chain of three)"
        } else if self.chain.nic != "nanopu" {
            "chain.nic: must be \"nanopu\" (the prototype's program drives the nanoPU NIC)"
        } else if !self.faults.is_empty() {
            "faults: none (the prototype's chain has no master to reconfigure it)"
        } else if kv.format != "ours" {
            "load.kv.format: leave it out (chain.format = \"prototype\" sets the chain's)"
        } else {
            return Ok(());
        };
        Err(format!("{why}, with chain.format = \"prototype\""))
    }

    /// The load, as `nanopu load` reads it, with the replicas' one core.
    fn load_file(&self) -> LoadFile {
        let server = ServerFile {
            elf: self.chain.elf.clone(),
            args: vec![],
            cores: 1,
            nic: "nanopu".into(),
            mac_ns: 0.0,
            link_ns: 0.0,
            memory: None,
            nic_settings: Default::default(),
            other: Default::default(),
        };
        LoadFile { server, load: self.load.clone() }
    }

    /// One load spec per offered rate.
    pub fn specs(&self) -> Result<Vec<LoadSpec>, String> {
        let mut specs = self.load_file().specs()?;
        if self.chain.prototype() {
            for kv in specs.iter_mut().filter_map(|s| s.kv.as_mut()) {
                kv.format = KvFormat::PrototypeChain;
                kv.validate()?;
            }
        }
        Ok(specs)
    }

    pub fn chain_spec(&self) -> Result<ChainSpec, String> {
        self.chain.check()?;
        let c = &self.chain;
        let poll = time_us(c.poll_us, "chain.poll_us")?;
        let nic = c.nic_kind()?;
        let (replicas, prototype) = (c.replicas, c.prototype());
        Ok(ChainSpec { replicas, ping_us: c.ping_us, timeout_us: c.timeout_us, poll, nic, prototype })
    }

    /// The cluster: a star of the master and the replicas, one core each, all running
    /// `chain.elf` (or `chain_ice.elf` on IceNIC nodes) with the chain's and the store's
    /// arguments.
    pub fn cluster(&self) -> Result<ClusterFile, String> {
        let specs = self.specs()?;
        let kv = specs[0].kv.as_ref().expect("validated: [load.kv]");
        let hz = nanopu_cluster::NodeConfig::default().timing.clock_hz;
        let chain = self.chain_spec()?;
        let mut program = ProgramFile::on_all(self.chain.elf.clone(), chain.args(kv, hz));
        program.nic = Some(self.chain.nic.clone());
        let nodes = Some(self.chain.replicas + 1);
        let topology =
            TopologyFile { kind: "star".into(), nodes, nodes_per_leaf: None, leaves: None, spines: None };
        // One core: the prototype's program serves and proxies on the first core of its
        // quad-core nodes; the others only announce themselves and wait.
        let node = nanopu_cluster::config::cluster::NodeFile { cores: Some(1), ..Default::default() };
        Ok(ClusterFile {
            seed: self.load.seed,
            max_us: MAX_US,
            transport: "ndp".into(),
            topology,
            link: Default::default(),
            switch: Default::default(),
            node,
            transport_params: Default::default(),
            program: vec![program],
            faults: self.faults.clone(),
            cycle_limit: None,
        })
    }

    /// Only replicas crash: the paper's master is itself replicated (not modelled here), and
    /// the client's check knows crashes only (docs/apps/chain.md).
    fn check_faults(&self) -> Result<(), String> {
        for f in &self.faults {
            if f.kind.as_deref() != Some("crash") {
                return Err("faults.kind: a chain run takes crashes of replicas (kind = \"crash\")".into());
            }
            match f.node {
                Some(n) if (1..=self.chain.replicas).contains(&n) => {}
                Some(0) => return Err(
                    "faults.node: node 0 is the master, which does not fail here (the paper replicates it)"
                        .into(),
                ),
                n => {
                    return Err(format!("faults.node: {n:?} is not a replica (1..={})", self.chain.replicas))
                }
            }
        }
        Ok(())
    }
}

impl ChainSection {
    fn check(&self) -> Result<(), String> {
        REPLICAS.check(self.replicas, "chain.replicas", "")?;
        PING_US.check(self.ping_us, "chain.ping_us", " us")?;
        time_us(self.timeout_us, "chain.timeout_us")?;
        if self.timeout_us <= self.ping_us as f64 {
            return Err(format!(
                "chain.timeout_us: {} us must be more than chain.ping_us ({} us), or every replica \
                 would be removed between two pings",
                self.timeout_us, self.ping_us
            ));
        }
        POLL_US.check(self.poll_us, "chain.poll_us", " us")?;
        FORMATS.check(&self.format, "chain.format")?;
        self.nic_kind().map(|_| ())
    }

    fn prototype(&self) -> bool {
        self.format == "prototype"
    }

    fn nic_kind(&self) -> Result<NicKind, String> {
        Ok(APP_NICS.check(&self.nic, "chain.nic")?.parse().expect("listed"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str =
        "[chain]\nelf = \"chain.elf\"\n[load]\nrates_mrps = [1.0]\nrequests = 100\n[load.kv]\n";

    #[test]
    fn minimal_config_has_the_defaults() {
        let f = ChainFile::parse(MINIMAL).unwrap();
        let c = f.chain_spec().unwrap();
        assert_eq!((c.replicas, c.ping_us, c.timeout_us, c.poll), (3, 5, 20.0, Time::from_us(1)));
        assert_eq!(c.nic, NicKind::Nanopu);
        let cluster = f.cluster().unwrap();
        assert_eq!(cluster.topology.nodes, Some(4));
        assert_eq!(cluster.program[0].nic_kind(), Ok(NicKind::Nanopu));
        assert_eq!(cluster.program[0].args[..2], ["3".to_string(), "10000".to_string()]);
    }

    fn refused(extra: &str, key: &str) {
        let text = MINIMAL.replace("[load]\n", &format!("{extra}[load]\n"));
        let text = if extra.starts_with('[') { format!("{MINIMAL}{extra}") } else { text };
        let e = ChainFile::parse(&text).unwrap_err();
        assert!(e.contains(key), "{extra:?}: {e}");
    }

    #[test]
    fn icenic_nodes_run_the_program_as_frames() {
        let f = ChainFile::parse(&MINIMAL.replace("[load]\n", "nic = \"icenic\"\n[load]\n")).unwrap();
        assert_eq!(f.chain_spec().unwrap().nic, NicKind::IceNic);
        assert_eq!(f.cluster().unwrap().program[0].nic_kind(), Ok(NicKind::IceNic));
    }

    #[test]
    fn bad_values_are_refused_naming_the_key() {
        refused("replicas = 9\n", "chain.replicas");
        refused("replicas = 0\n", "chain.replicas");
        refused("ping_us = 0\n", "chain.ping_us");
        refused("timeout_us = 5.0\n", "chain.timeout_us");
        refused("timeout_us = -1.0\n", "chain.timeout_us");
        refused("poll_us = 0.0\n", "chain.poll_us");
        refused("colour = 1\n", "colour");
        refused("nic = \"zeronic\"\n", "chain.nic");
        let no_kv = MINIMAL.replace("[load.kv]\n", "");
        assert!(ChainFile::parse(&no_kv).unwrap_err().contains("load.kv"));
        let steering = MINIMAL.replace("[load.kv]\n", "[load.kv]\nsteering = \"static\"\n");
        assert!(ChainFile::parse(&steering).unwrap_err().contains("load.kv.steering"));
        let items = MINIMAL.replace("[load.kv]\n", "[load.kv]\nitems_per_core = 20000\n");
        assert!(ChainFile::parse(&items).unwrap_err().contains("load.kv.items_per_core"));
    }

    const PROTOTYPE: &str = "[chain]\nelf = \"chain-rep.riscv\"\nformat = \"prototype\"\n[load]\nrates_mrps = [1.0]\n\
                             requests = 100\n[load.kv]\nget_fraction = 0.0\nkeys = \"uniform\"\nvalue_bytes = [64, 64]\n";

    /// The prototype's chain: its own arguments (none), its writes.
    #[test]
    fn the_prototypes_chain_runs_with_its_format() {
        let f = ChainFile::parse(PROTOTYPE).unwrap();
        assert!(f.chain_spec().unwrap().prototype);
        let cluster = f.cluster().unwrap();
        assert_eq!((cluster.topology.nodes, cluster.node.cores), (Some(4), Some(1)));
        assert!(cluster.program[0].args.is_empty());
        assert_eq!(f.specs().unwrap()[0].kv.as_ref().unwrap().format, KvFormat::PrototypeChain);
    }

    #[test]
    fn the_prototypes_chain_refuses_what_it_cannot_do() {
        let bad = |from: &str, to: &str, key: &str| {
            let e = ChainFile::parse(&PROTOTYPE.replace(from, to)).unwrap_err();
            assert!(e.contains(key), "{to:?}: {e}");
        };
        bad("format", "replicas = 4\nformat", "chain.replicas");
        bad("get_fraction = 0.0", "get_fraction = 0.5", "load.kv.get_fraction");
        bad("[64, 64]", "[512, 512]", "load.kv.value_bytes");
        bad("format = \"prototype\"", "format = \"theirs\"", "chain.format");
        let crash = format!("{PROTOTYPE}[[faults]]\nkind = \"crash\"\nnode = 1\nat_us = 30.0\n");
        assert!(ChainFile::parse(&crash).unwrap_err().contains("faults"));
    }

    use nanopu_sim::Time;
}
