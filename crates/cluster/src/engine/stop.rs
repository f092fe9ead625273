//! Stopping a long run early but cleanly: a user's interrupt (Ctrl-C, set by the command
//! line tool's signal handler) or a wall-clock limit. The event loop looks every few
//! thousand events and ends with outcome `Interrupted` or `WallLimit`, so callers still
//! report what was measured so far, marked incomplete.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

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
