//! A partitioned run across MPI ranks (docs/parallel.md, "Across MPI ranks").
//!
//! Every rank builds the whole cluster and splits it as a threaded run does, then keeps
//! only its own block of partitions (`ranks::owned`) and advances them, on its threads,
//! through the same windows. Where the threaded coordinator reads every partition, the
//! ranks gather a few numbers from each other instead, and every rank takes the same
//! decision from the same numbers: twice a window (before it: the earliest pending time,
//! the cores running, the events, a stop; after it: a failure, a stop within it, the
//! earliest core error), plus the packets that crossed to another rank's partitions. A
//! rank enters what it receives into its inboxes in the order of the sending partitions,
//! as the threaded exchange does, so results are the same bit for bit.

use super::ranks::{self, Ranks};
use super::{wire, End, Plan};
use crate::engine::outcome::{Outcome, SimError};
use crate::engine::progress::Progress;
use crate::engine::Simulation;
use nanopu_net::fabric::Wiring;
use nanopu_sim::Time;

/// A rank's share of a run: its partitions (in `plan`) and where they sit among all.
struct Share<'a> {
    plan: &'a Plan,
    ranks: &'a dyn Ranks,
    /// Global index of the plan's first partition.
    first: usize,
    /// The rank of every partition.
    owner: Vec<usize>,
    wiring: Wiring,
}

/// Every outcome, in a fixed order: what crosses ranks is its index plus one (0: none).
const OUTCOMES: [Outcome; 7] = [
    Outcome::AllExited,
    Outcome::Quiescent,
    Outcome::HostDone,
    Outcome::Deadline,
    Outcome::Interrupted,
    Outcome::WallLimit,
    Outcome::TimeLimit,
];

fn code(o: Option<Outcome>) -> u64 {
    o.map_or(0, |o| 1 + OUTCOMES.iter().position(|&x| x == o).expect("every outcome is listed") as u64)
}

fn outcome(c: u64) -> Option<Outcome> {
    c.checked_sub(1).map(|i| OUTCOMES[i as usize])
}

/// No time, as a word (`Option<Time>` crosses ranks as u64::MAX for None).
const NONE: u64 = u64::MAX;

impl Simulation {
    /// Advance this rank's partitions of `parts` with the other ranks, then join them back
    /// (this rank's nodes only; `nanopu_harness` gathers what reports read).
    pub(super) fn run_on_ranks(
        &mut self,
        ranks: &dyn Ranks,
        mut parts: Vec<Simulation>,
        (lookahead, limit): (Time, Time),
        progress: &mut Progress,
    ) -> Result<Outcome, SimError> {
        let all = parts.len();
        let mine = ranks::owned(all, ranks.size(), ranks.rank()).map_err(SimError::Setup)?;
        let wiring = parts[0].net.as_ref().expect("cluster run").fabric.wiring().clone();
        let owner = (0..all).map(|p| ranks::owner(all, ranks.size(), p)).collect();
        let first = mine.start;
        // The other ranks' partitions are freed here: from now on a rank holds its own.
        let parts: Vec<Simulation> = parts.drain(mine).collect();
        if ranks.rank() != 0 {
            progress.quiet();
        }
        let threads = self.threads.clamp(1, parts.len());
        let plan = Plan::new(parts, threads);
        let share = Share { plan: &plan, ranks, first, owner, wiring };
        let end = plan.with_workers(threads, || self.coordinate_ranks(&share, lookahead, limit, progress));
        if !matches!(end, End::Panicked(_)) {
            self.now = share.latest();
        }
        let result = self.finish_partitioned(plan, end, limit);
        self.first_failure(ranks).map_or(result, Err)
    }

    /// Windows until the run ends: `coordinate`'s decisions, on numbers every rank gathers.
    fn coordinate_ranks(&self, s: &Share, lookahead: Time, limit: Time, progress: &mut Progress) -> End {
        let mut stop = None;
        loop {
            let (next, running, events, stopped) = s.survey(stop);
            if let Some(o) = stopped {
                return End::Done(o);
            }
            let (from, to) = match self.next_window(next, running, lookahead, limit) {
                Ok(w) => w,
                Err(end) => return end,
            };
            s.plan.window(from, to);
            if let Some(end) = s.window_end(to) {
                return end;
            }
            s.exchange();
            stop = progress.check(from, events, running, || s.plan.phases());
        }
    }

    /// The earliest core error left on any rank after the run (the one `run` reports, as
    /// it reports a whole cluster's), told by its rank to every other.
    fn first_failure(&mut self, ranks: &dyn Ranks) -> Option<SimError> {
        let key = self.failed.as_ref().map_or([NONE; 3], |f| [f.0 .0, u64::from(f.1), f.2 as u64]);
        let all = ranks.all_gather(&key);
        let (rank, _) = all
            .chunks(3)
            .enumerate()
            .filter(|(_, k)| k[0] != NONE)
            .min_by_key(|(_, k)| (k[0], k[1], k[2]))?;
        let mine = self.failed.take().map(|(_, node, _, error)| SimError::Core { node, error }.to_string());
        Some(tell(ranks, rank, mine.unwrap_or_default()))
    }
}

/// `rank`'s error `text` (known there only), as every rank reports it: naming the rank.
fn tell(ranks: &dyn Ranks, rank: usize, text: String) -> SimError {
    let words = if ranks.rank() == rank { ranks::text_words(&text) } else { Vec::new() };
    let got = ranks.all_to_all(&vec![words; ranks.size()]);
    SimError::Rank { rank, error: ranks::words_text(&got[rank]) }
}

impl Share<'_> {
    /// Before a window: the earliest pending time, the cores running and the events of
    /// every rank, and the first rank's stop (`Progress::check` after the last window).
    fn survey(&self, stop: Option<Outcome>) -> (Option<Time>, usize, u64, Option<Outcome>) {
        let (next, running, events) = self.plan.survey();
        let all = self.ranks.all_gather(&[next.map_or(NONE, |t| t.0), running as u64, events, code(stop)]);
        let rows = || all.chunks(4);
        let next = rows().map(|r| r[0]).min().filter(|&t| t != NONE).map(Time);
        let running = rows().map(|r| r[1] as usize).sum();
        (next, running, rows().map(|r| r[2]).sum(), rows().find_map(|r| outcome(r[3])))
    }

    /// After a window: as `coordinate` decides, a failure first (the lowest rank's), then a
    /// stop within the window, then the earliest core error before `to`. A panic ends this
    /// rank at once (its process dies, and MPI ends the others).
    fn window_end(&self, to: Time) -> Option<End> {
        let failure = self.plan.failure();
        if let Some(End::Panicked(p)) = failure {
            return Some(End::Panicked(p));
        }
        let core = self.plan.core_first(to).map_or([NONE; 3], |(_, k)| [k.0 .0, u64::from(k.1), k.2 as u64]);
        let mine = [u64::from(failure.is_some()), code(self.plan.stopped()), core[0], core[1], core[2]];
        let all = self.ranks.all_gather(&mine);
        let rows: Vec<&[u64]> = all.chunks(5).collect();
        if let Some(rank) = rows.iter().position(|r| r[0] == 1) {
            let text = match failure {
                Some(End::Failed(e)) => e.to_string(),
                _ => String::new(),
            };
            return Some(End::Failed(tell(self.ranks, rank, text)));
        }
        if let Some(o) = rows.iter().find_map(|r| outcome(r[1])) {
            return Some(End::Done(o));
        }
        let (rank, _) =
            rows.iter().enumerate().filter(|(_, r)| r[2] != NONE).min_by_key(|(_, r)| (r[2], r[3], r[4]))?;
        let text = match (rank == self.ranks.rank()).then(|| self.plan.core_failure(to)).flatten() {
            Some(End::Failed(e)) => e.to_string(),
            _ => String::new(),
        };
        Some(End::Failed(tell(self.ranks, rank, text)))
    }

    /// The packets that crossed: to this rank's own partitions directly, to another's as
    /// words; then every rank's, in rank order (so in the order of the sending partitions),
    /// into the inboxes of the partitions that handle them.
    fn exchange(&self) {
        let me = self.ranks.rank();
        let mut out = vec![Vec::new(); self.ranks.size()];
        let mut local = Vec::new();
        for i in 0..self.plan.slots.len() {
            let mut s = self.plan.slot(i);
            let net = s.sim.net.as_mut().expect("cluster run");
            let mut sent = net.fabric.take_outbox();
            for (t, port, pkt) in sent.drain(..) {
                match self.owner[self.wiring.part_of_peer(port) as usize] {
                    r if r == me => local.push((t, port, pkt)),
                    r => wire::put_packet(&mut out[r], t, port, &pkt),
                }
            }
            net.fabric.give_back_outbox(sent);
        }
        let mut got = self.ranks.all_to_all(&out);
        for (r, words) in got.iter_mut().enumerate() {
            let packets = if r == me { std::mem::take(&mut local) } else { wire::packets(words) };
            packets.into_iter().for_each(|(t, port, pkt)| self.deliver(t, port, pkt));
        }
    }

    /// Into the inbox of this rank's partition at the receiving end of `port`.
    fn deliver(&self, t: Time, port: u32, pkt: nanopu_sim::packet::Packet) {
        let p = self.wiring.part_of_peer(port) as usize - self.first;
        self.plan.slot(p).sim.net.as_mut().expect("cluster run").inbox.push((t, port, pkt));
    }

    /// The latest time any partition of any rank reached.
    fn latest(&self) -> Time {
        let mine = (0..self.plan.slots.len()).map(|i| self.plan.slot(i).sim.now).max().unwrap_or(Time::ZERO);
        Time(self.ranks.all_gather(&[mine.0]).into_iter().max().unwrap_or(0))
    }
}
