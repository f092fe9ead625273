//! An oracle for the run-ahead rule (docs/architecture.md, "Cores run ahead of global
//! time"): a core may execute ahead of global time only while nothing not yet simulated can
//! change what it sees. If the rule holds, stepping every core at most one cycle past global
//! time per dispatch (no run-ahead at all) gives exactly the same results as normal runs:
//! the same cycles, instructions, stalls, consoles, messages and their times.

use crate::common;

use common::*;
use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::report::cluster::summarize_cluster;
use nanopu_cluster::report::summarize;
use nanopu_cluster::Simulation;

/// The summary of a single-node run, as JSON, with at most `run_ahead` cycles per dispatch.
fn node_run(elf: &[u8], cores: usize, run_ahead: u64) -> String {
    let mut sim = Simulation::new(elf, cfg(cores)).expect("loads");
    sim.set_run_ahead(run_ahead);
    let outcome = sim.run().map_err(|e| e.to_string());
    match outcome {
        Ok(o) => serde_json::to_string(&summarize(&mut sim, o)).unwrap(),
        Err(e) => e,
    }
}

/// Every test program on one core. (Cores of one node share the L2 in the order they are
/// simulated, so several cores of one node are not exact: on four cores `nic_contexts` takes
/// 5,129 cycles on core 0 normally and 5,729 stepped, three more L2 misses; docs/reliability.md.)
#[test]
fn every_test_program_runs_the_same_without_run_ahead() {
    for path in elfs_in("tests") {
        let elf = std::fs::read(&path).unwrap();
        assert_eq!(node_run(&elf, 1, u64::MAX), node_run(&elf, 1, 1), "{}", path.display());
    }
}

/// Two clusters of one-core nodes on a two-leaf leaf-spine with loss, so that NICs and
/// transports interact across nodes and partitions while the cores compute between
/// messages: a ping-pong (one message at a time) and an all-to-all between two nodes.
/// Known limits of the rule, not covered here (docs/reliability.md): cores of one node
/// share the L2 in the order they are simulated, and events of different nodes at exactly
/// the same femtosecond are taken in the order they were scheduled.
const CLUSTER: &str = r#"
seed = 3
max_us = 2000.0
[topology]
kind = "leaf-spine"
nodes_per_leaf = 2
leaves = 2
spines = 2
[link]
drop_prob = 0.2
[node]
cores = 1
[[program]]
nodes = "NODES"
elf = "apps/PROGRAM.elf"
args = ARGS
"#;

fn cluster_run(program: &str, run_ahead: u64, threads: usize) -> (String, Vec<String>) {
    let (nodes, args) = match program {
        "pingpong" => ("all", r#"["64"]"#),
        _ => ("0-1", r#"["2", "1024"]"#),
    };
    let text = CLUSTER.replace("NODES", nodes).replace("PROGRAM", program).replace("ARGS", args);
    let text =
        if nodes == "all" { text } else { text + "[[program]]\nnodes = \"2-3\"\nelf = \"apps/idle.elf\"\n" };
    let mut sim = Simulation::cluster(&ClusterFile::parse(&text).unwrap(), &sw_build()).expect("builds");
    sim.set_run_ahead(run_ahead);
    sim.set_threads(threads);
    let outcome = sim.run().expect("runs");
    let records = sim.message_records().iter().map(|r| format!("{r:?}")).collect();
    (serde_json::to_string(&summarize_cluster(&mut sim, outcome)).unwrap(), records)
}

#[test]
fn clusters_run_the_same_without_run_ahead() {
    for program in ["pingpong", "alltoall"] {
        let normal = cluster_run(program, u64::MAX, 1);
        assert!(
            normal.0.contains("\"cores_ok\":4") && normal.0.contains("\"drops_random\":"),
            "{}",
            normal.0
        );
        assert!(!normal.0.contains("\"retransmissions\":0,"), "no loss to recover from: {}", normal.0);
        assert_eq!(normal, cluster_run(program, 1, 1), "{program}");
        assert_eq!(normal, cluster_run(program, 1, 2), "{program}, 2 threads");
    }
}
