//! Load-generator configuration files (TOML) for `nanopu load`: the server node and the
//! load to sweep. Unknown keys are errors; every value is checked against its range when the
//! file is read (and again after command-line overrides), and an error names the key, the
//! value and the limit. Every key's meaning, unit, default and range is the
//! doc comment of its field below: docs/config.md is generated from them (`schema`).
//!
//! ```toml
//! [server]
//! elf = "../../sw/build/apps/service.elf"
//! cores = 4
//! [load]
//! rates_mrps = [1.0, 2.0, 4.0]
//! requests = 20000
//! [[load.class]]
//! name = "short"
//! fraction = 1.0
//! service_ns = 500.0
//! contexts = [0]
//! ```
//!
//! Instead of `[[load.class]]`, `[load.kv]` runs the key-value workload against
//! `sw/apps/mica.c` (docs/apps/mica.md), `[load.rdma]` the one-sided RDMA workload against
//! `sw/apps/rdma.c` (docs/apps/rdma.md) and `[load.setalg]` the set algebra (document
//! search) workload against `sw/apps/setalg.c` (docs/apps/setalg.md); the server's arguments
//! then come from them.
//!
//! Times are at most one hour each so that sums of them stay within simulated time (a `u64`
//! of femtoseconds, about 5.1 h; `config::check`).

use crate::config::check::{self, fraction, time_ns, time_us, within, within_f64};
use crate::config::NicKind;
use crate::kv::{Keys, KvSpec, Steering};
use crate::loadgen::{Arrivals, Class, LoadSpec, Service};
use crate::rdma::{RdmaSpec, KINDS};
use crate::setalg::{Corpus, Popularity, SetalgSpec, CLASSES};
use crate::NodeConfig;
use nanopu_nic::params::CoreSelection;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct LoadFile {
    /// The server node (required).
    pub server: ServerFile,
    /// The load to offer it (required).
    pub load: LoadSection,
}

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

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct LoadSection {
    /// Seed of the arrivals, classes, keys and operations. Default 1.
    #[serde(default = "one")]
    pub seed: u64,
    /// Offered loads, million requests/s, one run each (required). Each more than 0 and at most
    /// 1e9; requests / rate (the span of the sends) at most one hour.
    pub rates_mrps: Vec<f64>,
    /// Requests per rate, warm-up included (required). More than `warmup`; their estimated
    /// memory (512 bytes each) within what the machine has.
    pub requests: usize,
    /// First requests of each run not measured. Default 0.
    #[serde(default)]
    pub warmup: usize,
    /// Gaps between sends: "exponential" (default: Poisson arrivals) or "fixed".
    #[serde(default = "exponential")]
    pub arrivals: String,
    /// How long a run goes on after the last send, us. Default 1,000; 0..=3.6e9 (1 h).
    #[serde(default = "thousand")]
    pub drain_us: f64,
    /// The sends' clock starts here, us: servers that announce themselves first get this long.
    /// Default 0; 0..=3.6e9.
    #[serde(default)]
    pub start_us: f64,
    /// Request classes of the synthetic service (`sw/apps/service.c`): one entry each. Not with
    /// `[load.kv]`, `[load.rdma]` or `[load.setalg]`.
    #[serde(default)]
    pub class: Vec<ClassFile>,
    /// The key-value workload against `sw/apps/mica.c` (docs/apps/mica.md): classes "get" and
    /// "set", every reply checked.
    pub kv: Option<KvFile>,
    /// The one-sided RDMA workload against `sw/apps/rdma.c` (docs/apps/rdma.md): one class per
    /// operation, every reply checked.
    pub rdma: Option<RdmaFile>,
    /// The set algebra (document search) workload against `sw/apps/setalg.c`
    /// (docs/apps/setalg.md): one class per query size, "1-word" to "4-word", every answer
    /// checked against the generator's own index of the same corpus.
    pub setalg: Option<SetalgFile>,
}

/// `[load.setalg]`: the set algebra workload (`setalg.rs`). The corpus defaults are our
/// choice, for a short start-up (docs/apps/setalg.md), not the paper's.
#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SetalgFile {
    /// Documents in the corpus. Default 2,048; 1..=65,536, and documents x
    /// `words_per_document` at most 262,144.
    #[serde(default = "setalg_documents")]
    pub documents: u64,
    /// Words of the vocabulary, drawn Zipf (exponent 1) into the documents. Default 4,096;
    /// 4..=16,384.
    #[serde(default = "setalg_vocabulary")]
    pub vocabulary: u64,
    /// Words drawn per document (a word drawn twice counts once). Default 16; 1..=64.
    #[serde(default = "setalg_words")]
    pub words_per_document: u64,
    /// Shares of 1-, 2-, 3- and 4-word queries. Default a quarter each; they add up to 1.
    #[serde(default = "quarters")]
    pub query_words: [f64; 4],
    /// How a query picks its distinct words: "zipf" (default: by corpus rank, the most
    /// frequent word the most queried) or "uniform".
    #[serde(default = "zipf")]
    pub popularity: String,
    /// Zipf skew of the query words. Default 0.99; within (0, 1).
    #[serde(default = "mica_theta")]
    pub theta: f64,
}

fn setalg_documents() -> u64 {
    2048
}
fn setalg_vocabulary() -> u64 {
    4096
}
fn setalg_words() -> u64 {
    16
}
fn quarters() -> [f64; 4] {
    [0.25; 4]
}

/// `[load.rdma]`: the one-sided RDMA workload (`rdma.rs`).
#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RdmaFile {
    /// Share of READs. Default 0.2; the five shares add up to 1.
    #[serde(default = "fifth")]
    pub read: f64,
    /// Share of WRITEs. Default 0.2.
    #[serde(default = "fifth")]
    pub write: f64,
    /// Share of compare-and-swaps. Default 0.2.
    #[serde(default = "fifth")]
    pub cas: f64,
    /// Share of fetch-and-adds. Default 0.2.
    #[serde(default = "fifth")]
    pub faa: f64,
    /// Share of indirect READs. Default 0.2.
    #[serde(default = "fifth")]
    pub indirect_read: f64,
    /// Words a READ or indirect READ asks for, smallest and largest (uniform between). Default
    /// [8, 8] (64 bytes); within 1..=64.
    #[serde(default = "cache_line")]
    pub read_words: [u64; 2],
    /// Words a WRITE carries, smallest and largest. Default [8, 8]; within 1..=64.
    #[serde(default = "cache_line")]
    pub write_words: [u64; 2],
}

fn fifth() -> f64 {
    0.2
}
/// A 64-byte line: our choice of default transfer, not the paper's.
fn cache_line() -> [u64; 2] {
    [8, 8]
}

/// `[load.kv]`: the key-value workload (`kv.rs`).
#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct KvFile {
    /// Items preloaded per core. Default 10,000 (the nanoPU paper's MICA setup); 1..=16,384.
    #[serde(default = "ten_thousand")]
    pub items_per_core: u64,
    /// Share of GETs. Default 0.95; [0, 1].
    #[serde(default = "mostly_gets")]
    pub get_fraction: f64,
    /// Key popularity: "zipf" (default) or "uniform".
    #[serde(default = "zipf")]
    pub keys: String,
    /// Zipf skew. Default 0.99 (MICA's evaluation); (0, 1).
    #[serde(default = "mica_theta")]
    pub theta: f64,
    /// Smallest and largest value, bytes (uniform between). Default [512, 512]; multiples of 8
    /// within 8..=512.
    #[serde(default = "largest_value")]
    pub value_bytes: [u64; 2],
    /// "jbsq" (default: context 0 on every core, the NIC picks the core) or "static" (context =
    /// the core owning the key's partition).
    #[serde(default = "jbsq")]
    pub steering: String,
}

fn ten_thousand() -> u64 {
    10_000
}
fn mostly_gets() -> f64 {
    0.95
}
fn zipf() -> String {
    "zipf".into()
}
fn mica_theta() -> f64 {
    0.99
}
fn largest_value() -> [u64; 2] {
    [512, 512]
}

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ClassFile {
    /// The class's name in the report (required).
    pub name: String,
    /// Share of the requests (required); [0, 1], the classes' shares add up to 1.
    pub fraction: f64,
    /// Service time distribution: "fixed" (default) or "exponential" (mean `service_ns`,
    /// clipped at `max_ns`).
    #[serde(default = "fixed")]
    pub service: String,
    /// Service time, or its mean, ns (required). 0..=3.6e12 (1 h); more than 0 for
    /// "exponential".
    pub service_ns: f64,
    /// Longest service time, ns (absent: no clip). At least `service_ns`, at most 3.6e12.
    pub max_ns: Option<f64>,
    /// Server contexts its requests go to, one chosen uniformly per request (required).
    pub contexts: Vec<u16>,
}

/// The name of a checked workload's server program on this NIC (`mica` or `mica_ice`).
fn program(name: &str, nic: NicKind) -> String {
    crate::apps::elf_name(name, nic).trim_end_matches(".elf").into()
}

fn four() -> usize {
    4
}
fn nanopu_nic() -> String {
    "nanopu".into()
}
fn one() -> u64 {
    1
}
fn thousand() -> f64 {
    1000.0
}
fn jbsq() -> String {
    "jbsq".into()
}
fn exponential() -> String {
    "exponential".into()
}
fn fixed() -> String {
    "fixed".into()
}

impl LoadFile {
    /// Parse a config and check every value; the error names the key.
    pub fn parse(text: &str) -> Result<LoadFile, String> {
        let f: LoadFile = toml::from_str(text).map_err(|e| e.to_string())?;
        f.validate()?;
        Ok(f)
    }

    /// Read a config; the ELF path in it is relative to the directory it is in.
    pub fn load(path: &Path) -> Result<(LoadFile, PathBuf), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let cfg = LoadFile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let base = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Ok((cfg, base))
    }

    /// Check every value (`node_config` and `specs` do it again: a caller may have
    /// changed the rates or the number of requests since).
    pub fn validate(&self) -> Result<(), String> {
        self.server.check()?;
        self.kv_spec()?;
        self.rdma_spec()?;
        self.setalg_spec()?;
        self.nic_check()?;
        self.load.check(crate::cluster::available_memory())
    }

    /// What an IceNIC server cannot take yet, refused by name (`loadgen::ice_supported`).
    fn nic_check(&self) -> Result<(), String> {
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
        cfg.program_name = "service".into();
        cfg.args = s.args.clone();
        if let Some(kv) = self.kv_spec()? {
            (cfg.program_name, cfg.args) = (program("mica", cfg.nic_kind), kv.server_args());
        }
        if let Some(r) = self.rdma_spec()? {
            (cfg.program_name, cfg.args) = (program("rdma", cfg.nic_kind), r.server_args());
        }
        if let Some(q) = self.setalg_spec()? {
            (cfg.program_name, cfg.args) = (program("setalg", cfg.nic_kind), q.corpus.server_args());
        }
        // Each run ends at its deadline (last send + drain, at most two hours: both keys
        // are at most one); the cycle limit only has to lie beyond it.
        cfg.max_cycles = check::max_cycles(hz);
        cfg.validate().map_err(|e| format!("server: {e}"))?;
        Ok(cfg)
    }

    /// One load spec per offered rate.
    pub fn specs(&self) -> Result<Vec<LoadSpec>, String> {
        let l = &self.load;
        l.check(crate::cluster::available_memory())?;
        let arrivals = match l.arrivals.as_str() {
            "fixed" => Arrivals::Fixed,
            _ => Arrivals::Exponential,
        };
        let kv = self.kv_spec()?;
        let rdma = self.rdma_spec()?;
        let setalg = self.setalg_spec()?;
        let classes = match (&kv, &rdma, &setalg) {
            (Some(kv), _, _) => kv_classes(kv),
            (None, Some(r), _) => rdma_classes(r),
            (None, None, Some(q)) => setalg_classes(q),
            _ => l.class.iter().map(ClassFile::to_class).collect::<Result<Vec<_>, _>>()?,
        };
        let drain = time_us(l.drain_us, "load.drain_us")?;
        let start = time_us(l.start_us, "load.start_us")?;
        let spec = |rate_mrps| LoadSpec {
            seed: l.seed,
            rate_mrps,
            requests: l.requests,
            warmup: l.warmup,
            arrivals,
            classes: classes.clone(),
            drain,
            start,
            kv: kv.clone(),
            rdma: rdma.clone(),
            setalg: setalg.clone(),
        };
        let specs: Vec<LoadSpec> = l.rates_mrps.iter().map(|&r| spec(r)).collect();
        specs.iter().try_for_each(LoadSpec::validate)?;
        Ok(specs)
    }
}

impl LoadFile {
    /// The key-value workload, if `[load.kv]` is there.
    fn kv_spec(&self) -> Result<Option<KvSpec>, String> {
        let Some(k) = &self.load.kv else { return Ok(None) };
        if !self.load.class.is_empty() {
            return Err("load.class: not with [load.kv], whose classes are \"get\" and \"set\"".into());
        }
        if !self.server.args.is_empty() {
            return Err("server.args: not with [load.kv], which gives the store's arguments".into());
        }
        let keys = match k.keys.as_str() {
            "uniform" => Keys::Uniform,
            "zipf" => Keys::Zipf { theta: k.theta },
            x => return Err(format!("load.kv.keys: \"{x}\" is not \"uniform\" or \"zipf\"")),
        };
        let steering = match k.steering.as_str() {
            "jbsq" => Steering::Jbsq,
            "static" => Steering::Static,
            x => return Err(format!("load.kv.steering: \"{x}\" is not \"jbsq\" or \"static\"")),
        };
        let spec = KvSpec {
            items_per_core: k.items_per_core,
            cores: self.server.cores as u64,
            seed: self.load.seed,
            get_fraction: k.get_fraction,
            keys,
            value_min: k.value_bytes[0],
            value_max: k.value_bytes[1],
            steering,
        };
        spec.validate()?;
        Ok(Some(spec))
    }
}

impl LoadFile {
    /// The RDMA workload, if `[load.rdma]` is there.
    fn rdma_spec(&self) -> Result<Option<RdmaSpec>, String> {
        let Some(r) = &self.load.rdma else { return Ok(None) };
        let alone = self.load.class.is_empty() && self.load.kv.is_none();
        if !alone {
            return Err(
                "load.rdma: not with [[load.class]] or [load.kv]; its classes are its operations".into()
            );
        }
        if !self.server.args.is_empty() {
            return Err("server.args: not with [load.rdma], which gives the server's argument".into());
        }
        let spec = RdmaSpec {
            seed: self.load.seed,
            mix: [r.read, r.write, r.cas, r.faa, r.indirect_read],
            read_words: r.read_words,
            write_words: r.write_words,
        };
        spec.validate()?;
        Ok(Some(spec))
    }
}

impl LoadFile {
    /// The set algebra workload, if `[load.setalg]` is there.
    fn setalg_spec(&self) -> Result<Option<SetalgSpec>, String> {
        let Some(q) = &self.load.setalg else { return Ok(None) };
        let alone = self.load.class.is_empty() && self.load.kv.is_none() && self.load.rdma.is_none();
        if !alone {
            return Err("load.setalg: not with [[load.class]], [load.kv] or [load.rdma]; its classes are \
                        the query sizes"
                .into());
        }
        if !self.server.args.is_empty() {
            return Err("server.args: not with [load.setalg], which gives the server's arguments".into());
        }
        let popularity = match q.popularity.as_str() {
            "uniform" => Popularity::Uniform,
            "zipf" => Popularity::Zipf { theta: q.theta },
            x => return Err(format!("load.setalg.popularity: \"{x}\" is not \"uniform\" or \"zipf\"")),
        };
        let corpus = Corpus {
            seed: self.load.seed,
            documents: q.documents,
            vocabulary: q.vocabulary,
            words_per_document: q.words_per_document,
        };
        let spec = SetalgSpec { corpus, query_words: q.query_words, popularity };
        spec.validate()?;
        Ok(Some(spec))
    }
}

/// The classes of a set algebra run: one per query size, all to context 0 (every core).
fn setalg_classes(q: &SetalgSpec) -> Vec<Class> {
    let class = |(name, &fraction): (&&str, &f64)| Class {
        name: name.to_string(),
        fraction,
        service: Service::Fixed { ns: 0.0 },
        contexts: vec![0],
    };
    CLASSES.iter().zip(&q.query_words).map(class).collect()
}

/// The classes of an RDMA run: one per operation, all to context 0 (every core).
fn rdma_classes(r: &RdmaSpec) -> Vec<Class> {
    let class = |(k, &fraction): (&crate::rdma::RdmaKind, &f64)| Class {
        name: k.name().into(),
        fraction,
        service: Service::Fixed { ns: 0.0 },
        contexts: vec![0],
    };
    KINDS.iter().zip(&r.mix).map(class).collect()
}

/// The classes of a key-value run: GETs and SETs, to the contexts steering may pick.
fn kv_classes(kv: &KvSpec) -> Vec<Class> {
    let contexts: Vec<u16> = match kv.steering {
        Steering::Jbsq => vec![0],
        Steering::Static => (0..kv.cores as u16).collect(),
    };
    let class = |name: &str, fraction| Class {
        name: name.into(),
        fraction,
        service: Service::Fixed { ns: 0.0 },
        contexts: contexts.clone(),
    };
    vec![class("get", kv.get_fraction), class("set", 1.0 - kv.get_fraction)]
}

impl ServerFile {
    /// The server's NIC.
    fn nic_kind(&self) -> Result<NicKind, String> {
        self.nic.parse().map_err(|e| format!("server.nic: {e}"))
    }

    fn check(&self) -> Result<(), String> {
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

/// Most requests per second the generator can offer, millions: one per femtosecond (send
/// times are whole, strictly increasing femtoseconds, loadgen.rs).
const MAX_RATE_MRPS: f64 = 1e9;
/// Bytes one request takes over a run, an *estimate*: the request record, its message in
/// the host's script and in the event queue, the reply and its record (measured: about
/// 0.37 KB per request between 20,000 and 200,000 requests of 2-word messages; rounded up).
const BYTES_PER_REQUEST: u64 = 512;

impl LoadSection {
    /// Check every value; `available` bytes of memory bound the number of requests.
    fn check(&self, available: Option<u64>) -> Result<(), String> {
        if self.rates_mrps.is_empty() {
            return Err("load.rates_mrps: at least one rate is needed".into());
        }
        self.check_requests(available)?;
        self.rates_mrps.iter().try_for_each(|&r| self.check_rate(r))?;
        match self.arrivals.as_str() {
            "fixed" | "exponential" => {}
            a => return Err(format!("load.arrivals: \"{a}\" is not \"fixed\" or \"exponential\"")),
        }
        time_us(self.drain_us, "load.drain_us")?;
        time_us(self.start_us, "load.start_us")?;
        self.class.iter().try_for_each(ClassFile::check)
    }

    fn check_requests(&self, available: Option<u64>) -> Result<(), String> {
        if self.requests <= self.warmup {
            return Err(format!(
                "load.requests: {} must be more than load.warmup ({})",
                self.requests, self.warmup
            ));
        }
        let need = (self.requests as u64).saturating_mul(BYTES_PER_REQUEST);
        match available {
            Some(have) if need > have => Err(format!(
                "load.requests: {} requests need about {:.1} GB (an estimate, {BYTES_PER_REQUEST} \
                 bytes each), more than the {:.1} GB of memory available",
                self.requests,
                need as f64 / 1e9,
                have as f64 / 1e9
            )),
            _ => Ok(()),
        }
    }

    /// A rate: positive, at most [`MAX_RATE_MRPS`], and its sends span at most one hour.
    fn check_rate(&self, r: f64) -> Result<(), String> {
        within_f64(r, f64::MIN_POSITIVE, MAX_RATE_MRPS, "load.rates_mrps", " Mrps")?;
        let span_us = self.requests as f64 / r;
        if span_us > check::MAX_KEY_US {
            return Err(format!(
                "load.rates_mrps: {} requests at {r} Mrps take about {:.3e} s to send, more \
                 than the one-hour limit of simulated time",
                self.requests,
                span_us / 1e6
            ));
        }
        Ok(())
    }
}

impl ClassFile {
    fn check(&self) -> Result<(), String> {
        let key = |k: &str| format!("load.class \"{}\": {k}", self.name);
        fraction(self.fraction, &key("fraction"))?;
        time_ns(self.service_ns, &key("service_ns"))?;
        if let Some(m) = self.max_ns {
            time_ns(m, &key("max_ns"))?;
        }
        Ok(())
    }

    fn to_class(&self) -> Result<Class, String> {
        let service = match self.service.as_str() {
            "fixed" => Service::Fixed { ns: self.service_ns },
            "exponential" => Service::Exponential {
                mean_ns: self.service_ns,
                max_ns: self.max_ns.unwrap_or(f64::INFINITY),
            },
            s => {
                return Err(format!(
                    "load.class \"{}\": service \"{s}\" is not \"fixed\" or \"exponential\"",
                    self.name
                ))
            }
        };
        Ok(Class {
            name: self.name.clone(),
            fraction: self.fraction,
            service,
            contexts: self.contexts.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = "[server]\nelf = \"s.elf\"\n[load]\nrates_mrps = [1.0]\nrequests = 10\n\
        [[load.class]]\nname = \"a\"\nfraction = 1.0\nservice_ns = 500.0\ncontexts = [0]\n";

    #[test]
    fn minimal_config_has_defaults() {
        let f: LoadFile = toml::from_str(MIN).unwrap();
        let cfg = f.node_config().unwrap();
        assert_eq!(
            (cfg.nic.cores, cfg.nic.core_selection, cfg.nic.sched_timer_cycles),
            (4, CoreSelection::Jbsq, 0)
        );
        let s = f.specs().unwrap();
        assert_eq!(
            (s[0].arrivals, s[0].classes[0].service),
            (Arrivals::Exponential, Service::Fixed { ns: 500.0 })
        );
    }

    #[test]
    fn errors_name_the_field() {
        let bad = |from: &str, to: &str| {
            let f: LoadFile = toml::from_str(&MIN.replace(from, to)).unwrap();
            f.node_config().and_then(|_| f.specs()).unwrap_err()
        };
        assert!(bad("elf = \"s.elf\"", "elf = \"s.elf\"\ncore_selection = \"rr\"")
            .contains("server.core selection"));
        assert!(bad("fraction = 1.0", "fraction = 0.5").contains("fractions add up"));
        assert!(bad("requests = 10", "requests = 10\narrivals = \"poisson\"").contains("load.arrivals"));
        let e = toml::from_str::<LoadFile>(&MIN.replace("requests", "requsts")).unwrap_err().to_string();
        assert!(e.contains("requsts"), "{e}");
    }

    /// The error for `MIN` with `from` replaced by `to`; it must start with `key`.
    fn refused(from: &str, to: &str, key: &str) -> String {
        let e = LoadFile::parse(&MIN.replace(from, to)).err().unwrap_or_else(|| panic!("accepted {to}"));
        assert!(e.starts_with(&format!("{key}: ")), "{to}: {e}");
        e
    }

    #[test]
    fn the_default_limit_fits_simulated_time() {
        // `u64::MAX / 2` cycles overflowed `Time` when the run began.
        let f = LoadFile::parse(MIN).unwrap();
        let cfg = f.node_config().unwrap();
        assert!(cfg.max_cycles <= check::max_cycles(cfg.timing.clock_hz));
        assert!(nanopu_sim::Clock::from_hz(cfg.timing.clock_hz)
            .unwrap()
            .period()
            .as_fs()
            .checked_mul(cfg.max_cycles)
            .is_some());
    }

    #[test]
    fn times_are_checked_not_clamped() {
        let e = refused("requests = 10", "requests = 10\ndrain_us = -1.0", "load.drain_us");
        assert!(e.contains("-1 us"), "{e}");
        refused("requests = 10", "requests = 10\ndrain_us = 1e30", "load.drain_us");
        refused("requests = 10", "requests = 10\ndrain_us = nan", "load.drain_us");
        refused("service_ns = 500.0", "service_ns = 1e30", "load.class \"a\": service_ns");
        refused("service_ns = 500.0", "service_ns = 500.0\nmax_ns = -1.0", "load.class \"a\": max_ns");
        refused("fraction = 1.0", "fraction = nan", "load.class \"a\": fraction");
        let server = |extra: &str| ("elf = \"s.elf\"".to_string(), format!("elf = \"s.elf\"\n{extra}"));
        for (extra, key) in [
            ("sched_timer_us = -5.0", "server.sched_timer_us"),
            ("sched_timer_us = 1e-9", "server.sched_timer_us"),
            ("mac_ns = -1.0", "server.mac_ns"),
            ("mac_ns = 1e30", "server.mac_ns"),
            ("msg_cycles = 9223372036854775807", "server.msg_cycles"),
            ("idle_cycles = 9223372036854775807", "server.idle_cycles"),
            ("cores = 0", "server.cores"),
            ("jbsq_n = 0", "server.jbsq_n"),
        ] {
            let (from, to) = server(extra);
            refused(&from, &to, key);
        }
    }

    #[test]
    fn rates_and_requests_are_bounded() {
        for r in ["0.0", "-1.0", "nan", "inf", "1e300"] {
            refused("rates_mrps = [1.0]", &format!("rates_mrps = [{r}]"), "load.rates_mrps");
        }
        let e = refused("rates_mrps = [1.0]", "rates_mrps = [1e-9]", "load.rates_mrps");
        assert!(e.contains("one-hour"), "{e}");
        let l = LoadFile::parse(MIN).unwrap().load;
        let e = LoadSection { requests: 1 << 40, ..l.clone() }.check(Some(8 << 30)).unwrap_err();
        assert!(e.starts_with("load.requests: ") && e.contains("an estimate"), "{e}");
        assert!(LoadSection { requests: 20_000, ..l }.check(Some(8 << 30)).is_ok());
    }

    #[test]
    fn a_kv_section_gives_the_classes_and_the_server_arguments() {
        let kv = MIN.split("[[load.class]]").next().unwrap().to_string()
            + "[load.kv]\nitems_per_core = 100\nsteering = \"static\"\nvalue_bytes = [8, 64]\n";
        let f = LoadFile::parse(&kv).unwrap();
        assert_eq!(f.node_config().unwrap().args, ["static", "100", "1", "8", "64"]);
        let s = f.specs().unwrap();
        let names: Vec<&str> = s[0].classes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!((names, s[0].classes[1].fraction), (vec!["get", "set"], 1.0 - 0.95));
        assert_eq!(s[0].kv.as_ref().unwrap().keys, Keys::Zipf { theta: 0.99 });
        assert_eq!(s[0].classes[0].contexts, [0, 1, 2, 3]);
        let bad = |from: &str, to: &str| LoadFile::parse(&kv.replace(from, to)).unwrap_err();
        assert!(bad("[8, 64]", "[8, 1024]").starts_with("load.kv.value_bytes"));
        assert!(bad("\"static\"", "\"rss\"").starts_with("load.kv.steering"));
        assert!(bad("elf = \"s.elf\"", "elf = \"s.elf\"\nargs = [\"jbsq\"]").starts_with("server.args"));
        assert!(LoadFile::parse(&(MIN.to_string() + "[load.kv]\n")).unwrap_err().starts_with("load.class"));
    }

    #[test]
    fn an_rdma_section_gives_one_class_per_operation_and_the_seed() {
        let rdma = MIN.split("[[load.class]]").next().unwrap().to_string()
            + "[load.rdma]\nread = 0.5\nwrite = 0.5\ncas = 0.0\nfaa = 0.0\nindirect_read = 0.0\n";
        let f = LoadFile::parse(&rdma).unwrap();
        let cfg = f.node_config().unwrap();
        assert_eq!((cfg.program_name.as_str(), cfg.args.clone()), ("rdma", vec!["1".to_string()]));
        let s = f.specs().unwrap();
        let names: Vec<&str> = s[0].classes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["read", "write", "cas", "faa", "indirect_read"]);
        assert_eq!(s[0].rdma.as_ref().unwrap().read_words, [8, 8]);
        let bad = |from: &str, to: &str| LoadFile::parse(&rdma.replace(from, to)).unwrap_err();
        assert!(bad("read = 0.5", "read = 0.6").contains("add up"));
        assert!(bad("read = 0.5", "read = 0.5\nread_words = [1, 65]").starts_with("load.rdma.read_words"));
        assert!(LoadFile::parse(&(MIN.to_string() + "[load.rdma]\n")).unwrap_err().starts_with("load.rdma"));
    }

    #[test]
    fn a_setalg_section_gives_the_query_sizes_and_the_corpus() {
        let q = MIN.split("[[load.class]]").next().unwrap().to_string()
            + "[load.setalg]\ndocuments = 100\nquery_words = [0.5, 0.5, 0.0, 0.0]\n";
        let f = LoadFile::parse(&q).unwrap();
        let cfg = f.node_config().unwrap();
        assert_eq!(
            (cfg.program_name.as_str(), cfg.args.clone()),
            ("setalg", ["1", "100", "4096", "16"].map(String::from).to_vec())
        );
        let s = f.specs().unwrap();
        let names: Vec<&str> = s[0].classes.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["1-word", "2-word", "3-word", "4-word"]);
        assert_eq!(s[0].setalg.as_ref().unwrap().popularity, Popularity::Zipf { theta: 0.99 });
        let bad = |from: &str, to: &str| LoadFile::parse(&q.replace(from, to)).unwrap_err();
        assert!(bad("documents = 100", "documents = 0").starts_with("load.setalg.documents"));
        assert!(bad("documents = 100", "vocabulary = 99999").starts_with("load.setalg.vocabulary"));
        assert!(
            bad("documents = 100", "words_per_document = 0").starts_with("load.setalg.words_per_document")
        );
        assert!(bad("[0.5, 0.5, 0.0, 0.0]", "[0.5, 0.6, 0.0, 0.0]").starts_with("load.setalg.query_words"));
        assert!(bad("documents = 100", "popularity = \"hot\"").starts_with("load.setalg.popularity"));
        assert!(bad("documents = 100", "theta = 1.5").starts_with("load.setalg.theta"));
        assert!(bad("documents = 100", "words = 3").contains("unknown field `words`"));
        assert!(bad("elf = \"s.elf\"", "elf = \"s.elf\"\nargs = [\"1\"]").starts_with("server.args"));
        assert!(LoadFile::parse(&(MIN.to_string() + "[load.setalg]\n"))
            .unwrap_err()
            .starts_with("load.setalg"));
    }

    #[test]
    fn an_icenic_server_takes_the_kv_workload_on_one_core_and_refuses_the_rest() {
        let base = MIN.split("[[load.class]]").next().unwrap();
        let kv = base.replace("elf = \"s.elf\"", "elf = \"s.elf\"\nnic = \"icenic\"\ncores = 1")
            + "[load.kv]\nitems_per_core = 100\nsteering = \"static\"\n";
        let cfg = LoadFile::parse(&kv).unwrap().node_config().unwrap();
        assert_eq!((cfg.nic_kind, cfg.program_name.as_str()), (NicKind::IceNic, "mica_ice"));
        assert_eq!(cfg.args, ["static", "100", "1", "512", "512"]);
        let bad = |from: &str, to: &str| LoadFile::parse(&kv.replace(from, to)).unwrap_err();
        assert!(bad("cores = 1", "cores = 4").starts_with("server.cores"));
        assert!(bad("\"static\"", "\"jbsq\"").starts_with("load.kv.steering"));
        assert!(bad("cores = 1", "cores = 1\njbsq_n = 2").starts_with("server.jbsq_n"));
        assert!(bad("cores = 1", "cores = 1\ncore_selection = \"rss\"").starts_with("server.core_selection"));
        assert!(bad("\"icenic\"", "\"zeronic\"").starts_with("server.nic"));
        let classes = base.replace("elf = \"s.elf\"", "elf = \"s.elf\"\nnic = \"icenic\"\ncores = 1")
            + &MIN[MIN.find("[[load.class]]").unwrap()..];
        let e = LoadFile::parse(&classes).unwrap_err();
        assert!(e.starts_with("load: an IceNIC server takes only the checked workloads"), "{e}");
        let nanopu = LoadFile::parse(&kv.replace("\"icenic\"", "\"nanopu\"")).unwrap();
        assert_eq!(nanopu.node_config().unwrap().program_name, "mica");
    }

    #[test]
    fn an_icenic_server_takes_rdma_and_set_algebra_on_one_core_with_their_icenic_builds() {
        let ice = MIN
            .split("[[load.class]]")
            .next()
            .unwrap()
            .replace("elf = \"s.elf\"", "elf = \"s.elf\"\nnic = \"icenic\"\ncores = 1");
        for (section, program) in [("[load.rdma]\n", "rdma_ice"), ("[load.setalg]\n", "setalg_ice")] {
            let f = ice.clone() + section;
            let cfg = LoadFile::parse(&f).unwrap().node_config().unwrap();
            assert_eq!((cfg.nic_kind, cfg.program_name.as_str()), (NicKind::IceNic, program));
            let bad = |from: &str, to: &str| LoadFile::parse(&f.replace(from, to)).unwrap_err();
            assert!(
                bad("cores = 1", "cores = 4").starts_with("server.cores: an IceNIC server runs on one core")
            );
            let e = bad("cores = 1", "cores = 1\njbsq_n = 2");
            assert!(e.starts_with("server.jbsq_n: the nanoPU NIC's core selection (JBSQ"), "{e}");
        }
    }

    #[test]
    fn timer_period_is_in_cycles() {
        let f: LoadFile =
            toml::from_str(&MIN.replace("elf = \"s.elf\"", "elf = \"s.elf\"\nsched_timer_us = 5.0")).unwrap();
        assert_eq!(f.node_config().unwrap().nic.sched_timer_cycles, 16_000);
    }
}
