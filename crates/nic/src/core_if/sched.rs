//! The hardware thread scheduler of one core (docs/platform.md section 3).
//!
//! A context is active while it holds a delivered message it has not reported done. The
//! target is the active context of highest priority (0 is highest), ties to the oldest head
//! message. The NIC interrupts the core, which runs the nanokernel's switch, when the target
//! is not the running context and
//! - it outranks the running context (a higher-priority arrival, or the running context was
//!   demoted);
//! - the running context reported done or idle (`lnicucmd`) since it was switched in or last
//!   received a message;
//! - the running context has held no message for `lidlecycles` (round robin);
//! - no context is active and the running one has been idle for `lidlecycles`: the idle
//!   timeout makes the head of the registered contexts' round-robin queue the target and
//!   moves it to the queue's tail (`rotate_if_due`), so that every thread starts, and a
//!   thread switched out while computing (inside `printf`, holding its lock) comes back;
//!   it stops while every context waits on netRX with nothing delivered to it;
//!
//! and it demotes a priority-0 context to priority 1 once it has spent `lmsgcycles` on one
//! message (bounded processing time). The demotion lasts: the prototype's NIC writes a
//! context's priority only when the context is registered and when it demotes it
//! (l-nic/rocket-chip, branch `lnic-dev`, `rocket/LNICQueues.scala`, `LNICRxQueues`:
//! `priorities(cur_index) := io.cur_priority` on `io.insert`, `priorities(io.cur_context)
//! := 1.U` when `msg_timer >= io.msg_proc_max_cycles`; nothing else), so a misbehaving
//! thread stays below the well-behaved ones until it registers again.
//!
//! Timers only matter when a core has more than one context, so deadlines are only
//! scheduled then (with one context the target is always the running one).

use crate::core_if::{Context, CoreIf};

/// Scheduler state of one core besides its contexts.
#[derive(Clone, Debug, Default)]
pub struct SchedState {
    /// The running context reported done or idle; cleared by a switch (`lcurcontext` write)
    /// or a delivery to the running context.
    pub yield_req: bool,
    /// Cycle at which the message timer was last restarted: `lniccmd` bit2, or a done or
    /// idle report (`lnicucmd`).
    pub timer_start: u64,
    /// Cycle since which the running context has held no message.
    pub idle_since: u64,
    /// Priority-0 contexts demoted for exceeding `lmsgcycles`.
    pub demotions: u64,
    /// The context the idle timeout chose while none is active; cleared by a switch or a
    /// delivery.
    pub rotation: Option<u16>,
    /// Position in `contexts` (registration order) of the head of the round-robin queue:
    /// the context the next idle timeout chooses.
    pub rr_head: usize,
}

impl CoreIf {
    /// The scheduler's choice (docs/models/node.md, "Core selection and the thread
    /// scheduler"): the best active context, else the idle timeout's choice.
    pub fn target(&self) -> Option<&Context> {
        let active = self.contexts.iter().filter(|c| c.active()).min_by_key(|c| (c.priority, c.head_seq()));
        active.or_else(|| self.context(self.sched.rotation?))
    }

    /// Should the interrupt line be raised at `now`? (Rules in the module comment.)
    pub fn wants_irq(&self, now: u64) -> bool {
        let Some(t) = self.target() else { return false };
        if t.id == self.cur_context {
            return false;
        }
        let Some(cur) = self.current() else { return true };
        let rotated = self.sched.rotation == Some(t.id);
        rotated || t.priority < self.cur_priority || self.sched.yield_req || self.idle_expired(cur, now)
    }

    /// `lidle`: the running context is idle only if its local queue is empty, as in the
    /// prototype (`LNICRxQueues`: `ctx_state := sIdle` when `(msg_done || idle) &&
    /// counts(cur) === 0`, l-nic/rocket-chip `rocket/LNICQueues.scala`). A context marked
    /// idle with messages queued would stay inactive until its next delivery, which JBSQ
    /// withholds while it holds n messages: it would starve.
    pub fn on_idle(&mut self) {
        let id = self.cur_context;
        if let Some(c) = self.context_mut(id).filter(|c| c.rxq.is_empty()) {
            c.idle = true;
        }
    }

    /// When the idle timeout next fires (l-nic/rocket-chip, branch `lnic-dev`,
    /// `rocket/LNICQueues.scala`, `LNICRxQueues`: `idle_timer >= io.idle_timeout_cycles &&
    /// ctx_state(io.cur_context) === sIdle && num_running_contexts > 1.U`): two or more
    /// contexts registered and the running one idle for `lidlecycles`. While a context is
    /// active the timeout only raises the line for it (`idle_expired`, the interrupt the
    /// prototype raises with it) and the model leaves the queue as it is; the prototype also
    /// moves the queue's head to its tail then. The prototype's timer fires forever; the
    /// model's stops while every context waits (`Context::waiting`), since a thread switched
    /// back into its netRX wait with nothing for it only waits again, and a finished run
    /// must end. A delivery ends the wait.
    fn rotation_deadline(&self) -> Option<u64> {
        let any_active = self.contexts.iter().any(|c| c.active());
        let all_wait = self.contexts.iter().all(|c| c.waiting);
        (self.contexts.len() >= 2 && !any_active && !all_wait)
            .then(|| self.sched.idle_since.saturating_add(self.idle_cycles))
    }

    /// The next idle timeout after `now`, if it is due to fire.
    pub fn next_rotation(&self, now: u64) -> Option<u64> {
        self.rotation_deadline().filter(|&d| d > now)
    }

    /// The idle timeout at `now`, if due with no context active (`LNICRxQueues`: on the
    /// timeout the head of `running_contexts`, the registered contexts in registration
    /// order, moves to the queue's tail and becomes `top_context`; the line rises if it is
    /// not the running context; `idle_timer` restarts). Returns whether it fired.
    pub fn rotate_if_due(&mut self, now: u64) -> bool {
        if self.rotation_deadline().is_none_or(|d| now < d) {
            return false;
        }
        let head = self.sched.rr_head % self.contexts.len();
        self.sched.rr_head = (head + 1) % self.contexts.len();
        self.sched.rotation = Some(self.contexts[head].id);
        self.sched.idle_since = now;
        true
    }

    fn idle_expired(&self, cur: &Context, now: u64) -> bool {
        !cur.active() && now >= self.sched.idle_since.saturating_add(self.idle_cycles)
    }

    /// When the running context's processing bound runs out, if it can.
    pub fn demotion_deadline(&self) -> Option<u64> {
        let cur = self.current().filter(|c| c.active() && c.priority == 0 && self.msg_cycles > 0)?;
        Some(cur.head_since.max(self.sched.timer_start).saturating_add(self.msg_cycles))
    }

    /// Demote the running context if its bound has run out at `now`. A demotion that raises
    /// the line restarts the message timer, as the prototype's does (`LNICRxQueues`:
    /// `msg_timer := 0.U` with the interrupt of a lowered priority), so the context switched
    /// in for it starts with a fresh bound and is not demoted in turn before the
    /// nanokernel's own restart.
    pub fn demote_if_due(&mut self, now: u64) {
        if self.demotion_deadline().is_some_and(|d| now >= d) {
            let cur = self.cur_context;
            self.context_mut(cur).expect("deadline implies a current context").priority = 1;
            self.cur_priority = self.cur_priority.max(1);
            self.sched.demotions += 1;
            if self.target().is_some_and(|t| t.id != cur) {
                self.sched.timer_start = now;
            }
        }
    }

    /// The line is low and stays low until the next CSR write: the only registered context
    /// is the running one, so it is always the target (or nothing is). Most programs run
    /// one context per core; skipping their re-evaluations saves two events per message.
    pub fn line_settled(&self) -> bool {
        !self.irq && self.contexts.len() == 1 && self.contexts[0].id == self.cur_context
    }

    /// Cycles at which the interrupt line may change without any other event.
    pub fn deadlines(&self) -> impl Iterator<Item = u64> {
        let idle = self.current().filter(|c| !c.active()).map(|_| self.sched.idle_since + self.idle_cycles);
        let timers = self.contexts.len() >= 2;
        let rotation = self.rotation_deadline();
        [self.demotion_deadline(), idle, rotation].into_iter().flatten().filter(move |_| timers)
    }

    /// The running context reported a message done at `now`: its head message leaves
    /// `outstanding` and the next is its head; `false` if it had none (a spurious report).
    /// A demoted context keeps priority 1, and `lcurpriority` keeps what was written: the
    /// prototype's NIC changes neither on `msg_done` (see the module comment). One look-up
    /// of the context for the pop and the head (a sort's cores report every message).
    #[inline]
    pub fn on_done(&mut self, now: u64) -> bool {
        let id = self.cur_context;
        let Some(c) = self.context_mut(id) else { return false };
        if c.outstanding.pop_front().is_none() {
            return false;
        }
        c.head_since = c.outstanding.front().map_or(now, |&(_, ready)| ready.max(now));
        if c.outstanding.is_empty() {
            self.sched.idle_since = now;
        }
        true
    }

    /// The running context reported done or idle (`lnicucmd` bit0 or bit1) at `now`: the
    /// scheduler may answer with a switch, and the message timer restarts, as the
    /// prototype's (`LNICRxQueues`: `msg_timer := 0` when `io.msg_done || io.idle ||
    /// io.start_timer`). Without that restart a context whose message became its head while
    /// another ran would be demoted the moment it is switched in, before the nanokernel's
    /// own restart.
    pub fn on_report(&mut self, now: u64) {
        self.sched.yield_req = true;
        self.sched.timer_start = now;
    }

    /// The nanokernel switched to another context at `now`.
    pub fn on_switch(&mut self, now: u64) {
        self.sched.yield_req = false;
        self.sched.idle_since = now;
        self.sched.rotation = None;
        let id = self.cur_context;
        if let Some(c) = self.context_mut(id) {
            c.ran = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core(contexts: &[(u16, u8)]) -> CoreIf {
        let mut c = CoreIf::new(3000, 3000);
        c.contexts = contexts.iter().map(|&(id, p)| Context::new(id, p)).collect();
        c
    }

    fn give(c: &mut CoreIf, ctx: usize, seq: u64, ready: u64) {
        let x = &mut c.contexts[ctx];
        if x.outstanding.is_empty() {
            x.head_since = ready;
        }
        x.outstanding.push_back((seq, ready));
    }

    #[test]
    fn target_prefers_priority_then_oldest_head() {
        let mut c = core(&[(0, 1), (1, 0), (2, 0)]);
        give(&mut c, 0, 1, 0);
        assert_eq!(c.target().unwrap().id, 0);
        give(&mut c, 2, 5, 0);
        give(&mut c, 1, 7, 0);
        assert_eq!(c.target().unwrap().id, 2);
        (c.cur_context, c.cur_priority) = (0, 1);
        assert!(c.wants_irq(0));
    }

    #[test]
    fn equal_priority_arrival_waits_for_done_or_idle_timeout() {
        let mut c = core(&[(0, 0), (1, 0)]);
        give(&mut c, 0, 1, 0);
        give(&mut c, 1, 2, 10);
        assert!(!c.wants_irq(20), "the running context is busy and not outranked");
        assert!(c.on_done(100), "context 0 held a message");
        assert!(!c.wants_irq(100), "no report yet: only the idle timeout applies");
        assert!(c.wants_irq(3100), "idle for lidlecycles");
        c.sched.yield_req = true;
        assert!(c.wants_irq(100), "done reported");
    }

    /// A done report pops the running context's head and makes the next its head; with
    /// nothing outstanding it is spurious and changes nothing.
    #[test]
    fn done_pops_the_head_and_a_spurious_done_changes_nothing() {
        let mut c = core(&[(0, 0)]);
        give(&mut c, 0, 1, 10);
        give(&mut c, 0, 2, 20);
        assert!(c.on_done(15));
        assert_eq!((c.contexts[0].head_seq(), c.contexts[0].head_since), (Some(2), 20));
        assert!(c.on_done(30));
        assert_eq!((c.contexts[0].head_seq(), c.sched.idle_since), (None, 30));
        assert!(!c.on_done(40), "nothing outstanding");
        assert_eq!(c.sched.idle_since, 30);
    }

    #[test]
    fn priority_zero_is_demoted_after_its_bound() {
        let mut c = core(&[(0, 0), (1, 0)]);
        give(&mut c, 0, 1, 50);
        give(&mut c, 1, 2, 60);
        assert_eq!(c.demotion_deadline(), Some(3050));
        c.demote_if_due(3049);
        assert!(!c.wants_irq(3049));
        c.demote_if_due(3050);
        assert_eq!((c.cur_priority, c.sched.demotions), (1, 1));
        assert!(c.wants_irq(3050), "the waiting priority-0 context outranks the demoted one");
        assert!(c.on_done(4000), "context 0 held a message");
        assert_eq!((c.contexts[0].priority, c.cur_priority), (1, 1), "done does not restore (LNICRxQueues)");
    }

    #[test]
    fn a_done_or_idle_report_restarts_the_message_timer() {
        let mut c = core(&[(0, 0), (1, 0)]);
        give(&mut c, 0, 1, 0);
        give(&mut c, 1, 2, 0);
        c.cur_context = 1;
        c.on_report(2500);
        c.cur_context = 0; // switched to context 0, its message its head since cycle 0
        assert_eq!(c.demotion_deadline(), Some(5500), "counted from context 1's report");
        c.demote_if_due(3100);
        assert_eq!(c.sched.demotions, 0);
    }

    #[test]
    fn the_context_switched_in_for_a_demotion_gets_a_fresh_bound() {
        let mut c = core(&[(0, 0), (1, 0)]);
        give(&mut c, 1, 1, 0);
        give(&mut c, 0, 2, 100);
        c.cur_context = 1;
        c.demote_if_due(3000);
        c.cur_context = 0; // the nanokernel's lcurcontext write, before its timer restart
        c.demote_if_due(3070);
        assert_eq!(c.sched.demotions, 1, "context 0 waited since cycle 100 but was not demoted");
        assert_eq!(c.demotion_deadline(), Some(6000));
    }

    #[test]
    fn a_demoted_context_stays_below_an_equal_priority_one() {
        let mut c = core(&[(0, 0), (1, 0)]);
        give(&mut c, 1, 1, 0);
        c.cur_context = 1;
        c.demote_if_due(3000);
        assert!(c.on_done(5000), "context 1 held a message");
        give(&mut c, 1, 2, 5000);
        give(&mut c, 0, 3, 5100);
        assert_eq!(c.target().unwrap().id, 0, "context 0's later message goes first");
        assert!(c.wants_irq(5100), "and preempts context 1's plain request at once");
    }
}
