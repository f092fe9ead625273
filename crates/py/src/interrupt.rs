//! Long runs from Python: the simulation runs on a thread of its own while the caller's
//! thread, without the GIL (other Python threads run), watches for Ctrl-C. An interrupt
//! asks the simulation to stop (`nanopu_cluster::engine::stop`, as the command line's Ctrl-C does)
//! and is raised as KeyboardInterrupt once it has.

use nanopu_cluster::engine::stop::{clear_stop, request_stop};
use pyo3::prelude::*;
use std::time::Duration;

/// How often the waiting thread looks for a signal: short against a person's reaction.
const POLL: Duration = Duration::from_millis(5);

/// Run `f` (a simulation) to its end, interruptible by Ctrl-C.
pub fn run<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let (result, interrupt) = std::thread::scope(|s| {
        let h = s.spawn(f);
        let mut interrupt = None;
        while !h.is_finished() {
            py.detach(|| std::thread::sleep(POLL));
            if let (None, Err(e)) = (&interrupt, py.check_signals()) {
                request_stop();
                interrupt = Some(e);
            }
        }
        (h.join(), interrupt)
    });
    if let Some(e) = interrupt {
        clear_stop();
        return Err(e);
    }
    result.map_err(|_| {
        crate::error("the simulator panicked (a bug: please report it with the run's configuration)")
    })
}
