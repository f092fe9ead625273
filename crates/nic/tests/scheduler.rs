//! Property tests of the NIC's core selection and thread scheduler (docs/platform.md section 3): random
//! mixes of cores, contexts, priorities, arrivals and a nanokernel-like driver that switches
//! whenever the interrupt line is raised. Checked at every step and at the end:
//! - a context of higher priority than the running one with a message raises the interrupt
//!   at once (so the core is preempted within its interrupt latency);
//! - a priority-0 context past `lmsgcycles` on one message is demoted, and a pending
//!   priority-0 context then raises the interrupt;
//! - JBSQ never gives a core more than n outstanding messages of a context;
//! - every message is delivered exactly once, whole, to a core that registered its context.

use nanopu_nic::csr::*;
use nanopu_nic::params::CoreSelection;
use nanopu_nic::{Action, AppHeader, Message, Nic, NicParams};
use nanopu_sim::Rng;
use std::collections::BTreeMap;

const CORES: usize = 3;

struct World {
    nic: Nic,
    rng: Rng,
    now: u64,
    /// Per core: its registered (context, priority).
    contexts: Vec<Vec<(u16, u8)>>,
    next_id: u64,
    /// Message id -> times it was read whole.
    seen: BTreeMap<u64, u32>,
    out: Vec<Action>,
}

impl World {
    fn new(seed: u64, selection: CoreSelection) -> World {
        let params =
            NicParams { cores: CORES, core_selection: selection, msg_cycles: 400, ..NicParams::default() };
        let mut w = World {
            nic: Nic::new(params, 0x0a00_0002).unwrap(),
            rng: Rng::stream(seed, 1),
            now: 0,
            contexts: vec![Vec::new(); CORES],
            next_id: 0,
            seen: BTreeMap::new(),
            out: Vec::new(),
        };
        (0..CORES).for_each(|c| w.register_some(c));
        w
    }

    fn csr(&mut self, core: usize, csr: u16, v: u64) {
        self.nic.csr_write(core, self.now, csr, v, &mut self.out).unwrap();
    }

    /// 1..=4 contexts out of ids 0..6, random priorities 0..3; the first one is current.
    fn register_some(&mut self, core: usize) {
        let n = 1 + self.rng.below(4) as usize;
        let mut ids: Vec<u16> = (0..6).collect();
        for i in 0..n {
            let j = i + self.rng.below((6 - i) as u64) as usize;
            ids.swap(i, j);
            let prio = self.rng.below(3) as u8;
            self.csr(core, LCURCONTEXT, ids[i] as u64);
            self.csr(core, LCURPRIORITY, prio as u64);
            self.csr(core, LNICCMD, 1);
            self.contexts[core].push((ids[i], prio));
        }
        let (id, prio) = self.contexts[core][0];
        self.csr(core, LCURCONTEXT, id as u64);
        self.csr(core, LCURPRIORITY, prio as u64);
    }

    fn registered(&self) -> Vec<u16> {
        let mut v: Vec<u16> = self.contexts.iter().flatten().map(|c| c.0).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn arrive(&mut self) {
        let ids = self.registered();
        let context = ids[self.rng.below(ids.len() as u64) as usize];
        let extra = self.rng.below(4) as usize;
        let mut words = vec![self.next_id];
        words.extend((0..extra).map(|i| self.next_id * 100 + i as u64));
        let len = (words.len() * 8) as u16;
        let src_context = self.rng.below(4) as u16;
        let msg = Message {
            src_ip: 7,
            src_context,
            dst_ip: 0x0a00_0002,
            dst_context: context,
            len,
            words: words.into(),
            group: None,
        };
        self.next_id += 1;
        self.nic.receive(self.now, msg, &mut self.out);
    }

    /// The running context reads one whole message, if its words are readable, and reports
    /// it done.
    fn serve(&mut self, core: usize) {
        if self.nic.csr_read(core, self.now, LMSGSRDY).unwrap() == 0 {
            return;
        }
        let cur = self.nic.csr_read(core, self.now, LCURCONTEXT).unwrap() as u16;
        let hdr = self.nic.rx_pop(core);
        let len = AppHeader::from_word(hdr).len as usize / 8;
        self.now += len as u64 + 1; // words stream in one per cycle
        assert_eq!(self.nic.rx_state(core, self.now, len).unwrap(), nanopu_nic::nic::RxState::Ready);
        let words: Vec<u64> = (0..len).map(|_| self.nic.rx_pop(core)).collect();
        let id = words[0];
        let expect: Vec<u64> = (0..len - 1).map(|i| id * 100 + i as u64).collect();
        assert_eq!(&words[1..], &expect[..], "message {id} arrived whole and in order");
        assert!(self.contexts[core].iter().any(|c| c.0 == cur), "core {core} does not hold context {cur}");
        *self.seen.entry(id).or_default() += 1;
        self.csr(core, LNICUCMD, 1);
    }

    /// The nanokernel's switch, taken whenever the line is raised.
    fn kernel(&mut self, core: usize) {
        if !self.nic.irq_level(core, self.now) {
            return;
        }
        let target = self.nic.csr_read(core, self.now, LTARGETCONTEXT).unwrap();
        let prio = self.nic.csr_read(core, self.now, LTARGETPRIORITY).unwrap();
        self.csr(core, LCURCONTEXT, target);
        self.csr(core, LCURPRIORITY, prio);
        self.csr(core, LNICCMD, 4);
    }

    fn check_invariants(&mut self, core: usize) {
        let c = self.nic.core(core);
        if self.nic.params().core_selection == CoreSelection::Jbsq {
            let n = self.nic.params().jbsq_n as usize;
            assert!(
                c.contexts.iter().all(|x| x.outstanding.len() <= n),
                "core {core} holds more than JBSQ's n"
            );
        }
        let outranked = c.contexts.iter().any(|x| x.active() && x.priority < c.cur_priority);
        if outranked {
            assert!(
                self.nic.irq_level(core, self.now),
                "core {core}: higher-priority message without interrupt"
            );
        }
    }

    fn step(&mut self) {
        self.now += 1 + self.rng.below(300);
        match self.rng.below(10) {
            0..=3 => self.arrive(),
            _ => {
                let core = self.rng.below(CORES as u64) as usize;
                self.check_invariants(core);
                self.kernel(core);
                if self.rng.below(3) > 0 {
                    self.serve(core);
                }
            }
        }
    }

    fn drain(&mut self) {
        for _ in 0..100_000 {
            if self.seen.len() as u64 == self.next_id {
                return;
            }
            self.now += 500;
            for core in 0..CORES {
                self.kernel(core);
                self.serve(core);
            }
        }
        panic!("messages never delivered: {} of {}", self.seen.len(), self.next_id);
    }
}

fn run(seed: u64, selection: CoreSelection) {
    let mut w = World::new(seed, selection);
    (0..3000).for_each(|_| w.step());
    w.drain();
    assert!(w.seen.values().all(|&n| n == 1), "seed {seed}: a message was read twice");
    assert_eq!(w.nic.counters.msgs_delivered, w.next_id);
    assert_eq!(w.nic.held().count(), 0);
}

#[test]
fn every_message_once_under_jbsq() {
    (0..40).for_each(|seed| run(seed, CoreSelection::Jbsq));
}

#[test]
fn every_message_once_under_rss() {
    (0..40).for_each(|seed| run(seed, CoreSelection::Rss));
}

/// One core, `lmsgcycles` 1,000, contexts 1 and 2 at priority 0 with context 1 running: a
/// message for context 1 at cycle 10 and one for context 2 at cycle 20.
fn two_contexts_one_waiting() -> (Nic, Vec<Action>) {
    let params = NicParams { cores: 1, msg_cycles: 1000, ..NicParams::default() };
    let mut nic = Nic::new(params, 2).unwrap();
    let mut out = Vec::new();
    for id in [1u64, 2] {
        nic.csr_write(0, 0, LCURCONTEXT, id, &mut out).unwrap();
        nic.csr_write(0, 0, LNICCMD, 1, &mut out).unwrap();
    }
    nic.csr_write(0, 0, LCURCONTEXT, 1, &mut out).unwrap();
    nic.csr_write(0, 0, LNICCMD, 4, &mut out).unwrap();
    let msg = |ctx| Message {
        src_ip: 7,
        src_context: 0,
        dst_ip: 2,
        dst_context: ctx,
        len: 8,
        words: vec![1].into(),
        group: None,
    };
    nic.receive(10, msg(1), &mut out);
    nic.receive(20, msg(2), &mut out);
    (nic, out)
}

#[test]
fn a_context_past_its_bound_is_demoted_and_preempted() {
    let (mut nic, out) = two_contexts_one_waiting();
    assert!(!nic.irq_level(0, 500), "equal priorities: the running context keeps the core");
    let deadline = 10 + 6 + 1000; // header readable after the RX path, then lmsgcycles
    assert!(out.contains(&Action::Update { core: 0, at: deadline }), "the NIC wakes itself at the bound");
    assert!(!nic.irq_level(0, deadline - 1));
    assert!(nic.irq_level(0, deadline), "demoted, and context 2 waits at priority 0");
    assert_eq!(nic.csr_read(0, deadline, LCURPRIORITY).unwrap(), 1);
    assert_eq!(nic.csr_read(0, deadline, LTARGETCONTEXT).unwrap(), 2);
    assert_eq!(nic.demotions(), 1);
}

/// Context 2's message waits while context 1 serves a long one; when context 1 reports done
/// and the nanokernel writes `lcurcontext` (before its own timer restart), context 2 starts
/// with a fresh bound: the report restarted the timer, as the prototype's `msg_timer`.
#[test]
fn a_context_switched_in_after_a_long_wait_is_not_demoted() {
    let (mut nic, mut out) = two_contexts_one_waiting();
    nic.csr_write(0, 900, LNICUCMD, 1, &mut out).unwrap(); // context 1 done within its bound
    assert!(nic.irq_level(0, 900), "done, and context 2 waits");
    // The switch, 150 cycles after the report: context 2 has waited 1,030 cycles, past the bound.
    nic.csr_write(0, 1050, LCURCONTEXT, 2, &mut out).unwrap();
    assert!(!nic.irq_level(0, 1050));
    assert_eq!(nic.demotions(), 0, "context 2 was demoted on being switched in");
}
