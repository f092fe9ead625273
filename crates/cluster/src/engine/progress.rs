//! The progress line of long runs (`--progress`), on stderr at most twice a second: wall
//! time, simulated time, events, cores done with an estimate of the time left once a tenth
//! are, and, where the run has a [`PhaseProbe`], what the cores are doing (a sort's cores by
//! stage), so that a run whose cores all finish at the end does not show "0 cores done" for
//! most of it.

use crate::engine::Simulation;
use nanopu_sim::Time;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// The progress line is refreshed at most this often.
const REFRESH: Duration = Duration::from_millis(500);

/// Counts the cores of a run, or of one partition of it, by phase, and names the phases.
/// Phases are shown in the order of their ids (a run's phases in the order they happen).
#[derive(Clone, Copy)]
pub struct PhaseProbe {
    /// Add each core of `sim` to the count of its phase id.
    pub count: fn(sim: &Simulation, counts: &mut BTreeMap<u64, usize>),
    pub name: fn(id: u64) -> String,
}

/// Cores by phase id.
pub type Phases = BTreeMap<u64, usize>;

/// Progress line on stderr, at most twice a second.
pub struct Progress {
    on: bool,
    start: Instant,
    last: Instant,
    shown: bool,
    /// Whether stderr is a terminal (`write_line`).
    terminal: bool,
    cores: usize,
    /// When the run must end (`Simulation::set_wall_limit`).
    deadline: Option<Instant>,
    /// Wall seconds and cores done at the previous refresh.
    before: (f64, usize),
    probe: Option<PhaseProbe>,
}

impl Progress {
    pub fn new(on: bool, cores: usize, deadline: Option<Instant>) -> Progress {
        let now = Instant::now();
        let before = (0.0, 0);
        Progress {
            on,
            start: now,
            last: now,
            shown: false,
            terminal: std::io::stderr().is_terminal(),
            cores,
            deadline,
            before,
            probe: None,
        }
    }

    /// Show what the cores are doing, by phase, on each refresh.
    pub fn with_probe(mut self, probe: Option<PhaseProbe>) -> Progress {
        self.probe = probe;
        self
    }

    /// Show nothing (an MPI rank other than 0: rank 0 shows the progress line).
    pub(crate) fn quiet(&mut self) {
        self.on = false;
    }

    /// Look for a stop request or the wall-clock deadline now, and refresh the progress line
    /// if it is due (the event loop calls this every `stop::LOOK_EVERY` units of work, a
    /// partitioned run once per window); `phases` is asked for only then. A partitioned run
    /// counts the phases within a window, on the threads running it, when `wants_phases`
    /// said so before the window; its `phases` gives `None` otherwise, and a line that fell
    /// due during such a window waits for the next.
    pub fn check(
        &mut self,
        now: Time,
        events: u64,
        running: usize,
        phases: impl FnOnce() -> Option<Phases>,
    ) -> Option<crate::Outcome> {
        if let Some(stop) = crate::engine::stop::why_stop(self.deadline) {
            return Some(stop);
        }
        if !self.due() {
            return None;
        }
        let doing = match self.probe {
            None => None,
            Some(p) => match phases() {
                Some(counts) => Some(phase_line(p.name, &counts)),
                // Not counted in this window: the next one counts them and shows the line.
                None => return None,
            },
        };
        self.show(now, events, running, doing);
        None
    }

    /// Whether the next check shows the progress line, if the phases are counted by then.
    fn due(&self) -> bool {
        self.due_in(Duration::ZERO)
    }

    /// Whether the line is due `ahead` from now.
    fn due_in(&self, ahead: Duration) -> bool {
        self.on && self.last.elapsed() + ahead >= REFRESH
    }

    /// Whether a partitioned run should count the cores by phase in its next window, which
    /// is expected to take about as long as the last (`ahead`): the line shows them and is
    /// due by the window's end.
    pub(crate) fn wants_phases(&self, ahead: Duration) -> bool {
        self.probe.is_some() && self.due_in(ahead)
    }

    /// Wall time, simulated time, events, cores done, and an estimate of the time left.
    fn show(&mut self, now: Time, events: u64, running: usize, doing: Option<String>) {
        self.last = Instant::now();
        let wall = self.start.elapsed().as_secs_f64();
        let done = self.cores - running;
        let eta = match time_left(self.cores, done, wall, self.before) {
            Some(t) => format!(", about {t:.0} s left"),
            None if running > 0 && doing.is_none() => {
                ", estimating the time left once a tenth of the cores are done".into()
            }
            None => String::new(),
        };
        self.before = (wall, done);
        let sim = now.as_us_f64();
        let doing = doing.unwrap_or_default();
        let line = format!(
            "[{wall:7.1} s] simulated {sim:>10.3} us, {events} events, {done}/{} cores done{doing}{eta}",
            self.cores
        );
        write_line(&line, self.terminal);
        self.shown = true;
    }

    /// End the progress line, if one was shown and left open (on a terminal).
    pub fn finish(&self) {
        if self.shown && self.terminal {
            eprintln!();
        }
    }
}

/// A progress line on stderr: on a terminal it overwrites the previous one (a carriage
/// return, then spaces over what a longer line left); elsewhere (a file, a pipe, a CI log)
/// one plain line each, so that no carriage return lands in a file.
pub fn write_line(line: &str, terminal: bool) {
    let mut e = std::io::stderr().lock();
    let _ = match terminal {
        true => write!(e, "\r{line}   "),
        false => writeln!(e, "{line}"),
    };
    let _ = e.flush();
}

/// ", cores by stage: level 1 61%, level 2 39%": the three phases with most cores, in
/// phase order, with their share of the cores counted.
fn phase_line(name: fn(u64) -> String, phases: &Phases) -> String {
    let total: usize = phases.values().sum();
    let mut top: Vec<(u64, usize)> = phases.iter().map(|(&id, &n)| (id, n)).collect();
    top.sort_by_key(|&(id, n)| (std::cmp::Reverse(n), id));
    top.truncate(3);
    top.sort_by_key(|&(id, _)| id);
    let share = |n: usize| 100.0 * n as f64 / total.max(1) as f64;
    let parts: Vec<String> = top.iter().map(|&(id, n)| format!("{} {:.0}%", name(id), share(n))).collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(", cores by stage: {}", parts.join(", "))
    }
}

/// Seconds left, from the rate at which cores finished since the previous refresh (`before`:
/// its wall seconds and cores done), or since the start if none finished since; None until a
/// tenth of the cores are done (before that the rate says little: many programs finish
/// most cores together at the end) or once all are. The recent rate, not the average,
/// because cores often finish in a burst: NanoSort's 65,536 cores all finish in the last
/// 10% of the run, where the average since the start foretold 307 s with 4 s to go.
fn time_left(cores: usize, done: usize, wall: f64, before: (f64, usize)) -> Option<f64> {
    if done * 10 < cores || done == cores {
        return None;
    }
    let recent = (done - before.1.min(done)) as f64 / (wall - before.0).max(1e-9);
    let rate = if recent > 0.0 { recent } else { done as f64 / wall.max(1e-9) };
    Some((cores - done) as f64 / rate)
}

#[cfg(test)]
mod tests {
    use super::{phase_line, time_left, Phases};

    #[test]
    fn the_phase_line_shows_the_three_largest_phases_in_phase_order() {
        let phases: Phases = [(4, 10), (2, 50), (3, 30), (9, 10)].into_iter().collect();
        let line = phase_line(|id| format!("level {id}"), &phases);
        assert_eq!(line, ", cores by stage: level 2 50%, level 3 30%, level 4 10%");
        assert_eq!(phase_line(|_| String::new(), &Phases::new()), "");
    }

    #[test]
    fn no_estimate_before_a_tenth_or_after_the_end() {
        assert_eq!(time_left(100, 9, 5.0, (4.0, 0)), None);
        assert_eq!(time_left(100, 100, 5.0, (4.0, 50)), None);
    }

    #[test]
    fn a_burst_of_finishing_cores_is_extrapolated_from_its_own_rate() {
        // 2,651 cores done at 39.6 s, 7,625 at 40.4 s: about 6,200 a second, 9.4 s for the rest.
        let t = time_left(65536, 7625, 40.4, (39.6, 2651)).unwrap();
        assert!((t - 9.3).abs() < 0.2, "{t}");
    }

    #[test]
    fn no_core_finished_lately_falls_back_to_the_average() {
        assert_eq!(time_left(100, 50, 10.0, (9.5, 50)), Some(10.0));
    }
}
