//! Chain replication's client: the test host at 10.0.0.1 drives `sw/apps/chain.c` (a master
//! on node 0, replicas on nodes 1..=R) with open-loop key-value requests, SETs to the head
//! and GETs to the tail, follows the master's reconfigurations, reads every written key back
//! at the end, and checks every reply. Protocol, roles and timeouts: docs/apps/chain.md.
//!
//! The schedule, keys, values and the linearizability check are the key-value workload's
//! (`kv.rs`, `loadgen`): a chain behaves as one store to its client. On IceNIC nodes
//! (`chain_ice.elf`, the same program through appnet) every message is one UDP frame, sent
//! and read back by `apps::hostnet` (docs/apps/chain.md "On IceNIC").

use crate::apps::hostnet::{self, HostNet};
use crate::loadgen::{LoadResult, LoadSpec, Request, ServerEnd};
use crate::workload::kv::{self, KvErrors, KvOp};
use crate::workload::server_cost::ServerCost;
use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::config::cluster::Fault;
use nanopu_cluster::config::NicKind;
use nanopu_cluster::engine::outcome::{Outcome, SimError};
use nanopu_cluster::node::boot::node_ip;
use nanopu_cluster::Simulation;
use nanopu_cluster::TestHost;
use nanopu_sim::Time;
use std::path::Path;

/// The master's message to the client: a new head and tail (docs/apps/chain.md).
const OP_CONFIG: u64 = 10;
/// Gap between the final reads of every written key, ns: about two GETs per microsecond,
/// well within what one tail serves (docs/apps/mica.md: a GET takes about 820 cycles).
const FINAL_GAP_NS: u64 = 500;

/// The chain's own parameters (the load is a [`LoadSpec`] with a key-value workload).
#[derive(Clone, Debug, PartialEq)]
pub struct ChainSpec {
    /// Replicas, nodes 1..=replicas (node 0 is the master).
    pub replicas: u32,
    /// The master pings every replica this often, whole us (its timer ticks at 1 MHz).
    pub ping_us: u64,
    /// A replica silent for longer than this is removed, us.
    pub timeout_us: f64,
    /// The client looks at its mailbox this often: a reconfiguration applies to requests
    /// sent from the next look on.
    pub poll: Time,
    /// The nodes' NIC: the client's messages go as they are (nanoPU) or as frames (IceNIC).
    pub nic: NicKind,
    /// The nanoPU prototype's chain (`chain_proto`): every write to its proxy client on
    /// node 0, a start-up message from every core, no final reads.
    pub prototype: bool,
}

/// One reconfiguration, as the client saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Reconfig {
    pub epoch: u64,
    /// The replica removed, and the new head and tail (node numbers).
    pub failed: u32,
    pub head: u32,
    pub tail: u32,
    /// When the master found the replica silent, and when every live replica had taken its
    /// new place (the master's clock: its cycles since the run began).
    pub detected: Time,
    pub reconfigured: Time,
    /// When the master's message reached the client.
    pub learned: Time,
    /// From when the client's requests went to the new chain: its first look at its mailbox
    /// after `learned`.
    pub applied: Time,
}

/// A chain run: the load's figures (as a load run's, with the key-value check), the final
/// reads and what the failures cost.
#[derive(Debug)]
pub struct ChainResult {
    /// Requests of the load only (statistics), their operations and the check of all
    /// requests, final reads included.
    pub load: LoadResult,
    /// Every request (load, then final reads): the node it went to.
    pub sent_to: Vec<u32>,
    /// Final reads, one per key written.
    pub final_reads: usize,
    /// Requests that went to a replica that crashed, before the client acted on its removal,
    /// and got no reply (the paper's client would retry them).
    pub dropped: usize,
    /// Replies to a request already answered (a new tail answers its Sent list again).
    pub duplicates: usize,
    /// The prototype's chain: each load request's latency as its proxy client measured it
    /// (from its forward to the head to the tail's answer), if answered.
    pub proxy: Vec<Option<Time>>,
    pub reconfigs: Vec<Reconfig>,
    /// The crashes of the file the run ended before (node, time), and when it ended: the
    /// figures stand, but they are not those of the failure asked for.
    pub unreached: Vec<(u32, Time)>,
    pub end: Time,
}

/// The client's view: where requests go, and what it has learned.
struct Client {
    head: u32,
    tail: u32,
    prototype: bool,
    proxy: Vec<Option<Time>>,
    reconfigs: Vec<Reconfig>,
    duplicates: usize,
    boot: usize,
    unexpected: usize,
    clock: nanopu_sim::Clock,
    net: HostNet,
}

impl ChainSpec {
    /// The arguments of `chain.elf` (after program, MAC and IP) for the key-value workload.
    pub fn args(&self, kv: &kv::KvSpec, clock_hz: u64) -> Vec<String> {
        let timeout_cycles = (self.timeout_us * clock_hz as f64 / 1e6).round() as u64;
        if self.prototype {
            return vec![]; // it takes its own IP, which the loader passes every program
        }
        let words = [self.replicas.into(), kv.items_per_core, kv.seed, kv.value_min, kv.value_max];
        (words.iter().chain(&[self.ping_us, timeout_cycles])).map(u64::to_string).collect()
    }

    /// Start-up messages the client waits for: one from each of our nodes; one from every
    /// core of the prototype's (each core sends its own, the replicas' first cores after
    /// preloading).
    fn boot_messages(&self, cores: usize) -> usize {
        (self.replicas as usize + 1) * if self.prototype { cores } else { 1 }
    }
}

/// Run the load on the chain the cluster file describes (its programs: `chain.elf` with
/// [`ChainSpec::args`]); crashes are its `[[faults]]`.
pub fn run(
    load: &LoadSpec,
    chain: &ChainSpec,
    cluster: &ClusterFile,
    base: &Path,
) -> Result<ChainResult, SimError> {
    let setup = SimError::Setup;
    load.validate().map_err(setup)?;
    let kv =
        load.kv.as_ref().ok_or_else(|| setup("load.kv: the chain serves the key-value workload".into()))?;
    let mut sim = Simulation::cluster(cluster, base)?;
    let (mut requests, mut ops) = load.schedule_kv(sim.clock().hz()).map_err(setup)?;
    let mut client = Client {
        head: 1,
        tail: chain.replicas,
        prototype: chain.prototype,
        proxy: vec![None; requests.len()],
        reconfigs: vec![],
        duplicates: 0,
        boot: 0,
        unexpected: 0,
        clock: sim.clock(),
        net: HostNet(chain.nic),
    };
    let mut sent_to = vec![0; requests.len()];
    run_until(&mut sim, load.start)?;
    client.collect(&mut sim, kv, &mut requests, &mut ops, load.start);
    let boots = chain.boot_messages(sim.nodes[0].cores.len());
    if client.boot != boots {
        return Err(setup(not_ready(cluster, load.start, (client.boot, boots))));
    }
    let last = requests.last().map_or(load.start, |r| r.sent);
    let times = (load.start, chain.poll, last + load.drain);
    client.feed(&mut sim, kv, (&mut requests, &mut ops, &mut sent_to), 0, times)?;
    let loaded = requests.len();
    let end = client.read_back(
        &mut sim,
        kv,
        (&mut requests, &mut ops, &mut sent_to),
        last + load.drain,
        chain.poll,
    )?;
    let outcome = run_until(&mut sim, end + load.drain)?;
    client.collect(&mut sim, kv, &mut requests, &mut ops, end + load.drain);
    let crashed = crashed_nodes(cluster);
    let (errors, dropped) = client.check(kv, &requests, &ops, &sent_to, &crashed);
    let server = node_failures(&mut sim, &crashed);
    requests.truncate(loaded);
    ops.truncate(loaded);
    let result = LoadResult {
        requests,
        unexpected: client.unexpected,
        startup: client.boot,
        outcome,
        server,
        kv_ops: ops,
        rdma_ops: vec![],
        setalg_ops: vec![],
        kv: Some(errors),
        cost: ServerCost::default(),
    };
    let final_reads = sent_to.len() - loaded;
    let unreached =
        crashes(cluster).into_iter().filter(|&(n, _)| sim.nodes[n as usize].crashed.is_none()).collect();
    Ok(ChainResult {
        load: result,
        sent_to,
        final_reads,
        dropped,
        duplicates: client.duplicates,
        proxy: client.proxy,
        reconfigs: client.reconfigs,
        unreached,
        end: sim.now(),
    })
}

/// Run the cluster until just before `t` (a send at `t` may still be scripted).
fn run_until(sim: &mut Simulation, t: Time) -> Result<Outcome, SimError> {
    sim.set_deadline(Time(t.0.saturating_sub(1)));
    sim.run()
}

type Requests<'a> = (&'a mut Vec<Request>, &'a mut Vec<KvOp>, &'a mut Vec<u32>);

impl Client {
    /// Send the requests a poll period at a time, each period's to the head and tail known
    /// at its start; then run until `end`.
    fn feed(
        &mut self,
        sim: &mut Simulation,
        kv: &kv::KvSpec,
        (requests, ops, sent_to): Requests,
        mut i: usize,
        (origin, poll, end): (Time, Time, Time),
    ) -> Result<(), SimError> {
        while i < requests.len() {
            let start = origin + Time((requests[i].sent - origin).0 / poll.0 * poll.0);
            run_until(sim, start)?;
            self.collect(sim, kv, requests, ops, start);
            while i < requests.len() && requests[i].sent < start + poll {
                sent_to[i] = self.send(sim, kv, &requests[i], &ops[i]);
                i += 1;
            }
        }
        run_until(sim, end)?;
        self.collect(sim, kv, requests, ops, end);
        Ok(())
    }

    /// Script one request to the head (SET) or the tail (GET), or the prototype's proxy;
    /// the node it goes to.
    fn send(&self, sim: &mut Simulation, kv: &kv::KvSpec, r: &Request, op: &KvOp) -> u32 {
        let node = match (self.prototype, op.set) {
            (true, _) => 0,
            (false, true) => self.head,
            (false, false) => self.tail,
        };
        let words = kv.request_words(op, r.sent.0);
        self.net.send_at(sim, r.sent, TestHost::message(0, node_ip(node), 0, &words));
        node
    }

    /// After the load: a GET of every key written, to the tail, one every `FINAL_GAP_NS`;
    /// the last one's send time.
    fn read_back(
        &mut self,
        sim: &mut Simulation,
        kv: &kv::KvSpec,
        reqs: Requests,
        from: Time,
        poll: Time,
    ) -> Result<Time, SimError> {
        let (requests, ops, sent_to) = reqs;
        if self.prototype {
            return Ok(from); // its reads lack the key hash its replicas read (`chain_proto`)
        }
        let mut keys: Vec<u32> = ops.iter().filter(|o| o.set).map(|o| o.key).collect();
        keys.sort_unstable();
        keys.dedup();
        let first = requests.len();
        for (j, &key) in keys.iter().enumerate() {
            let sent = from + poll + Time::from_ns(FINAL_GAP_NS * j as u64);
            requests.push(Request { class: 0, context: 0, service_cycles: 0, sent, replied: None });
            ops.push(KvOp { set: false, key, version: 0, answer: None });
            sent_to.push(0);
        }
        let end = requests.last().map_or(from, |r| r.sent);
        self.feed(sim, kv, (requests, ops, sent_to), first, (from, poll, end))?;
        Ok(end)
    }

    /// Take what reached the host by `now`: start-up messages, reconfigurations (which apply
    /// to the requests sent from `now` on) and replies (judged).
    fn collect(
        &mut self,
        sim: &mut Simulation,
        kv: &kv::KvSpec,
        requests: &mut [Request],
        ops: &mut [KvOp],
        now: Time,
    ) {
        let (received, strays) = self.net.take_received(sim);
        self.unexpected += strays;
        for h in received {
            let w = &h.msg.words;
            match w.len() {
                1 if !self.prototype => self.boot += 1,
                2 if self.prototype => self.boot += 1,
                6 if !self.prototype && w[0] & 0xff == OP_CONFIG => self.reconfigure(h.time, now, w),
                n if n >= 2 => self.reply(h.time, w, kv, requests, ops),
                _ => self.unexpected += 1,
            }
        }
    }

    fn reconfigure(&mut self, at: Time, applied: Time, w: &[u64]) {
        let cycles = |c: u64| self.clock.time_of(c);
        let (head, tail) = (w[1] as u32, w[2] as u32);
        self.reconfigs.push(Reconfig {
            epoch: w[0] >> 8,
            failed: w[3] as u32,
            head,
            tail,
            detected: cycles(w[4]),
            reconfigured: cycles(w[5]),
            learned: at,
            applied,
        });
        (self.head, self.tail) = (head, tail);
    }

    fn reply(&mut self, at: Time, w: &[u64], kv: &kv::KvSpec, requests: &mut [Request], ops: &mut [KvOp]) {
        match requests.binary_search_by_key(&Time(w[1]), |r| r.sent) {
            Ok(i) if requests[i].replied.is_none() => {
                requests[i].replied = Some(at);
                ops[i].answer = Some(kv.judge(&ops[i], w));
                if self.prototype && ops[i].answer.as_ref().is_some_and(Result::is_ok) {
                    self.proxy[i] = Some(self.clock.time_of(w[0]));
                }
            }
            Ok(_) => self.duplicates += 1,
            Err(_) => self.unexpected += 1,
        }
    }

    /// The key-value check of every request but those dropped at a crash (sent to the
    /// crashed replica before the client acted on its removal, and never answered); the
    /// errors, and how many were dropped.
    fn check(
        &self,
        kv: &kv::KvSpec,
        requests: &[Request],
        ops: &[KvOp],
        sent_to: &[u32],
        crashed: &[u32],
    ) -> (KvErrors, usize) {
        let learned = |n: u32| self.reconfigs.iter().find(|c| c.failed == n).map(|c| c.applied);
        let dropped = |i: usize| {
            let n = sent_to[i];
            requests[i].replied.is_none()
                && crashed.contains(&n)
                && learned(n).is_some_and(|t| requests[i].sent < t)
        };
        let observed: Vec<kv::Observed> = (0..requests.len())
            .filter(|&i| !dropped(i))
            .map(|i| kv::Observed { op: &ops[i], sent: requests[i].sent, replied: requests[i].replied })
            .collect();
        let n = requests.len() - observed.len();
        (kv::check(kv, &observed), n)
    }
}

/// Why only `ready` of the `expected` start-up messages (one per node; per core of the
/// prototype's chain) had come by `start`: a replica crashed before
/// then (the fault is to blame: the master starts the chain only once every replica has
/// preloaded its store and said so, and no replica joins later), else `load.start_us` came
/// too early.
fn not_ready(cluster: &ClusterFile, start: Time, (ready, expected): (usize, usize)) -> String {
    match crashes(cluster).into_iter().find(|&(_, at)| at <= start) {
        Some((n, at)) => format!(
            "faults.at_us: node {n} crashes at {} us, before the chain is ready ({ready} of its \
             {expected} start-up messages had come by load.start_us = {} us): the master starts the chain only once \
             every replica has preloaded its store, and no replica joins later \
             (docs/apps/chain.md); crash a replica after load.start_us",
            nanopu_sim::time::show(at.as_us_f64()),
            nanopu_sim::time::show(start.as_us_f64())
        ),
        None => format!(
            "load.start_us: {ready} of the chain's {expected} start-up messages had come by then \
             (preloading takes about 1.1 us per item)"
        ),
    }
}

/// The crashes among the cluster's faults: node, and when (none if the faults are bad:
/// building the cluster refuses them).
pub fn crashes(cluster: &ClusterFile) -> Vec<(u32, Time)> {
    let faults = cluster.checked_faults().unwrap_or_default();
    let crash = |f: Fault| match f {
        Fault::Crash { node, at } => Some((node, at)),
        _ => None,
    };
    faults.into_iter().filter_map(crash).collect()
}

fn crashed_nodes(cluster: &ClusterFile) -> Vec<u32> {
    crashes(cluster).into_iter().map(|c| c.0).collect()
}

/// Cores of live nodes that exited with a non-zero code, what every node printed, and the
/// frames IceNICs dropped (a chain assumes no loss: docs/apps/chain.md "On IceNIC").
fn node_failures(sim: &mut Simulation, crashed: &[u32]) -> ServerEnd {
    let mut end = ServerEnd { nic_drops: hostnet::dropped(sim).err(), ..Default::default() };
    for (n, node) in sim.nodes.iter_mut().enumerate() {
        for (c, core) in node.cores.iter_mut().enumerate() {
            let text = String::from_utf8_lossy(&core.take_console()).trim().to_string();
            if !text.is_empty() {
                end.console += &format!("node {n} core {c}: {text}\n");
            }
            match core.halted() {
                Some(x) if x != 0 && !crashed.contains(&(n as u32)) => end.failed.push((n, x)),
                _ => {}
            }
        }
    }
    end
}
