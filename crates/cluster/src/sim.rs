//! The event loop: one node, its test host, and the link between them.
//!
//! Two queues: cores waiting to run (by local time) and everything else. At equal times the
//! other events go first, so a core dispatched at time t sees every arrival at t. A core runs
//! ahead until the earliest time anything not yet simulated could reach it
//! (`exact_until`) when it can take interrupts, else in long quanta, yielding early when an
//! access needs global time to catch up (see `platform`).

use crate::config::NodeConfig;
use crate::host::{HostMessage, TestHost};
use crate::node::{CoreState, Node};
use crate::platform::NodePlatform;
use crate::spin::spin_pcs;
use nanopu_nic::nic::RxState;
use nanopu_nic::{csr, Action, Message, NIC_IRQ_BIT};
use nanopu_riscv::{BlockOn, CoreError, Exit, Program, StallKind};
use nanopu_sim::time::serialization;
use nanopu_sim::{Clock, EventQueue, Time};
use std::fmt;
use std::sync::Arc;

/// Cycles a core that cannot be interrupted may run before the loop looks again (progress,
/// limits). Any value gives the same results; this one keeps event overhead below 1%.
const QUANTUM: u64 = 100_000;

#[derive(Debug)]
enum Ev {
    NicSend { core: usize, msg: Message },
    NicArrive { msg: Message },
    NicUpdate { core: usize },
    CoreTimer { core: usize },
    HostSend { msg: Message },
    HostArrive { msg: Message },
}

/// How a run ended when it did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every core exited.
    AllExited,
    /// Nothing left to simulate: every core that has not exited waits for something that
    /// will never come (typically a server waiting for requests after the last one).
    Quiescent,
}

/// Why a run failed.
#[derive(Debug)]
pub enum SimError {
    Setup(String),
    Core(CoreError),
    /// Simulated time passed the cycle limit; where every core was.
    CycleLimit {
        cycles: u64,
        cores: Vec<String>,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Setup(m) => write!(f, "{m}"),
            SimError::Core(e) => write!(f, "{e}"),
            SimError::CycleLimit { cycles, cores } => {
                write!(
                    f,
                    "cycle limit of {cycles} cycles reached (raise it with --max-cycles); cores:"
                )?;
                cores.iter().try_for_each(|c| write!(f, "\n  {c}"))
            }
        }
    }
}

impl std::error::Error for SimError {}

/// One node with a test host on its port.
pub struct Simulation {
    pub node: Node,
    pub host: TestHost,
    cfg: NodeConfig,
    clock: Clock,
    cores_q: EventQueue<usize>,
    q: EventQueue<Ev>,
    now: Time,
    to_node_busy: Time,
    to_host_busy: Time,
    core_dispatches: u64,
    /// `lnic_wait()` loops of the program (see `spin`).
    spin_pcs: Vec<u64>,
}

impl Simulation {
    /// Build a node running `program` (ELF bytes) under `cfg`, with an idle test host.
    pub fn new(elf: &[u8], cfg: NodeConfig) -> Result<Simulation, SimError> {
        cfg.validate().map_err(SimError::Setup)?;
        let program = Arc::new(Program::load(elf).map_err(|e| SimError::Setup(e.to_string()))?);
        let clock = Clock::from_hz(cfg.timing.clock_hz).map_err(SimError::Setup)?;
        let node = Node::new(0, &program, &cfg).map_err(SimError::Setup)?;
        let spin_pcs = spin_pcs(&node.mem, &program);
        let mut cores_q = EventQueue::new();
        (0..node.cores.len()).for_each(|c| cores_q.push(Time::ZERO, c));
        Ok(Simulation {
            node,
            host: TestHost::new(),
            cfg,
            clock,
            cores_q,
            q: EventQueue::new(),
            now: Time::ZERO,
            to_node_busy: Time::ZERO,
            to_host_busy: Time::ZERO,
            core_dispatches: 0,
            spin_pcs,
        })
    }

    pub fn now(&self) -> Time {
        self.now
    }
    pub fn clock(&self) -> Clock {
        self.clock
    }
    /// Events handled so far (core dispatches included).
    pub fn events(&self) -> u64 {
        self.q.popped() + self.cores_q.popped()
    }
    pub fn core_dispatches(&self) -> u64 {
        self.core_dispatches
    }

    /// Run until every core exits, nothing is left to do, or an error.
    pub fn run(&mut self) -> Result<Outcome, SimError> {
        for (t, msg) in std::mem::take(&mut self.host.script) {
            self.q.push(t, Ev::HostSend { msg });
        }
        let limit = self.clock.time_of(self.cfg.max_cycles);
        let mut progress = crate::report::Progress::new(self.cfg.progress);
        let end = self.event_loop(limit, &mut progress);
        progress.finish();
        end
    }

    fn event_loop(
        &mut self,
        limit: Time,
        progress: &mut crate::report::Progress,
    ) -> Result<Outcome, SimError> {
        loop {
            if self.node.all_halted() {
                return Ok(Outcome::AllExited);
            }
            let (t, core_next) = match (self.q.peek_time(), self.cores_q.peek_time()) {
                (None, None) => return Ok(Outcome::Quiescent),
                (Some(a), Some(b)) => (a.min(b), b < a),
                (Some(a), None) => (a, false),
                (None, Some(b)) => (b, true),
            };
            if t > limit {
                return Err(self.cycle_limit());
            }
            self.now = t;
            if core_next {
                let (_, c) = self.cores_q.pop().expect("peeked");
                self.dispatch(c)?;
            } else {
                let (_, ev) = self.q.pop().expect("peeked");
                self.handle(ev);
            }
            progress.tick(self.now, self.events());
        }
    }

    fn cycles(&self) -> u64 {
        self.clock.cycle_ceil(self.now)
    }

    fn at(&self, cycle: u64) -> Time {
        self.clock.time_of(cycle).max(self.now)
    }

    // ---- cores ---------------------------------------------------------------------------

    fn dispatch(&mut self, c: usize) -> Result<(), SimError> {
        self.core_dispatches += 1;
        let g = self.cycles();
        let peek = self
            .q
            .peek_time()
            .map_or(u64::MAX, |t| self.clock.cycle_ceil(t));
        let exact_until = peek.min(self.node.others_horizon(c));
        let node = &mut self.node;
        let core = &mut node.cores[c];
        let bound = if core.interrupts_enabled(NIC_IRQ_BIT) {
            exact_until.max(g + 1)
        } else {
            g + QUANTUM
        };
        let until = bound.min(self.cfg.max_cycles + 1);
        let mut plat = NodePlatform::new(&mut node.nic, g, exact_until, &self.spin_pcs);
        let exit = core.run(&mut node.mem, &mut plat, until);
        let (actions, last_rx) = (std::mem::take(&mut plat.actions), plat.last_rx);
        self.node.state[c] = CoreState::Scheduled(u64::MAX);
        self.apply(actions);
        self.after_run(c, g, exit, last_rx)
    }

    fn after_run(
        &mut self,
        c: usize,
        g: u64,
        exit: Exit,
        last_rx: Option<RxState>,
    ) -> Result<(), SimError> {
        let local = self.node.cores[c].cycle();
        match exit {
            Exit::Limit => self.schedule(c, local),
            Exit::Blocked(BlockOn::NetRx) => match last_rx {
                Some(RxState::At(x)) => self.wake(c, x, StallKind::NetRx),
                _ => self.park(c, CoreState::ParkedRx),
            },
            Exit::Blocked(BlockOn::NetTx) if local > g => self.schedule(c, local),
            Exit::Blocked(BlockOn::NetTx) => self.park(c, CoreState::ParkedTx),
            Exit::Blocked(BlockOn::Csr(csr::LMSGSRDY))
                if self
                    .spin_pcs
                    .binary_search(&self.node.cores[c].pc())
                    .is_ok() =>
            {
                self.park_until_ready(c, local)
            }
            Exit::Blocked(BlockOn::Csr(_)) => self.schedule(c, local),
            Exit::Wfi => self.enter_wfi(c),
            Exit::Halted(code) => self.node.state[c] = CoreState::Halted(code),
            Exit::Error(e) => return Err(SimError::Core(e)),
        }
        Ok(())
    }

    /// A core spinning in `lnic_wait()` waits, parked, for a readable word (see `spin`).
    fn park_until_ready(&mut self, c: usize, local: u64) {
        match self.node.nic.rx_state(c, local, 1) {
            Ok(RxState::At(x)) => self.wake(c, x, StallKind::NetRx),
            Ok(RxState::Empty) => self.park(c, CoreState::ParkedRx),
            _ => self.schedule(c, local),
        }
    }

    fn schedule(&mut self, c: usize, cycle: u64) {
        self.node.state[c] = CoreState::Scheduled(cycle);
        let t = self.at(cycle);
        self.cores_q.push(t, c);
    }

    fn park(&mut self, c: usize, state: CoreState) {
        self.node.state[c] = state;
        self.node
            .nic
            .set_waiting_rx(c, state == CoreState::ParkedRx);
    }

    /// Move a waiting core's clock to `cycle` (charging the stall) and schedule it.
    fn wake(&mut self, c: usize, cycle: u64, why: StallKind) {
        let core = &mut self.node.cores[c];
        core.advance_to(cycle.max(self.clock.cycle_ceil(self.now)), why);
        let local = core.cycle();
        self.node.nic.set_waiting_rx(c, false);
        self.schedule(c, local);
    }

    fn enter_wfi(&mut self, c: usize) {
        let node = &mut self.node;
        if node.cores[c].interrupt_pending(&node.mem) {
            let local = node.cores[c].cycle();
            return self.schedule(c, local);
        }
        node.state[c] = CoreState::Wfi;
        if let Some(d) = node.cores[c].timer_deadline(&node.mem) {
            let t = self.at(d);
            self.q.push(t, Ev::CoreTimer { core: c });
        }
    }

    /// A core in `wfi` resumes once an enabled interrupt is pending at the current time
    /// (its clock, stopped while it waits, first moves to now).
    fn wake_if_interrupted(&mut self, c: usize) {
        if self.node.state[c] != CoreState::Wfi {
            return;
        }
        let now = self.cycles();
        let node = &mut self.node;
        node.cores[c].advance_to(now, StallKind::Wfi);
        if node.cores[c].interrupt_pending(&node.mem) {
            self.wake(c, now, StallKind::Wfi);
        }
    }

    // ---- NIC and link ----------------------------------------------------------------------

    fn apply(&mut self, actions: Vec<Action>) {
        for a in actions {
            match a {
                Action::Send { core, at, msg } => {
                    self.q.push(self.at(at), Ev::NicSend { core, msg })
                }
                Action::Wake { core, at } if self.node.state[core] == CoreState::ParkedRx => {
                    self.wake(core, at, StallKind::NetRx)
                }
                Action::Wake { .. } => {}
                Action::Update { core, at } => self.q.push(self.at(at), Ev::NicUpdate { core }),
            }
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::NicSend { core, msg } => self.nic_send(core, msg),
            Ev::NicArrive { msg } => {
                let mut out = Vec::new();
                self.node.nic.receive(self.cycles(), msg, &mut out);
                self.apply(out);
            }
            Ev::NicUpdate { core } => {
                let level = self.node.nic.irq_level(core);
                self.node.cores[core].set_irq(NIC_IRQ_BIT, level);
                self.wake_if_interrupted(core);
            }
            Ev::CoreTimer { core } => self.wake_if_interrupted(core),
            Ev::HostSend { msg } => self.host_send(msg),
            Ev::HostArrive { msg } => self.host_arrive(msg),
        }
    }

    fn nic_send(&mut self, core: usize, msg: Message) {
        self.node.nic.tx_taken(core, &msg);
        if self.node.state[core] == CoreState::ParkedTx {
            self.wake(core, self.cycles(), StallKind::NetTx);
        }
        if msg.dst_ip == self.node.ip {
            let t = self.now + self.clock.time_of(self.node.nic.params().loopback_cycles);
            self.q.push(t, Ev::NicArrive { msg });
        } else {
            let depart = (self.now + Time(self.cfg.port.mac_fs)).max(self.to_host_busy);
            let ser = self.wire_time(&msg);
            self.to_host_busy = depart + ser;
            let t = depart + ser + Time(self.cfg.port.propagation_fs);
            self.q.push(t, Ev::HostArrive { msg });
        }
    }

    /// Serialization of a message: `ceil(len / segment)` packets of header + segment.
    fn wire_time(&self, msg: &Message) -> Time {
        let p = &self.cfg.port;
        let packets = (msg.len as u64).div_ceil(p.segment_bytes as u64).max(1);
        serialization(packets * p.header_bytes as u64 + msg.len as u64, p.rate_bps)
    }

    fn host_send(&mut self, msg: Message) {
        let depart = self.now.max(self.to_node_busy);
        let ser = self.wire_time(&msg);
        self.to_node_busy = depart + ser;
        self.host.sent.push(HostMessage {
            time: depart + ser,
            msg: msg.clone(),
        });
        let t = depart + ser + Time(self.cfg.port.propagation_fs + self.cfg.port.mac_fs);
        self.q.push(t, Ev::NicArrive { msg });
    }

    fn host_arrive(&mut self, msg: Message) {
        let now = self.now;
        let replies = self
            .host
            .responder
            .as_mut()
            .map(|f| f(now, &msg))
            .unwrap_or_default();
        self.host.received.push(HostMessage { time: now, msg });
        for (t, m) in replies {
            self.q.push(t.max(now), Ev::HostSend { msg: m });
        }
    }

    // ---- ends ------------------------------------------------------------------------------

    fn cycle_limit(&self) -> SimError {
        SimError::CycleLimit {
            cycles: self.cfg.max_cycles,
            cores: self.core_lines(|_| true),
        }
    }

    /// Where each core that has not exited is waiting (for a quiescent end).
    pub fn waiting_cores(&self) -> Vec<String> {
        self.core_lines(|s| !matches!(s, CoreState::Halted(_)))
    }

    /// "core N: pc 0x..., state" for the cores whose state passes `keep`.
    fn core_lines(&self, keep: impl Fn(CoreState) -> bool) -> Vec<String> {
        let cores = self.node.cores.iter().zip(&self.node.state);
        cores
            .filter(|(_, s)| keep(**s))
            .map(|(core, s)| {
                format!(
                    "core {}: pc {:#x}, {}",
                    core.hart(),
                    core.pc(),
                    s.describe()
                )
            })
            .collect()
    }
}
