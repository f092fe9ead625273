//! `nanopu chain CONFIG.toml`: chain replication under an open-loop key-value load, swept
//! over offered loads; per request type (GET = read, SET = write) the offered load, achieved
//! throughput and latency, the check's errors, and each reconfiguration after a crash.

use clap::Args;
use nanopu_cluster::chain::{self, ChainResult, Reconfig};
use nanopu_cluster::chain_config::ChainFile;
use nanopu_cluster::loadgen::{check_rate, LoadSpec, MAX_REQUESTS};
use nanopu_sim::Time;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct ChainArgs {
    /// Chain configuration (.toml): the chain, the load to sweep, the faults.
    pub config: PathBuf,
    /// Write the results table (one row per offered load and request type) as CSV.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write every request (type, node it went to, send and reply time) as CSV.
    #[arg(long)]
    records: Option<PathBuf>,
    /// Write each reconfiguration (crash, detection, new chain, client told) as CSV.
    #[arg(long)]
    reconfigs: Option<PathBuf>,
    /// Override the configuration's offered loads, million requests per second (a,b,c).
    #[arg(long, value_delimiter = ',')]
    rates: Vec<f64>,
    /// Override the configuration's number of requests per load.
    #[arg(long)]
    requests: Option<usize>,
}

const COLUMNS: &str =
    "offered_mrps,class,class_offered_mrps,measured,replied,achieved_mrps,median_ns,p99_ns,p999_ns";
const RECONFIG_COLUMNS: &str =
    "offered_mrps,epoch,failed,crashed_ns,detected_ns,reconfigured_ns,learned_ns,head,tail";

impl ChainArgs {
    /// The configuration with the flags' overrides, checked (an error names the flag).
    fn config(&self) -> Result<(ChainFile, PathBuf), String> {
        self.rates.iter().try_for_each(|&r| check_rate(r, "--rates"))?;
        if let Some(n) = self.requests.filter(|&n| n == 0 || n > MAX_REQUESTS) {
            return Err(format!("--requests: {n} is not within 1..={MAX_REQUESTS}"));
        }
        let (mut file, base) = ChainFile::load(&self.config)?;
        if !self.rates.is_empty() {
            file.load.rates_mrps = self.rates.clone();
        }
        file.load.requests = self.requests.unwrap_or(file.load.requests);
        file.validate()?;
        Ok((file, base))
    }
}

pub fn main(a: ChainArgs) -> Result<ExitCode, String> {
    let (file, base) = a.config()?;
    for p in [&a.out, &a.records, &a.reconfigs] {
        write(p.as_deref(), "")?; // a bad path costs no simulation
    }
    let (chain, cluster) = (file.chain_spec()?, file.cluster()?);
    let crashes = chain::crashes(&cluster);
    let (mut table, mut records, mut reconfigs) = (String::new(), String::new(), String::new());
    let mut failed = None;
    for spec in &file.specs()? {
        let started = Instant::now();
        let at = |why: String| format!("offered load {} Mrps: {why}", spec.rate_mrps);
        let r = chain::run(spec, &chain, &cluster, &base).map_err(|e| at(e.to_string()))?;
        report(spec, &r, started.elapsed().as_secs_f64());
        table += &rows(spec, &r);
        records += &records_csv(spec, &r);
        for c in &r.reconfigs {
            reconfigs += &reconfig_row(spec.rate_mrps, c, &crashes);
        }
        let problems = problems(spec, &r);
        if !problems.is_empty() {
            failed = Some(at(problems.join("; ")));
            break;
        }
    }
    print!("{}", format!("{COLUMNS}\n{table}").replace(',', "\t"));
    print!("{}", timeline(&reconfigs));
    // Written even when a run failed: its records show what went wrong.
    write(a.out.as_deref(), &format!("{COLUMNS}\n{table}"))?;
    write(a.records.as_deref(), &format!("offered_mrps,request,class,node,sent_ns,replied_ns\n{records}"))?;
    write(a.reconfigs.as_deref(), &format!("{RECONFIG_COLUMNS}\n{reconfigs}"))?;
    failed.map_or(Ok(ExitCode::SUCCESS), Err)
}

/// What the run did, on stderr: its end, the check, the failures' cost.
fn report(spec: &LoadSpec, r: &ChainResult, wall: f64) {
    let e = r.load.kv.clone().unwrap_or_default();
    eprintln!("{:>8.3} Mrps offered: {} ({wall:.1} s)", spec.rate_mrps, r.load.outcome.name());
    eprintln!(
        "         check: {} replies checked ({} final reads of every written key), {} wrong, {} lost; \
         {} dropped at a crashed replica, {} answered twice",
        r.sent_to.len() - e.lost - r.dropped,
        r.final_reads,
        e.wrong,
        e.lost,
        r.dropped,
        r.duplicates
    );
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

/// One row per request type: offered load of the type, its figures.
fn rows(spec: &LoadSpec, r: &ChainResult) -> String {
    let mut out = String::new();
    for (i, c) in spec.classes.iter().enumerate() {
        let x = r.load.class_result(&c.name, Some(i), spec.warmup);
        let l = &x.latency;
        let _ = writeln!(
            out,
            "{},{},{:.4},{},{},{:.4},{},{},{}",
            spec.rate_mrps,
            x.class,
            spec.rate_mrps * c.fraction,
            x.measured,
            x.replied,
            x.achieved_mrps,
            ns(l.median),
            ns(l.p99),
            ns(l.p999)
        );
    }
    out
}

/// A latency in ns, or "inf" when the quantile falls on requests that got no reply.
fn ns(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "inf".into()
    }
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

/// The reconfigurations in words, one line each.
fn timeline(csv: &str) -> String {
    let mut out = String::new();
    for l in csv.lines() {
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

fn write(path: Option<&Path>, text: &str) -> Result<(), String> {
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display())),
        None => Ok(()),
    }
}
