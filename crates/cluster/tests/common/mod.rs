//! Shared helpers of the simulator's integration tests: the built programs of `sw/` and
//! running them. The harness's tests reuse them (crates/harness/tests/common).

#![allow(dead_code)]

use nanopu_cluster::config::NicKind;
use nanopu_cluster::report::{summarize, RunSummary};
use nanopu_cluster::{NodeConfig, Outcome, SimError, Simulation};
use std::path::PathBuf;

/// `sw/build` of this checkout; the tests need `make -C sw` (the README's `make test` does it).
pub fn sw_build() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sw/build")
}

pub fn elf(rel: &str) -> Vec<u8> {
    let p = sw_build().join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}; build the programs with `make -C sw`", p.display()))
}

pub fn cfg(cores: usize) -> NodeConfig {
    let mut c = NodeConfig::default();
    c.nic.cores = cores;
    c.max_cycles = 50_000_000;
    c
}

/// A server node of `nic` with `cores` cores running with `args`, its cycle limit past any
/// load test's deadline (the load's drain ends each run).
pub fn server_node(nic: NicKind, cores: usize, args: Vec<String>) -> NodeConfig {
    let mut c = NodeConfig { nic_kind: nic, ..cfg(cores) };
    c.max_cycles = 1 << 32;
    c.args = args;
    c
}

/// Run a program to its end; the summary, or the simulator's error.
pub fn run(elf: &[u8], cfg: NodeConfig) -> Result<(Outcome, RunSummary), SimError> {
    let mut sim = Simulation::new(elf, cfg)?;
    let outcome = sim.run()?;
    Ok((outcome, summarize(&mut sim, outcome)))
}

/// Every ELF in a directory of `sw/build`, sorted by name.
pub fn elfs_in(dir: &str) -> Vec<PathBuf> {
    let d = sw_build().join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}; build the programs with `make -C sw`", d.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "elf"))
        .collect();
    v.sort();
    v
}
