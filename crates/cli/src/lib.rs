//! The `run`, `sort`, `app` and `bench` front ends of the `nanopu` command, as a library:
//! their flags are parsed and checked here once, and the runs built, run and shaped into
//! the JSON the command prints, for the command line and for the Python package
//! (`crates/py`, docs/python.md), which builds its runs from the same flags.

pub mod app;
pub mod bench;
pub mod cluster;
pub mod fault_flags;
pub mod keywords;
pub mod ranks;
pub mod report;
pub mod run;
pub mod sort;
