//! The host side of the nanoPU paper's applications (docs/apps/paper-apps.md): each module
//! computes on the host what its program computes on the simulated cores (the reference
//! the run is checked against), drives the run from the test host, checks every answer
//! and reports the latencies the simulator measured.

pub mod dotprod;
pub mod hostnet;
pub mod nbody;
pub mod nn;
pub mod othello;

use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::config::NicKind;
use nanopu_cluster::node::CoreState;
use nanopu_cluster::report::cluster::summarize_cluster;
use nanopu_cluster::NodeConfig;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use std::path::Path;

/// A cluster of `nodes` nodes of `cores` cores with a NIC of kind `nic` on one switch (the
/// paper's single-rack setting, docs/platform.md section 4), every node running `elf` with
/// `args`; link and switch parameters are the defaults of docs/config.md.
pub fn star_cluster(
    nodes: u32,
    cores: usize,
    nic: NicKind,
    elf: &Path,
    args: &[String],
    max_us: f64,
) -> Result<Simulation, String> {
    let text = format!(
        "max_us = {max_us:?}\n[topology]\nkind = \"star\"\nnodes = {nodes}\n[node]\ncores = {cores}\n\
         [[program]]\nnodes = \"all\"\nelf = {:?}\nnic = {:?}\nargs = {args:?}\n",
        elf.to_string_lossy(),
        nic.name()
    );
    let f = ClusterFile::parse(&text)?;
    Simulation::cluster(&f, Path::new(".")).map_err(|e| e.to_string())
}

/// Run to the end; an error naming what went wrong if the run is incomplete or a core
/// exited with a non-zero code (the programs' self-checks). Servers still waiting for
/// requests are fine.
pub fn run_checked(sim: &mut Simulation) -> Result<Outcome, String> {
    let outcome = sim.run().map_err(|e| e.to_string())?;
    check_outcome(sim, outcome)
}

/// `run_checked`'s verdict on a run that ended with `outcome`.
pub fn check_outcome(sim: &mut Simulation, outcome: Outcome) -> Result<Outcome, String> {
    let failed =
        sim.nodes.iter().flat_map(|n| n.state.iter()).any(|s| matches!(s, CoreState::Halted(c) if *c != 0));
    if outcome.incomplete() || failed {
        let s = summarize_cluster(sim, outcome);
        return Err(format!("run {}: {}", outcome.name(), s.text()));
    }
    Ok(outcome)
}

/// One nanoPU node of `cores` cores running `elf`, the test host on its port.
pub fn one_node(elf: &[u8], cores: usize) -> Result<Simulation, String> {
    one_node_with(elf, cores, NicKind::Nanopu)
}

/// One node of `cores` cores with a NIC of kind `nic` running `elf` (for IceNIC, the
/// program's `_ice.elf` build), the test host on its port.
pub fn one_node_with(elf: &[u8], cores: usize, nic: NicKind) -> Result<Simulation, String> {
    one_node_ice(elf, cores, nic, nanopu_nic::icenic::IceParams::default())
}

/// `one_node_with`, the IceNIC (if `nic` is one) with parameters `ice` (other queue and
/// buffer sizes than the default: docs/models/icenic.md "Queue and buffer sizes").
pub fn one_node_ice(
    elf: &[u8],
    cores: usize,
    nic: NicKind,
    ice: nanopu_nic::icenic::IceParams,
) -> Result<Simulation, String> {
    let mut cfg = NodeConfig { nic_kind: nic, ice, ..NodeConfig::default() };
    cfg.nic.cores = cores;
    Simulation::new(elf, cfg).map_err(|e| e.to_string())
}

/// The build of program `name` for a node with this NIC: `name.elf` for the nanoPU NIC,
/// `name_ice.elf` (appnet on IceNIC, sw/Makefile) for IceNIC.
pub fn elf_name(name: &str, nic: NicKind) -> String {
    match nic {
        NicKind::Nanopu => format!("{name}.elf"),
        NicKind::IceNic | NicKind::Zeronic => format!("{name}_ice.elf"),
        // No appnet build exists for the RDMA NIC: loading the name reports it missing.
        NicKind::Rdma => format!("{name}_rdma.elf"),
    }
}
