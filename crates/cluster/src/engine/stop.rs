//! Stopping a long run early but cleanly: a user's interrupt (Ctrl-C or SIGTERM, set by the
//! command line tool's signal handler) or a wall-clock deadline. The event loop, and each
//! partition of a partitioned run within its window, looks after every [`LOOK_EVERY`] units
//! of work and ends with outcome `Interrupted` or `WallLimit`, so callers still report what
//! was measured so far, marked incomplete.
//!
//! Work, not events, sets the pace: a core that cannot be interrupted runs up to a quantum of
//! 100,000 cycles per dispatch, so 4,096 events could be 400 million cycles of a spinning
//! core, seconds of host time (issue 39: Ctrl-C took up to 10 s on a spin loop). Counting a
//! core's cycles too bounds the host time between two looks to a few tens of milliseconds
//! whatever the cores do.

use crate::engine::outcome::Outcome;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Units of work between two looks for a stop (an event is one unit).
pub(crate) const LOOK_EVERY: u64 = 4096;

/// A core's cycles that count as one unit of work: about 10 us of host time at the
/// simulator's 100 million instructions a second, as much as a cheap event or two.
pub(crate) const CYCLES_PER_UNIT: u64 = 1024;

/// Ask every running simulation to stop at its next check (safe from a signal handler).
pub fn request_stop() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Has a stop been requested?
pub fn stop_requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Withdraw a stop request once the run it stopped has returned, so that the next run of
/// the same process (the Python package runs many) is not stopped at once.
pub fn clear_stop() {
    REQUESTED.store(false, Ordering::Relaxed);
}

/// Why a run must end now, if it must: a stop was requested, or its wall-clock deadline
/// has passed.
pub(crate) fn why_stop(deadline: Option<Instant>) -> Option<Outcome> {
    if stop_requested() {
        return Some(Outcome::Interrupted);
    }
    deadline.filter(|d| Instant::now() >= *d).map(|_| Outcome::WallLimit)
}

/// The units of work of a core dispatch that ran `cycles` cycles.
pub(crate) fn dispatch_units(cycles: u64) -> u64 {
    1 + cycles / CYCLES_PER_UNIT
}
