//! The `run` and `sort` front ends of the `nanopu` command, as a library: their flags are
//! parsed and checked here once, for the command line and for the Python package
//! (`crates/py`, docs/python.md), which builds its runs from the same flags.

pub mod cluster;
pub mod fault_flags;
pub mod run;
pub mod sort;
