//! `nanopu raft CONFIG.toml`: Raft replicas under an open-loop client, faults, the safety
//! checks; prints write and read latency, throughput, elections and the leader timeline
//! (docs/apps/raft.md).

use clap::Args;
use nanopu_cluster::raft::client::Op;
use nanopu_cluster::raft::config::RaftFile;
use nanopu_cluster::raft::{leader_at, Fault, RaftResult, RaftSpec, Target};
use nanopu_sim::stats::Summary;
use nanopu_sim::Time;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct RaftArgs {
    /// Raft configuration (.toml; keys: docs/config.md, "Raft files").
    pub config: PathBuf,
    /// Override the seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override raft.replicas.
    #[arg(long)]
    replicas: Option<u32>,
    /// Override client.rate_mrps.
    #[arg(long)]
    rate: Option<f64>,
    /// Override client.requests.
    #[arg(long)]
    requests: Option<usize>,
    /// Append the run's figures as one CSV row (a header first if the file is new).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write every request (id, op, key, time, latency, sends, replica, log index) as CSV.
    #[arg(long)]
    records: Option<PathBuf>,
    /// Write the leader timeline (time, term, node) as CSV.
    #[arg(long)]
    timeline: Option<PathBuf>,
    /// Print the figures as JSON instead of text.
    #[arg(long)]
    json: bool,
}

impl RaftArgs {
    fn spec(&self) -> Result<RaftSpec, String> {
        let mut s = RaftFile::load(&self.config)?;
        s.seed = self.seed.unwrap_or(s.seed);
        s.replicas = self.replicas.unwrap_or(s.replicas);
        s.rate_mrps = self.rate.unwrap_or(s.rate_mrps);
        s.requests = self.requests.unwrap_or(s.requests);
        s.validate().map_err(|e| format!("{} (with the flags' overrides): {e}", self.config.display()))?;
        Ok(s)
    }
}

pub fn main(a: RaftArgs) -> Result<ExitCode, String> {
    let s = a.spec()?;
    let started = Instant::now();
    let r = s.run()?;
    eprintln!("raft: simulated {:.1} us in {:.1} s", r.end.as_us_f64(), started.elapsed().as_secs_f64());
    write(a.out.as_deref(), &csv_row(&s, &r), true)?;
    write(a.records.as_deref(), &records(&r), false)?;
    write(a.timeline.as_deref(), &timeline(&r), false)?;
    match a.json {
        true => println!("{}", serde_json::to_string_pretty(&as_json(&s, &r)).expect("json")),
        false => print!("{}", text(&s, &r)),
    }
    Ok(if r.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Write `body` to `path` (if asked); `append`: add to the file, its header once.
fn write(path: Option<&Path>, body: &str, append: bool) -> Result<(), String> {
    let Some(p) = path else { return Ok(()) };
    let err = |e: std::io::Error| format!("{}: {e}", p.display());
    let text = match (append, p.exists()) {
        (true, true) => std::fs::read_to_string(p).map_err(err)? + body.split_once('\n').map_or("", |x| x.1),
        _ => body.to_string(),
    };
    std::fs::write(p, text).map_err(err)
}

const COLUMNS: &str =
    "replicas,seed,offered_mrps,requests,answered,throughput_mrps,set_median_ns,set_p99_ns,\
set_p999_ns,get_median_ns,get_p99_ns,retries,redirects,leaders,candidacies,violations";

fn csv_row(s: &RaftSpec, r: &RaftResult) -> String {
    let (w, g) = (r.latency(Op::Set), r.latency(Op::Get));
    let answered = r.requests.iter().filter(|q| q.reply.is_some()).count();
    let candidacies: u64 = r.replicas.iter().map(|x| x.elections).sum();
    format!(
        "{COLUMNS}\n{},{},{},{},{answered},{:.4},{:.1},{:.1},{:.1},{:.1},{:.1},{},{},{},{candidacies},{}\n",
        s.replicas,
        s.seed,
        s.rate_mrps,
        s.requests,
        r.throughput_mrps(),
        w.median,
        w.p99,
        w.p999,
        g.median,
        g.p99,
        r.retries,
        r.redirects,
        r.announcements.len(),
        r.violations.len()
    )
}

fn records(r: &RaftResult) -> String {
    let mut out = String::from("id,op,key,due_us,latency_ns,sends,replica,index\n");
    for q in &r.requests {
        let (lat, from, index) = match q.reply {
            Some(a) => (
                format!("{:.1}", q.latency().expect("answered").as_ns_f64()),
                a.from.to_string(),
                a.index.to_string(),
            ),
            None => (String::new(), String::new(), String::new()),
        };
        let op = if q.op == Op::Set { "set" } else { "get" };
        out +=
            &format!("{},{op},{},{:.4},{lat},{},{from},{index}\n", q.id, q.key, q.due.as_us_f64(), q.sends);
    }
    out
}

fn timeline(r: &RaftResult) -> String {
    let mut out = String::from("at_us,term,node\n");
    r.announcements.iter().for_each(|a| out += &format!("{:.4},{},{}\n", a.at.as_us_f64(), a.term, a.node));
    out
}

fn latency_line(what: &str, l: &Summary) -> String {
    match l.count {
        0 => format!("{what}: none\n"),
        n => format!(
            "{what} latency, ns ({n}): median {:.0}, p99 {:.0}, p99.9 {:.0}, max {:.0}\n",
            l.median, l.p99, l.p999, l.max
        ),
    }
}

/// A resolved fault, and whether its node led when it started.
fn fault_text(f: &Fault, r: &RaftResult) -> String {
    let (Fault::Crash { node, .. } | Fault::Partition { node, .. }) = *f;
    let Target::Node(n) = node else { return format!("{f:?}") };
    let start = match *f {
        Fault::Crash { at_us, .. } => at_us,
        Fault::Partition { from_us, .. } => from_us,
    };
    let led = leader_at(&r.announcements, Time::from_ns_f64(start * 1e3)) == Some(n);
    let role = if led { " (the leader then)" } else { "" };
    match *f {
        Fault::Crash { at_us, .. } => format!("crash of node {n}{role} at {at_us} us"),
        Fault::Partition { from_us, to_us, .. } => {
            format!("partition of node {n}{role} from {from_us} to {to_us} us")
        }
    }
}

fn text(s: &RaftSpec, r: &RaftResult) -> String {
    let answered = r.requests.iter().filter(|q| q.reply.is_some()).count();
    let mut t = format!(
        "raft: {} replicas, seed {}, {} Mrps offered, {} requests ({:.0}% GET)\n",
        s.replicas,
        s.seed,
        s.rate_mrps,
        s.requests,
        100.0 * s.get_fraction
    );
    r.faults.iter().for_each(|f| t += &format!("fault: {}\n", fault_text(f, r)));
    t += &format!(
        "answered {answered} of {}; throughput {:.3} Mrps; retries {}, redirects {}\n",
        s.requests,
        r.throughput_mrps(),
        r.retries,
        r.redirects
    );
    t += &latency_line("write", &r.latency(Op::Set));
    t += &latency_line("read", &r.latency(Op::Get));
    let candidacies: u64 = r.replicas.iter().map(|x| x.elections).sum();
    t += &format!("elections: {} won, {candidacies} started\nleader timeline:", r.announcements.len());
    r.announcements
        .iter()
        .for_each(|a| t += &format!(" term {} node {} at {:.2} us;", a.term, a.node, a.at.as_us_f64()));
    t += "\nreplicas at the end:";
    for x in &r.replicas {
        let crashed =
            r.faults.iter().any(|f| matches!(f, Fault::Crash { node: Target::Node(n), .. } if *n == x.node));
        let role = match crashed {
            true => "crashed, was ",
            false => "",
        };
        let role =
            format!("{role}{}", ["follower", "candidate", "leader"].get(x.role as usize).unwrap_or(&"?"));
        t += &format!(" node {} {role} term {} log {} commit {}", x.node, x.term, x.log.len() - 1, x.commit);
        if x.role == 2 {
            let n = r.replicas.len();
            t += &format!(" nextIndex {:?} matchIndex {:?}", &x.next_index[..n], &x.match_index[..n]);
        }
        t += ";";
    }
    t += "\n";
    match r.problems.is_empty() {
        true => t += "checks: passed (one leader per term; committed prefixes equal and on a majority; applied in order; every answer in the committed log)\n",
        false => r.problems.iter().for_each(|p| t += &format!("PROBLEM: {p}\n")),
    }
    t
}

fn as_json(s: &RaftSpec, r: &RaftResult) -> serde_json::Value {
    let lat = |l: Summary| json!({"count": l.count, "median_ns": l.median, "p99_ns": l.p99, "p999_ns": l.p999, "max_ns": l.max});
    json!({
        "replicas": s.replicas, "seed": s.seed, "offered_mrps": s.rate_mrps, "requests": s.requests,
        "answered": r.requests.iter().filter(|q| q.reply.is_some()).count(),
        "throughput_mrps": r.throughput_mrps(), "retries": r.retries, "redirects": r.redirects,
        "write": lat(r.latency(Op::Set)), "read": lat(r.latency(Op::Get)),
        "leaders": r.announcements.iter().map(|a| json!({"at_us": a.at.as_us_f64(), "term": a.term, "node": a.node})).collect::<Vec<_>>(),
        "faults": r.faults.iter().map(|f| fault_text(f, r)).collect::<Vec<_>>(),
        "violations": r.violations, "problems": r.problems,
    })
}
