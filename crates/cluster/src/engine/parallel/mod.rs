//! Parallel simulation: a cluster's partitions advance together in windows.
//!
//! Conservative synchronization in windows of a fixed lookahead (as in Lubachevsky's
//! bounded-lag and Nicol's YAWNS schemes). When a window starts, every partition has handled
//! everything before `from`, the earliest time pending anywhere. What one partition does
//! reaches another only over a leaf-spine link, as a switch's forwarding no sooner than
//! `L` later (`Fabric::lookahead`: header serialization, propagation and switching
//! latency), so each partition can handle everything before `from + L` on its
//! own, on any host thread, in any order. At the window's end the packets that crossed are
//! exchanged in partition order. A partition's work depends only on its own state and
//! what it received, so results are the same, bit for bit, whatever the number of threads:
//! only the partitioning (one per leaf, fixed by the topology; see `partition`) shapes them.
//!
//! Cores run ahead of their partition's time (see `cores`); in a window they read
//! arrival-dependent state as exact only below `from + L` (`Simulation::horizon`), the
//! earliest another partition's packets can arrive.
//!
//! The same windows also run across MPI ranks, each advancing a block of the partitions
//! (`distributed`, `ranks`, `wire`; docs/parallel.md, "Across MPI ranks").

mod barrier;
mod distributed;
mod partition;
pub mod ranks;
mod wire;

use crate::engine::host_time::{nanos, since, HostTimes};
use crate::engine::outcome::{Outcome, SimError};
use crate::engine::parallel::barrier::SpinBarrier;
use crate::engine::parallel::partition::Handoff;
use crate::engine::progress::{Phases, Progress};
use crate::engine::Simulation;
use nanopu_sim::Time;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

/// A partition and the error its last window ended with, if any.
struct Slot {
    sim: Simulation,
    error: Option<SimError>,
    /// A panic in the simulator while running the window, to be resumed on the caller's
    /// thread (a helper thread that unwound would leave the others waiting at a barrier).
    panic: Option<Box<dyn std::any::Any + Send>>,
    /// The partition stopped within its window (Ctrl-C, SIGTERM, the wall-clock limit).
    stopped: Option<Outcome>,
    /// Its cores by phase at its window's end, when the window counted them (`Plan::probe`).
    phases: Option<Phases>,
}

/// What the host threads share.
struct Plan {
    slots: Vec<Mutex<Slot>>,
    start: SpinBarrier,
    done: SpinBarrier,
    /// The window, [from, to) in femtoseconds.
    from: AtomicU64,
    to: AtomicU64,
    /// The next partition to take from each thread's block (see `Blocks`).
    next: Vec<AtomicUsize>,
    quit: AtomicBool,
    /// A partition stopped within this window: the partitions not yet begun are skipped.
    halt: AtomicBool,
    /// The threads are started to let in the packets of the last window's end (`handoff`),
    /// not to run a window.
    letting_in: AtomicBool,
    /// What the partitions sent each other in the last window, while it is let in.
    handoff: RwLock<Option<Handoff>>,
    /// Count each partition's cores by phase at its window's end (for the progress line),
    /// on the thread that ran it: counting them all between windows on one thread, while
    /// the others waited, took 3 s of the 65,536-core sort's 80 (reading each sorter's
    /// log in simulated memory, mostly host cache misses).
    probe: AtomicBool,
    /// Host nanoseconds the threads spent inside partitions' windows (`HostTimes::busy`).
    busy: AtomicU64,
    /// Host nanoseconds of the windows, start to end, and how many (`HostTimes`).
    window_ns: AtomicU64,
    window_count: AtomicU64,
}

/// The partitions in one contiguous block per host thread. A thread runs its own block's
/// partitions first, in order, and then takes what is left of the others', so a partition
/// runs on the same thread window after window unless the threads' loads differ: what a
/// partition allocates in one window it mostly frees in a later one, and a block freed on
/// the thread that allocated it goes back to that thread's free list at once, where
/// mimalloc leaves a block freed by another thread to its owner to collect later, and the
/// pages holding such blocks stay resident meanwhile. Which thread runs a partition
/// changes no result (see the module's doc).
#[derive(Clone, Copy)]
struct Blocks {
    partitions: usize,
    threads: usize,
}

impl Blocks {
    /// The first partition of block `b` (`b == threads`: one past the last partition).
    fn start(self, b: usize) -> usize {
        b * self.partitions / self.threads
    }
}

/// How the coordinator's loop ended (a cycle limit is reported once the cluster is whole).
enum End {
    Done(Outcome),
    Failed(SimError),
    CycleLimit,
    /// Every core exited, but messages were still in flight at the time limit.
    Unsettled,
    Panicked(Box<dyn std::any::Any + Send>),
}

impl Plan {
    fn new(parts: Vec<Simulation>, threads: usize) -> Plan {
        Plan {
            slots: parts
                .into_iter()
                .map(|sim| Mutex::new(Slot { sim, error: None, panic: None, stopped: None, phases: None }))
                .collect(),
            start: SpinBarrier::new(threads),
            done: SpinBarrier::new(threads),
            from: AtomicU64::new(0),
            to: AtomicU64::new(0),
            next: (0..threads).map(|_| AtomicUsize::new(0)).collect(),
            quit: AtomicBool::new(false),
            halt: AtomicBool::new(false),
            letting_in: AtomicBool::new(false),
            handoff: RwLock::new(None),
            probe: AtomicBool::new(false),
            busy: AtomicU64::new(0),
            window_ns: AtomicU64::new(0),
            window_count: AtomicU64::new(0),
        }
    }

    fn slot(&self, i: usize) -> MutexGuard<'_, Slot> {
        self.slots[i].lock().expect("a partition's thread panicked")
    }

    /// What the coordinator started the threads for: a window, or letting in its packets.
    fn work(&self, t: usize) {
        match self.letting_in.load(Relaxed) {
            true => self.let_in(t),
            false => self.run_window(t),
        }
    }

    /// Take partitions one at a time and run their window, until none is left: those of
    /// thread `t`'s own block first, then what is left of the others' (see `Blocks`).
    fn run_window(&self, t: usize) {
        let (from, to) = (Time(self.from.load(Relaxed)), Time(self.to.load(Relaxed)));
        let started = Instant::now();
        self.each_partition(t, true, |i| self.run_partition(i, from, to));
        self.busy.fetch_add(nanos(started.elapsed()), Relaxed);
    }

    /// Let in each partition's packets from the last window's end, as `run_window` takes
    /// them, so that a partition's queue is touched on the thread that runs it.
    fn let_in(&self, t: usize) {
        let handoff = self.handoff.read().expect("handoff");
        let handoff = handoff.as_ref().expect("the exchange's packets");
        self.each_partition(t, false, |i| self.let_in_partition(handoff, i));
    }

    /// `Handoff::let_in` for partition `i`; a panic kept for the coordinator to resume, as
    /// in a window (`run_partition`).
    fn let_in_partition(&self, handoff: &Handoff, i: usize) {
        let mut s = self.slot(i);
        if let Err(p) = std::panic::catch_unwind(AssertUnwindSafe(|| handoff.let_in(i, &mut s.sim))) {
            s.panic = Some(p);
        }
    }

    /// `each` for every partition not yet taken, thread `t`'s own block's first; `halts`:
    /// none after a partition stopped.
    fn each_partition(&self, t: usize, halts: bool, each: impl Fn(usize)) {
        let blocks = self.blocks();
        for b in (0..blocks.threads).map(|k| (t + k) % blocks.threads) {
            let end = blocks.start(b + 1);
            loop {
                let i = self.next[b].fetch_add(1, Relaxed);
                if i >= end || halts && self.halt.load(Relaxed) {
                    break;
                }
                each(i);
            }
        }
    }

    fn blocks(&self) -> Blocks {
        Blocks { partitions: self.slots.len(), threads: self.next.len() }
    }

    fn run_partition(&self, i: usize, from: Time, to: Time) {
        let mut s = self.slot(i);
        match std::panic::catch_unwind(AssertUnwindSafe(|| s.sim.run_window(from, to))) {
            Ok(Ok(None)) => s.phases = self.probe.load(Relaxed).then(|| s.sim.phases()),
            Ok(Ok(Some(stop))) => {
                s.stopped = Some(stop);
                self.halt.store(true, Relaxed);
            }
            Ok(Err(e)) => s.error = Some(e),
            Err(p) => s.panic = Some(p),
        }
    }

    /// Helper thread `t`: a window each time the coordinator starts one.
    fn worker(&self, t: usize) {
        loop {
            self.start.wait();
            if self.quit.load(Relaxed) {
                return;
            }
            self.work(t);
            self.done.wait();
        }
    }

    /// One window on every thread (the barriers order the stores before the loads), which
    /// counts the cores by phase at its end if `probe`; returns its host time.
    fn window(&self, (from, to): (Time, Time), probe: bool) -> Duration {
        let started = Instant::now();
        self.probe.store(probe, Relaxed);
        self.from.store(from.0, Relaxed);
        self.to.store(to.0, Relaxed);
        self.halt.store(crate::engine::stop::stop_requested(), Relaxed);
        self.on_every_thread(false);
        let took = started.elapsed();
        self.window_ns.fetch_add(nanos(took), Relaxed);
        self.window_count.fetch_add(1, Relaxed);
        took
    }

    /// Start every thread on a window, or on letting its packets in, and wait for them.
    fn on_every_thread(&self, letting_in: bool) {
        self.letting_in.store(letting_in, Relaxed);
        let blocks = self.blocks();
        self.next.iter().enumerate().for_each(|(b, n)| n.store(blocks.start(b), Relaxed));
        self.start.wait();
        self.work(0);
        self.done.wait();
    }

    /// The windows' host times into `t`; `coordinating`: the coordinator's whole loop.
    fn times(&self, t: &mut HostTimes, coordinating: f64) {
        t.busy = self.busy.load(Relaxed) as f64 * 1e-9;
        t.windows = self.window_ns.load(Relaxed) as f64 * 1e-9;
        t.window_count = self.window_count.load(Relaxed);
        t.between = coordinating - t.windows;
        t.threads = self.start.threads();
    }

    fn stop_workers(&self) {
        self.quit.store(true, Relaxed);
        self.start.wait();
    }

    /// `coordinate` on this thread, with `threads - 1` helpers taking windows beside it.
    fn with_workers(&self, threads: usize, coordinate: impl FnOnce() -> End) -> End {
        std::thread::scope(|s| {
            (1..threads).for_each(|t| drop(s.spawn(move || self.worker(t))));
            let end = coordinate();
            self.stop_workers();
            end
        })
    }

    /// The earliest pending time, the cores still running and the events so far.
    fn survey(&self) -> (Option<Time>, usize, u64) {
        let (mut next, mut running, mut events) = (None::<Time>, 0, 0);
        for i in 0..self.slots.len() {
            let s = self.slot(i);
            if let Some(t) = s.sim.next_pending() {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
            running += s.sim.running_cores;
            events += s.sim.events();
        }
        (next, running, events)
    }

    /// The cores of every partition by phase (for the progress line), if the last window
    /// counted them.
    fn phases(&self) -> Option<Phases> {
        let mut all = Phases::new();
        for i in 0..self.slots.len() {
            let counted = self.slot(i).phases.take()?;
            counted.into_iter().for_each(|(id, n)| *all.entry(id).or_default() += n);
        }
        Some(all)
    }

    /// Why the window was cut short, if it was: a partition stopped within it, or a stop
    /// requested before it began skipped every partition.
    fn stopped(&self) -> Option<Outcome> {
        let first = (0..self.slots.len()).find_map(|i| self.slot(i).stopped.take());
        first.or_else(|| self.halt.load(Relaxed).then_some(Outcome::Interrupted))
    }

    /// How the first partition whose window failed failed, if one did.
    fn failure(&self) -> Option<End> {
        (0..self.slots.len()).find_map(|i| {
            let mut s = self.slot(i);
            s.panic.take().map(End::Panicked).or_else(|| s.error.take().map(End::Failed))
        })
    }

    /// The earliest core error of any partition, once it is before `to`: everything before
    /// `to` has been simulated everywhere, so no earlier one can come (see `Simulation::fail`).
    fn core_failure(&self, to: Time) -> Option<End> {
        let (_, node, _, error) = self.slot(self.core_first(to)?.0).sim.failed.take().expect("found");
        Some(End::Failed(SimError::Core { node, error }))
    }

    /// The partition with the earliest core error before `to`, and its (time, node, core).
    fn core_first(&self, to: Time) -> Option<(usize, (Time, u32, usize))> {
        let mut first: Option<(usize, (Time, u32, usize))> = None;
        for i in 0..self.slots.len() {
            let key = self.slot(i).sim.failed.as_ref().map(|f| (f.0, f.1, f.2));
            if let Some(k) = key.filter(|k| k.0 < to && first.is_none_or(|(_, f)| *k < f)) {
                first = Some((i, k));
            }
        }
        first
    }

    /// Exchange what partitions sent each other during the window: the outboxes taken out
    /// and indexed here, the packets let in by every thread, the outboxes given back.
    fn exchange(&self) {
        let handoff = self.with_all(Handoff::take);
        *self.handoff.write().expect("handoff") = Some(handoff);
        self.on_every_thread(true);
        let handoff = self.handoff.write().expect("handoff").take().expect("the exchange's packets");
        self.with_all(|sims| handoff.give_back(sims));
    }

    /// `f` on every partition, locked.
    fn with_all<R>(&self, f: impl FnOnce(&mut [&mut Simulation]) -> R) -> R {
        let mut guards: Vec<_> = (0..self.slots.len()).map(|i| self.slot(i)).collect();
        f(&mut guards.iter_mut().map(|g| &mut g.sim).collect::<Vec<_>>())
    }
}

impl Simulation {
    /// Use up to `n` host threads for partitioned runs (results do not depend on it).
    pub fn set_threads(&mut self, n: usize) {
        self.threads = n.max(1);
    }

    /// Host threads a partitioned run uses at most.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Run as partitions on `threads` host threads, then put the cluster back together.
    pub(crate) fn run_partitioned(
        &mut self,
        limit: Time,
        progress: &mut Progress,
    ) -> Result<Outcome, SimError> {
        let lookahead = self.net.as_ref().expect("cluster run").fabric.lookahead();
        if let Some(ranks) = ranks::current() {
            return self.run_on_ranks(ranks, (lookahead, limit), progress);
        }
        let started = Instant::now();
        let parts = self.split(0..self.partitions());
        let threads = self.threads.clamp(1, parts.len());
        let plan = Plan::new(parts, threads);
        self.host_times.split_join = since(started);
        let started = Instant::now();
        let end = plan.with_workers(threads, || self.coordinate(&plan, lookahead, limit, progress));
        plan.times(&mut self.host_times, since(started));
        self.finish_partitioned(plan, end, limit)
    }

    /// Join the partitions back and say how the run ended.
    fn finish_partitioned(&mut self, plan: Plan, end: End, limit: Time) -> Result<Outcome, SimError> {
        if let End::Panicked(p) = end {
            std::panic::resume_unwind(p);
        }
        let started = Instant::now();
        let mut parts: Vec<Simulation> =
            plan.slots.into_iter().map(|m| m.into_inner().expect("partition").sim).collect();
        for f in parts.iter_mut().filter_map(|p| p.failed.take()) {
            self.fail(f.0, f.1, f.2, f.3);
        }
        // Across MPI ranks `now` is already the latest of every rank's partitions.
        self.now = parts.iter().map(|p| p.now).max().unwrap_or(self.now).max(self.now);
        self.join(parts);
        self.host_times.split_join += since(started);
        match end {
            End::Done(Outcome::AllExited) => {
                self.end_settled();
                Ok(Outcome::AllExited)
            }
            End::Unsettled => {
                self.end_settled();
                self.unsettled = true;
                Ok(Outcome::AllExited)
            }
            End::Done(o) => Ok(o),
            End::Failed(e) => Err(e),
            End::CycleLimit => Ok(self.time_limit(limit)),
            End::Panicked(_) => unreachable!("resumed above"),
        }
    }

    /// Windows until the run ends (the same checks, in the same order, as `event_loop`).
    fn coordinate(&self, plan: &Plan, lookahead: Time, limit: Time, progress: &mut Progress) -> End {
        let mut took = Duration::ZERO;
        loop {
            let (next, running, events) = plan.survey();
            let (from, to) = match self.next_window(next, running, lookahead, limit) {
                Ok(w) => w,
                Err(end) => return end,
            };
            took = plan.window((from, to), progress.wants_phases(took));
            // A stopped window's partitions are not all at `to`: no core error is final then.
            let stopped = plan.stopped().map(End::Done);
            if let Some(end) = plan.failure().or(stopped).or_else(|| plan.core_failure(to)) {
                return end;
            }
            plan.exchange();
            if let Some(end) = plan.failure() {
                return end;
            }
            if let Some(stop) = progress.check(from, events, running, || plan.phases()) {
                return End::Done(stop);
            }
        }
    }

    /// The next window, [from, to), given the earliest pending time and the cores still
    /// running everywhere; or how the run ends.
    fn next_window(
        &self,
        next: Option<Time>,
        running: usize,
        lookahead: Time,
        limit: Time,
    ) -> Result<(Time, Time), End> {
        let just_after = |t: Time| Time(t.0.saturating_add(1));
        // Every core exited: settle what is in flight, as `Simulation::settle` does.
        let settling = !self.drain && running == 0;
        let Some(from) = next else {
            return Err(End::Done(if settling { Outcome::AllExited } else { Outcome::Quiescent }));
        };
        if settling && from > limit {
            return Err(End::Unsettled);
        }
        if self.deadline.is_some_and(|d| from > d) {
            return Err(End::Done(Outcome::Deadline));
        }
        if from > limit {
            return Err(End::CycleLimit);
        }
        let to =
            (from + lookahead).min(just_after(limit)).min(self.deadline.map_or(Time(u64::MAX), just_after));
        Ok((from, to))
    }

    /// The earliest time pending here, packets from other partitions not yet let in included.
    fn next_pending(&self) -> Option<Time> {
        let inbox = self.net.as_ref().and_then(|n| n.inbox.iter().map(|c| c.at).min());
        [self.next().map(|(t, _)| t), inbox].into_iter().flatten().min()
    }

    /// Handle, in this partition, everything before `to`; another partition's packets
    /// cannot arrive before `from + lookahead`, which is `to` or later. A stop (Ctrl-C,
    /// SIGTERM, the wall-clock limit) ends the window early: one window can hold seconds of
    /// work (the first of a 16,384-core sort, every core's start, took 4.5 s), and the
    /// partitions left at different times matter no more once the run is stopped.
    pub(crate) fn run_window(&mut self, from: Time, to: Time) -> Result<Option<Outcome>, SimError> {
        self.accept_inbox();
        // One comparison per window: a violation would silently move time backwards.
        assert!(self.next().is_none_or(|(t, _)| t >= from), "an arrival from another partition is late");
        self.horizon = self.clock.cycle_floor(to);
        while let Some((t, core_next)) = self.next().filter(|&(t, _)| t < to) {
            self.step(t, core_next)?;
            self.check_pending()?;
            if let Some(stop) = self.stop_due() {
                return Ok(Some(stop));
            }
        }
        Ok(None)
    }
}
