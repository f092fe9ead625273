//! The NIC of one node: delivery with JBSQ core selection, TX completion, CSRs, interrupts.

use crate::core_if::{Context, CoreIf};
use crate::csr::*;
use crate::message::{words_for, Message};
use crate::params::{CoreSelection, NicParams};
use std::collections::VecDeque;
use std::sync::Arc;

mod by_context;
use by_context::ByContext;

/// Something the caller must do at a given cycle of the node clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// A finished message leaves the TX path of `core` at `at`. The caller frees its words
    /// with [`Nic::tx_taken`] then, and routes the message (back into this NIC when
    /// `dst_ip` is the NIC's own, else out of the node's port).
    Send { core: usize, at: u64, msg: Message },
    /// `core` is parked on netRX and the word it waits for is readable at `at`.
    Wake { core: usize, at: u64 },
    /// Re-evaluate the interrupt line of `core` ([`Nic::irq_level`]) at `at`.
    Update { core: usize, at: u64 },
}

/// Where a netRX read of `need` words stands at a given cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxState {
    Ready,
    /// The words are queued and become readable at this cycle.
    At(u64),
    /// Not enough words are queued.
    Empty,
}

/// Counters of what passed through the NIC.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NicCounters {
    pub msgs_sent: u64,
    pub msgs_received: u64,
    pub msgs_delivered: u64,
    pub words_read: u64,
    pub words_written: u64,
    /// `lnic_msg_done` with nothing outstanding on the current context.
    pub spurious_done: u64,
    /// Words dropped because their context was removed while they were queued.
    pub words_dropped_on_remove: u64,
}

/// Entries a drained queue keeps; a queue that grew past them gives the rest back. The
/// queues fill in bursts (a shuffle's messages waiting for a core) and would otherwise keep
/// the capacity of their busiest moment for the whole run: at 56 bytes a waiting message,
/// several KiB per node. (A context's RX queue does the same, `core_if::RxQueue`.) One: a
/// message seldom waits for a core, and each of a node's contexts kept room for 8 (448
/// bytes; 1.5 KiB a node of the 16,384-core sort at its peak); 0 made every burst of one
/// allocate and free it again (host instructions of the 1,024-core sort: 0.06% more with 1
/// than with 8, 0.2% with 0).
const KEEP: usize = 1;

/// One node's NIC.
#[derive(Clone, Debug)]
pub struct Nic {
    /// Shared by the nodes of one configuration (80 bytes in each node's `NodeNic`).
    params: Arc<NicParams>,
    ip: u32,
    cores: Vec<CoreIf>,
    /// Per context id: complete messages not yet given to a core, with arrival sequence.
    waiting: ByContext<VecDeque<(u64, Message)>>,
    /// Per context id: the cores that registered it, in core order.
    registry: ByContext<Vec<usize>>,
    next_seq: u64,
    pub counters: NicCounters,
}

impl Nic {
    /// A NIC of parameters `params`, which nodes may share (an `Arc`).
    pub fn new(params: impl Into<Arc<NicParams>>, ip: u32) -> Result<Nic, String> {
        let params = params.into();
        params.validate()?;
        let cores = (0..params.cores).map(|_| CoreIf::new(params.msg_cycles, params.idle_cycles));
        Ok(Nic {
            cores: cores.collect(),
            params,
            ip,
            waiting: ByContext::default(),
            registry: ByContext::default(),
            next_seq: 0,
            counters: NicCounters::default(),
        })
    }
    pub fn ip(&self) -> u32 {
        self.ip
    }
    pub fn params(&self) -> &NicParams {
        &self.params
    }
    pub fn core(&self, core: usize) -> &CoreIf {
        &self.cores[core]
    }
    /// The core parked on netRX (`waiting`) or resumed. Parking marks its running context
    /// as waiting for a message until something is delivered to it (`Context::waiting`);
    /// resuming does not clear that, since an interrupt resumes the core only to switch the
    /// thread out where it waits.
    pub fn set_waiting_rx(&mut self, core: usize, waiting: bool) {
        let c = &mut self.cores[core];
        c.waiting_rx = waiting;
        let cur = c.cur_context;
        if let Some(ctx) = c.context_mut(cur).filter(|_| waiting) {
            ctx.waiting = true;
        }
    }
    /// Messages held in the NIC for a context, not yet given to any core.
    pub fn held(&self) -> impl Iterator<Item = (u16, usize)> + '_ {
        self.waiting.iter().filter(|(_, q)| !q.is_empty()).map(|(c, q)| (c, q.len()))
    }

    // ---- netRX -------------------------------------------------------------------------

    fn current(&self, core: usize) -> Result<&Context, String> {
        self.cores[core].current().ok_or_else(|| self.unregistered(core))
    }

    #[cold]
    fn unregistered(&self, core: usize) -> String {
        format!(
            "netRX read, but the current context {} is not registered on this core (call lnic_add_context first)",
            self.cores[core].cur_context
        )
    }

    /// Can `need` words be read from netRX at `now`?
    pub fn rx_state(&self, core: usize, now: u64, need: usize) -> Result<RxState, String> {
        let ctx = self.current(core)?;
        Ok(if ctx.ready(now, need) {
            RxState::Ready
        } else {
            ctx.ready_at(need).map_or(RxState::Empty, RxState::At)
        })
    }

    /// Pop one readable word (only after `rx_state` said `Ready`).
    pub fn rx_pop(&mut self, core: usize) -> u64 {
        let c = &mut self.cores[core];
        let cur = c.cur_context;
        let ctx = c.context_mut(cur).expect("rx_pop without a registered current context");
        self.counters.words_read += 1;
        ctx.rxq.pop()
    }

    /// `rx_state` for one word and, when it is `Ready`, `rx_pop`: the word, or where the
    /// read stands. The common netRX read, with one look-up of the context where the two
    /// calls made two (each a third of the host instructions of a read, callgrind).
    #[inline]
    pub fn rx_read(&mut self, core: usize, now: u64) -> Result<Result<u64, RxState>, String> {
        let c = &mut self.cores[core];
        let cur = c.cur_context;
        let Some(ctx) = c.context_mut(cur) else { return Err(self.unregistered(core)) };
        match ctx.rxq.pop_by(now) {
            Ok(word) => {
                self.counters.words_read += 1;
                Ok(Ok(word))
            }
            Err(at) => Ok(Err(at.map_or(RxState::Empty, RxState::At))),
        }
    }

    // ---- netTX -------------------------------------------------------------------------

    /// Is there room in the core's TX queue for one more word?
    pub fn tx_room(&self, core: usize) -> bool {
        self.cores[core].tx_used() < self.params.tx_queue_words()
    }

    /// Accept one netTX word written at `now`; a finished message becomes a `Send`.
    #[inline]
    pub fn tx_push(&mut self, core: usize, now: u64, word: u64, out: &mut Vec<Action>) -> Result<(), String> {
        self.counters.words_written += 1;
        if self.cores[core].tx_word(word, self.params.max_msg_bytes)? {
            self.tx_send(core, now, out);
        }
        Ok(())
    }

    /// The message a netTX word finished leaves the TX path.
    #[inline(never)]
    fn tx_send(&mut self, core: usize, now: u64, out: &mut Vec<Action>) {
        let c = &mut self.cores[core];
        let msg = c.tx_finished(self.ip);
        c.sent.msgs += 1;
        c.sent.bytes += u64::from(msg.len);
        self.counters.msgs_sent += 1;
        out.push(Action::Send { core, at: now + self.params.tx_path_cycles, msg });
    }

    /// The NIC took a finished message of `words` payload words out of the TX queue.
    pub fn tx_taken(&mut self, core: usize, msg: &Message) {
        let c = &mut self.cores[core];
        c.tx_queued -= msg.tx_words();
    }

    // ---- arrivals and core selection ---------------------------------------------------

    /// A complete message arrived for this node at `now`. With none of its context waiting
    /// (the common case) it goes to a core at once or waits, without passing through the
    /// waiting queue: the same choice `assign` would make, for fewer look-ups.
    pub fn receive(&mut self, now: u64, msg: Message, out: &mut Vec<Action>) {
        self.counters.msgs_received += 1;
        let seq = self.next_seq;
        self.next_seq += 1;
        let context = msg.dst_context;
        let queued = self.waiting.get(context).is_some_and(|q| !q.is_empty());
        if !queued {
            if let Some(core) = self.pick_core(&msg) {
                return self.deliver(core, seq, msg, now, out);
            }
        }
        self.waiting.or_default(context).push_back((seq, msg));
        if queued {
            self.assign(context, now, out);
        }
    }

    /// Hand waiting messages of `context` to cores while JBSQ allows (docs/platform.md section 3).
    fn assign(&mut self, context: u16, now: u64, out: &mut Vec<Action>) {
        loop {
            let Some((_, head)) = self.waiting.get(context).and_then(VecDeque::front) else { return };
            let Some(core) = self.pick_core(head) else { return };
            let q = self.waiting.get_mut(context).expect("it has a head");
            let (seq, msg) = q.pop_front().expect("it has a head");
            if q.is_empty() {
                crate::core_if::give_back(q, KEEP);
            }
            self.deliver(core, seq, msg, now, out);
        }
    }

    /// The core `msg`, the head of its context's messages, goes to now, if any
    /// (docs/platform.md section 3).
    fn pick_core(&self, msg: &Message) -> Option<usize> {
        let cores = self.registry.get(msg.dst_context).filter(|r| !r.is_empty())?;
        match self.params.core_selection {
            CoreSelection::Jbsq => self.jbsq_core(cores, msg),
            CoreSelection::Rss => self.rss_core(cores, msg),
        }
    }

    /// JBSQ(n): the registered core with the fewest outstanding messages, if below n and
    /// with room in its local queue.
    /// Ties go to the lowest core. A plain loop: asked at every arrival and every message a
    /// core finishes, the iterator chain it replaced cost about 250 host instructions a
    /// call on a node of 4 cores (callgrind).
    fn jbsq_core(&self, cores: &[usize], msg: &Message) -> Option<usize> {
        let n = self.params.jbsq_n as usize;
        let mut best: Option<(usize, usize)> = None;
        for &i in cores {
            let Some(c) = self.cores[i].context(msg.dst_context) else { continue };
            let load = c.outstanding.len();
            if load < n && best.is_none_or(|b| (load, i) < b) && self.has_room(c, msg) {
                best = Some((load, i));
            }
        }
        best.map(|(_, i)| i)
    }

    /// RSS-like: the core a hash of the source picks, however many messages it holds, once
    /// its local queue has room.
    fn rss_core(&self, cores: &[usize], msg: &Message) -> Option<usize> {
        let h = (msg.src_ip as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ msg.src_context as u64;
        let core = cores[(h % cores.len() as u64) as usize];
        self.has_room(self.cores[core].context(msg.dst_context)?, msg).then_some(core)
    }

    /// A message fits in an empty queue, or after what is queued within the context's share.
    fn has_room(&self, c: &Context, msg: &Message) -> bool {
        let need = 1 + words_for(msg.len);
        c.rxq.is_empty() || c.rxq.len() + need <= self.params.rx_words_per_context()
    }

    /// Stream a message into a core's local queue: header readable `rx_path_cycles` after
    /// `now` (or after the previous message's last word), then one word per cycle.
    fn deliver(&mut self, core: usize, seq: u64, msg: Message, now: u64, out: &mut Vec<Action>) {
        let c = &mut self.cores[core];
        let current = c.cur_context == msg.dst_context;
        let ctx = c.context_mut(msg.dst_context).expect("delivery to an unregistered context");
        let after_prev = ctx.rxq.last_cycle().map_or(0, |t| t + 1);
        let start = (now + self.params.rx_path_cycles).max(after_prev);
        let header = msg.rx_header();
        ctx.rxq.push(start, header, msg.words);
        if ctx.outstanding.is_empty() {
            ctx.head_since = start;
        }
        ctx.outstanding.push_back((seq, start));
        ctx.idle = false;
        ctx.waiting = false;
        c.sched.rotation = None;
        if current {
            c.sched.yield_req = false;
        }
        self.counters.msgs_delivered += 1;
        if current && c.waiting_rx {
            out.push(Action::Wake { core, at: start });
        }
        self.updates(core, start, out);
    }

    /// Re-evaluate the interrupt line of `core` at `at`, and whenever a scheduler timer
    /// could change it. The test inline, the rest a call: nearly every caller (each
    /// delivery and CSR write of a core with one context) finds the line settled.
    #[inline]
    fn updates(&self, core: usize, at: u64, out: &mut Vec<Action>) {
        if !self.cores[core].line_settled() {
            self.push_updates(core, at, out);
        }
    }

    #[inline(never)]
    fn push_updates(&self, core: usize, at: u64, out: &mut Vec<Action>) {
        out.push(Action::Update { core, at });
        let later = self.cores[core].deadlines().filter(|&d| d > at);
        out.extend(later.map(|at| Action::Update { core, at }));
    }

    // ---- CSRs --------------------------------------------------------------------------

    /// Read a nanoPU CSR as of cycle `now`. Inline: a core polls `lmsgsrdy` through it
    /// (`NodePlatform::csr_read`), and as a call it was half that read's host instructions.
    #[inline]
    pub fn csr_read(&self, core: usize, now: u64, csr: u16) -> Result<u64, String> {
        let c = &self.cores[core];
        Ok(match csr {
            LMSGSRDY => self.msgs_ready(core, now) as u64,
            LCURCONTEXT => c.lcurcontext(),
            LCURPRIORITY => c.lcurpriority(),
            LNICCMD | LNICUCMD => 0,
            LNICRDY => 1,
            LTARGETCONTEXT => c.target().map_or(c.cur_context, |t| t.id) as u64,
            LTARGETPRIORITY => c.target().map_or(c.cur_priority, |t| t.priority) as u64,
            LMSGCYCLES => c.msg_cycles,
            LIDLECYCLES => c.idle_cycles,
            _ => return Err(format!("CSR {csr:#05x} is not a nanoPU CSR")),
        })
    }

    /// `lmsgsrdy` at `now`: is a word of the current context's queue readable? A core
    /// polls it in `lnic_wait()` (`NodePlatform::csr_read` asks it without the match above).
    #[inline]
    pub fn msgs_ready(&self, core: usize, now: u64) -> bool {
        self.cores[core].current().is_some_and(|x| x.ready(now, 1))
    }

    /// Does the value of this CSR depend on arrivals (so it is only exact at global time)?
    pub fn csr_depends_on_arrivals(csr: u16) -> bool {
        matches!(csr, LMSGSRDY | LTARGETCONTEXT | LTARGETPRIORITY)
    }

    /// Write a nanoPU CSR at cycle `now`.
    pub fn csr_write(
        &mut self,
        core: usize,
        now: u64,
        csr: u16,
        v: u64,
        out: &mut Vec<Action>,
    ) -> Result<(), String> {
        match csr {
            LCURCONTEXT => self.set_context(core, now, v),
            LCURPRIORITY => self.cores[core].set_lcurpriority(v),
            LNICCMD => self.kernel_cmd(core, now, v, out)?,
            LNICUCMD => self.user_cmd(core, now, v, out)?,
            LMSGCYCLES => self.cores[core].msg_cycles = v,
            LIDLECYCLES => self.cores[core].idle_cycles = v,
            LMSGSRDY | LNICRDY | LTARGETCONTEXT | LTARGETPRIORITY => {
                return Err(format!("CSR {csr:#05x} is read-only"))
            }
            _ => return Err(format!("CSR {csr:#05x} is not a nanoPU CSR")),
        }
        self.updates(core, now, out);
        Ok(())
    }

    /// Any 64-bit value is accepted: the prototype's `lcurcontext` is an XLEN register and
    /// the scheduler sees its low 16 bits (see `CoreIf::set_lcurcontext`).
    fn set_context(&mut self, core: usize, now: u64, v: u64) {
        self.cores[core].set_lcurcontext(v);
        self.cores[core].on_switch(now);
    }

    /// `lniccmd`: bit0 register the current context, bit1 remove it, bit2 restart the timer.
    fn kernel_cmd(&mut self, core: usize, now: u64, v: u64, out: &mut Vec<Action>) -> Result<(), String> {
        if v & 1 != 0 {
            self.register(core, now, out)?;
        }
        if v & 2 != 0 {
            self.unregister(core);
        }
        if v & 4 != 0 {
            self.cores[core].sched.timer_start = now;
        }
        Ok(())
    }

    fn register(&mut self, core: usize, now: u64, out: &mut Vec<Action>) -> Result<(), String> {
        let max = self.params.contexts_per_core;
        let c = &mut self.cores[core];
        let (id, prio) = (c.cur_context, c.cur_priority);
        if let Some(ctx) = c.context_mut(id) {
            ctx.priority = prio; // re-registering is the only way back from a demotion (`sched`)
            return Ok(());
        }
        if c.contexts.len() >= max {
            return Err(format!(
                "lnic_add_context({id}): this core already has {max} contexts (nic.contexts_per_core)"
            ));
        }
        // Exactly the room needed: a `Context` is about 170 bytes and most cores register
        // one or two, where a growing vector would make room for four.
        c.contexts.reserve_exact(1);
        c.contexts.push(Context::new(id, prio));
        let cores = self.registry.or_default(id);
        cores.push(core);
        cores.sort_unstable();
        self.assign(id, now, out);
        Ok(())
    }

    fn unregister(&mut self, core: usize) {
        let c = &mut self.cores[core];
        let id = c.cur_context;
        if let Some(pos) = c.contexts.iter().position(|x| x.id == id) {
            let gone = c.contexts.remove(pos);
            c.tx_recount();
            self.counters.words_dropped_on_remove += gone.rxq.len() as u64;
            if let Some(r) = self.registry.get_mut(id) {
                r.retain(|&i| i != core);
            }
        }
    }

    /// `lnicucmd`: bit0 message done, bit1 idle. Either is a report the scheduler may
    /// answer with a switch (see `sched`).
    fn user_cmd(&mut self, core: usize, now: u64, v: u64, out: &mut Vec<Action>) -> Result<(), String> {
        let id = self.cores[core].cur_context;
        if v & 1 != 0 {
            if self.cores[core].on_done(now) {
                self.assign(id, now, out);
            } else {
                self.counters.spurious_done += 1;
            }
        }
        if v & 2 != 0 {
            self.cores[core].on_idle();
        }
        if v & 3 != 0 {
            self.cores[core].on_report(now);
        }
        Ok(())
    }

    /// Level the interrupt line of `core` should have at `now` (and remember it), after
    /// demoting a context past its processing bound.
    pub fn irq_level(&mut self, core: usize, now: u64) -> bool {
        self.update(core, now).0
    }

    /// [`Nic::irq_level`], and when the idle timeout fires next if it fired now: nothing
    /// else schedules that timeout when the core, switched to the head of the queue it
    /// already runs, writes no CSR. The caller schedules it while the core can take the
    /// interrupt (a core that cannot would never see the rotation).
    pub fn update(&mut self, core: usize, now: u64) -> (bool, Option<u64>) {
        let c = &mut self.cores[core];
        c.demote_if_due(now);
        let rotated = c.rotate_if_due(now);
        c.irq = c.wants_irq(now);
        (c.irq, c.next_rotation(now).filter(|_| rotated))
    }

    /// Contexts of `core` switched out with work left (`Context::stranded`).
    pub fn stranded(&self, core: usize) -> impl Iterator<Item = u16> + '_ {
        let c = &self.cores[core];
        c.contexts.iter().filter(|x| x.stranded(c.cur_context)).map(|x| x.id)
    }

    /// Priority-0 contexts demoted for exceeding `lmsgcycles`, over all cores.
    pub fn demotions(&self) -> u64 {
        self.cores.iter().map(|c| c.sched.demotions).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core_if::TxCounts;
    use crate::message::AppHeader;

    fn nic() -> Nic {
        Nic::new(NicParams { cores: 2, ..NicParams::default() }, 0x0a00_0002).unwrap()
    }

    fn msg(context: u16, words: Vec<u64>) -> Message {
        let len = (words.len() * 8) as u16;
        Message {
            src_ip: 0x0a00_0001,
            src_context: 9,
            dst_ip: 0x0a00_0002,
            dst_context: context,
            len,
            words: words.into(),
            group: None,
        }
    }

    fn add_context(n: &mut Nic, core: usize, id: u64, prio: u64, out: &mut Vec<Action>) {
        n.csr_write(core, 0, LCURCONTEXT, id, out).unwrap();
        n.csr_write(core, 0, LCURPRIORITY, prio, out).unwrap();
        n.csr_write(core, 0, LNICCMD, 1, out).unwrap();
    }

    #[test]
    fn message_streams_into_registered_core_after_rx_path() {
        let mut n = nic();
        let mut out = vec![];
        add_context(&mut n, 0, 0, 0, &mut out);
        n.receive(100, msg(0, vec![11, 22]), &mut out);
        assert_eq!(n.rx_state(0, 105, 1).unwrap(), RxState::At(106));
        assert_eq!(n.rx_state(0, 106, 1).unwrap(), RxState::Ready);
        assert_eq!(n.csr_read(0, 105, LMSGSRDY).unwrap(), 0);
        assert_eq!(n.csr_read(0, 106, LMSGSRDY).unwrap(), 1);
        assert_eq!(n.rx_state(0, 107, 3).unwrap(), RxState::At(108));
        let words: Vec<u64> = (0..3).map(|_| n.rx_pop(0)).collect();
        assert_eq!(AppHeader::from_word(words[0]), AppHeader { ip: 0x0a00_0001, context: 9, len: 16 });
        assert_eq!(&words[1..], &[11, 22]);
        assert_eq!(n.rx_state(0, 200, 1).unwrap(), RxState::Empty);
    }

    #[test]
    fn jbsq_bounds_outstanding_and_done_pulls_the_next() {
        let mut n = nic();
        let mut out = vec![];
        add_context(&mut n, 0, 0, 0, &mut out);
        for i in 0..3 {
            n.receive(10, msg(0, vec![i]), &mut out);
        }
        assert_eq!(n.core(0).context(0).unwrap().outstanding.len(), 2);
        assert_eq!(n.held().collect::<Vec<_>>(), vec![(0, 1)]);
        add_context(&mut n, 1, 0, 0, &mut out);
        assert_eq!(n.core(1).context(0).unwrap().outstanding.len(), 1, "second core takes the third");
        n.receive(20, msg(0, vec![3]), &mut out);
        n.receive(20, msg(0, vec![4]), &mut out);
        assert_eq!(n.held().collect::<Vec<_>>(), vec![(0, 1)]);
        n.csr_write(0, 30, LCURCONTEXT, 0, &mut out).unwrap();
        n.csr_write(0, 30, LNICUCMD, 1, &mut out).unwrap();
        assert_eq!(n.held().count(), 0);
        assert_eq!(n.counters.msgs_delivered, 5);
    }

    #[test]
    fn rss_ignores_the_jbsq_bound() {
        let params = NicParams { cores: 2, core_selection: CoreSelection::Rss, ..NicParams::default() };
        let mut n = Nic::new(params, 0x0a00_0002).unwrap();
        let mut out = vec![];
        add_context(&mut n, 0, 0, 0, &mut out);
        add_context(&mut n, 1, 0, 0, &mut out);
        for i in 0..5 {
            n.receive(10, msg(0, vec![i]), &mut out);
        }
        let held = |n: &Nic, core| n.core(core).context(0).unwrap().outstanding.len();
        assert_eq!(held(&n, 0) + held(&n, 1), 5, "all delivered at once");
        assert!(held(&n, 0) == 5 || held(&n, 1) == 5, "one source, one core");
    }

    #[test]
    fn messages_wait_for_registration() {
        let mut n = nic();
        let mut out = vec![];
        n.receive(5, msg(3, vec![1]), &mut out);
        assert_eq!(n.counters.msgs_delivered, 0);
        add_context(&mut n, 1, 3, 0, &mut out);
        assert_eq!(n.counters.msgs_delivered, 1);
    }

    #[test]
    fn tx_message_completes_after_tx_path() {
        let mut n = nic();
        let mut out = vec![];
        let hdr = AppHeader { ip: 0x0a00_0002, context: 0, len: 8 }.to_word();
        n.tx_push(0, 50, hdr, &mut out).unwrap();
        assert!(out.is_empty());
        n.tx_push(0, 51, 77, &mut out).unwrap();
        let Action::Send { at, msg, .. } = &out[0] else { panic!("{out:?}") };
        assert_eq!((*at, msg.words.to_vec(), msg.src_ip), (62, vec![77], 0x0a00_0002));
        assert_eq!(n.core(0).tx_queued, 2);
    }

    /// A core's sent counts move when a message is finished, by its header's length in
    /// bytes, not by the words written; other cores' do not move.
    #[test]
    fn sent_counts_are_finished_messages_and_their_length() {
        let mut n = nic();
        let mut out = vec![];
        let hdr = AppHeader { ip: 0x0a00_0002, context: 0, len: 12 }.to_word();
        n.tx_push(0, 50, hdr, &mut out).unwrap();
        n.tx_push(0, 51, 1, &mut out).unwrap();
        assert_eq!(n.core(0).sent, TxCounts::default(), "unfinished");
        n.tx_push(0, 52, 2, &mut out).unwrap();
        assert_eq!(n.core(0).sent, TxCounts { msgs: 1, bytes: 12 });
        assert_eq!(n.core(1).sent, TxCounts::default());
    }

    #[test]
    fn contexts_assemble_their_messages_apart() {
        let mut n = nic();
        let mut out = vec![];
        add_context(&mut n, 0, 1, 1, &mut out);
        add_context(&mut n, 0, 2, 0, &mut out);
        let hdr = AppHeader { ip: 5, context: 0, len: 16 }.to_word();
        n.csr_write(0, 0, LCURCONTEXT, 1, &mut out).unwrap();
        n.tx_push(0, 1, hdr, &mut out).unwrap();
        n.tx_push(0, 2, 11, &mut out).unwrap();
        n.csr_write(0, 3, LCURCONTEXT, 2, &mut out).unwrap();
        n.tx_push(0, 4, hdr, &mut out).unwrap();
        n.tx_push(0, 5, 21, &mut out).unwrap();
        n.tx_push(0, 6, 22, &mut out).unwrap();
        n.csr_write(0, 7, LCURCONTEXT, 1, &mut out).unwrap();
        n.tx_push(0, 8, 12, &mut out).unwrap();
        let sent: Vec<_> = out
            .iter()
            .filter_map(|a| {
                if let Action::Send { msg, .. } = a {
                    Some((msg.src_context, msg.words.to_vec()))
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(sent, vec![(2, vec![21, 22]), (1, vec![11, 12])]);
    }

    /// The TX queue's count of unfinished messages' words (`CoreIf::tx_used`, kept as
    /// words come) agrees with the assemblers at every step: a context's message left
    /// unfinished while another writes, a multicast's group word, a refused group word
    /// (which drops its header), a context removed in the middle of a message.
    #[test]
    fn tx_queue_count_follows_every_assembler() {
        let mut n = nic();
        let mut out = vec![];
        let check = |n: &Nic, used: usize| {
            let c = n.core(0);
            assert_eq!((c.tx_used(), c.tx_queued + c.tx_partial_words()), (used, used));
        };
        add_context(&mut n, 0, 1, 0, &mut out);
        add_context(&mut n, 0, 2, 0, &mut out);
        n.csr_write(0, 0, LCURCONTEXT, 1, &mut out).unwrap();
        n.tx_push(0, 1, AppHeader { ip: 5, context: 0, len: 16 }.to_word(), &mut out).unwrap();
        n.tx_push(0, 2, 7, &mut out).unwrap();
        check(&n, 2);
        n.csr_write(0, 3, LCURCONTEXT, 2, &mut out).unwrap();
        let group = AppHeader { ip: crate::transport::segment::MULTICAST_IP, context: 0, len: 8 }.to_word();
        n.tx_push(0, 4, group, &mut out).unwrap();
        assert!(n.tx_push(0, 5, 0x0000_0003_0000_0000, &mut out).is_err(), "a group of no nodes");
        check(&n, 2);
        n.tx_push(0, 6, group, &mut out).unwrap();
        n.tx_push(0, 7, 0x0000_0003_0000_0002, &mut out).unwrap();
        check(&n, 4);
        n.tx_push(0, 8, 9, &mut out).unwrap();
        check(&n, 5);
        n.csr_write(0, 9, LCURCONTEXT, 1, &mut out).unwrap();
        n.csr_write(0, 9, LNICCMD, 2, &mut out).unwrap();
        check(&n, 3);
        let sent = out.iter().filter(|a| matches!(a, Action::Send { .. })).count();
        assert_eq!(sent, 1, "the multicast only");
    }

    #[test]
    fn tx_queue_fills_and_blocks() {
        let mut n = Nic::new(NicParams { tx_queue_bytes: 32, ..NicParams::default() }, 1).unwrap();
        let mut out = vec![];
        let hdr = AppHeader { ip: 5, context: 0, len: 16 }.to_word();
        for w in [hdr, 1, 2] {
            assert!(n.tx_room(0));
            n.tx_push(0, 0, w, &mut out).unwrap();
        }
        assert!(n.tx_room(0));
        n.tx_push(0, 0, hdr, &mut out).unwrap();
        assert!(!n.tx_room(0));
        let Action::Send { msg, .. } = out[0].clone() else { panic!() };
        n.tx_taken(0, &msg);
        assert!(n.tx_room(0));
    }

    #[test]
    fn higher_priority_arrival_raises_the_interrupt() {
        let mut n = nic();
        let mut out = vec![];
        add_context(&mut n, 0, 1, 1, &mut out);
        add_context(&mut n, 0, 0, 0, &mut out);
        n.csr_write(0, 0, LCURCONTEXT, 1, &mut out).unwrap();
        n.csr_write(0, 0, LCURPRIORITY, 1, &mut out).unwrap();
        n.receive(10, msg(1, vec![1]), &mut out);
        assert!(!n.irq_level(0, 10));
        n.receive(10, msg(0, vec![1]), &mut out);
        assert!(n.irq_level(0, 10));
        assert_eq!(n.csr_read(0, 20, LTARGETCONTEXT).unwrap(), 0);
    }

    #[test]
    fn idle_with_messages_queued_does_not_starve_the_context() {
        // lidle must not mark a context with messages queued inactive: JBSQ would send it no
        // more, so nothing would make it active again and it would never be switched back in.
        let mut n = nic();
        let mut out = vec![];
        add_context(&mut n, 0, 1, 0, &mut out);
        add_context(&mut n, 0, 2, 0, &mut out);
        n.csr_write(0, 0, LCURCONTEXT, 1, &mut out).unwrap();
        n.receive(10, msg(1, vec![1]), &mut out);
        n.receive(10, msg(1, vec![2]), &mut out);
        n.csr_write(0, 100, LNICUCMD, 2, &mut out).unwrap();
        n.receive(110, msg(2, vec![3]), &mut out);
        n.csr_write(0, 200, LCURCONTEXT, 2, &mut out).unwrap();
        (0..2).for_each(|_| _ = n.rx_pop(0));
        n.csr_write(0, 210, LNICUCMD, 1, &mut out).unwrap();
        assert_eq!(n.csr_read(0, 220, LTARGETCONTEXT).unwrap(), 1, "context 1 holds two messages");
        assert!(n.irq_level(0, 220));
    }

    #[test]
    fn idle_timeout_starts_every_registered_context_before_traffic() {
        // With no message anywhere there is no target: the timeout itself must rotate, or
        // threads 2 and 3 would never run.
        let mut n = nic();
        let mut out = vec![];
        for id in 1..=3 {
            add_context(&mut n, 0, id, 0, &mut out);
        }
        n.csr_write(0, 10, LCURCONTEXT, 0xffff, &mut out).unwrap();
        let idle = n.params().idle_cycles;
        assert!(out.contains(&Action::Update { core: 0, at: 10 + idle }), "the NIC wakes itself");
        assert!(!n.irq_level(0, 9 + idle));
        for (k, next) in [(1, 1), (2, 2), (3, 3)] {
            let at = k * (10 + idle);
            assert!(n.irq_level(0, at), "timeout at {at}");
            assert_eq!(n.csr_read(0, at, LTARGETCONTEXT).unwrap(), next, "registration order");
            n.csr_write(0, at + 10, LCURCONTEXT, next, &mut out).unwrap();
            assert!(!n.irq_level(0, at + 10), "switched");
        }
    }

    #[test]
    fn idle_timeout_rotates_until_every_context_waits() {
        // Context 1, switched out while computing (holding a lock, say), comes back however
        // often the queue has gone round; once both wait on netRX the timeout stops.
        let mut n = nic();
        let mut out = vec![];
        add_context(&mut n, 0, 1, 0, &mut out);
        add_context(&mut n, 0, 2, 0, &mut out);
        let idle = n.params().idle_cycles;
        let mut now = 0;
        for _ in 0..4 {
            for want in [1u64, 2] {
                let (level, next) = n.update(0, now + idle);
                now += idle;
                assert_eq!(next, Some(now + idle), "the next timeout is scheduled");
                if n.csr_read(0, now, LCURCONTEXT).unwrap() != want {
                    assert!(level);
                    assert_eq!(n.csr_read(0, now, LTARGETCONTEXT).unwrap(), want);
                    n.csr_write(0, now, LCURCONTEXT, want, &mut out).unwrap();
                }
            }
        }
        n.set_waiting_rx(0, true); // context 2 parks in lnic_wait()
        n.set_waiting_rx(0, false);
        assert_eq!(n.update(0, now + idle).1, Some(now + 2 * idle), "context 1 has work left");
        n.csr_write(0, now + idle, LCURCONTEXT, 1, &mut out).unwrap();
        n.set_waiting_rx(0, true);
        assert_eq!(n.update(0, now + 10 * idle), (false, None), "both wait: no more timeouts");
        n.receive(now + 10 * idle, msg(2, vec![7]), &mut out);
        assert!(!n.core(0).context(2).unwrap().waiting, "a delivery ends the wait");
    }

    #[test]
    fn a_context_switched_out_with_work_left_is_stranded() {
        let mut n = nic();
        let mut out = vec![];
        add_context(&mut n, 0, 1, 0, &mut out);
        add_context(&mut n, 0, 2, 0, &mut out);
        n.csr_write(0, 0, LCURCONTEXT, 1, &mut out).unwrap();
        n.csr_write(0, 10, LCURCONTEXT, 2, &mut out).unwrap();
        assert_eq!(n.stranded(0).collect::<Vec<_>>(), [1], "context 1 was not waiting");
        n.csr_write(0, 20, LCURCONTEXT, 1, &mut out).unwrap();
        n.set_waiting_rx(0, true);
        n.csr_write(0, 30, LCURCONTEXT, 2, &mut out).unwrap();
        assert_eq!(n.stranded(0).count(), 0, "context 1 waits in lnic_wait()");
    }

    #[test]
    fn wide_csr_writes_keep_the_prototypes_bits() {
        // 70,000 and priority 8 are accepted, not refused as out of range.
        let mut n = nic();
        let mut out = vec![];
        n.csr_write(0, 0, LCURCONTEXT, 0xdead_0000_0001_0003, &mut out).unwrap();
        n.csr_write(0, 0, LCURPRIORITY, 0x1_0000_0102, &mut out).unwrap();
        assert_eq!((n.core(0).cur_context, n.core(0).cur_priority), (3, 2), "16 and 8 bits");
        assert_eq!(n.csr_read(0, 0, LCURCONTEXT).unwrap(), 0xdead_0000_0001_0003, "XLEN register");
        assert_eq!(n.csr_read(0, 0, LCURPRIORITY).unwrap(), 0x1_0000_0102);
        n.csr_write(0, 0, LNICCMD, 1, &mut out).unwrap();
        assert_eq!(n.core(0).context(3).map(|c| c.priority), Some(2), "registered as context 3");
        n.csr_write(0, 0, LCURPRIORITY, 200, &mut out).unwrap();
        assert_eq!(n.core(0).cur_priority, 200, "priorities up to 255");
    }

    #[test]
    fn bad_csr_values_are_named() {
        let mut n = nic();
        let mut out = vec![];
        assert!(n.csr_write(0, 0, LMSGSRDY, 1, &mut out).unwrap_err().contains("read-only"));
        for id in 0..4 {
            add_context(&mut n, 0, id, 0, &mut out);
        }
        n.csr_write(0, 0, LCURCONTEXT, 4, &mut out).unwrap();
        assert!(n.csr_write(0, 0, LNICCMD, 1, &mut out).unwrap_err().contains("contexts_per_core"));
    }
}
