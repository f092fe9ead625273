//! How a run ends.

use nanopu_riscv::CoreError;
use std::fmt;

/// How a run ended when it did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every core exited.
    AllExited,
    /// Nothing left to simulate: every core that has not exited waits for something that
    /// will never come (typically a server waiting for requests after the last one).
    Quiescent,
    /// The test host received every message it waited for ([`crate::TestHost::stop_after`]).
    HostDone,
    /// Simulated time reached the deadline set with [`crate::Simulation::set_deadline`].
    Deadline,
    /// The user interrupted the run ([`crate::engine::stop::request_stop`]); results are partial.
    Interrupted,
    /// The run passed its wall-clock limit ([`crate::Simulation::set_wall_limit`]).
    WallLimit,
    /// Simulated time reached the run's limit (`max_cycles` of a node, `max_us` of a
    /// cluster) with cores still running; [`crate::Simulation::limit_text`] says which
    /// setting raises it. Everything measured so far is reported, marked incomplete.
    TimeLimit,
}

impl Outcome {
    /// Did the run stop before its natural end (user interrupt or wall-clock limit)?
    pub fn incomplete(self) -> bool {
        matches!(self, Outcome::Interrupted | Outcome::WallLimit | Outcome::TimeLimit)
    }
    /// Was the run stopped from outside the simulation (Ctrl-C, SIGTERM, its wall-clock
    /// limit)? What it measured stands as far as it went; a sweep runs no further point.
    pub fn stopped(self) -> bool {
        matches!(self, Outcome::Interrupted | Outcome::WallLimit)
    }

    pub fn name(self) -> &'static str {
        match self {
            Outcome::AllExited => "exited",
            Outcome::Quiescent => "quiescent",
            Outcome::HostDone => "host-done",
            Outcome::Deadline => "deadline",
            Outcome::Interrupted => "interrupted",
            Outcome::WallLimit => "wall-clock limit",
            Outcome::TimeLimit => "time limit",
        }
    }
}

/// Why a run failed.
#[derive(Debug)]
pub enum SimError {
    Setup(String),
    /// The run outgrew a fixed capacity of the simulator (say which, and what filled it).
    Capacity(String),
    /// A core stopped on an error; the node it belongs to.
    Core {
        node: u32,
        error: CoreError,
    },
    /// A run across MPI ranks failed on `rank` (docs/parallel.md, "Across MPI ranks"):
    /// that rank's error, as text, which every rank reports the same.
    Rank {
        rank: usize,
        error: String,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Setup(m) | SimError::Capacity(m) => write!(f, "{m}"),
            SimError::Core { node, error } => write!(f, "node {node}, {error}"),
            SimError::Rank { rank, error } => write!(f, "rank {rank}: {error}"),
        }
    }
}

impl std::error::Error for SimError {}
