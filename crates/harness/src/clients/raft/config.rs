//! `nanopu raft CONFIG.toml`: a Raft run's configuration. Unknown keys are errors; every
//! value is checked, the error naming the key. Each key: example, default, range (why each
//! default: docs/apps/raft.md "Parameters").
//!
//! ```toml
//! elf = "../../sw/build/apps/raft.elf"  # default: that path (raft_ice.elf with nic =
//!                           # "icenic"); relative to the file
//! nic = "nanopu"            # the replicas' NIC: "nanopu" (default) or "icenic"
//! seed = 1                  # default 1: the client's draws and the election timeouts
//! [raft]
//! replicas = 3              # default 3; 3..=7
//! election_min_us = 10.0    # election timeout drawn in [min, max], us; default 10, 20;
//! election_max_us = 20.0    #   0 < min <= max <= 1e6
//! heartbeat_us = 2.0        # us; default 2; 0 < heartbeat < election_min_us
//! batch = 32                # most entries per AppendEntries; default 32; 1..=41 (2 KiB;
//!                           # on IceNIC 1..=29: one frame; 1..=17 with payload "prototype")
//! payload = "word"          # "word" (default: one-word keys and values) or "prototype"
//!                           # (16-byte keys, 64-byte values: raft_kv.elf; nanoPU only)
//! [network]
//! link_ns = 43.75           # every link's propagation delay, ns; default 43.75
//! switch_ns = 0.0           # the switch's latency, ns; default 0
//! [client]
//! rate_mrps = 0.5           # offered load, million requests/s; default 0.5; (0, 100]
//! arrivals = "exponential"  # "exponential" (default: Poisson) or "fixed" (even gaps)
//! requests = 2000           # default 2,000; 1..=50,000
//! get_fraction = 0.1        # default 0.1; 0..=1
//! keys = 1000               # keys drawn uniformly from 0..keys; default 1,000; 1..=4096
//! start_us = 50.0           # first request, us; default 50 (after the first election)
//! retry_us = 30.0           # client timeout before a retry, us; default 30; > 0
//! backoff_us = 2.0          # wait after a redirect naming no leader, us; default 2; >= 0
//! drain_us = 300.0          # wait for answers after the last request, us; default 300
//! [[faults]]
//! kind = "crash"            # the node stops for good at at_us
//! node = "leader"           # "leader" (whoever leads at that time) or a replica index
//! at_us = 1000.0
//! [[faults]]
//! kind = "partition"        # the node is cut off from the others and the host
//! node = "leader"
//! from_us = 1000.0
//! to_us = 1100.0
//! ```

use super::{Fault, RaftSpec, Target};
use nanopu_cluster::config::bounds::{Bounds, OneOf};
use nanopu_cluster::config::check::{time_ns, FRACTION, TIME_NS};
use nanopu_cluster::config::cluster::APP_NICS;
use nanopu_cluster::config::NicKind;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The default program path, relative to a configuration in `experiments/raft/`.
pub const DEFAULT_ELF: &str = "../../sw/build/apps/raft.elf";
/// What a SET carries: one-word keys and values (ours), or the prototype's 16-byte keys and
/// 64-byte values (l-nic/chipyard `software/raft/raft_server_riscv/main.cc`, kAppKeySize
/// and kAppValueSize), served by `raft_kv.elf`.
pub const PAYLOADS: OneOf = OneOf(&["word", "prototype"]);
/// The words a SET carries beyond one key word and one value word with payload
/// "prototype": one more key word, seven more value words (`RAFT_EXTRA` in raft_kv.c).
pub const PROTOTYPE_EXTRA_WORDS: u64 = 8;
/// The arrival processes of the client.
pub const ARRIVALS: OneOf = OneOf(&["exponential", "fixed"]);
/// Entries per AppendEntries that fit a 2,048-byte message (the NIC's default largest
/// message): 8 header words + 6 words per entry.
pub const MAX_BATCH: u32 = 41;

/// The most entries per AppendEntries on nodes with this NIC: [`MAX_BATCH`] on the
/// nanoPU, on IceNIC what one frame carries (its largest, 1,516 bytes, less appnet's 48
/// bytes of headers and padding: 183 words, sw/include/appnet_ice.h), 29; entries with
/// `extra` more words each fit fewer (17 on the nanoPU with the prototype's payload).
pub fn max_batch(nic: NicKind, extra: u64) -> u32 {
    let frame = nanopu_nic::icenic::IceParams::default().max_frame_bytes as u64;
    let words = match nic {
        NicKind::Nanopu => 2048 / 8,
        NicKind::IceNic | NicKind::Zeronic | NicKind::Rdma => {
            (frame - crate::apps::hostnet::WORDS as u64) / 8
        }
    };
    ((words - 8) / (6 + extra)) as u32
}
/// Most requests in a run (the replicas' log holds 65,536 entries, no snapshots).
pub const MAX_REQUESTS: usize = 50_000;

/// Replicas: a majority survives one failure from 3; raft.c's arrays hold 7.
pub const REPLICAS: Bounds<u32> = Bounds::closed(3, super::state::MAX_NODES as u32);
/// Election timeouts and the heartbeat, us: 1 ns (the replicas count whole ns) to 1 s.
pub const TIMER_US: Bounds<f64> = Bounds::closed(0.001, 1e6);
/// Entries per AppendEntries on the nanoPU (IceNIC: fewer, `max_batch`).
pub const BATCH: Bounds<u32> = Bounds::closed(1, MAX_BATCH);
/// The client's offered load, Mrps.
pub const RATE_MRPS: Bounds<f64> = Bounds::closed(1e-6, 100.0);
/// Requests in a run.
pub const REQUESTS: Bounds<usize> = Bounds::closed(1, MAX_REQUESTS);
/// Keys of the store.
pub const KEYS: Bounds<u64> = Bounds::closed(1, super::state::NKEYS as u64);
/// The client's and the faults' times, us: up to 1 s.
pub const RUN_US: Bounds<f64> = Bounds::closed(0.0, 1e6);
/// The client's retry timeout, us.
pub const RETRY_US: Bounds<f64> = Bounds::closed(1e-3, 1e6);
/// The kinds of fault.
pub const FAULT_KINDS: OneOf = OneOf(&["crash", "partition"]);
/// The name a fault's node may be instead of an index.
pub const LEADER: OneOf = OneOf(&["leader"]);

/// A Raft run's file (`nanopu raft CONFIG.toml`).
#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct RaftFile {
    /// The Raft program, relative to the file. Default "../../sw/build/apps/raft.elf"
    /// ("../../sw/build/apps/raft_ice.elf" with nic = "icenic").
    pub elf: Option<String>,
    /// The replicas' NIC: "nanopu" (default) or "icenic", the traditional baseline's DMA NIC
    /// (docs/models/icenic.md), running raft.c's IceNIC build: every message one UDP frame
    /// (docs/apps/raft.md "On IceNIC").
    #[schemars(transform = APP_NICS.schema())]
    pub nic: Option<String>,
    /// Seeds the client's arrivals and keys and the replicas' election timeouts. Default 1.
    pub seed: Option<u64>,
    /// The replicas.
    #[serde(default)]
    pub raft: ReplicasFile,
    /// The network between the replicas and the client.
    #[serde(default)]
    pub network: NetworkFile,
    /// The open-loop client on the test host.
    #[serde(default)]
    pub client: ClientFile,
    /// Faults during the run.
    #[serde(default)]
    pub faults: Vec<FaultEntry>,
}

/// `[raft]`: the replicas and their timing (docs/apps/raft.md "Parameters and why").
#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct ReplicasFile {
    /// Replicas, one per node (nodes 0..replicas-1 of a one-switch cluster). Default 3; 3..=7.
    #[schemars(transform = REPLICAS.schema())]
    pub replicas: Option<u32>,
    /// Shortest election timeout, us. Default 10; 0.001 (1 ns)..=1e6.
    #[schemars(transform = TIMER_US.schema())]
    pub election_min_us: Option<f64>,
    /// Longest election timeout, us (each drawn uniformly in [min, max]). Default 20;
    /// election_min_us..=1e6.
    #[schemars(transform = TIMER_US.schema())]
    pub election_max_us: Option<f64>,
    /// Leader's heartbeat period, us. Default 2; at least 0.001 (1 ns) and below
    /// election_min_us.
    #[schemars(transform = TIMER_US.schema())]
    pub heartbeat_us: Option<f64>,
    /// Most log entries per AppendEntries. Default 32; 1..=41 (a 2,048-byte message); on
    /// IceNIC 1..=29 (one frame).
    #[schemars(transform = BATCH.schema())]
    pub batch: Option<u32>,
    /// What a SET carries: "word" (default: one-word keys and values) or "prototype" (the
    /// nanoPU prototype's 16-byte keys and 64-byte values, carried through the log and the
    /// store by `raft_kv.elf`, the default program then; nanoPU nodes only).
    #[schemars(transform = PAYLOADS.schema())]
    pub payload: Option<String>,
}

/// `[network]`: the one switch and its links (docs/apps/raft.md "The prototype's setup").
#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct NetworkFile {
    /// Every link's propagation delay, ns. Default 43.75 (140 cycles at 3.2 GHz, the
    /// simulator's default link); 0..=3.6e12 (1 h).
    #[schemars(transform = TIME_NS.schema())]
    pub link_ns: Option<f64>,
    /// The switch's latency from a packet's arrival to when it may leave, ns. Default 0;
    /// 0..=3.6e12 (1 h).
    #[schemars(transform = TIME_NS.schema())]
    pub switch_ns: Option<f64>,
}

/// `[client]`: the open-loop load of the test host.
#[derive(Deserialize, JsonSchema, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct ClientFile {
    /// Offered load, million requests per second. Default 0.5; 1e-6..=100.
    #[schemars(transform = RATE_MRPS.schema())]
    pub rate_mrps: Option<f64>,
    /// Gaps between requests: "exponential" (default: Poisson arrivals) or "fixed" (all
    /// equal, as the prototype's load generator's FIXED request distribution).
    #[schemars(transform = ARRIVALS.schema())]
    pub arrivals: Option<String>,
    /// Requests in the run. Default 2,000; 1..=50,000.
    #[schemars(transform = REQUESTS.schema())]
    pub requests: Option<usize>,
    /// Fraction of GETs (the rest are SETs). Default 0.1; 0..=1.
    #[schemars(transform = FRACTION.schema())]
    pub get_fraction: Option<f64>,
    /// Keys are drawn uniformly from 0..keys. Default 1,000; 1..=4,096.
    #[schemars(transform = KEYS.schema())]
    pub keys: Option<u64>,
    /// Time of the first request, us. Default 50; 0..=1e6.
    #[schemars(transform = RUN_US.schema())]
    pub start_us: Option<f64>,
    /// Time before an unanswered request is sent again, us (doubled at each retry).
    /// Default 30; 0.001..=1e6.
    #[schemars(transform = RETRY_US.schema())]
    pub retry_us: Option<f64>,
    /// Wait after a redirect that names no leader, us. Default 2; 0..=1e6.
    #[schemars(transform = RUN_US.schema())]
    pub backoff_us: Option<f64>,
    /// How long after the last request's time answers are awaited, us. Default 300; 0..=1e6.
    #[schemars(transform = RUN_US.schema())]
    pub drain_us: Option<f64>,
}

/// A replica: an index or "leader".
#[derive(Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum NodeRef {
    #[schemars(transform = Bounds::closed(0u32, REPLICAS.max - 1))]
    Index(u32),
    #[schemars(transform = LEADER.schema())]
    Name(String),
}

/// `[[faults]]`: a crash or a partition of one replica.
#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct FaultEntry {
    /// "crash" (the replica stops for good at at_us) or "partition" (cut off from every
    /// other node and the host from from_us to to_us).
    #[schemars(transform = FAULT_KINDS.schema())]
    pub kind: String,
    /// A replica index, or "leader": whichever replica leads when the fault starts.
    pub node: NodeRef,
    /// Crash: when, us; 0..=1e6.
    #[schemars(transform = RUN_US.schema())]
    pub at_us: Option<f64>,
    /// Partition: when it starts, us; 0..=1e6.
    #[schemars(transform = RUN_US.schema())]
    pub from_us: Option<f64>,
    /// Partition: when it heals, us; from_us..=1e6.
    #[schemars(transform = RUN_US.schema())]
    pub to_us: Option<f64>,
}

fn ns(us: f64) -> u64 {
    (us * 1e3).round() as u64
}

impl FaultEntry {
    fn fault(&self, i: usize) -> Result<Fault, String> {
        let key = |k: &str| format!("faults[{i}].{k}");
        let node = match &self.node {
            NodeRef::Index(n) => Target::Node(*n),
            NodeRef::Name(s) if LEADER.check(s, "").is_ok() => Target::Leader,
            NodeRef::Name(s) => {
                return Err(format!("{}: \"{s}\" is neither \"leader\" nor a replica index", key("node")))
            }
        };
        let need = |v: Option<f64>, k: &str| v.ok_or(format!("{}: missing", key(k)));
        match FAULT_KINDS.check(&self.kind, &key("kind"))? {
            "crash" => Ok(Fault::Crash { node, at_us: need(self.at_us, "at_us")? }),
            _ => Ok(Fault::Partition {
                node,
                from_us: need(self.from_us, "from_us")?,
                to_us: need(self.to_us, "to_us")?,
            }),
        }
    }
}

impl RaftFile {
    /// Read and check a configuration; the program's path is relative to its directory.
    pub fn load(path: &Path) -> Result<RaftSpec, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let f: RaftFile = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        f.to_spec(path.parent().unwrap_or(Path::new(".")), &path.display().to_string())
    }

    /// The spec with its faults, checked (a check's error after `name`, the file's); the
    /// ELF relative to `base`.
    pub fn to_spec(&self, base: &Path, name: &str) -> Result<RaftSpec, String> {
        let nic: NicKind = match &self.nic {
            Some(n) => APP_NICS.check(n, &format!("{name}: nic"))?.parse().expect("listed"),
            None => NicKind::Nanopu,
        };
        self.check_timers().map_err(|e| format!("{name}: {e}"))?;
        let (extra_words, fixed_arrivals) = self.choices().map_err(|e| format!("{name}: {e}"))?;
        let program = if extra_words > 0 { "raft_kv" } else { "raft" };
        let default_elf = DEFAULT_ELF.replace("raft.elf", &crate::apps::elf_name(program, nic));
        let elf = base.join(self.elf.as_deref().unwrap_or(&default_elf));
        let spec = RaftSpec {
            nic,
            extra_words,
            fixed_arrivals,
            ..self.spec(&elf, self.raft.replicas.unwrap_or(3), self.seed.unwrap_or(1))
        };
        let faults: Result<Vec<Fault>, String> =
            self.faults.iter().enumerate().map(|(i, x)| x.fault(i)).collect();
        let spec = RaftSpec { faults: faults?, ..spec };
        spec.validate().map_err(|e| format!("{name}: {e}"))?;
        Ok(spec)
    }

    /// The payload's extra words and whether arrivals are evenly spaced, as written; the
    /// network's times checked.
    fn choices(&self) -> Result<(u64, bool), String> {
        let payload = self.raft.payload.as_deref().map(|p| PAYLOADS.check(p, "raft.payload")).transpose()?;
        let arrivals =
            self.client.arrivals.as_deref().map(|a| ARRIVALS.check(a, "client.arrivals")).transpose()?;
        let n = &self.network;
        n.link_ns.map(|v| time_ns(v, "network.link_ns")).transpose()?;
        n.switch_ns.map(|v| time_ns(v, "network.switch_ns")).transpose()?;
        let extra = if payload == Some("prototype") { PROTOTYPE_EXTRA_WORDS } else { 0 };
        Ok((extra, arrivals == Some("fixed")))
    }

    /// The timers as written, in us: the spec holds them in whole ns, where 0.0004 us would
    /// round to 0 and 0.0009 us to 1 ns.
    fn check_timers(&self) -> Result<(), String> {
        let r = &self.raft;
        let timers = [
            ("election_min_us", r.election_min_us),
            ("election_max_us", r.election_max_us),
            ("heartbeat_us", r.heartbeat_us),
        ];
        timers.iter().try_for_each(|&(k, v)| {
            v.map_or(Ok(()), |v| TIMER_US.check(v, &format!("raft.{k}"), " us").map(|_| ()))
        })
    }

    /// The spec this file describes (faults apart), defaults filled in.
    pub fn spec(&self, elf: &Path, replicas: u32, seed: u64) -> RaftSpec {
        let (r, c) = (&self.raft, &self.client);
        RaftSpec {
            elf: PathBuf::from(elf),
            nic: NicKind::Nanopu,
            replicas,
            seed,
            election_min_ns: ns(r.election_min_us.unwrap_or(10.0)),
            election_max_ns: ns(r.election_max_us.unwrap_or(20.0)),
            heartbeat_ns: ns(r.heartbeat_us.unwrap_or(2.0)),
            batch: r.batch.unwrap_or(32),
            extra_words: 0,
            rate_mrps: c.rate_mrps.unwrap_or(0.5),
            fixed_arrivals: false,
            link_ns: self.network.link_ns.unwrap_or(43.75),
            switch_ns: self.network.switch_ns.unwrap_or(0.0),
            requests: c.requests.unwrap_or(2000),
            get_fraction: c.get_fraction.unwrap_or(0.1),
            keys: c.keys.unwrap_or(1000),
            start_us: c.start_us.unwrap_or(50.0),
            retry_us: c.retry_us.unwrap_or(30.0),
            backoff_us: c.backoff_us.unwrap_or(2.0),
            drain_us: c.drain_us.unwrap_or(300.0),
            faults: Vec::new(),
        }
    }
}

fn within<T: PartialOrd + std::fmt::Display>(v: T, lo: T, hi: T, key: &str) -> Result<(), String> {
    match v >= lo && v <= hi {
        true => Ok(()),
        false => Err(format!("{key}: {v} is outside {lo}..={hi}")),
    }
}

/// `v` within `b`, in the words of this file's other checks.
fn within_bounds<T: nanopu_cluster::config::bounds::Num + std::fmt::Display>(
    v: T,
    b: Bounds<T>,
    key: &str,
) -> Result<(), String> {
    within(v, b.min, b.max, key)
}

/// A timer's bounds in the spec's whole ns.
fn timer_ns() -> (u64, u64) {
    ((TIMER_US.min * 1e3).round() as u64, (TIMER_US.max * 1e3).round() as u64)
}

impl RaftSpec {
    /// Check every field; the error names its key.
    pub fn validate(&self) -> Result<(), String> {
        within_bounds(self.replicas, REPLICAS, "raft.replicas")?;
        let (lo, hi) = timer_ns();
        within(self.election_min_ns, lo, hi, "raft.election_min_us (in ns)")?;
        within(self.election_max_ns, self.election_min_ns, hi, "raft.election_max_us (in ns)")?;
        within(self.heartbeat_ns, lo, self.election_min_ns - 1, "raft.heartbeat_us (in ns)")?;
        let why = if self.nic == NicKind::IceNic { " (one IceNIC frame's entries)" } else { "" };
        if self.extra_words > 0 && self.nic == NicKind::IceNic {
            return Err("raft.payload: \"prototype\" runs raft_kv.elf, built for nanoPU nodes only".into());
        }
        let why = if self.extra_words > 0 { " (entries of the prototype's payload)" } else { why };
        let most = max_batch(self.nic, self.extra_words).min(BATCH.max);
        within(self.batch, BATCH.min, most, &format!("raft.batch{why}"))?;
        within_bounds(self.link_ns, TIME_NS, "network.link_ns")?;
        within_bounds(self.switch_ns, TIME_NS, "network.switch_ns")?;
        within_bounds(self.rate_mrps, RATE_MRPS, "client.rate_mrps")?;
        within_bounds(self.requests, REQUESTS, "client.requests")?;
        within_bounds(self.get_fraction, FRACTION, "client.get_fraction")?;
        within_bounds(self.keys, KEYS, "client.keys")?;
        within_bounds(self.start_us, RUN_US, "client.start_us")?;
        within_bounds(self.retry_us, RETRY_US, "client.retry_us")?;
        within_bounds(self.backoff_us, RUN_US, "client.backoff_us")?;
        within_bounds(self.drain_us, RUN_US, "client.drain_us")?;
        self.faults.iter().enumerate().try_for_each(|(i, f)| self.check_fault(i, f))
    }

    fn check_fault(&self, i: usize, f: &Fault) -> Result<(), String> {
        if let Target::Node(n) = f.target() {
            within(n, 0, self.replicas - 1, &format!("faults[{i}].node"))?;
        }
        match *f {
            Fault::Crash { at_us, .. } => within_bounds(at_us, RUN_US, &format!("faults[{i}].at_us")),
            Fault::Partition { from_us, to_us, .. } => {
                within_bounds(from_us, RUN_US, &format!("faults[{i}].from_us"))?;
                within(to_us, from_us, RUN_US.max, &format!("faults[{i}].to_us"))
            }
        }
    }
}
