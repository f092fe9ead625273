//! Running cores ahead of global time, and parking and waking them.

use crate::engine::{Ev, Simulation};
use crate::node::platform::NodePlatform;
use crate::node::{CoreState, Others};
use crate::SimError;
use nanopu_nic::nic::RxState;
use nanopu_nic::{csr, Action, NIC_IRQ_BIT};
use nanopu_riscv::{BlockOn, Exit, StallKind};

/// Cycles a core may run in one dispatch before the loop looks again (progress, limits,
/// Ctrl-C), whether or not it can be interrupted: an interruptible core with nothing
/// pending anywhere could otherwise run to the time limit in one dispatch, hours of host
/// time deaf to Ctrl-C. Any value gives the same results; this one keeps event overhead
/// below 1%.
const QUANTUM: u64 = 100_000;

/// Cycles a core of a node may run past the earliest other running core of the node while
/// it is not polling memory (docs/models/node.md "Cores sharing memory"): a store another
/// core makes is seen at most this late by a core reading the line once (a core polling
/// it is held closer), and a load of a line stored in the reader's future waits at most
/// this long for it.
const SHARING_WINDOW: u64 = 256;

/// A core: (node, core within the node).
pub type Cid = (usize, usize);

impl Simulation {
    pub(crate) fn dispatch(&mut self, (n, c): Cid) -> Result<(), SimError> {
        self.core_dispatches += 1;
        let g = self.cycles();
        let peek = self.q.peek_time().map_or(u64::MAX, |t| self.clock.cycle_ceil(t));
        let other_nodes = self
            .cores_q
            .peek_time()
            .map_or(u64::MAX, |t| self.clock.cycle_floor(t).saturating_add(self.cross_node_cycles));
        let others = self.nodes[n].others(c);
        let exact_until = peek.min(others.horizon).min(other_nodes).min(self.horizon);
        let node = &mut self.nodes[n];
        let irq_bit = node.irq_bit();
        if std::mem::replace(&mut node.last_run, c) != c {
            node.cores[c].drop_reservation();
        }
        let step = sharing_step(node, c, others);
        let core = &mut node.cores[c];
        // An interruptible core as far as the next event allows, another to its step; either
        // at most a quantum, so the loop looks for a stop in time (`engine/stop.rs`).
        let exact = if core.interrupts_enabled(irq_bit) { exact_until.max(g + 1) } else { step.max(g + 1) };
        let bound = exact.min(g + QUANTUM);
        // Not past the run's end, its cycle limit or a deadline (`--until-us`), by more than
        // the one cycle that takes a core's clock past it (so the run ends; global time is
        // at most the end, hence g < end + 1 and every dispatch makes progress).
        let end = self.deadline.map_or(self.max_cycles, |d| self.max_cycles.min(self.clock.cycle_ceil(d)));
        // Nor past its node's crash (`fault`): what it would do after is never done.
        let until =
            bound.min(g.saturating_add(self.run_ahead)).min(end.saturating_add(1)).min(node.crash_cycle);
        let actions = &mut self.spare_actions;
        let mut plat = NodePlatform::new(&mut node.nic, g, exact_until, &node.spin_pcs, actions);
        plat.cross_node_cycles = self.cross_node_cycles;
        let before = core.cycle();
        let exit = core.run(&mut node.mem, &mut plat, until);
        self.work += crate::engine::stop::dispatch_units(core.cycle().saturating_sub(before));
        // Taken apart, not dropped: what is left holds nothing to drop.
        let NodePlatform { last_rx, ice_actions, rdma_actions, .. } = plat;
        node.publish_stores(c, g);
        node.state[c] = CoreState::Scheduled(u64::MAX);
        if !self.spare_actions.is_empty() {
            let actions = std::mem::take(&mut self.spare_actions);
            self.apply(n, actions);
        }
        // Only an IceNIC's or RDMA NIC's dispatches ask for these: the others skip the calls.
        // A list never given room (the platform makes them anew at each dispatch) holds
        // nothing and owns nothing, so forgetting it spares two calls of its drop.
        match ice_actions.capacity() {
            0 => std::mem::forget(ice_actions),
            _ => self.apply_ice(n, ice_actions),
        }
        self.zero_watch_regions(n);
        match rdma_actions.capacity() {
            0 => std::mem::forget(rdma_actions),
            _ => self.apply_rdma(n, rdma_actions),
        }
        self.after_run((n, c), g, exit, last_rx)
    }

    fn after_run(
        &mut self,
        (n, c): Cid,
        g: u64,
        exit: Exit,
        last_rx: Option<RxState>,
    ) -> Result<(), SimError> {
        let node = &self.nodes[n];
        let local = node.cores[c].cycle();
        let spinning = node.spin_pcs.binary_search(&node.cores[c].pc()).is_ok();
        match exit {
            Exit::Limit => self.schedule((n, c), local),
            Exit::Blocked(BlockOn::NetRx) => match last_rx {
                Some(RxState::At(x)) => self.wake((n, c), x, StallKind::NetRx),
                _ => self.park((n, c), CoreState::ParkedRx),
            },
            Exit::Blocked(BlockOn::NetTx) if local > g => self.schedule((n, c), local),
            Exit::Blocked(BlockOn::NetTx) => self.park((n, c), CoreState::ParkedTx),
            Exit::Blocked(BlockOn::Csr(csr::LMSGSRDY)) if spinning => self.park_until_ready((n, c), local),
            Exit::Blocked(BlockOn::Csr(_)) => self.schedule((n, c), local),
            // A device register that needs global time (crates/riscv/src/mmio.rs; IceNIC's,
            // docs/models/icenic.md): run the core again at its own cycle, as a CSR that does.
            Exit::Blocked(BlockOn::Mmio) => self.schedule((n, c), local),
            Exit::Wfi => self.enter_wfi((n, c)),
            Exit::Halted(code) => {
                self.nodes[n].state[c] = CoreState::Halted(code);
                self.running_cores -= 1;
                if self.nodes[n].first_exit_ends {
                    self.stop_node(n, c);
                }
                if !self.nodes[n].state.iter().any(CoreState::running) {
                    self.nodes[n].mem.forget_stores();
                }
                // A core runs ahead of global time: it exited at its own cycle, not at the
                // dispatch that ran it.
                self.exited_at = self.exited_at.max(self.at(local));
            }
            Exit::Error(error) => {
                self.running_cores -= 1;
                let t = self.at(local);
                self.fail(t, self.nodes[n].index, c, *error);
            }
        }
        Ok(())
    }

    /// Core `by` exited and that ends node `n`: every core still running stops there. A
    /// stopped core is never woken (every waker checks the state) and its entry in the
    /// core queue, if any, is skipped (`dispatch`).
    fn stop_node(&mut self, n: usize, by: usize) {
        for s in self.nodes[n].state.iter_mut().filter(|s| s.running()) {
            *s = CoreState::Stopped(by);
            self.running_cores -= 1;
        }
    }

    /// A core spinning in `lnic_wait()` waits, parked, for a readable word (see `spin`).
    /// With no registered current context nothing can arrive for it, and only the core
    /// itself could register one: it waits for an interrupt, like an empty queue
    /// (dispatching it again at the same cycle would stop simulated time).
    fn park_until_ready(&mut self, id: Cid, local: u64) {
        let nic = self.nodes[id.0].nic.nanopu().expect("only a nanoPU NIC's lnic_wait() parks");
        match nic.rx_state(id.1, local, 1) {
            Ok(RxState::At(x)) => self.wake(id, x, StallKind::NetRx),
            Ok(RxState::Empty) | Err(_) => self.park(id, CoreState::ParkedRx),
            Ok(RxState::Ready) => self.schedule(id, local),
        }
    }

    fn schedule(&mut self, (n, c): Cid, cycle: u64) {
        self.nodes[n].state[c] = CoreState::Scheduled(cycle);
        let t = self.at(cycle);
        self.cores_q.push(t, (n, c));
    }

    /// A parked core waits for its queue, or for an interrupt it would take (the nanokernel
    /// switches threads while one waits in `lnic_wait()`), timer interrupts included.
    fn park(&mut self, (n, c): Cid, state: CoreState) {
        let node = &mut self.nodes[n];
        node.state[c] = state;
        if let Some(nic) = node.nic.nanopu_mut() {
            nic.set_waiting_rx(c, state == CoreState::ParkedRx);
        }
        if node.cores[c].interrupt_would_trap(&node.mem) {
            let local = node.cores[c].cycle();
            return self.schedule((n, c), local);
        }
        if let Some(d) = node.cores[c].trap_timer_deadline(&node.mem) {
            let t = self.at(d);
            self.q.push(t, Ev::CoreTimer { node: n, core: c });
        }
    }

    /// Move a waiting core's clock to `cycle` (charging the stall) and schedule it.
    pub(crate) fn wake(&mut self, (n, c): Cid, cycle: u64, why: StallKind) {
        let now = self.cycles();
        let core = &mut self.nodes[n].cores[c];
        core.advance_to(cycle.max(now), why);
        let local = core.cycle();
        if let Some(nic) = self.nodes[n].nic.nanopu_mut() {
            nic.set_waiting_rx(c, false);
        }
        self.schedule((n, c), local);
    }

    fn enter_wfi(&mut self, (n, c): Cid) {
        let node = &mut self.nodes[n];
        if node.cores[c].interrupt_pending(&node.mem) {
            let local = node.cores[c].cycle();
            return self.schedule((n, c), local);
        }
        node.state[c] = CoreState::Wfi;
        if let Some(d) = node.cores[c].timer_deadline(&node.mem) {
            let t = self.at(d);
            self.q.push(t, Ev::CoreTimer { node: n, core: c });
        }
    }

    /// A core in `wfi` resumes once an enabled interrupt is pending at the current time (its
    /// clock, stopped while it waits, first moves to now); a core parked on netRX or netTX
    /// once it would take one.
    pub(crate) fn wake_if_interrupted(&mut self, (n, c): Cid) {
        let why = match self.nodes[n].state[c] {
            CoreState::Wfi => StallKind::Wfi,
            CoreState::ParkedRx => StallKind::NetRx,
            CoreState::ParkedTx => StallKind::NetTx,
            _ => return,
        };
        let now = self.cycles();
        let node = &mut self.nodes[n];
        let core = &mut node.cores[c];
        if core.cycle() < now {
            core.advance_to(now, why);
        }
        let wakes = if why == StallKind::Wfi {
            core.interrupt_pending(&node.mem)
        } else {
            core.interrupt_would_trap(&node.mem)
        };
        if wakes {
            self.wake((n, c), now, why);
        }
    }

    /// Turn what a node's NIC asked for into events; the emptied vector is kept for the
    /// next (`spare_actions`).
    pub(crate) fn apply(&mut self, n: usize, mut actions: Vec<Action>) {
        for a in actions.drain(..) {
            match a {
                Action::Send { core, at, msg } => {
                    self.q.push(self.at(at), Ev::NicSend { node: n, core, msg: Box::new(msg) })
                }
                Action::Wake { core, at } if self.nodes[n].state[core] == CoreState::ParkedRx => {
                    self.wake((n, core), at, StallKind::NetRx)
                }
                Action::Wake { .. } => {}
                Action::Update { core, at } => self.q.push(self.at(at), Ev::NicUpdate { node: n, core }),
            }
        }
        if actions.capacity() > self.spare_actions.capacity() {
            self.spare_actions = actions;
        }
    }

    /// Re-evaluate a core's interrupt line.
    pub(crate) fn update_irq(&mut self, (n, c): Cid) {
        let now = self.cycles();
        let Some(nic) = self.nodes[n].nic.nanopu_mut() else { return };
        let (level, next_rotation) = nic.update(c, now);
        self.nodes[n].cores[c].set_irq(NIC_IRQ_BIT, level);
        self.wake_if_interrupted((n, c));
        if let Some(d) = next_rotation.filter(|_| self.nic_irq_reaches((n, c))) {
            self.q.push(self.at(d), Ev::NicUpdate { node: n, core: c });
        }
    }

    /// Could the NIC's interrupt reach the core: it runs (or will, once its TX queue has
    /// room), or it waits in a way the interrupt ends? The idle timeout's rotation goes on
    /// only then: a core that cannot take the interrupt would never see it, and its run
    /// ends with the contexts it left behind reported (`report::judge`).
    fn nic_irq_reaches(&self, (n, c): Cid) -> bool {
        let core = &self.nodes[n].cores[c];
        match self.nodes[n].state[c] {
            CoreState::Scheduled(_) | CoreState::ParkedTx => true,
            CoreState::ParkedRx => core.interrupts_enabled(NIC_IRQ_BIT),
            CoreState::Wfi => core.wfi_wakes_for(NIC_IRQ_BIT),
            _ => false,
        }
    }

    /// A core's TX queue has room again.
    pub(crate) fn tx_room(&mut self, (n, c): Cid) {
        if self.nodes[n].state[c] == CoreState::ParkedTx {
            self.wake((n, c), self.cycles(), StallKind::NetTx);
        }
    }
}

/// How far core `c` of `node` may run while other cores of its node run: cores that run at
/// once are held a window apart, and a core polling a line within the NIC's RX path of the
/// earliest other, so each sees the others' stores within a few cycles; a core's stores go
/// to every core of the node that has yet to finish (docs/models/node.md "Cores sharing
/// memory"). `others`: the node's `others(c)`. `u64::MAX` for a core alone, or looping on
/// itself.
fn sharing_step(node: &mut crate::node::Node, c: usize, others: Others) -> u64 {
    let own_loop = node.cores[c].looping();
    let sharing = !own_loop && others.running;
    let core = &mut node.cores[c];
    let step = if own_loop || others.horizon == u64::MAX {
        u64::MAX
    } else if core.polls() {
        others.horizon
    } else {
        others.horizon.saturating_add(SHARING_WINDOW)
    };
    core.set_sharing(sharing, step == others.horizon);
    step
}
