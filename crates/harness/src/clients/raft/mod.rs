//! Raft on nanoPU nodes (docs/apps/raft.md): `sw/apps/raft.c` on replicas 0..N-1 of a
//! one-switch cluster, an open-loop client on the test host (`client`), faults during the
//! load, and the safety checks after it (`check`) on every replica's state read from its
//! memory (`state`). On IceNIC nodes (`raft_ice.elf`, the same program through appnet) the
//! client's messages are UDP frames (`apps::hostnet`; docs/apps/raft.md "On IceNIC").

pub mod check;
pub mod client;
pub mod config;
pub mod report;
pub mod state;
pub mod wire;

use crate::apps::hostnet::{self, HostNet};
use client::{Announcement, Client, Op, Request};
use nanopu_cluster::config::cluster::{ClusterFile, FaultFile};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_sim::rng::Rng;
use nanopu_sim::stats::{summarize, Summary};
use nanopu_sim::Time;
use state::Replica;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The host acts on timeouts at this granularity (replies and redirects at once).
pub const STEP: Time = Time::from_ns(500);

/// Which replica a fault hits: a fixed node, or whichever leads when it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Node(u32),
    Leader,
}

/// A fault during the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fault {
    /// The replica stops for good at `at_us`.
    Crash { node: Target, at_us: f64 },
    /// The replica is cut off from every other node and the host during [from_us, to_us).
    Partition { node: Target, from_us: f64, to_us: f64 },
}

impl Fault {
    fn start_us(&self) -> f64 {
        match *self {
            Fault::Crash { at_us, .. } => at_us,
            Fault::Partition { from_us, .. } => from_us,
        }
    }

    fn target(&self) -> Target {
        match *self {
            Fault::Crash { node, .. } | Fault::Partition { node, .. } => node,
        }
    }

    fn with_node(self, n: u32) -> Fault {
        match self {
            Fault::Crash { at_us, .. } => Fault::Crash { node: Target::Node(n), at_us },
            Fault::Partition { from_us, to_us, .. } => {
                Fault::Partition { node: Target::Node(n), from_us, to_us }
            }
        }
    }
}

/// A Raft run: the replicas' parameters, the client's load, the faults.
#[derive(Clone, Debug, PartialEq)]
pub struct RaftSpec {
    /// `raft.elf` (`raft_ice.elf` on IceNIC nodes).
    pub elf: PathBuf,
    /// The replicas' NIC.
    pub nic: NicKind,
    pub replicas: u32,
    pub seed: u64,
    pub election_min_ns: u64,
    pub election_max_ns: u64,
    pub heartbeat_ns: u64,
    /// Most entries per AppendEntries.
    pub batch: u32,
    /// Payload words a SET carries beyond its key and value: 0, or
    /// [`config::PROTOTYPE_EXTRA_WORDS`] for the prototype's 16-byte keys and 64-byte values
    /// (the replicas then run `raft_kv.elf`).
    pub extra_words: u64,
    /// Offered load, million requests per second.
    pub rate_mrps: f64,
    /// Constant gaps between requests (the prototype's FIXED request distribution) instead
    /// of Poisson arrivals.
    pub fixed_arrivals: bool,
    /// Every link's propagation delay and every switch's latency, ns.
    pub link_ns: f64,
    pub switch_ns: f64,
    pub requests: usize,
    pub get_fraction: f64,
    /// Keys drawn uniformly from 0..keys.
    pub keys: u64,
    /// First request (after the first election).
    pub start_us: f64,
    pub retry_us: f64,
    pub backoff_us: f64,
    /// How long after the last request's time the client waits for answers.
    pub drain_us: f64,
    pub faults: Vec<Fault>,
}

impl RaftSpec {
    /// The defaults of docs/apps/raft.md with `replicas` and `seed`.
    pub fn new(elf: &Path, replicas: u32, seed: u64) -> RaftSpec {
        config::RaftFile::default().spec(elf, replicas, seed)
    }

    /// The open-loop requests: Poisson (or evenly spaced) arrivals from `start_us`, uniform
    /// keys.
    pub fn requests(&self) -> Vec<Request> {
        let mut rng = Rng::stream(self.seed, 0x4af7);
        let (mut t, gap) = (self.start_us * 1e3, 1e3 / self.rate_mrps);
        (1..=self.requests as u64)
            .map(|id| {
                t += if self.fixed_arrivals { gap } else { rng.exponential(gap) };
                let op = if rng.next_f64() < self.get_fraction { Op::Get } else { Op::Set };
                let key = rng.below(self.keys);
                let value = (id << 16) | (key & 0xffff);
                let due = Time::from_ns_f64(t);
                let extra = self.extra_words;
                Request { id, op, key, value, extra, due, sends: 0, last_send: due, target: 0, reply: None }
            })
            .collect()
    }

    /// The cluster: a star of `replicas` one-core nodes, each running raft.elf.
    fn cluster_file(&self, faults: &[Fault], max_us: f64) -> Result<ClusterFile, String> {
        let args = [
            self.replicas as u64,
            self.seed,
            self.election_min_ns,
            self.election_max_ns,
            self.heartbeat_ns,
            self.batch as u64,
        ];
        let args: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
        let elf = self
            .elf
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or("raft: the program's path has no file name")?;
        let text = format!(
            "seed = {}\nmax_us = {max_us}\ntransport = \"ndp\"\n[topology]\nkind = \"star\"\nnodes = {}\n\
             [link]\npropagation_ns = {:?}\n[switch]\nlatency_ns = {:?}\n\
             [node]\ncores = 1\n[[program]]\nnodes = \"all\"\nelf = \"{elf}\"\nnic = \"{}\"\nargs = [{}]\n",
            self.seed,
            self.replicas,
            self.link_ns,
            self.switch_ns,
            self.nic.name(),
            args.join(", ")
        );
        let mut f = ClusterFile::parse(&text)?;
        faults.iter().try_for_each(|x| f.add_fault(fault_file(x)?))?;
        Ok(f)
    }

    fn end(&self, reqs: &[Request]) -> Time {
        reqs.last().map_or(Time::from_ns_f64(self.start_us * 1e3), |r| r.due)
            + Time::from_ns_f64(self.drain_us * 1e3)
    }

    /// Run it, faults and checks included.
    pub fn run(&self) -> Result<RaftResult, String> {
        self.validate()?;
        let faults = self.resolve_faults()?;
        let mut r = self.run_with(&faults, None)?;
        r.faults = faults;
        Ok(r)
    }

    /// Faults aimed at "the leader" aimed at the node that leads when each starts: a run
    /// without those faults finds it (the same run up to then: runs are deterministic).
    fn resolve_faults(&self) -> Result<Vec<Fault>, String> {
        let mut fixed: Vec<Fault> = Vec::new();
        for f in &self.faults {
            let n = match f.target() {
                Target::Node(n) => n,
                Target::Leader => {
                    let until = Time::from_ns_f64(f.start_us() * 1e3);
                    let r = self.run_with(&fixed, Some(until))?;
                    leader_at(&r.announcements, until)
                        .ok_or(format!("raft: no leader by {until} for a fault"))?
                }
            };
            fixed.push(f.with_node(n));
        }
        Ok(fixed)
    }

    /// One run with these (resolved) faults, up to `stop` (None: to the end, checked).
    fn run_with(&self, faults: &[Fault], stop: Option<Time>) -> Result<RaftResult, String> {
        let reqs = self.requests();
        let end = stop.unwrap_or_else(|| self.end(&reqs));
        let f = self.cluster_file(faults, end.as_us_f64() + 10.0)?;
        let base = self.elf.parent().unwrap_or(Path::new("."));
        let mut sim = Simulation::cluster(&f, base).map_err(|e| e.to_string())?;
        let us = |x: f64| Time::from_ns_f64(x * 1e3);
        let client =
            Arc::new(Mutex::new(Client::new(reqs, self.replicas, us(self.retry_us), us(self.backoff_us))));
        let c = client.clone();
        let net = HostNet(self.nic);
        net.on_receive(&mut sim, move |now, m| c.lock().expect("client").on_arrival(now, m));
        let (outcome, at) = step(&mut sim, net, &client, end, stop.is_none())?;
        sim.host.clear_responders(); // the handler's share of the client
        let nic_drops = hostnet::drop_counts(&sim);
        let client =
            Arc::try_unwrap(client).map_err(|_| "client still shared")?.into_inner().expect("client");
        let replicas = match stop {
            Some(_) => Vec::new(),
            None => self.replicas_of(&sim, faults)?,
        };
        let mut r = RaftResult::new(client, replicas, outcome, at);
        r.nic_drops = nic_drops.0 + nic_drops.1;
        Ok(r)
    }

    /// Every replica's state at the end; a crashed one may never have booted.
    fn replicas_of(&self, sim: &Simulation, faults: &[Fault]) -> Result<Vec<Replica>, String> {
        let elf = std::fs::read(&self.elf).map_err(|e| format!("{}: {e}", self.elf.display()))?;
        let s = state::Symbols::of(&elf)?;
        let crashed =
            |n| faults.iter().any(|f| matches!(f, Fault::Crash { node: Target::Node(c), .. } if *c == n));
        (0..self.replicas).map(|n| state::read(sim, &s, n, crashed(n))).collect()
    }
}

/// The node that won the latest election announced by `at`.
pub fn leader_at(a: &[Announcement], at: Time) -> Option<u32> {
    a.iter().filter(|x| x.at <= at).max_by_key(|x| x.term).map(|x| x.node)
}

/// A fault as the cluster file's (docs/faults.md): a partition cuts the replica off from
/// every other node and from the host.
fn fault_file(f: &Fault) -> Result<FaultFile, String> {
    match *f {
        Fault::Crash { node: Target::Node(n), at_us } => Ok(FaultFile::crash(n, at_us)),
        Fault::Partition { node: Target::Node(n), from_us, to_us } => {
            Ok(FaultFile::partition(&[n], from_us, to_us))
        }
        _ => Err("raft: a fault's node is not resolved".into()),
    }
}

/// Drive the run a step at a time: first sends and retries due in each step go to the
/// host's script, replies and redirects are handled as they arrive. Ends at `end`, or once
/// every request is answered (if `early`). The outcome and when it stopped.
fn step(
    sim: &mut Simulation,
    net: HostNet,
    client: &Mutex<Client>,
    end: Time,
    early: bool,
) -> Result<(Outcome, Time), String> {
    let mut t = Time::ZERO;
    while t < end {
        let next = (t + STEP).min(end);
        let mut c = client.lock().expect("client");
        let mut sends = c.retries_due(t);
        sends.extend(c.first_sends(t, next));
        let finished = early && c.done() && c.requests.last().is_some_and(|r| r.due < t);
        drop(c);
        if finished {
            return Ok((Outcome::HostDone, t));
        }
        sends.into_iter().for_each(|(at, m)| net.send_at(sim, at, m));
        sim.set_deadline(next);
        let outcome = sim.run().map_err(|e| e.to_string())?;
        net.take_received(sim); // handled as they arrived: only the logs are emptied
        if outcome != Outcome::Deadline {
            return Ok((outcome, sim.now()));
        }
        t = next;
    }
    Ok((Outcome::Deadline, end))
}

/// What a run measured and found.
pub struct RaftResult {
    pub requests: Vec<Request>,
    pub announcements: Vec<Announcement>,
    pub replicas: Vec<Replica>,
    pub faults: Vec<Fault>,
    pub outcome: Outcome,
    /// When the run stopped.
    pub end: Time,
    pub redirects: u64,
    pub retries: u64,
    pub duplicate_replies: u64,
    pub strays: u64,
    /// Frames the IceNICs dropped (receive buffer full; no flow control): Raft recovers
    /// what they carried (heartbeats, the client's retries), so they are counted, not
    /// errors.
    pub nic_drops: u64,
    /// Safety violations (empty: the run was safe).
    pub violations: Vec<String>,
    /// The violations, then unanswered requests and a run that did not end as planned
    /// (empty: the run passed).
    pub problems: Vec<String>,
}

impl RaftResult {
    fn new(c: Client, replicas: Vec<Replica>, outcome: Outcome, end: Time) -> RaftResult {
        let mut r = RaftResult {
            violations: Vec::new(),
            problems: Vec::new(),
            requests: c.requests,
            announcements: c.announcements,
            replicas,
            faults: Vec::new(),
            outcome,
            end,
            redirects: c.redirects,
            retries: c.retries,
            duplicate_replies: c.duplicate_replies,
            strays: c.strays,
            nic_drops: 0,
        };
        if !r.replicas.is_empty() {
            r.violations = check::all(&r.replicas, &r.announcements, &r.requests);
            r.problems = r.violations.iter().cloned().chain(r.liveness()).collect();
        }
        r
    }

    /// Requests never answered, and a run that ended otherwise than planned.
    fn liveness(&self) -> Vec<String> {
        let mut p = Vec::new();
        let lost = self.requests.iter().filter(|r| r.reply.is_none()).count();
        if lost > 0 {
            p.push(format!("{lost} requests never answered"));
        }
        if !matches!(self.outcome, Outcome::HostDone | Outcome::Deadline) {
            p.push(format!("the run ended {}", self.outcome.name()));
        }
        p
    }

    /// Latency summary (ns) of the answered requests of `op`.
    pub fn latency(&self, op: Op) -> Summary {
        let v: Vec<f64> = self
            .requests
            .iter()
            .filter(|r| r.op == op)
            .filter_map(|r| r.latency())
            .map(Time::as_ns_f64)
            .collect();
        summarize(&v)
    }

    /// Answered requests per microsecond, from the first request's time to the last answer.
    pub fn throughput_mrps(&self) -> f64 {
        let first = self.requests.first().map_or(Time::ZERO, |r| r.due);
        let last = self.requests.iter().filter_map(|r| r.reply.map(|a| a.at)).max().unwrap_or(first);
        let n = self.requests.iter().filter(|r| r.reply.is_some()).count();
        n as f64 / (last.saturating_sub(first).as_us_f64()).max(1e-9)
    }

    /// The leader after the run: the latest election's winner.
    pub fn final_leader(&self) -> Option<u32> {
        leader_at(&self.announcements, Time::MAX)
    }
}
