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
    /// The user interrupted the run ([`crate::stop::request_stop`]); results are partial.
    Interrupted,
    /// The run passed its wall-clock limit ([`crate::Simulation::set_wall_limit`]).
    WallLimit,
}

impl Outcome {
    /// Did the run stop before its natural end (user interrupt or wall-clock limit)?
    pub fn incomplete(self) -> bool {
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
        }
    }
}

/// Why a run failed.
#[derive(Debug)]
pub enum SimError {
    Setup(String),
    /// A core stopped on an error; the node it belongs to.
    Core {
        node: u32,
        error: CoreError,
    },
    /// Simulated time passed the cycle limit; where every core was.
    CycleLimit {
        cycles: u64,
        cores: Vec<String>,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Setup(m) => write!(f, "{m}"),
            SimError::Core { node: 0, error } => write!(f, "{error}"),
            SimError::Core { node, error } => write!(f, "node {node}, {error}"),
            SimError::CycleLimit { cycles, cores } => {
                write!(f, "cycle limit of {cycles} cycles reached (raise it with --max-cycles); cores that have not exited:")?;
                cores.iter().try_for_each(|c| write!(f, "\n  {c}"))
            }
        }
    }
}

impl std::error::Error for SimError {}
