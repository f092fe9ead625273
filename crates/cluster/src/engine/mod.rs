//! The event loop: nodes, the network between them (or a test host on node 0's port), and
//! the order in which things happen.
//!
//! Two queues: cores waiting to run (by local time) and everything else. At equal times the
//! other events go first, so a core dispatched at time t sees every arrival at t. A core runs
//! ahead, in quanta of at most 100,000 cycles, until the earliest time anything not yet
//! simulated could reach it (`exact_until`) when it can take interrupts, yielding early when
//! an access needs global time to catch up (see `platform` and `cores`).

pub mod cluster;
mod cores;
pub mod fault;
pub mod host_time;
pub mod ice;
mod link;
mod network;
mod nic_path;
pub mod outcome;
mod parallel;
mod rdma;
pub use parallel::ranks;
pub mod progress;
pub mod stop;
pub mod zero;

use crate::config::{NodeConfig, PortParams};
use crate::engine::cores::Cid;
use crate::engine::outcome::{Outcome, SimError};
use crate::engine::progress::{PhaseProbe, Phases, Progress};
use crate::host::TestHost;
use crate::net::End;
use crate::node::{CoreState, Node};
use nanopu_nic::Message;
use nanopu_riscv::Program;
use nanopu_sim::{Clock, EventQueue, Time};
use std::sync::Arc;

/// Everything that happens, but a core running. Messages are boxed so that an event is 32
/// bytes, not 72: most events (the fabric's, timers) carry none, and the queue moves them all.
#[derive(Debug)]
pub(crate) enum Ev {
    /// A finished message leaves a core's TX path.
    NicSend {
        node: usize,
        core: usize,
        msg: Box<Message>,
    },
    /// A complete message reaches a node's NIC (from the port or looped back).
    NicArrive {
        node: usize,
        msg: Box<Message>,
    },
    /// Re-evaluate a core's interrupt line.
    NicUpdate {
        node: usize,
        core: usize,
    },
    /// A core in `wfi` may have a timer interrupt pending.
    CoreTimer {
        node: usize,
        core: usize,
    },
    HostSend {
        msg: Box<Message>,
    },
    /// A raw frame from the test host reaches the node's NIC.
    HostRaw {
        frame: Vec<u8>,
    },
    HostArrive {
        msg: Box<Message>,
    },
    /// Node 0's port towards the test host finished a frame or may send a paced PULL (runs
    /// of one node, `port_tx`).
    PortFree,
    /// An event of the fabric (cluster runs).
    Net(nanopu_net::fabric::NetEvent),
    /// A message handed straight to a node's transport (synthetic traffic, cluster runs).
    Inject {
        node: usize,
        msg: Box<Message>,
    },
    /// A timer of a node's transport (cluster runs).
    Transport {
        node: usize,
        timer: nanopu_nic::transport::Timer,
    },
    /// A timer of the test host's transport (cluster runs).
    HostTimer {
        timer: nanopu_nic::transport::Timer,
    },
    /// A node crashes (fault injection: `fault`).
    Crash {
        node: usize,
    },
    /// A ZeroNIC's DMA read of a header to send finished (docs/models/zeronic.md).
    IceRead {
        node: usize,
        addr: u64,
        len: u32,
    },
    /// An IceNIC's reader issued the last Get of the frame of `len` bytes at `addr`: the
    /// send completes (docs/models/icenic.md "Send path").
    IceIssued {
        node: usize,
        addr: u64,
        len: u32,
    },
    /// An IceNIC's reader has the last data of its oldest frame in flight.
    IceData {
        node: usize,
    },
    /// An IceNIC's DMA write of a received frame (address, bytes) finished.
    IceWrite {
        node: usize,
        w: Box<(u64, Vec<u8>)>,
    },
    /// A frame starts onto the wire from an IceNIC.
    IceTx {
        node: usize,
        frame: Box<[u8]>,
    },
    /// A frame's last byte reaches an IceNIC.
    IceRx {
        node: usize,
        frame: Box<[u8]>,
    },
    /// Re-evaluate an IceNIC's interrupt line.
    IceIrq {
        node: usize,
    },
    /// A ZeroNIC's DMA finished (docs/models/zeronic.md).
    Zero {
        node: usize,
        ev: Box<zero::ZeroEv>,
    },
    /// The test host sends a raw frame to node 0's IceNIC.
    HostFrameSend {
        frame: Box<[u8]>,
    },
    /// A frame from an IceNIC node reaches the test host.
    HostFrame {
        frame: Box<[u8]>,
    },
    /// Something an RDMA NIC asked for is due (docs/models/rdma-nic.md).
    Rdma {
        node: usize,
        ev: Box<rdma::RdmaEv>,
    },
}

impl Ev {
    /// The fabric's event this is, or the event as it is. A fabric event is `Copy`, so
    /// taking it out leaves the `Ev` whole, and dropping that was a call of the drop of
    /// every variant after each fabric event: it is forgotten instead (it owns nothing).
    #[inline]
    fn into_net(self) -> Result<nanopu_net::fabric::NetEvent, Ev> {
        match self {
            Ev::Net(e) => {
                std::mem::forget(self);
                Ok(e)
            }
            ev => Err(ev),
        }
    }
}

/// A simulated cluster: nodes and what connects them.
pub struct Simulation {
    pub nodes: Vec<Node>,
    /// The test host on node 0's port.
    pub host: TestHost,
    pub(crate) link: crate::net::link::HostLink,
    /// The fabric and transports of a cluster run (None: a single node with the test host).
    pub(crate) net: Option<crate::net::Network>,
    pub(crate) clock: Clock,
    pub(crate) cores_q: EventQueue<Cid>,
    pub(crate) q: EventQueue<Ev>,
    pub(crate) now: Time,
    pub(crate) max_cycles: u64,
    pub(crate) core_dispatches: u64,
    /// Fewest cycles in which a core can affect a core of another node: its TX path, two
    /// link propagations, the RX path (u64::MAX when there is one node).
    pub(crate) cross_node_cycles: u64,
    /// When the last message reached a NIC from the network.
    pub(crate) last_arrival: Time,
    /// Cores that have not exited.
    pub(crate) running_cores: usize,
    /// Keep simulating after every core exited, until nothing is left (synthetic traffic).
    pub(crate) drain: bool,
    progress: bool,
    /// What the progress line shows the cores doing (`set_phase_probe`).
    phase_probe: Option<PhaseProbe>,
    /// The test host has received what it waited for.
    pub(crate) host_done: bool,
    /// End the run here (outcome `Deadline`).
    pub(crate) deadline: Option<Time>,
    /// End the run once the host's clock passes this (outcome `WallLimit`).
    pub(crate) wall_deadline: Option<std::time::Instant>,
    /// Units of work done since the run last looked for a stop (`stop`, `look_due`).
    pub(crate) work: u64,
    /// Cluster index of `nodes[0]` (non-zero in a partition of a partitioned run).
    pub(crate) base: usize,
    /// Cycles below this are safe from other partitions (u64::MAX in a whole simulation;
    /// see `parallel`).
    pub(crate) horizon: u64,
    /// When the last core exited.
    pub(crate) exited_at: Time,
    /// Events handled by the partitions of earlier partitioned runs.
    pub(crate) events_before: u64,
    /// Host threads for partitioned runs.
    pub(crate) threads: usize,
    /// Every core exited and the run went on to deliver what was still in flight (`settle`).
    pub(crate) settling: bool,
    /// Events still pending when settling stopped at the time limit: what was in flight
    /// then was never delivered (reported, never dropped silently).
    pub unsettled: bool,
    /// The setting that raises the time limit, for messages (`set_limit_name`).
    limit_name: String,
    /// Most cycles a core may run past global time in one dispatch (`set_run_ahead`).
    pub(crate) run_ahead: u64,
    /// The earliest core error so far, at the core's own time, with its node and core: it
    /// is reported once global time has passed it (`fail`).
    pub(crate) failed: Option<Failure>,
    /// A partition of a partitioned run: its coordinator decides when a failure is final.
    pub(crate) in_partition: bool,
    /// The run's faults (cluster runs; `fault`), for its report.
    pub(crate) faults: Vec<crate::config::cluster::Fault>,
    /// Where the last `run`'s host time went (`host_times`).
    pub(crate) host_times: host_time::HostTimes,
    /// Where a core's dispatch (`NodePlatform::actions`) and a message's arrival put what the
    /// NIC asks for; empty between them, its room kept (`apply`): one allocation for the
    /// run, not one per dispatch that sends and per message that arrives. A dispatch that
    /// asked for nothing skips `apply`: most dispatches.
    pub(crate) spare_actions: Vec<nanopu_nic::Action>,
}

/// A core error at (time, node, core).
pub(crate) type Failure = (Time, u32, usize, nanopu_riscv::CoreError);

impl Simulation {
    /// One node running `elf` under `cfg`, with an idle test host on its port.
    pub fn new(elf: &[u8], cfg: NodeConfig) -> Result<Simulation, SimError> {
        cfg.validate().map_err(SimError::Setup)?;
        let program =
            Arc::new(Program::load_as(elf, &cfg.mem, cfg.abi).map_err(|e| SimError::Setup(e.to_string()))?);
        let node = Node::new(0, &program, &cfg, &mut Default::default()).map_err(SimError::Setup)?;
        Simulation::with_nodes(vec![node], &cfg)
    }

    pub(crate) fn with_nodes(nodes: Vec<Node>, cfg: &NodeConfig) -> Result<Simulation, SimError> {
        let running_cores = nodes.iter().map(|n| n.cores.len()).sum();
        let clock = Clock::from_hz(cfg.timing.clock_hz).map_err(SimError::Setup)?;
        let mut cores_q = EventQueue::new();
        for (n, node) in nodes.iter().enumerate() {
            (0..node.cores.len()).for_each(|c| cores_q.push(Time::ZERO, (n, c)));
        }
        Ok(Simulation {
            nodes,
            host: TestHost::new(),
            link: crate::net::link::HostLink::new(cfg.port.clone()),
            net: None,
            clock,
            cores_q,
            q: EventQueue::new(),
            now: Time::ZERO,
            max_cycles: cfg.max_cycles,
            core_dispatches: 0,
            cross_node_cycles: u64::MAX,
            last_arrival: Time::ZERO,
            drain: false,
            running_cores,
            progress: cfg.progress,
            phase_probe: None,
            host_done: false,
            deadline: None,
            wall_deadline: None,
            work: 0,
            base: 0,
            horizon: u64::MAX,
            exited_at: Time::ZERO,
            events_before: 0,
            threads: default_threads(),
            settling: false,
            unsettled: false,
            limit_name: "max_cycles".into(),
            run_ahead: u64::MAX,
            failed: None,
            in_partition: false,
            faults: Vec::new(),
            host_times: Default::default(),
            spare_actions: Vec::new(),
        })
    }

    /// An empty partition of this simulation holding `nodes`, the first of which is node
    /// `base` of the cluster (see `partition`).
    pub(crate) fn part(&self, nodes: Vec<Node>, base: usize) -> Simulation {
        let running_cores = nodes.iter().flat_map(|n| &n.state).filter(|s| s.running()).count();
        Simulation {
            nodes,
            host: TestHost::new(),
            link: crate::net::link::HostLink::new(self.link.port.clone()),
            net: None,
            cores_q: EventQueue::new(),
            q: EventQueue::new(),
            core_dispatches: 0,
            running_cores,
            progress: false,
            base,
            events_before: 0,
            limit_name: self.limit_name.clone(),
            failed: None,
            in_partition: true,
            faults: Vec::new(),
            spare_actions: Vec::new(),
            ..*self
        }
    }

    /// Capture every packet at a node ("node:N") or switch port ("switch:S:P") (cluster runs).
    pub fn capture_at(&mut self, point: &str) -> Result<(), String> {
        let net = self.net.as_mut().ok_or("packet capture needs a cluster run (a .toml configuration)")?;
        let point = point.parse().map_err(|e| format!("--pcap-at: {e}"))?;
        net.fabric.set_capture(point).map_err(|e| format!("--pcap-at: {e}"))
    }

    /// Write what was captured as a pcap stream.
    pub fn write_capture<W: std::io::Write>(&mut self, w: W) -> Result<W, String> {
        self.write_capture_as(w, crate::net::capture::CaptureFormat::Pcap)
    }

    /// Write what was captured in `format`.
    pub fn write_capture_as<W: std::io::Write>(
        &mut self,
        w: W,
        format: crate::net::capture::CaptureFormat,
    ) -> Result<W, String> {
        let homa = self
            .transports()
            .next()
            .is_some_and(|t| t.params().protocol == nanopu_nic::transport::Protocol::Homa);
        let net = self.net.as_mut().ok_or("no capture in a single-node run")?;
        let packets = net.fabric.take_capture();
        match (format, net.fabric.capture_point()) {
            (crate::net::capture::CaptureFormat::Pcapng, Some(at)) => {
                crate::net::capture::write_pcapng(w, &at.to_string(), &packets, homa)
            }
            _ => crate::net::capture::write_pcap(w, &packets, homa),
        }
    }

    /// Send `msg` from node `node`'s transport at `at`, as if a core had written it; the run
    /// then goes on until nothing is left to simulate, even after every core exited.
    pub fn inject(&mut self, at: Time, node: usize, msg: Message) -> Result<(), String> {
        self.net.as_ref().ok_or("injecting traffic needs a cluster run")?;
        let nic = &self.nodes.get(node).ok_or_else(|| format!("inject: no node {node}"))?.nic;
        if nic.transport().is_none() {
            return Err(format!("inject: node {node} has IceNIC, which sends raw frames, not messages"));
        }
        self.drain = true;
        self.q.push(at, Ev::Inject { node, msg: Box::new(msg) });
        Ok(())
    }

    /// End the run at simulated time `t` with outcome `Deadline` (before any cycle limit).
    pub fn set_deadline(&mut self, t: Time) {
        self.deadline = Some(t);
    }

    /// End the run with outcome `WallLimit` once this much host time has passed since this
    /// call (a limit past the host clock's range is none).
    pub fn set_wall_limit(&mut self, limit: std::time::Duration) {
        self.wall_deadline = std::time::Instant::now().checked_add(limit);
    }

    /// End the run with outcome `WallLimit` once the host's clock passes `deadline` (a
    /// command's `--max-wall-s` counts from the command's start, set-up included).
    pub fn set_wall_deadline(&mut self, deadline: std::time::Instant) {
        self.wall_deadline = Some(deadline);
    }

    /// Let a core run at most `cycles` past global time per dispatch (default: unbounded,
    /// up to what `exact_until` allows). Results must not depend on it: the run-ahead rule
    /// is checked by comparing runs at one cycle with normal ones (tests/run_ahead.rs).
    pub fn set_run_ahead(&mut self, cycles: u64) {
        self.run_ahead = cycles.max(1);
    }

    /// Show progress on stderr during `run`.
    pub fn set_progress(&mut self, on: bool) {
        self.progress = on;
    }

    /// Let the progress line show the cores by phase (a sort's stages).
    pub fn set_phase_probe(&mut self, probe: PhaseProbe) {
        self.phase_probe = Some(probe);
    }

    /// The cores of this simulation (or partition) by phase, if there is a probe.
    pub fn phases(&self) -> Phases {
        let mut counts = Phases::new();
        if let Some(p) = self.phase_probe {
            (p.count)(self, &mut counts);
        }
        counts
    }

    /// The first node (the only one of a single-node run).
    pub fn node(&self) -> &Node {
        &self.nodes[0]
    }
    pub fn now(&self) -> Time {
        self.now
    }
    pub fn clock(&self) -> Clock {
        self.clock
    }
    pub fn port(&self) -> &PortParams {
        &self.link.port
    }
    /// Whether the nodes sit on a fabric (a cluster run) rather than on one host link.
    pub fn is_cluster(&self) -> bool {
        self.net.is_some()
    }
    /// Events handled so far (core dispatches included).
    pub fn events(&self) -> u64 {
        self.events_before + self.q.popped() + self.cores_q.popped()
    }
    pub fn core_dispatches(&self) -> u64 {
        self.core_dispatches
    }

    /// Where the last `run`'s host time went.
    pub fn host_times(&self) -> host_time::HostTimes {
        self.host_times
    }

    /// Run until every core exits, nothing is left to do, or an error.
    pub fn run(&mut self) -> Result<Outcome, SimError> {
        let mut clock = host_time::Stopwatch::start();
        self.host_times = Default::default();
        let end = self.run_timed();
        self.host_times.run = clock.lap();
        end
    }

    fn run_timed(&mut self) -> Result<Outcome, SimError> {
        self.check_script()?;
        for (t, msg) in std::mem::take(&mut self.host.script) {
            self.q.push(t, Ev::HostSend { msg: Box::new(msg) });
        }
        for (t, frame) in std::mem::take(&mut self.host.raw_script) {
            self.q.push(t, Ev::HostRaw { frame });
        }
        for (t, frame) in std::mem::take(&mut self.host.frame_script) {
            self.q.push(t, Ev::HostFrameSend { frame: frame.into_boxed_slice() });
        }
        let limit = self.clock.time_of(self.max_cycles);
        let cores = self.cluster_cores();
        let mut progress =
            Progress::new(self.progress, cores, self.wall_deadline).with_probe(self.phase_probe);
        // A stop requested before the run (during its set-up, or between the runs of a
        // sweep) ends it before it starts; a wall-clock deadline is looked at as the run
        // goes, every `stop::LOOK_EVERY` units of work like everything else.
        // Across MPI ranks each rank advances partitions of its own: a cluster of fewer
        // partitions than ranks (a star is one) cannot be spread over them.
        if let Some(r) = ranks::current() {
            ranks::owned(self.partitions(), r.size(), r.rank()).map_err(SimError::Setup)?;
        }
        let end = match (stop::stop_requested(), self.partitions()) {
            (true, _) => Ok(Outcome::Interrupted),
            (false, 1) => self.event_loop(limit, &mut progress),
            (false, _) => self.run_partitioned(limit, &mut progress),
        };
        progress.finish();
        match self.failed.take() {
            Some((_, node, _, error)) => Err(SimError::Core { node, error }),
            None => end,
        }
    }

    /// The cores of the whole cluster: across MPI ranks `nodes` holds this rank's nodes,
    /// and every node of a cluster has the same cores (`Simulation::cluster`).
    fn cluster_cores(&self) -> usize {
        let here = self.nodes.iter().map(|n| n.cores.len()).sum();
        match (ranks::current(), &self.net) {
            (Some(_), Some(net)) => {
                net.fabric.wiring().nodes as usize * self.nodes.first().map_or(0, |n| n.cores.len())
            }
            _ => here,
        }
    }

    fn event_loop(&mut self, limit: Time, progress: &mut Progress) -> Result<Outcome, SimError> {
        loop {
            if !self.drain && self.running_cores == 0 {
                return self.settle(limit);
            }
            let Some((t, core_next)) = self.next() else { return Ok(Outcome::Quiescent) };
            if self.deadline.is_some_and(|d| t > d) {
                return Ok(Outcome::Deadline);
            }
            if t > limit {
                return Ok(self.time_limit(limit));
            }
            self.step(t, core_next)?;
            self.check_pending()?;
            if self.host_done {
                return Ok(Outcome::HostDone);
            }
            if !self.look_due() {
                continue;
            }
            if let Some(stop) =
                progress.check(self.now, self.events(), self.running_cores, || Some(self.phases()))
            {
                return Ok(stop);
            }
        }
    }

    /// The nodes the test host can address: the cluster's, or the single node.
    fn node_count(&self) -> u32 {
        self.net.as_ref().map_or(1, |n| n.fabric.nodes())
    }

    /// The test host's script must leave the event queue room to run (each scripted
    /// message is a pending event from the start).
    fn check_script(&self) -> Result<(), SimError> {
        let nic = self.nodes.first().and_then(|n| n.nic.nanopu());
        let max = nic.map_or(u32::MAX, |n| n.params().max_msg_bytes);
        if let Some((t, m)) = self.host.script.iter().find(|(_, m)| u32::from(m.len) > max) {
            return Err(SimError::Setup(format!(
                "the test host's message at {:.3} ns is {} bytes, longer than the node's max_msg_bytes ({max})",
                t.as_ns_f64(),
                m.len
            )));
        }
        let nodes = self.node_count();
        let ip = |n: u32| crate::node::boot::node_ip(n);
        if let Some((t, m)) = self.host.script.iter().find(|(_, m)| !(ip(0)..ip(nodes)).contains(&m.dst_ip)) {
            return Err(SimError::Setup(format!(
                "the test host's message at {:.3} ns goes to {}, which is not a node here (nodes 0..{}: 10.0.0.2 and up)",
                t.as_ns_f64(),
                crate::node::boot::ip_text(m.dst_ip),
                nodes - 1
            )));
        }
        let n = self.host.script.len() + self.host.raw_script.len();
        if n > PENDING_LIMIT / 2 {
            return Err(SimError::Capacity(format!(
                "the test host's script holds {n} messages; at most {} can be scheduled at once (the event queue holds {} pending events)",
                PENDING_LIMIT / 2,
                nanopu_sim::queue::QUEUE_CAPACITY
            )));
        }
        Ok(())
    }

    /// A core stopped on an error at `t`. Cores run ahead of global time, so a later error
    /// can be met first: keep the earliest (ties to the lowest node and core), and report it
    /// once global time has passed it (`step`, `run`), whatever the run-ahead.
    pub(crate) fn fail(&mut self, t: Time, node: u32, core: usize, error: nanopu_riscv::CoreError) {
        let earlier = self.failed.as_ref().is_none_or(|f| (t, node, core) < (f.0, f.1, f.2));
        if earlier {
            self.failed = Some((t, node, core, error));
        }
    }

    /// Stop with an error, not a panic, before the event queue overflows. Asked after every
    /// event: inlined, its answer nearly always yes.
    #[inline]
    pub(crate) fn check_pending(&self) -> Result<(), SimError> {
        if self.q.len() < PENDING_LIMIT {
            return Ok(());
        }
        self.queue_full()
    }

    #[cold]
    fn queue_full(&self) -> Result<(), SimError> {
        let (out, inb) = self.in_flight();
        Err(SimError::Capacity(format!(
            "more than {PENDING_LIMIT} events pending at {:.3} us (messages in flight: {out} being sent, {inb} being received): the simulator's event queue is full",
            self.now.as_us_f64()
        )))
    }

    /// Every core exited: deliver what is still in flight (a reply on its way to the test
    /// host, packets in the network, their acknowledgements) up to the time limit, so that
    /// nothing sent before the end is lost; the run then ends at the last exit or arrival.
    fn settle(&mut self, limit: Time) -> Result<Outcome, SimError> {
        self.settling = true;
        while let Some((t, core_next)) = self.next().filter(|&(t, _)| t <= limit) {
            self.step(t, core_next)?;
            self.check_pending()?;
            if let Some(stop) = self.stop_due() {
                self.end_settled();
                return Ok(stop);
            }
        }
        self.end_settled();
        Ok(Outcome::AllExited)
    }

    /// Has this run done `stop::LOOK_EVERY` units of work since it last looked for a stop?
    pub(crate) fn look_due(&mut self) -> bool {
        let due = self.work >= stop::LOOK_EVERY;
        if due {
            self.work = 0;
        }
        due
    }

    /// A stop (request or wall-clock deadline), looked for when one is due (`look_due`).
    pub(crate) fn stop_due(&mut self) -> Option<Outcome> {
        self.look_due().then(|| stop::why_stop(self.wall_deadline)).flatten()
    }

    /// After settling: note what never arrived, and put the clock at the run's real end.
    pub(crate) fn end_settled(&mut self) {
        self.unsettled = self.next().is_some();
        let host = self.host.received.last().map_or(Time::ZERO, |m| m.time);
        self.now = self.exited_at.max(self.last_arrival).max(host);
    }

    /// Messages the transports are still sending and receiving (cluster runs); for a single
    /// node, events still pending on its port, counted as being sent.
    pub fn in_flight(&self) -> (usize, usize) {
        match &self.net {
            Some(_) => self.transports().map(|t| t.in_flight()).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1)),
            None => (self.q.len(), 0),
        }
    }

    /// The unicast messages started and never acknowledged (cluster runs), as (sender IP,
    /// destination IP, message id), ordered: what a run that ends now may not have
    /// delivered (`Transport::unfinished`).
    pub fn unfinished(&self) -> Vec<(u32, u32, u16)> {
        let each = self.transports();
        let mut v: Vec<_> =
            each.flat_map(|t| t.unfinished().into_iter().map(|(dst, id, _)| (t.ip(), dst, id))).collect();
        v.sort_unstable();
        v
    }

    /// The unicast messages started and not delivered (cluster runs), as `unfinished`
    /// gives them: a message whose data reached its destination is delivered, even if
    /// every acknowledgement of it was lost and its sender still waits.
    pub fn undelivered(&self) -> Vec<(u32, u32, u16)> {
        let each = self.transports();
        let mut v: Vec<_> = each
            .flat_map(|t| t.unfinished().into_iter().map(|(dst, id, seq)| (t.ip(), dst, id, seq)))
            .filter(|&(src, dst, _, seq)| !self.transport_of(dst).is_some_and(|t| t.has_delivered(src, seq)))
            .map(|(src, dst, id, _)| (src, dst, id))
            .collect();
        v.sort_unstable();
        v
    }

    /// Messages not delivered when the run ended (cluster runs): (being sent: started and
    /// not delivered, or not started yet; being received: partly arrived).
    pub fn undelivered_counts(&self) -> (usize, usize) {
        let waiting: usize = self.transports().map(|t| t.not_started()).sum();
        let inbound: usize = self.transports().map(|t| t.in_flight().1).sum();
        (self.undelivered().len() + waiting, inbound)
    }

    /// The transport endpoint of the node or test host at `ip`, if any.
    fn transport_of(&self, ip: u32) -> Option<&nanopu_nic::transport::Transport> {
        if ip == nanopu_sim::packet::HOST_IP {
            return self.net.as_ref().and_then(|n| n.host.as_ref());
        }
        // Cluster index less the first node's: after a run across MPI ranks, `nodes` holds
        // one rank's nodes.
        let first = self.nodes.first().map_or(0, |n| n.index as usize);
        let i = (ip.wrapping_sub(crate::node::boot::node_ip(0)) as usize).wrapping_sub(first);
        self.nodes.get(i).filter(|n| n.ip == ip).and_then(|n| n.nic.transport())
    }

    /// The time of the next thing to simulate, and whether it is a core.
    pub(crate) fn next(&self) -> Option<(Time, bool)> {
        match (self.q.peek_time(), self.cores_q.peek_time()) {
            (None, None) => None,
            (Some(a), Some(b)) => Some((a.min(b), b < a)),
            (Some(a), None) => Some((a, false)),
            (None, Some(b)) => Some((b, true)),
        }
    }

    /// Simulate the next thing, at `t`.
    pub(crate) fn step(&mut self, t: Time, core_next: bool) -> Result<(), SimError> {
        if self.failed.as_ref().is_some_and(|f| t > f.0) && !self.in_partition {
            let (_, node, _, error) = self.failed.take().expect("checked");
            return Err(SimError::Core { node, error });
        }
        if core_next {
            let (_, id) = self.cores_q.pop().expect("peeked");
            // A core stopped by its node's end left its entry behind: not an event.
            if matches!(self.nodes[id.0].state[id.1], CoreState::Stopped(_) | CoreState::Crashed(_)) {
                return Ok(());
            }
            self.now = t;
            if let Some(&(n, c)) = self.cores_q.peek() {
                self.nodes[n].cores[c].prefetch();
            }
            self.prefetch_next_event();
            self.dispatch(id)
        } else {
            self.now = t;
            self.work += 1;
            // The fabric's events, most of a cluster run's, name no node: no crash to look
            // for.
            let ev = self.q.pop().expect("peeked").1;
            self.prefetch_next_event();
            match ev.into_net() {
                Ok(e) => self.net_event(e),
                Err(ev) => self.handle(ev),
            }
            Ok(())
        }
    }

    /// Ask the host to load what the queue's next event will read first, while this step
    /// runs: a network event's packet or port (`Fabric::prefetch_event`), and the NIC with
    /// its transport of the node a packet arrives at, a transport timer is for or a message
    /// is injected into (`NodeNic::prefetch`).
    #[inline]
    fn prefetch_next_event(&self) {
        let node = match (self.q.peek(), self.net.as_ref()) {
            (Some(Ev::Net(next)), Some(net)) => {
                net.fabric.prefetch_event(next);
                let nanopu_net::fabric::NetEvent::Arrive { node, .. } = *next else { return };
                (node as usize).wrapping_sub(self.base)
            }
            (Some(Ev::Transport { node, .. } | Ev::Inject { node, .. }), Some(_)) => *node,
            _ => return,
        };
        if let Some(n) = self.nodes.get(node) {
            n.nic.prefetch();
        }
    }

    /// Global time in node cycles (the next whole cycle).
    pub(crate) fn cycles(&self) -> u64 {
        self.clock.cycle_ceil(self.now)
    }

    /// The time of `cycle`, never before now.
    pub(crate) fn at(&self, cycle: u64) -> Time {
        self.clock.time_of(cycle).max(self.now)
    }

    fn handle(&mut self, ev: Ev) {
        if self.for_crashed(&ev) {
            return;
        }
        match ev {
            Ev::NicSend { node, core, msg } => self.nic_send((node, core), *msg),
            Ev::NicArrive { node, msg } => self.nic_arrive(node, *msg),
            Ev::NicUpdate { node, core } => self.update_irq((node, core)),
            Ev::CoreTimer { node, core } => self.wake_if_interrupted((node, core)),
            Ev::HostSend { msg } => self.host_send(*msg),
            // An IceNIC takes raw frames as they are (docs/models/icenic.md "Frames").
            Ev::HostRaw { frame } if self.nodes[0].nic.takes_frames() => self.host_send_frame(frame),
            Ev::HostRaw { frame } => match crate::host::message_of_frame(&frame, self.node_count()) {
                Ok(msg) => self.host_send(msg),
                Err(why) => self.host.rejected.push((self.now, why)),
            },
            Ev::HostArrive { msg } => self.host_arrive(*msg),
            Ev::PortFree => self.port_kick(),
            Ev::Net(e) => self.net_event(e),
            Ev::Inject { node, msg } => self.transport_send(End::Node(node), *msg),
            Ev::Transport { node, timer } => self.transport_timer(End::Node(node), timer),
            Ev::HostTimer { timer } => self.transport_timer(End::Host, timer),
            Ev::Crash { node } => self.crash(node),
            Ev::IceRead { node, addr, len } => self.ice_read_done(node, addr, len as usize),
            Ev::IceIssued { node, addr, len } => self.ice_gets_issued(node, addr, len as usize),
            Ev::IceData { node } => self.ice_call(node, |ice, now, out| ice.data_in(now, out)),
            Ev::IceWrite { node, w } => self.ice_write_done(node, w.0, w.1),
            Ev::IceTx { node, frame } => self.ice_transmit(node, frame),
            Ev::IceRx { node, frame } if self.nodes[node].nic.rdma().is_some() => {
                self.rdma_arrive(node, frame.into_vec())
            }
            Ev::IceRx { node, frame } => self.ice_arrive(node, frame.into_vec()),
            Ev::IceIrq { node } => self.ice_irq(node),
            Ev::Zero { node, ev } => self.zero_event(node, *ev),
            Ev::HostFrameSend { frame } => self.host_send_frame(frame.into_vec()),
            Ev::HostFrame { frame } => self.host_frame_arrive(frame.into_vec()),
            Ev::Rdma { node, ev } => self.rdma_event(node, *ev),
        }
    }

    // ---- ends ------------------------------------------------------------------------------

    /// End at the time limit: the clock stops there, everything so far is reported.
    pub(crate) fn time_limit(&mut self, limit: Time) -> Outcome {
        self.now = limit;
        Outcome::TimeLimit
    }

    /// Which setting limits simulated time: `--max-cycles` for a node run from the command
    /// line, `max_us` for a cluster file, as its caller names it (see `set_limit_name`).
    pub fn set_limit_name(&mut self, name: &str) {
        self.limit_name = name.to_string();
    }

    /// "the time limit of X us (N cycles, raise it with NAME)".
    pub fn limit_text(&self) -> String {
        let t = self.clock.time_of(self.max_cycles);
        format!(
            "the time limit of {:.3} us ({} cycles; raise it with {})",
            t.as_us_f64(),
            self.max_cycles,
            self.limit_name
        )
    }

    /// Where each core that has not exited is waiting (for a quiescent end); cores an exit
    /// stopped (`exit = "node"`) are done, not waiting.
    pub fn waiting_cores(&self) -> Vec<String> {
        self.core_lines(|s| s.running())
    }

    /// "core N: pc 0x..., state" (prefixed with the node in clusters) for the cores whose
    /// state passes `keep`.
    fn core_lines(&self, keep: impl Fn(CoreState) -> bool + Copy) -> Vec<String> {
        let many = self.nodes.len() > 1;
        let lines = self.nodes.iter().flat_map(|node| {
            let prefix = if many { format!("node {}, ", node.index) } else { String::new() };
            let cores = node.cores.iter().zip(&node.state).filter(move |(_, s)| keep(**s));
            cores.map(move |(core, s)| {
                format!("{prefix}core {}: pc {:#x}, {}", core.hart(), core.pc(), s.describe())
            })
        });
        lines.collect()
    }
}

/// Pending events a simulation lets its queue reach before it stops with an error: the
/// queue's capacity less a margin for what one event may schedule at once.
const PENDING_LIMIT: usize = nanopu_sim::queue::QUEUE_CAPACITY - (1 << 16);

/// Host threads of partitioned runs unless set: `NANOPU_THREADS`, else every host core.
/// (A malformed `NANOPU_THREADS` is refused by the command line before any run: `env_threads`.)
fn default_threads() -> usize {
    let env = env_threads().ok().flatten();
    env.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `NANOPU_THREADS` if it is set: a whole number of host threads, 1 or more.
pub fn env_threads() -> Result<Option<usize>, String> {
    let Ok(v) = std::env::var("NANOPU_THREADS") else { return Ok(None) };
    match v.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(Some(n)),
        _ => Err(format!("NANOPU_THREADS={v:?} is not a number of host threads (1 or more)")),
    }
}

#[cfg(test)]
mod tests {
    /// The queue moves every event: a variant that grows `Ev` slows every run.
    #[test]
    fn an_event_is_32_bytes() {
        assert_eq!(std::mem::size_of::<super::Ev>(), 32);
    }
}
