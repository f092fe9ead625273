//! The core engines (`nanopu_riscv::engine`) on a cluster: a 64-core NanoSort (16 nodes of 4
//! cores sharing memory, over the network) run on the reference interpreter, on the fast
//! engine and on the fast engine with translated traces (made at an op's first arrival) gives the same outputs, figures, verdict, events, and every core's cycles,
//! counters and whole state (`Core::state_digest`) at the end, and the same message
//! records. crates/riscv/tests/engines.rs compares single cores run by run.

use crate::common;

use common::sw_build;
use nanopu_cluster::report::cluster::summarize_cluster;
use nanopu_harness::sort::{Algorithm, SortSpec};
use nanopu_riscv::Engine;

fn fingerprint(engine: Engine) -> String {
    let spec =
        SortSpec { cores_per_node: 4, engine, ..common::sort_spec(Algorithm::NanoSort, 64, 16, &[4, 4, 1]) };
    let mut r = spec.run(&sw_build().join("apps"), false).unwrap();
    assert!(r.verdict.ok(), "{engine:?}: {:?}", r.verdict.problems);
    let cores: Vec<(u64, u64, u64)> = r
        .sim
        .nodes
        .iter()
        .flat_map(|n| n.cores.iter())
        .map(|c| (c.cycle(), c.stats().instret, c.state_digest()))
        .collect();
    let records = r.sim.message_records();
    let summary = summarize_cluster(&mut r.sim, r.outcome);
    let (events, now) = (r.sim.events(), r.sim.now());
    format!(
        "{:?}\n{:?}\n{:?}\n{now:?} {events}\n{cores:?}\n{}\n{records:?}",
        r.outputs,
        r.figures,
        r.verdict,
        serde_json::to_string(&summary).unwrap()
    )
}

#[test]
fn nanosort_on_64_cores_is_identical_on_both_engines() {
    let interp = fingerprint(Engine::Interp);
    assert!(interp.len() > 1000, "a fingerprint with little in it: {interp}");
    assert_eq!(interp, fingerprint(Engine::Fast), "the fast engine differs");
    nanopu_riscv::translate_after(1);
    assert_eq!(interp, fingerprint(Engine::Jit), "the fast engine with traces differs");
}
