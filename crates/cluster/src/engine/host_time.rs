//! Where a run's host time goes: splitting the cluster into partitions and joining it back,
//! the windows (and how much of them the host threads spent working rather than waiting at
//! the barriers), and the coordinator's work between windows. Measured on the host's clock,
//! and the process's CPU time where the host says it (Linux); nothing simulated depends on
//! it (`nanopu sort --progress` prints it, docs/profile.md "The main job").

use std::time::{Duration, Instant};

/// Host seconds of one `Simulation::run`, by part.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostTimes {
    /// The whole run (`Simulation::run`).
    pub run: Lap,
    /// Splitting into partitions before the first window and joining them after the last.
    pub split_join: f64,
    /// From each window's start to the last thread done with it.
    pub windows: f64,
    /// The host threads' time inside partitions' windows, summed over the threads: at most
    /// `windows` times the threads; the rest is waiting (imbalance, barriers, and on a
    /// loaded host a thread that is not scheduled counts as busy).
    pub busy: f64,
    /// Between windows: the coordinator alone (the survey, indexing the packets of the
    /// exchange, the progress line; every other thread waits), and the threads letting the
    /// packets in (`partition::Handoff`).
    pub between: f64,
    /// Windows run.
    pub window_count: u64,
    /// Host threads of the windows.
    pub threads: usize,
}

impl HostTimes {
    /// "run 12.3 s (CPU 24.1 s): windows 10.1 s (2 threads busy 85% of it), between windows
    /// 1.2 s, split and join 0.4 s, 4321 windows"; a run of one partition has no windows.
    pub fn describe(&self) -> String {
        let run = self.run.describe("run");
        if self.window_count == 0 {
            return format!("{run} (one partition)");
        }
        let busy = 100.0 * self.busy / (self.windows * self.threads.max(1) as f64).max(1e-9);
        let (w, b, s, n, t) = (self.windows, self.between, self.split_join, self.window_count, self.threads);
        format!("{run}: windows {w:.2} s ({t} threads busy {busy:.0}% of it), between windows {b:.2} s, split and join {s:.2} s, {n} windows")
    }
}

/// Wall seconds of a part of a run, and the CPU seconds the whole process (every thread)
/// took meanwhile (None where the host does not say).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Lap {
    pub wall: f64,
    pub cpu: Option<f64>,
}

impl Lap {
    /// "build 1.73 s (CPU 1.70 s)".
    pub fn describe(&self, what: &str) -> String {
        match self.cpu {
            Some(c) => format!("{what} {:.2} s (CPU {c:.2} s)", self.wall),
            None => format!("{what} {:.2} s", self.wall),
        }
    }
}

/// A host clock for laps: wall time and the process's CPU time.
pub struct Stopwatch {
    wall: Instant,
    cpu: Option<f64>,
}

impl Stopwatch {
    pub fn start() -> Stopwatch {
        Stopwatch { wall: Instant::now(), cpu: process_cpu() }
    }

    /// The time since the start or the previous lap; the next lap starts now.
    pub fn lap(&mut self) -> Lap {
        let next = Stopwatch::start();
        let cpu = next.cpu.zip(self.cpu).map(|(b, a)| b - a);
        let lap = Lap { wall: self.wall.elapsed().as_secs_f64(), cpu };
        *self = next;
        lap
    }
}

/// CPU seconds this process has taken so far, user and system, all threads: fields 14 and 15
/// of /proc/self/stat, in clock ticks of USER_HZ, 100 per second on Linux (proc(5),
/// times(2)); None elsewhere.
pub fn process_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    cpu_of_stat(&stat)
}

/// The CPU seconds of a /proc/PID/stat line. Its second field, the command's name in
/// parentheses, may hold spaces: fields are counted after its closing parenthesis.
fn cpu_of_stat(stat: &str) -> Option<f64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

/// Seconds since `t`.
pub(crate) fn since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

/// Nanoseconds of `d`, for an atomic counter.
pub(crate) fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_read_past_a_name_with_spaces() {
        // pid (name) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
        let stat = "42 (a b) R 1 1 1 0 -1 0 10 0 0 0 250 75 0 0 20 0 2 0";
        assert_eq!(cpu_of_stat(stat), Some(3.25));
        assert_eq!(cpu_of_stat("42 (x) R 1"), None);
    }

    #[test]
    fn a_partitioned_run_says_how_busy_its_threads_were() {
        let t = HostTimes {
            run: Lap { wall: 10.0, cpu: Some(19.0) },
            windows: 9.0,
            busy: 13.5,
            between: 0.5,
            split_join: 0.5,
            window_count: 230,
            threads: 2,
        };
        let d = t.describe();
        assert!(d.starts_with("run 10.00 s (CPU 19.00 s): windows 9.00 s (2 threads busy 75% of it)"), "{d}");
        assert!(d.ends_with("230 windows"), "{d}");
        let one = HostTimes { run: Lap { wall: 1.0, cpu: None }, ..Default::default() };
        assert_eq!(one.describe(), "run 1.00 s (one partition)");
    }
}
