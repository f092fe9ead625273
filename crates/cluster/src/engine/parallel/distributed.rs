//! A partitioned run across MPI ranks (docs/parallel.md, "Across MPI ranks").
//!
//! Every rank builds only the nodes of its own block of partitions (`ranks::owned`,
//! `Simulation::cluster`), splits them as a threaded run does and advances them, on its
//! threads, through the same windows. Where the threaded coordinator reads every partition, the
//! ranks gather a few numbers from each other instead, and every rank takes the same
//! decision from the same numbers. A window costs one gather and, if packets crossed
//! between ranks, one exchange of them. The gather after a window says how it ended (a
//! failure, a stop within it, the earliest core error) and what the next needs: each
//! rank's earliest pending event and the earliest packet it sent (which together give the
//! earliest time pending anywhere once the packets are delivered), its cores running and
//! events, and how many words it sends each rank. A rank enters what it receives into its
//! inboxes in the order of the sending partitions, as the threaded exchange does, so
//! results are the same bit for bit.

use super::ranks::{self, Ranks};
use super::{wire, End, Plan};
use crate::engine::outcome::{Outcome, SimError};
use crate::engine::progress::Progress;
use crate::engine::Simulation;
use nanopu_net::fabric::{Crossing, Wiring};
use nanopu_net::pcapng::Direction;
use nanopu_sim::packet::Packet;
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

/// What the next window needs, over every rank.
struct Survey {
    next: Option<Time>,
    running: usize,
    events: u64,
}

/// The packets a window sent: as words to each other rank, and to this rank's partitions.
struct Sent {
    words: Vec<Vec<u64>>,
    local: Vec<(Time, u32, Packet)>,
    /// The earliest of them.
    earliest: Option<Time>,
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

fn time_word(t: Option<Time>) -> u64 {
    t.map_or(NONE, |t| t.0)
}

/// The words of a window's end, per rank: a failure (1) or not (0), a stop within the
/// window, the earliest core error before its end (time, node, core), the earliest pending
/// event, the earliest packet sent, cores running, events, a stop `Progress` asked for
/// after the window before; then the words sent to each rank.
const FAILED: usize = 0;
const STOPPED: usize = 1;
const CORE: usize = 2;
const PENDING: usize = 5;
const SENT: usize = 6;
const RUNNING: usize = 7;
const EVENTS: usize = 8;
const ASKED: usize = 9;
const LENS: usize = 10;

impl Simulation {
    /// Advance this rank's partitions of `parts` with the other ranks, then join them back
    /// (this rank's nodes only; `nanopu_harness` gathers what reports read).
    pub(super) fn run_on_ranks(
        &mut self,
        ranks: &dyn Ranks,
        (lookahead, limit): (Time, Time),
        progress: &mut Progress,
    ) -> Result<Outcome, SimError> {
        let all = self.partitions();
        let mine = ranks::owned(all, ranks.size(), ranks.rank()).map_err(SimError::Setup)?;
        let wiring = self.net.as_ref().expect("cluster run").fabric.wiring().clone();
        let owner = (0..all).map(|p| ranks::owner(all, ranks.size(), p)).collect();
        let first = mine.start;
        // Only this rank's nodes were built (`Simulation::cluster`); the other ranks' parts
        // of the fabric are dropped here.
        let parts = self.split(mine);
        if ranks.rank() != 0 {
            progress.quiet();
        }
        let threads = self.threads.clamp(1, parts.len());
        let plan = Plan::new(parts, threads);
        let share = Share { plan: &plan, ranks, first, owner, wiring };
        let started = std::time::Instant::now();
        let end = plan.with_workers(threads, || self.coordinate_ranks(&share, lookahead, limit, progress));
        plan.times(&mut self.host_times, crate::engine::host_time::since(started));
        if !matches!(end, End::Panicked(_)) {
            self.now = share.latest();
        }
        let result = self.finish_partitioned(plan, end, limit);
        self.first_failure(ranks).map_or(result, Err)
    }

    /// Windows until the run ends: `coordinate`'s decisions, on numbers every rank gathers.
    fn coordinate_ranks(&self, s: &Share, lookahead: Time, limit: Time, progress: &mut Progress) -> End {
        let (mut survey, mut asked, mut took) = (s.survey(), None, std::time::Duration::ZERO);
        loop {
            let (from, to) = match self.next_window(survey.next, survey.running, lookahead, limit) {
                Ok(w) => w,
                Err(end) => return end,
            };
            took = s.plan.window((from, to), progress.wants_phases(took));
            let sent = s.outboxes();
            let (rows, failed) = match s.gather_end(to, &sent, asked) {
                Ok(end) => end,
                Err(panicked) => return panicked,
            };
            if let Some(end) = s.window_end(to, &rows, failed) {
                return end;
            }
            survey = s.exchange(sent, &rows);
            asked = progress.check(from, survey.events, survey.running, || s.plan.phases());
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
    let got = ranks::send(ranks, &vec![words; ranks.size()]);
    SimError::Rank { rank, error: ranks::words_text(&got[rank]) }
}

impl Share<'_> {
    /// Before the first window: the earliest pending time, the cores running, the events.
    fn survey(&self) -> Survey {
        let (next, running, events) = self.plan.survey();
        let all = self.ranks.all_gather(&[time_word(next), running as u64, events]);
        let rows = || all.chunks(3);
        Survey {
            next: rows().map(|r| r[0]).min().filter(|&t| t != NONE).map(Time),
            running: rows().map(|r| r[1] as usize).sum(),
            events: rows().map(|r| r[2]).sum(),
        }
    }

    /// The packets the window sent, out of the outboxes in partition order: to another
    /// rank's partitions as words, to this rank's as they are.
    fn outboxes(&self) -> Sent {
        let me = self.ranks.rank();
        let mut sent = Sent { words: vec![Vec::new(); self.ranks.size()], local: Vec::new(), earliest: None };
        for i in 0..self.plan.slots.len() {
            let mut s = self.plan.slot(i);
            let net = s.sim.net.as_mut().expect("cluster run");
            let mut out = net.fabric.take_outbox();
            for c in out.drain(..) {
                sent.earliest = Some(sent.earliest.map_or(c.at, |e| e.min(c.at)));
                match self.owner[c.part as usize] {
                    r if r == me => sent.local.push((c.at, c.port, c.pkt)),
                    r => wire::put_packet(&mut sent.words[r], c.at, c.port, &c.pkt),
                }
            }
            crate::net::release_packets(&mut out);
            net.fabric.give_back_outbox(out);
        }
        sent
    }

    /// Every rank's words of the window's end (`FAILED` to `LENS`), one row per rank, and
    /// this rank's failure if it failed. A panic ends this rank instead, without a word to
    /// the others (it is resumed once the helper threads are stopped, the process dies of
    /// it, and MPI ends the others).
    #[allow(clippy::type_complexity)]
    fn gather_end(
        &self,
        to: Time,
        sent: &Sent,
        asked: Option<Outcome>,
    ) -> Result<(Vec<Vec<u64>>, Option<SimError>), End> {
        let failed = match self.plan.failure() {
            Some(End::Panicked(p)) => return Err(End::Panicked(p)),
            Some(End::Failed(e)) => Some(e),
            _ => None,
        };
        let core = self.plan.core_first(to).map_or([NONE; 3], |(_, k)| [k.0 .0, u64::from(k.1), k.2 as u64]);
        let (pending, running, events) = self.plan.survey();
        let mut mine = vec![u64::from(failed.is_some()), code(self.plan.stopped())];
        mine.extend(core);
        mine.extend([time_word(pending), time_word(sent.earliest), running as u64, events, code(asked)]);
        mine.extend(sent.words.iter().map(|w| w.len() as u64));
        let all = self.ranks.all_gather(&mine);
        Ok((all.chunks(mine.len()).map(<[u64]>::to_vec).collect(), failed))
    }

    /// How the window ended the run, if it did: as `coordinate` decides, a failure first
    /// (the lowest rank's), then a stop within the window, then the earliest core error
    /// before `to`, then a stop asked for after the window before.
    fn window_end(&self, to: Time, rows: &[Vec<u64>], failed: Option<SimError>) -> Option<End> {
        if let Some(rank) = rows.iter().position(|r| r[FAILED] == 1) {
            let text = failed.map(|e| e.to_string()).unwrap_or_default();
            return Some(End::Failed(tell(self.ranks, rank, text)));
        }
        if let Some(o) = rows.iter().find_map(|r| outcome(r[STOPPED])) {
            return Some(End::Done(o));
        }
        let core = rows.iter().enumerate().filter(|(_, r)| r[CORE] != NONE);
        if let Some((rank, _)) = core.min_by_key(|(_, r)| (r[CORE], r[CORE + 1], r[CORE + 2])) {
            let text = match (rank == self.ranks.rank()).then(|| self.plan.core_failure(to)).flatten() {
                Some(End::Failed(e)) => e.to_string(),
                _ => String::new(),
            };
            return Some(End::Failed(tell(self.ranks, rank, text)));
        }
        rows.iter().find_map(|r| outcome(r[ASKED])).map(End::Done)
    }

    /// Deliver the packets sent (every rank's, in rank order, so in the order of the
    /// sending partitions) to the inboxes of the partitions that handle them; what the next
    /// window needs, over every rank.
    fn exchange(&self, sent: Sent, rows: &[Vec<u64>]) -> Survey {
        let me = self.ranks.rank();
        let lens: Vec<usize> = rows.iter().map(|r| r[LENS + me] as usize).collect();
        let crossing = rows.iter().any(|r| r[LENS..].iter().any(|&n| n > 0));
        let got =
            if crossing { self.ranks.all_to_all(&sent.words, &lens) } else { vec![Vec::new(); lens.len()] };
        let mut local = Some(sent.local);
        for (r, words) in got.iter().enumerate() {
            let packets = if r == me { local.take().unwrap_or_default() } else { wire::packets(words) };
            packets.into_iter().for_each(|(t, port, pkt)| self.deliver(t, port, pkt));
        }
        let earliest = rows.iter().flat_map(|r| [r[PENDING], r[SENT]]).min().filter(|&t| t != NONE);
        Survey {
            next: earliest.map(Time),
            running: rows.iter().map(|r| r[RUNNING] as usize).sum(),
            events: rows.iter().map(|r| r[EVENTS]).sum(),
        }
    }

    /// Into the inbox of this rank's partition at the receiving end of `port`.
    fn deliver(&self, at: Time, port: u32, pkt: Packet) {
        let part = self.wiring.part_of_peer(port);
        let c = Crossing { at, port, part, pkt };
        self.plan.slot(part as usize - self.first).sim.net.as_mut().expect("cluster run").inbox.push(c);
    }

    /// The latest time any partition of any rank reached.
    fn latest(&self) -> Time {
        let mine = (0..self.plan.slots.len()).map(|i| self.plan.slot(i).sim.now).max().unwrap_or(Time::ZERO);
        Time(self.ranks.all_gather(&[mine.0]).into_iter().max().unwrap_or(0))
    }
}

impl Simulation {
    /// Across MPI ranks (collective: every rank calls it): every rank's captured packets go
    /// to rank 0 and join its own, in rank order, so that `write_capture_as` there writes the
    /// capture a threaded run writes (a capture point's packets can be captured by two
    /// partitions, at a switch port's sending and receiving ends); the other ranks keep none.
    pub fn gather_capture(&mut self) {
        let (Some(r), Some(net)) = (ranks::current(), self.net.as_mut()) else { return };
        let mut words = Vec::new();
        for (t, dir, p) in net.fabric.take_capture() {
            wire::put_packet(&mut words, t, u32::from(dir == Direction::Outbound), &p);
        }
        let got = ranks::to_root(r, words);
        let from = |(t, d, p): (Time, u32, Packet)| {
            (t, if d == 1 { Direction::Outbound } else { Direction::Inbound }, p)
        };
        net.fabric.add_capture(got.iter().flat_map(|w| wire::packets(w)).map(from).collect());
    }
}
