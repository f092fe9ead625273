//! A Raft run's results as `nanopu raft` writes them (`nanopu.raft` in Python): the figures
//! as one CSV row, as text or as JSON, every request, the leader timeline; and the front
//! ends' overrides of a Raft file (docs/apps/raft.md). The command line and the Python
//! package are front ends over this one implementation.

use super::client::Op;
use super::config::RaftFile;
use super::{leader_at, Fault, RaftResult, RaftSpec, Target};
use nanopu_sim::stats::Summary;
use nanopu_sim::Time;
use serde_json::json;
use std::path::Path;

/// What a front end may change in a Raft file: the command line's `--seed`, `--replicas`,
/// `--rate` and `--requests`.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub seed: Option<u64>,
    pub replicas: Option<u32>,
    pub rate_mrps: Option<f64>,
    pub requests: Option<usize>,
}

impl Overrides {
    /// The file's spec with the overrides, checked; `name` (the file's) leads an error.
    pub fn apply(&self, mut s: RaftSpec, name: &str) -> Result<RaftSpec, String> {
        s.seed = self.seed.unwrap_or(s.seed);
        s.replicas = self.replicas.unwrap_or(s.replicas);
        s.rate_mrps = self.rate_mrps.unwrap_or(s.rate_mrps);
        s.requests = self.requests.unwrap_or(s.requests);
        s.validate().map_err(|e| format!("{name} (with the flags' overrides): {e}"))?;
        Ok(s)
    }

    /// A Raft file read from `path` (the ELF relative to its directory), overridden.
    pub fn load(&self, path: &Path) -> Result<RaftSpec, String> {
        self.apply(RaftFile::load(path)?, &path.display().to_string())
    }
}

pub const COLUMNS: &str =
    "replicas,seed,offered_mrps,requests,answered,throughput_mrps,set_median_ns,set_p99_ns,\
set_p999_ns,get_median_ns,get_p99_ns,retries,redirects,leaders,candidacies,violations";

/// The run's figures as one CSV row, `COLUMNS` first (`--out`).
pub fn csv_row(s: &RaftSpec, r: &RaftResult) -> String {
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

/// Every request as CSV, its header first (`--records`).
pub fn records(r: &RaftResult) -> String {
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

/// The leader timeline as CSV, its header first (`--timeline`).
pub fn timeline(r: &RaftResult) -> String {
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
    let unbooted = r.replicas.iter().any(|x| x.node == n && !x.booted);
    match *f {
        Fault::Crash { at_us, .. } if unbooted => {
            format!("crash of node {n} from the start (at {at_us} us, before it booted)")
        }
        Fault::Crash { at_us, .. } => format!("crash of node {n}{role} at {at_us} us"),
        Fault::Partition { from_us, to_us, .. } => {
            format!("partition of node {n}{role} from {from_us} to {to_us} us")
        }
    }
}

/// The figures in words (what `nanopu raft` prints).
pub fn text(s: &RaftSpec, r: &RaftResult) -> String {
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
    if s.nic == nanopu_cluster::config::NicKind::IceNic {
        t += &format!(
            "IceNIC nodes: {} frames dropped (receive buffer full; Raft recovers them)\n",
            r.nic_drops
        );
    }
    t += &latency_line("write", &r.latency(Op::Set));
    t += &latency_line("read", &r.latency(Op::Get));
    let candidacies: u64 = r.replicas.iter().map(|x| x.elections).sum();
    t += &format!("elections: {} won, {candidacies} started\nleader timeline:", r.announcements.len());
    r.announcements
        .iter()
        .for_each(|a| t += &format!(" term {} node {} at {:.2} us;", a.term, a.node, a.at.as_us_f64()));
    t += "\nreplicas at the end:";
    for x in &r.replicas {
        if !x.booted {
            t += &format!(" node {} crashed from the start (never booted);", x.node);
            continue;
        }
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

/// The figures as JSON (`nanopu raft --json`).
pub fn as_json(s: &RaftSpec, r: &RaftResult) -> serde_json::Value {
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
