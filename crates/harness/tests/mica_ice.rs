//! The key-value load against the MICA-style store on an IceNIC node (`mica_ice.elf`,
//! docs/apps/mica.md "On IceNIC"): requests and replies as UDP frames, every GET answered
//! with the last SET value (or the preloaded one), a wrong or lost reply failing the run,
//! the same bytes from the same seed, and what IceNIC cannot serve yet refused.

use crate::common;

use common::{elf, mica_spec};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::SimError;
use nanopu_harness::loadgen::{LoadResult, LoadSpec};
use nanopu_harness::workload::kv::{Keys, Steering};

fn run_on(nic: NicKind, s: &LoadSpec, args: Option<Vec<String>>) -> Result<LoadResult, SimError> {
    let args = args.unwrap_or_else(|| s.kv.as_ref().unwrap().server_args());
    common::run_load("mica", nic, s, args)
}

fn run(s: &LoadSpec) -> LoadResult {
    run_on(NicKind::IceNic, s, None).unwrap()
}

#[test]
fn every_get_returns_the_last_set_value_over_icenic_frames() {
    for keys in [Keys::Uniform, Keys::Zipf { theta: 0.99 }] {
        let s = mica_spec(1, keys, Steering::Static, 0.5);
        let r = run(&s);
        common::assert_no_errors(&s, &r);
        let read_set = (r.kv_ops.iter().filter(|k| !k.set))
            .filter(|k| k.answer.as_ref().is_some_and(|a| a.as_ref().is_ok_and(|&v| v > 0)));
        assert!(read_set.count() > 100, "GETs must read values the generator SET, not only preloaded ones");
    }
}

/// The same requests on both NICs: the same answers, and IceNIC's later (DMA through
/// memory, a driver on the core: docs/models/icenic.md) by more than 50 ns at this light
/// load (their loopback latencies differ by 80 ns and more: experiments/nic-compare).
#[test]
fn the_same_load_on_both_nics_reads_the_same_versions_icenic_later() {
    let s = mica_spec(1, Keys::Uniform, Steering::Static, 0.5);
    let (ice, nanopu) = (run(&s), run_on(NicKind::Nanopu, &s, None).unwrap());
    let answers = |r: &LoadResult| r.kv_ops.iter().map(|k| k.answer.clone()).collect::<Vec<_>>();
    assert_eq!(answers(&ice), answers(&nanopu), "light load: every request served before the next");
    let median = |r: &LoadResult| r.class_result("all", None, 0).latency.median;
    let (i, n) = (median(&ice), median(&nanopu));
    assert!(i > n + 50.0, "IceNIC median {i} ns, nanoPU {n} ns");
}

#[test]
fn a_store_with_other_values_fails_the_run() {
    let s = mica_spec(1, Keys::Uniform, Steering::Static, 0.5);
    let mut args = s.kv.as_ref().unwrap().server_args();
    args[2] = "12".into(); // the seed: other keys, other values
    let r = run_on(NicKind::IceNic, &s, Some(args)).unwrap();
    let e = r.kv.as_ref().unwrap();
    assert!(e.wrong > 500, "{e:?}");
    assert!(r.problems(&s).join("; ").contains("wrong replies"));
}

/// Past what one core can serve, IceNIC's receive buffer fills and drops frames (it has no
/// flow control): the requests are lost and the run fails, naming the drops.
#[test]
fn frames_the_icenic_dropped_are_lost_requests_and_fail_the_run() {
    let mut s = mica_spec(1, Keys::Uniform, Steering::Static, 20.0);
    s.requests = 2000;
    let r = run(&s);
    common::assert_lost_to_icenic_drops(&s, &r);
}

#[test]
fn same_seed_same_replies() {
    let s = mica_spec(1, Keys::Zipf { theta: 0.99 }, Steering::Static, 1.0);
    let (a, b) = (run(&s), run(&s));
    assert_eq!((a.requests, a.kv_ops, a.cost), (b.requests, b.kv_ops, b.cost));
}

#[test]
fn what_an_icenic_server_cannot_take_is_refused() {
    let refused = |s: &LoadSpec, cores: usize| {
        let mut c = common::server_node(NicKind::IceNic, 1, Vec::new()); // refused before the server starts
        c.nic.cores = cores;
        match s.run(&elf("apps/mica_ice.elf"), c) {
            Err(SimError::Setup(e)) => e,
            other => panic!("not refused: {:?}", other.map(|r| r.outcome)),
        }
    };
    let jbsq = mica_spec(1, Keys::Uniform, Steering::Jbsq, 1.0);
    assert!(refused(&jbsq, 1).starts_with("load.kv.steering"));
    let four = mica_spec(4, Keys::Uniform, Steering::Static, 1.0);
    assert!(refused(&four, 4).starts_with("server.cores"));
    let mut service = mica_spec(1, Keys::Uniform, Steering::Static, 1.0);
    service.kv = None;
    assert!(refused(&service, 1).starts_with("load: an IceNIC server takes only"));
}
