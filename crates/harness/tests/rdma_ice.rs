//! The one-sided RDMA load against `rdma_ice.elf`, the operations of `rdma.elf` on an IceNIC
//! node (docs/apps/rdma.md "On IceNIC"): requests and replies as UDP frames, every reply
//! checked against the generator's model of the region, a region with other contents and
//! dropped frames failing the run, the same bytes from the same seed, and several cores
//! refused.

use crate::common;

use common::{elf, rdma_spec as spec};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::SimError;
use nanopu_harness::loadgen::{LoadResult, LoadSpec};
use nanopu_harness::workload::rdma::KINDS;

fn run_on(nic: NicKind, s: &LoadSpec, args: Option<Vec<String>>) -> Result<LoadResult, SimError> {
    let args = args.unwrap_or_else(|| s.rdma.as_ref().unwrap().server_args());
    common::run_load("rdma", nic, s, args)
}

fn run(s: &LoadSpec) -> LoadResult {
    run_on(NicKind::IceNic, s, None).unwrap()
}

/// Every request answered over frames, every answer the model's; no start-up message (an
/// IceNIC server sends none: it has no `lnic_boot_msg`).
fn assert_all_checked(s: &LoadSpec, r: &LoadResult) {
    common::assert_no_errors(s, r);
    assert_eq!((r.startup, r.rdma_ops.len()), (0, s.requests));
}

#[test]
fn a_mixed_load_every_reply_checked_over_icenic_frames() {
    let s = spec([0.2; 5], 1.0, 3000);
    let r = run(&s);
    assert_all_checked(&s, &r);
    let failed_cas = r.rdma_ops.iter().filter(|o| o.kind == KINDS[2] && o.request[2] != o.expect[1]);
    assert!(failed_cas.count() > 100, "CAS that do not match are checked too");
    let faa = r.rdma_ops.iter().filter(|o| o.kind == KINDS[3]);
    assert!(faa.count() > 400, "every operation is exercised");
}

/// The same requests on both NICs: the same verdicts, and each operation later on IceNIC
/// (DMA through memory and a driver on the core: docs/models/icenic.md) by more than 50 ns
/// at this light load (the two NICs' loopback latencies differ by 80 ns and more:
/// experiments/nic-compare).
#[test]
fn the_same_load_on_both_nics_gets_the_same_answers_icenic_later() {
    let s = spec([0.2; 5], 0.2, 1000);
    let (ice, nanopu) = (run(&s), run_on(NicKind::Nanopu, &s, None).unwrap());
    assert_all_checked(&s, &ice);
    let ops = |r: &LoadResult| r.rdma_ops.clone();
    assert_eq!(ops(&ice), ops(&nanopu), "light load: the same requests, the same replies judged");
    for (i, k) in KINDS.iter().enumerate() {
        let median = |r: &LoadResult| r.class_result(k.name(), Some(i), 0).latency.median;
        let (a, b) = (median(&ice), median(&nanopu));
        assert!(a > b + 50.0, "{k:?}: IceNIC median {a} ns, nanoPU {b} ns");
    }
}

#[test]
fn a_region_filled_from_another_seed_is_caught() {
    let s = spec([0.2; 5], 1.0, 1000);
    let r = run_on(NicKind::IceNic, &s, Some(vec!["10".into()])).unwrap();
    let e = r.kv.as_ref().unwrap();
    // Every reply but a WRITE's carries region words: all of them differ.
    assert!(e.wrong > 700 && e.lost == 0, "{e:?}");
    let p = r.problems(&s).join("; ");
    assert!(p.contains("wrong replies") && p.contains("the model holds"), "{p}");
}

/// Past what one core can serve, IceNIC's receive buffer fills and drops frames (it has no
/// flow control): the requests are lost and the run fails, naming the drops.
#[test]
fn frames_the_icenic_dropped_are_lost_requests_and_fail_the_run() {
    let s = spec([0.2; 5], 40.0, 2000);
    let r = run(&s);
    common::assert_lost_to_icenic_drops(&s, &r);
}

#[test]
fn same_seed_same_replies() {
    let s = spec([0.2; 5], 2.0, 2000);
    let (a, b) = (run(&s), run(&s));
    assert_eq!((a.requests, a.rdma_ops, a.cost), (b.requests, b.rdma_ops, b.cost));
}

#[test]
fn several_cores_are_refused() {
    let s = spec([0.2; 5], 1.0, 100);
    let c = common::server_node(NicKind::IceNic, 4, s.rdma.as_ref().unwrap().server_args());
    match s.run(&elf("apps/rdma_ice.elf"), c) {
        Err(SimError::Setup(e)) => assert!(e.starts_with("server.cores"), "{e}"),
        other => panic!("not refused: {:?}", other.map(|r| r.outcome)),
    }
}
