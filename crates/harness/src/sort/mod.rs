//! The sort benchmark harness, simulator side (docs/sort-harness.md).
//!
//! - [`input`]: seeded records (8-byte key, 96-byte value) in three key distributions, and
//!   the order-independent checksum of a multiset of records.
//! - [`harness`]: writing each sorter's input into its node's memory before the run and
//!   reading its output, stage log and counters after it.
//! - [`validate`]: global order, record count and checksum.
//! - [`report`]: total time, per-stage compute and idle time, skew, traffic (the
//!   Perfetto trace: `crate::trace`).
//! - [`run`]: a whole run: cluster sized for the sorters, program, validation.

pub mod gather;
pub mod harness;
pub mod input;
pub mod report;
pub mod run;
pub mod validate;

pub use gather::Totals;
pub use harness::{SorterOutput, Stage, Start};
pub use input::{Distribution, Records};
pub use run::{seeds, Algorithm, SortRun, SortSpec};
pub use validate::Verdict;

/// The value named `s` in a list of (name, value), or an error that lists the names.
pub fn by_name<T: Copy>(all: &[(&'static str, T)], s: &str, what: &str) -> Result<T, String> {
    match all.iter().find(|(n, _)| *n == s) {
        Some(&(_, v)) => Ok(v),
        None => {
            let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
            Err(format!("{what} {s:?}: expected one of {}", names.join(", ")))
        }
    }
}

/// The names of such a list, for `--help` and the CLI's parser.
pub fn names<T>(all: &[(&'static str, T)]) -> Vec<&'static str> {
    all.iter().map(|(n, _)| *n).collect()
}
