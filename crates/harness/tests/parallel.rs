//! Partitioned runs give the same results, bit for bit, whatever the number of host
//! threads: a 1,024-core NanoSort, and an all-to-all with random loss, multicast-free Homa
//! and a packet capture at a spine port.

use crate::common;

use common::sw_build;
use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::report::cluster::summarize_cluster;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_harness::sort::{Algorithm, SortSpec};
use std::path::PathBuf;

/// 256 nodes x 4 cores on 4 leaves of 64 nodes and 64 spines, 263 ns switching latency.
fn nanosort_1024(threads: usize) -> SortSpec {
    SortSpec {
        cores_per_node: 4,
        seed: 3,
        switch_latency_ns: 263.0,
        threads: Some(threads),
        ..common::sort_spec(Algorithm::NanoSort, 1024, 16, &[4, 4, 1])
    }
}

/// Everything a sort run reports, as text: outputs, figures, verdict, time, events, every
/// core's counters, the fabric's and transports' totals and every message record.
fn sort_fingerprint(threads: usize) -> String {
    let mut r = nanosort_1024(threads).run(&sw_build().join("apps"), false).unwrap();
    assert!(r.verdict.ok(), "{:?}", r.verdict.problems);
    assert_eq!(r.outcome, Outcome::AllExited);
    let cores: Vec<(u64, u64)> =
        r.sim.nodes.iter().flat_map(|n| n.cores.iter().map(|c| (c.cycle(), c.stats().instret))).collect();
    let records = r.sim.message_records();
    let summary = summarize_cluster(&mut r.sim, r.outcome);
    format!(
        "{:?}\n{:?}\n{:?}\n{:?} {} {}\n{cores:?}\n{}\n{records:?}",
        r.outputs,
        r.figures,
        r.verdict,
        r.sim.now(),
        r.sim.events(),
        r.sim.core_dispatches(),
        serde_json::to_string(&summary).unwrap()
    )
}

#[test]
fn nanosort_on_1024_cores_is_identical_with_1_and_2_threads() {
    let spec = nanosort_1024(1);
    let f = spec.cluster_file(spec.algorithm.elf()).unwrap();
    let sim = Simulation::cluster(&f, &sw_build().join("apps")).unwrap();
    assert_eq!(sim.partitions(), 4, "one partition per leaf");
    let one = sort_fingerprint(1);
    assert_eq!(one, sort_fingerprint(2), "1 and 2 threads differ");
}

/// The all-to-all of experiments/alltoall (64 nodes, 4 leaves, 1% loss on every link) on
/// Homa, capturing at spine 0's port to leaf 1: the summary, message records and pcap bytes.
fn alltoall_fingerprint(threads: usize) -> (String, Vec<u8>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments/alltoall");
    let (f, base) = ClusterFile::load(&dir.join("leafspine-homa.toml")).unwrap();
    let mut sim = Simulation::cluster(&f, &base).unwrap();
    sim.set_threads(threads);
    sim.capture_at("switch:4:1").unwrap();
    let outcome = sim.run().unwrap();
    let pcap = sim.write_capture(Vec::new()).unwrap();
    let records = sim.message_records();
    let s = summarize_cluster(&mut sim, outcome);
    assert_eq!(s.cores_ok, s.cores, "{}", s.text());
    (format!("{}\n{records:?}", serde_json::to_string(&s).unwrap()), pcap)
}

#[test]
fn lossy_alltoall_and_its_capture_are_identical_with_1_2_and_3_threads() {
    let one = alltoall_fingerprint(1);
    assert!(one.1.len() > 10_000, "the spine port saw traffic");
    assert_eq!(one, alltoall_fingerprint(2));
    assert_eq!(one, alltoall_fingerprint(3));
}
