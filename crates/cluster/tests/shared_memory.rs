//! Cores of one node see each other's stores as the prototype's coherent L1 D-caches and
//! shared L2 make them (docs/models/node.md "Cores sharing memory"): never before the store
//! is made, and a few cycles after, whatever the run-ahead and the number of host threads.
//! `sw/compat/flag_handoff.c` hands flags between two harts and times a ping-pong.

use crate::common;

use common::*;
use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::report::cluster::summarize_cluster;
use nanopu_cluster::{NodeConfig, Outcome, Simulation};

const HANDOFF: &str = "compat/flag_handoff.elf";

/// The numbers on the line of `flag_handoff`'s console that starts with `word`: "delay min
/// 41 max 82" gives [41, 82].
fn numbers(console: &str, word: &str) -> Vec<i64> {
    let line = console.lines().find(|l| l.starts_with(word));
    let line = line.unwrap_or_else(|| panic!("no line {word:?} in {console}"));
    line.split(' ').filter_map(|w| w.parse().ok()).collect()
}

/// Run `flag_handoff` on one node of two cores; core 0's console.
fn handoff() -> (NodeConfig, String) {
    let c = cfg(2);
    let (outcome, s) = run(&elf(HANDOFF), c.clone()).expect("runs");
    assert_eq!(outcome, Outcome::AllExited, "{s:?}");
    (c, s.cores[0].console.clone())
}

/// Hart 0 stores its mcycle once it reaches 20,000 (then at 31 later cycles of varying
/// phase); hart 1, spinning on the flag, reads its own mcycle when it sees the store. On
/// main it saw the first at its cycle 117, before the store was made, and then the harts
/// needed 100,000 cycles per handoff (the run did not finish).
#[test]
fn a_store_is_never_seen_before_it_is_made() {
    let (_, console) = handoff();
    assert!(numbers(&console, "made")[0] >= 20_000, "{console}");
    assert!(numbers(&console, "delay")[0] >= 0, "a flag seen before it was stored: {console}");
}

/// The bound: a core spinning on a line sees another core's store at least one L2 refill
/// (`l2_latency`) after it completes, and at most that plus the cores' window
/// (`rx_path_cycles`), the branch that leaves the loop and the `csrr mcycle` reading the time.
#[test]
fn a_store_is_seen_within_the_bound_after_it_is_made() {
    let (c, console) = handoff();
    let t = &c.timing;
    let (early, late) = (numbers(&console, "after")[0], numbers(&console, "after")[1]);
    let bound = t.l2_latency + c.nic.rx_path_cycles + t.mispredict_penalty + t.csr_penalty;
    assert!(early >= t.l2_latency as i64, "seen without a refill from the L2: {console}");
    assert!(late <= bound as i64, "seen {late} cycles after the store, bound {bound}: {console}");
}

/// A round trip of the ping-pong is two handoffs; each costs, in the cache model, the
/// reader's refill from the L2, the load-to-use delay, the mispredicted branch that leaves
/// the spin loop and then the store; the cores' window and where in its spin iteration the
/// reader was add at most `rx_path_cycles` and one iteration (about 4 cycles) per handoff.
#[test]
fn a_ping_pong_round_trip_takes_what_the_cache_model_predicts() {
    let (c, console) = handoff();
    let t = &c.timing;
    let [rounds, cycles] = numbers(&console, "rounds")[..] else { panic!("{console}") };
    let per_trip = cycles as f64 / rounds as f64;
    let least = 2 * (t.l2_latency + t.load_latency + t.mispredict_penalty);
    let most = least + 2 * (c.nic.rx_path_cycles + 4);
    assert!(
        (least as f64..=most as f64).contains(&per_trip),
        "{per_trip} cycles per round trip, not in {least}..={most}"
    );
}

/// Two nodes of two sharing cores each, on 1 and 2 host threads and with no run-ahead:
/// the same figures.
#[test]
fn sharing_cores_give_the_same_results_at_any_thread_count() {
    let text =
        "max_us = 100.0\n[topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = 1\nleaves = 2\nspines = 1\n\
                [node]\ncores = 2\n[[program]]\nnodes = \"all\"\nelf = \"compat/flag_handoff.elf\"\n";
    let run = |threads: usize| {
        let mut sim = Simulation::cluster(&ClusterFile::parse(text).unwrap(), &sw_build()).expect("builds");
        sim.set_threads(threads);
        let outcome = sim.run().expect("runs");
        serde_json::to_string(&summarize_cluster(&mut sim, outcome)).unwrap()
    };
    let one = run(1);
    assert!(one.contains("rounds 1000 cycles"), "{one}");
    assert_eq!(one, run(2), "2 threads");
}
