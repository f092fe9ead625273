//! The one judgement of a run (docs/reliability.md, "One judgement of a run"): whether it is
//! complete, the problems that say why not, and the exit status the command line gives it.
//! Every front end takes these from here: the summaries' `complete` and `problems`, the
//! lines `nanopu` prints on stderr, its exit status, the Python package's results and the
//! marks on an incomplete run's files (`report::marks`). Nothing else decides them.

use crate::engine::outcome::Outcome;
use crate::engine::Simulation;
use crate::node::boot::{ip_text, node_ip};
use serde::Serialize;

/// How a run ended, judged once.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Judgement {
    /// No problem: the run reached its natural end and everything sent was delivered and
    /// taken (a core's own non-zero exit code is the program's verdict, not a problem).
    pub complete: bool,
    /// What went wrong or was left undone, each naming the limit, setting, node or context.
    pub problems: Vec<String>,
    /// The exit status README states: 2 stopped early or messages never delivered, 3
    /// nothing left to simulate with cores not exited or messages never taken, else the
    /// first non-zero exit code of a core (0 if none).
    pub exit_status: u8,
}

impl Judgement {
    /// The judgements of the parts of one run (across MPI ranks, each rank's, in rank
    /// order) as one: complete if every part is, the problems in order, once each (every
    /// rank says how the run stopped, in the same words); the exit status of the worst
    /// problem, else the first core's non-zero exit code in node order (as `judge` gives it).
    pub fn merged(js: &[&Judgement]) -> Judgement {
        let mut seen = std::collections::HashSet::new();
        let every = js.iter().flat_map(|j| j.problems.iter());
        let problems: Vec<String> = every.filter(|p| seen.insert(p.as_str())).cloned().collect();
        let with_problems = js.iter().filter(|j| !j.problems.is_empty()).map(|j| j.exit_status).min();
        let first_code = js.iter().map(|j| j.exit_status).find(|&s| s != 0).unwrap_or(0);
        Judgement {
            complete: problems.is_empty(),
            exit_status: with_problems.unwrap_or(first_code),
            problems,
        }
    }
}

/// Why a problem fails a run: the exit status it gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Messages never taken, or cores that will never exit: 3.
    Stuck = 3,
    /// Stopped before its end, or messages never delivered: 2 (wins over 3).
    Incomplete = 2,
}

/// Problems found so far, each with its kind.
#[derive(Default)]
struct Found(Vec<(Kind, String)>);

impl Found {
    fn add(&mut self, kind: Kind, text: impl Into<String>) {
        self.0.push((kind, text.into()));
    }

    fn extend(&mut self, kind: Kind, texts: impl IntoIterator<Item = String>) {
        texts.into_iter().for_each(|t| self.add(kind, t));
    }
}

/// Judge a finished simulation that ended with `outcome`.
pub fn judge(sim: &Simulation, outcome: Outcome) -> Judgement {
    let mut f = Found::default();
    stopped(sim, outcome, &mut f);
    undelivered(sim, &mut f);
    f.extend(Kind::Stuck, held(sim, outcome));
    f.extend(Kind::Stuck, stranded(sim, outcome));
    not_exited(sim, outcome, &mut f);
    let worst = f.0.iter().map(|&(k, _)| k as u8).min();
    let exit_status = worst.unwrap_or_else(|| core_status(sim));
    let problems: Vec<String> = f.0.into_iter().map(|(_, t)| t).collect();
    Judgement { complete: problems.is_empty(), problems, exit_status }
}

/// Stopped before the natural end: which limit or request stopped it.
fn stopped(sim: &Simulation, outcome: Outcome, f: &mut Found) {
    match outcome {
        Outcome::TimeLimit => f.add(Kind::Incomplete, format!("incomplete: stopped at {}", sim.limit_text())),
        o if o.incomplete() => f.add(
            Kind::Incomplete,
            format!("incomplete: stopped early ({}) at {:.3} us", o.name(), sim.now().as_us_f64()),
        ),
        _ => {}
    }
}

/// Messages that never reached their destination: still in flight when the time limit cut
/// off their delivery, never acknowledged and not delivered, sent to no node, or to a
/// node whose NIC cannot take them.
fn undelivered(sim: &Simulation, f: &mut Found) {
    if let Some(p) = in_flight(sim) {
        f.add(Kind::Incomplete, p);
    }
    f.extend(Kind::Incomplete, unacknowledged(sim));
    f.extend(Kind::Incomplete, no_route(sim));
    f.extend(Kind::Incomplete, not_for_host(sim));
    f.extend(Kind::Incomplete, strays(sim));
}

/// Every core exited, but the time limit came before what was sent was delivered. Only
/// undelivered messages count: one whose data arrived is delivered even if its sender
/// still waits for an acknowledgement that was lost.
fn in_flight(sim: &Simulation) -> Option<String> {
    if !sim.unsettled {
        return None;
    }
    let (out, inb) = if sim.net.is_some() { sim.undelivered_counts() } else { sim.in_flight() };
    (out + inb > 0).then(|| {
        format!(
            "every core exited, but messages were still in flight at {}: {out} being sent, {inb} being received; they were never delivered",
            sim.limit_text()
        )
    })
}

/// Unicast messages never delivered whose senders still waited for an acknowledgement
/// when the run ended (`--messages` says which were delivered).
fn unacknowledged(sim: &Simulation) -> Option<String> {
    let v = sim.undelivered();
    let first: Vec<String> =
        v.iter().take(4).map(|&(s, d, id)| format!("{} to {} (id {id})", ip_text(s), ip_text(d))).collect();
    let more = if v.len() > 4 { ", ..." } else { "" };
    (!v.is_empty()).then(|| {
        format!(
            "messages never acknowledged to their senders: {} ({}{more}), none of them delivered",
            v.len(),
            first.join(", ")
        )
    })
}

/// Packets the fabric dropped because their destination is no node of the cluster: a
/// program addressed a node that does not exist, and its transport retries until the limit
/// (an IceNIC's raw frames, which no transport retries, are counted apart).
fn no_route(sim: &Simulation) -> Option<String> {
    let fabric = &sim.net.as_ref()?.fabric;
    let stats = fabric.stats();
    let ip = stats.first_no_route?;
    let frames = match stats.frames_no_route {
        0 => String::new(),
        n => format!(" ({n} of them IceNIC frames)"),
    };
    Some(format!(
        "{} packets were dropped for want of a route{frames}: their destination ({}, the lowest of them) is no node of this cluster (nodes are {} to {})",
        stats.drops_no_route,
        ip_text(ip),
        ip_text(node_ip(0)),
        // The cluster's last node (across MPI ranks a rank holds only its own).
        ip_text(node_ip(fabric.wiring().nodes - 1))
    ))
}

/// A single node's messages to an address that is neither the node's nor the test host's:
/// the host drops them (`host::NotForHost`), as a cluster's fabric would.
fn not_for_host(sim: &Simulation) -> Option<String> {
    let n = sim.host.not_for_host;
    let ip = n.lowest_ip?;
    Some(format!(
        "{} messages were dropped for want of a route: their destination ({}, the lowest of them) is neither the node ({}) nor the test host ({})",
        n.messages,
        ip_text(ip),
        ip_text(node_ip(0)),
        ip_text(crate::host::HOST_IP)
    ))
}

/// Packets that reached a node whose NIC cannot take them (docs/models/icenic.md
/// "Clusters"): a program sent to a node with the other kind of NIC.
fn strays(sim: &Simulation) -> Vec<String> {
    let Some(s) = sim.net.as_ref().map(|n| n.strays) else { return Vec::new() };
    let mut v = Vec::new();
    if s.frames_at_nanopu_nodes > 0 {
        v.push(format!("{} IceNIC frames reached nanoPU nodes, whose NIC takes only the transport's packets: dropped there", s.frames_at_nanopu_nodes));
    }
    if s.transport_at_icenic_nodes > 0 {
        v.push(format!(
            "{} transport packets reached IceNIC nodes, which take only raw frames: dropped there",
            s.transport_at_icenic_nodes
        ));
    }
    v
}

/// Messages a NIC still holds that no core will take: for a context no core registered
/// (whatever the outcome), or for any context once nothing is left to simulate.
fn held(sim: &Simulation, outcome: Outcome) -> Vec<String> {
    let many = sim.nodes.len() > 1;
    let mut v = Vec::new();
    for node in &sim.nodes {
        let Some(nic) = node.nic.nanopu() else { continue };
        let registered = |ctx: u16| (0..nic.params().cores).any(|i| nic.core(i).context(ctx).is_some());
        let at = if many { format!("node {}: ", node.index) } else { String::new() };
        for (ctx, n) in nic.held() {
            let why = match registered(ctx) {
                false => format!("no core registered context {ctx}"),
                true if outcome == Outcome::Quiescent => {
                    "no core took them, and nothing is left to simulate".into()
                }
                true => continue,
            };
            v.push(format!("{at}{n} message(s) for context {ctx} were never taken: {why}"));
        }
    }
    v
}

/// With nothing left to simulate, threads switched out with work left (not waiting for a
/// message) on cores that have not exited: their core could not take the NIC's interrupt,
/// so the idle timeout never switched them back (docs/models/node.md, "Idle timeout").
fn stranded(sim: &Simulation, outcome: Outcome) -> Vec<String> {
    if outcome != Outcome::Quiescent {
        return Vec::new();
    }
    let many = sim.nodes.len() > 1;
    let mut v = Vec::new();
    for node in &sim.nodes {
        let Some(nic) = node.nic.nanopu() else { continue };
        let at = if many { format!("node {}, ", node.index) } else { String::new() };
        for (c, _) in node.state.iter().enumerate().filter(|(_, s)| s.running()) {
            v.extend(nic.stranded(c).map(|ctx| {
                format!("{at}core {c}: context {ctx} was switched out with work left (not waiting for a message) and never switched back: the core cannot take the NIC's interrupt")
            }));
        }
    }
    v
}

/// Cores that have not exited: at the time limit, where each was (part of that problem);
/// with nothing left to simulate, a program that never exits, unless the test host sent it
/// something (a server that answered and waits for more ends normally).
fn not_exited(sim: &Simulation, outcome: Outcome, f: &mut Found) {
    let waiting = sim.waiting_cores();
    let lines = waiting.iter().take(32).map(|c| format!("not exited: {c}"));
    match outcome {
        Outcome::TimeLimit => f.extend(Kind::Incomplete, lines),
        Outcome::Quiescent if !waiting.is_empty() && !sim.host.sent_anything() => {
            f.add(Kind::Stuck, format!("the program did not exit; nothing is left to simulate, and {} core(s) wait for what never comes", waiting.len()));
            f.extend(Kind::Stuck, lines);
        }
        _ => {}
    }
}

/// The first non-zero exit code of a core (by node, then core), as an exit status (its low
/// byte, at least 1); 0 if every core that exited exited with 0.
fn core_status(sim: &Simulation) -> u8 {
    let codes = sim.nodes.iter().flat_map(|n| n.cores.iter().filter_map(|c| c.halted()));
    codes.filter(|&c| c != 0).map(|c| (c & 0xff).max(1) as u8).next().unwrap_or(0)
}
