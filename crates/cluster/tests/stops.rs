//! A run looks for a stop (Ctrl-C, SIGTERM, its wall-clock limit) often enough to end
//! within a second whatever its cores do (issue 39: a spinning core took up to 10 s, a
//! 16,384-core sort up to 17 s). The wall-clock figures are measured by `bench/stop-latency`;
//! these tests check the mechanism without timing anything: a wall-clock limit that has
//! already passed ends the run at its first look, so how far the run got by then is how
//! much work it does between two looks.

use crate::common;

use common::*;
use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::node::boot::node_ip;
use nanopu_cluster::{Outcome, Simulation, TestHost};
use nanopu_sim::Time;
use std::time::Duration;

/// Core cycles a run may simulate before its first look for a stop: a generous multiple
/// of the 4 million (4,096 units of 1,024 cycles) between two looks, and far below what
/// the run did before (100 million on four spinning cores, all of it on one).
const FIRST_LOOK_CYCLES: u64 = 12_000_000;

/// Cycles the cores of `sim` ran in all.
fn core_cycles(sim: &Simulation) -> u64 {
    sim.nodes.iter().flat_map(|n| &n.cores).map(|c| c.cycle()).sum()
}

/// Run `sim` with a wall-clock limit that has already passed and a time limit of hours.
fn run_past_its_wall_limit(mut sim: Simulation) -> (Outcome, Simulation) {
    sim.set_wall_limit(Duration::ZERO);
    (sim.run().expect("runs"), sim)
}

#[test]
fn spinning_cores_are_looked_at_every_few_million_cycles() {
    let mut c = cfg(4);
    c.max_cycles = 23_040_000_000_000;
    let (outcome, sim) = run_past_its_wall_limit(Simulation::new(&elf("tests/err_spin.elf"), c).unwrap());
    assert_eq!(outcome, Outcome::WallLimit);
    assert!(core_cycles(&sim) < FIRST_LOOK_CYCLES, "{} cycles before the first look", core_cycles(&sim));
}

/// A core that can take interrupts, with nothing pending anywhere, once ran to the time
/// limit in one dispatch (here a billion cycles, the rest of the run): a service thread of
/// the nanokernel busy with a request of 10^14 cycles (the processing bound off, so the NIC
/// never interrupts it).
#[test]
fn an_interruptible_core_with_nothing_pending_is_looked_at_too() {
    let mut c = cfg(1);
    c.max_cycles = 1_000_000_000;
    c.args = vec!["jbsq".into()];
    c.nic.msg_cycles = 0;
    let mut sim = Simulation::new(&elf("apps/service.elf"), c).unwrap();
    sim.host.send_at(Time::ZERO, TestHost::message(9, node_ip(0), 0, &[100_000_000_000_000, 1]));
    let (outcome, sim) = run_past_its_wall_limit(sim);
    assert_eq!(outcome, Outcome::WallLimit);
    assert!(core_cycles(&sim) < FIRST_LOOK_CYCLES, "{} cycles before the first look", core_cycles(&sim));
}

/// A leaf-spine run advances in windows; one window can hold seconds of work (every core's
/// start), and a stop was seen only between windows. 256 spinning cores in two partitions
/// ran 25.6 million cycles in the first window.
#[test]
fn a_partition_looks_for_a_stop_within_its_window() {
    let text = "max_us = 3600000000.0\n[topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = 32\n\
                leaves = 2\nspines = 2\n[[program]]\nnodes = \"all\"\nelf = \"tests/err_spin.elf\"\n";
    let f = ClusterFile::parse(text).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulation::cluster(&f, &sw_build()).unwrap();
    sim.set_threads(1);
    assert_eq!(sim.partitions(), 2);
    let (outcome, sim) = run_past_its_wall_limit(sim);
    assert_eq!(outcome, Outcome::WallLimit);
    assert!(core_cycles(&sim) < FIRST_LOOK_CYCLES, "{} cycles before the first look", core_cycles(&sim));
}
