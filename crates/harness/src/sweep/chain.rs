//! A chain replication sweep (`nanopu chain CONFIG.toml`, `nanopu.chain` in Python): a chain
//! file with the caller's overrides, one run per offered load, and its results as the
//! command line writes them: per request type (GET = read, SET = write) the offered load,
//! achieved throughput and latency, every request, and each reconfiguration after a crash.
//! The command line and the Python package are front ends over this one implementation.

use crate::clients::chain::{self, ChainResult, ChainSpec, Reconfig};
use crate::config::chain::ChainFile;
use crate::loadgen::{check_rate, ClassResult, LoadSpec, MAX_REQUESTS};
use crate::sweep::table::ns;
use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_sim::stats::summarize;
use nanopu_sim::Time;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub const COLUMNS: &str =
    "offered_mrps,class,class_offered_mrps,measured,replied,achieved_mrps,median_ns,p99_ns,p999_ns";
pub const RECORD_COLUMNS: &str = "offered_mrps,request,class,node,sent_ns,replied_ns";
pub const RECONFIG_COLUMNS: &str =
    "offered_mrps,epoch,failed,crashed_ns,detected_ns,reconfigured_ns,learned_ns,head,tail";

/// What a front end may change in a chain file: the command line's `--rates` and
/// `--requests`, and the Python API's seed.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub rates_mrps: Vec<f64>,
    pub requests: Option<usize>,
    pub seed: Option<u64>,
}

impl Overrides {
    /// The file with the overrides, checked (an error names the flag).
    fn apply(&self, file: &mut ChainFile) -> Result<(), String> {
        if !self.rates_mrps.is_empty() {
            file.load.rates_mrps = self.rates_mrps.clone();
        }
        file.load.requests = self.requests.unwrap_or(file.load.requests);
        file.load.seed = self.seed.unwrap_or(file.load.seed);
        file.validate()
    }

    fn check(&self) -> Result<(), String> {
        self.rates_mrps.iter().try_for_each(|&r| check_rate(r, "--rates"))?;
        match self.requests.filter(|&n| n == 0 || n > MAX_REQUESTS) {
            Some(n) => Err(format!("--requests: {n} is not within 1..={MAX_REQUESTS}")),
            None => Ok(()),
        }
    }
}

/// A chain file ready to run.
pub struct Sweep {
    pub file: ChainFile,
    base: PathBuf,
    chain: ChainSpec,
    cluster: ClusterFile,
    specs: Vec<LoadSpec>,
}

/// A sweep's results as CSV (each with its header), and why it stopped early, if it did:
/// what ran before is kept (its records show what went wrong). `problems`: why results
/// whose figures stand are still not what the file asked for (a crash the run ended
/// before); the command line prints each and exits 2, the Python result lists them.
#[derive(Debug, Default)]
pub struct Output {
    pub table: String,
    pub records: String,
    pub reconfigs: String,
    pub failed: Option<String>,
    pub problems: Vec<String>,
}

impl Sweep {
    /// The file read from `path` (the chain's ELF relative to its directory), overridden.
    pub fn load(path: &Path, o: &Overrides) -> Result<Sweep, String> {
        o.check()?;
        let (file, base) = ChainFile::load(path)?;
        Sweep::new(file, base, o)
    }

    /// A file already parsed; the chain's ELF relative to `base`.
    pub fn new(mut file: ChainFile, base: PathBuf, o: &Overrides) -> Result<Sweep, String> {
        o.check()?;
        o.apply(&mut file)?;
        let (chain, cluster, specs) = (file.chain_spec()?, file.cluster()?, file.specs()?);
        Ok(Sweep { file, base, chain, cluster, specs })
    }

    /// Every offered load in turn, until one's figures do not stand; `tell`: each run's end
    /// and check on stderr. An error is a run the simulator refused.
    pub fn run(&self, tell: bool) -> Result<Output, String> {
        let crashes = chain::crashes(&self.cluster);
        let (mut table, mut records, mut reconfigs) = (String::new(), String::new(), String::new());
        let (mut failed, mut unreached) = (None, Vec::new());
        for spec in &self.specs {
            let started = Instant::now();
            let at = |why: String| format!("offered load {} Mrps: {why}", spec.rate_mrps);
            let r =
                chain::run(spec, &self.chain, &self.cluster, &self.base).map_err(|e| at(e.to_string()))?;
            if tell {
                eprint!("{}", report(spec, &r, started.elapsed().as_secs_f64()));
            }
            table += &rows(spec, &r);
            records += &records_csv(spec, &r);
            r.reconfigs.iter().for_each(|c| reconfigs += &reconfig_row(spec.rate_mrps, c, &crashes));
            unreached.extend(unreached_faults(&r).into_iter().map(&at));
            let problems = problems(spec, &r);
            if !problems.is_empty() {
                failed = Some(at(problems.join("; ")));
                break;
            }
        }
        Ok(Output {
            table: format!("{COLUMNS}\n{table}"),
            records: format!("{RECORD_COLUMNS}\n{records}"),
            reconfigs: format!("{RECONFIG_COLUMNS}\n{reconfigs}"),
            failed,
            problems: unreached,
        })
    }
}

/// What the run did, for stderr: its end, the check, the failures' cost.
fn report(spec: &LoadSpec, r: &ChainResult, wall: f64) -> String {
    let e = r.load.kv.clone().unwrap_or_default();
    format!(
        "{:>8.3} Mrps offered: {} ({wall:.1} s)\n         check: {} replies checked ({} final reads of every \
         written key), {} wrong, {} lost; {} dropped at a crashed replica, {} answered twice\n",
        spec.rate_mrps,
        r.load.outcome.name(),
        r.sent_to.len() - e.lost - r.dropped,
        r.final_reads,
        e.wrong,
        e.lost,
        r.dropped,
        r.duplicates
    )
}

/// Why the run's figures do not stand: a wrong reply, a lost request, a replica that
/// failed, a message that matched nothing.
fn problems(spec: &LoadSpec, r: &ChainResult) -> Vec<String> {
    let mut v = r.load.problems(spec);
    if r.load.unexpected > 0 {
        v.insert(0, format!("{} messages to the client matched no request", r.load.unexpected));
    }
    v
}

/// The file's crashes the run ended before: the load (its requests at the offered rate,
/// then the final reads) was over first, so the figures are a chain's without that failure.
fn unreached_faults(r: &ChainResult) -> Vec<String> {
    let end = r.end.as_us_f64();
    let line = |&(node, at): &(u32, Time)| {
        format!(
            "faults: the crash of node {node} at {:.3} us was never reached: the run ended at {end:.3} us \
             (more load.requests, or an earlier at_us, brings it within the run)",
            at.as_us_f64()
        )
    };
    r.unreached.iter().map(line).collect()
}

/// One row per request type: offered load of the type, its figures. The prototype's chain
/// adds a row "set at proxy": its writes' latency as its proxy client measured it (the
/// load generator's figure is the "set" row's, through the proxy both ways).
fn rows(spec: &LoadSpec, r: &ChainResult) -> String {
    let mut out = String::new();
    for (i, c) in spec.classes.iter().enumerate() {
        let x = r.load.class_result(&c.name, Some(i), spec.warmup);
        out += &row(spec, spec.rate_mrps * c.fraction, &x);
    }
    if r.proxy.iter().any(Option::is_some) {
        let mut x = r.load.class_result("set at proxy", None, spec.warmup);
        let ns = |p: &Option<Time>| p.map_or(f64::INFINITY, Time::as_ns_f64);
        x.latency = summarize(&r.proxy[spec.warmup..].iter().map(ns).collect::<Vec<_>>());
        out += &row(spec, spec.rate_mrps, &x);
    }
    out
}

fn row(spec: &LoadSpec, offered: f64, x: &ClassResult) -> String {
    let l = &x.latency;
    format!(
        "{},{},{offered:.4},{},{},{:.4},{},{},{}\n",
        spec.rate_mrps,
        x.class,
        x.measured,
        x.replied,
        x.achieved_mrps,
        ns(l.median),
        ns(l.p99),
        ns(l.p999)
    )
}

/// Every request of the load (final reads left out) as CSV lines.
fn records_csv(spec: &LoadSpec, r: &ChainResult) -> String {
    let mut out = String::new();
    for (i, q) in r.load.requests.iter().enumerate() {
        let replied = q.replied.map_or(String::new(), |t| format!("{:.3}", t.as_ns_f64()));
        let class = &spec.classes[q.class].name;
        let (node, sent) = (r.sent_to[i], q.sent.as_ns_f64());
        let _ = writeln!(out, "{},{i},{class},{node},{sent:.3},{replied}", spec.rate_mrps);
    }
    out
}

fn reconfig_row(rate: f64, c: &Reconfig, crashes: &[(u32, Time)]) -> String {
    let crashed =
        crashes.iter().find(|x| x.0 == c.failed).map_or(String::new(), |x| format!("{:.3}", x.1.as_ns_f64()));
    let t = |x: Time| format!("{:.3}", x.as_ns_f64());
    format!(
        "{rate},{},{},{crashed},{},{},{},{},{}\n",
        c.epoch,
        c.failed,
        t(c.detected),
        t(c.reconfigured),
        t(c.learned),
        c.head,
        c.tail
    )
}

/// The reconfigurations (`Output::reconfigs`, its header first) in words, one line each.
pub fn timeline(reconfigs: &str) -> String {
    let mut out = String::new();
    for l in reconfigs.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let us = |s: &str| s.parse::<f64>().map_or("-".to_string(), |x| format!("{:.3} us", x / 1e3));
        let _ = writeln!(
            out,
            "{} Mrps: replica {} crashed at {}, found silent by the master at {}, chain reconfigured at {}, \
             client told at {}; head {}, tail {}",
            f[0],
            f[2],
            us(f[3]),
            us(f[4]),
            us(f[5]),
            us(f[6]),
            f[7],
            f[8]
        );
    }
    out
}
