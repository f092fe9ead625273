//! The one-sided RDMA load (docs/apps/rdma.md): `rdma.elf` on the nanoPU NIC, `rdma_ice.elf`
//! (the same operations) on IceNIC ("On IceNIC": requests and replies as UDP frames). On
//! both NICs: a mixed load with every reply checked against the generator's model of the
//! region, a server whose region differs caught, the same seed giving the same replies. On
//! the nanoPU: each operation's latency on an idle server, and four cores, up to near their
//! saturation. On IceNIC: frames its receive buffer dropped fail the run, and several cores
//! are refused. And the same load on both: the same verdicts, each operation later on
//! IceNIC.

use crate::common;

use common::{rdma_spec as spec, NICS};
use nanopu_cluster::config::NicKind;
use nanopu_harness::loadgen::{LoadResult, LoadSpec};
use nanopu_harness::workload::rdma::KINDS;

/// Run load `s` against `nic`'s build of the server on `cores` cores, started with `args`
/// or else the load's own.
fn run(nic: NicKind, s: &LoadSpec, cores: usize, args: Option<Vec<String>>) -> LoadResult {
    let args = args.unwrap_or_else(|| s.rdma.as_ref().unwrap().server_args());
    common::run_load("rdma", nic, cores, s, args).unwrap()
}

/// Every request answered, every answer the model's, the start-up messages the NIC's server
/// sends (one per core on the nanoPU, none on IceNIC).
fn assert_all_checked(nic: NicKind, s: &LoadSpec, r: &LoadResult, cores: usize) {
    common::assert_no_errors(s, r);
    assert_eq!(r.startup, common::startup_messages(nic, cores), "start-up messages");
    assert_eq!(r.rdma_ops.len(), s.requests);
}

/// Each operation alone on an idle nanoPU server (one request at a time): it is served,
/// checked, within (10 ns, 1.5 us). READs move more words than CAS and FAA (8.5 on average
/// against one), and an indirect READ reads a pointer first, so each takes longer than the
/// one before.
#[test]
fn each_operation_on_an_idle_server() {
    let mut median = [0.0; 5];
    for (i, m) in median.iter_mut().enumerate() {
        let mut mix = [0.0; 5];
        mix[i] = 1.0;
        let s = spec(mix, 0.05, 200);
        let r = run(NicKind::Nanopu, &s, 1, None);
        assert_all_checked(NicKind::Nanopu, &s, &r, 1);
        *m = r.class_result(KINDS[i].name(), Some(i), 0).latency.median;
        assert!((10.0..1500.0).contains(m), "{:?}: median {m} ns", KINDS[i]);
    }
    let [read, _, cas, faa, iread] = median;
    assert!(read > cas.max(faa) && iread > read, "{median:?}");
}

/// The five operations in equal shares on one core, at a rate it serves (IceNIC's core
/// copies every frame and drives the NIC: it serves less).
#[test]
fn a_mixed_load_every_reply_checked() {
    for nic in NICS {
        let s = match nic {
            NicKind::Nanopu => spec([0.2; 5], 4.0, 4000),
            NicKind::IceNic | NicKind::Zeronic => spec([0.2; 5], 1.0, 3000),
            NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
        };
        let r = run(nic, &s, 1, None);
        assert_all_checked(nic, &s, &r, 1);
        let failed_cas = r.rdma_ops.iter().filter(|o| o.kind == KINDS[2] && o.request[2] != o.expect[1]);
        assert!(failed_cas.count() > 100, "{nic:?}: CAS that do not match are checked too");
        let faa = r.rdma_ops.iter().filter(|o| o.kind == KINDS[3]);
        assert!(faa.count() > 400, "{nic:?}: every operation is exercised");
    }
}

/// Four cores (nanoPU only: an IceNIC server runs on one).
#[test]
fn four_cores_every_reply_checked() {
    let s = spec([0.2; 5], 8.0, 4000);
    let r = run(NicKind::Nanopu, &s, 4, None);
    assert_all_checked(NicKind::Nanopu, &s, &r, 4);
}

/// Four nanoPU cores near their saturation serve requests in flight together in other
/// orders than they were sent: the check leaves data such an order explains unjudged,
/// judges the rest. At this seed and load one reply differs from the send-order model that
/// way (measured: the strict send-order check called it wrong), so the path is exercised.
/// Which load does it depends on the cores' timing: 88 Mrps did until the branch predictor
/// followed Rocket's, 86 until the prototype's memory system became the default (2026-12-03:
/// 88 again; none at 76 to 86 and 90 to 94).
#[test]
fn four_cores_near_saturation_other_orders_are_not_wrong() {
    let s = spec([0.2; 5], 88.0, 40_000);
    let r = run(NicKind::Nanopu, &s, 4, None);
    assert_all_checked(NicKind::Nanopu, &s, &r, 4);
    let e = r.kv.as_ref().unwrap();
    assert!((1..s.requests / 1000).contains(&e.unchecked), "{e:?}");
}

#[test]
fn a_region_filled_from_another_seed_is_caught() {
    for nic in NICS {
        let rate = match nic {
            NicKind::Nanopu => 2.0,
            NicKind::IceNic | NicKind::Zeronic => 1.0,
            NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
        };
        let s = spec([0.2; 5], rate, 1000);
        let r = run(nic, &s, 1, Some(vec!["10".into()]));
        let e = r.kv.as_ref().unwrap();
        // Every reply but a WRITE's carries region words: all of them differ.
        assert!(e.wrong > 700 && e.lost == 0, "{nic:?}: {e:?}");
        let p = r.problems(&s).join("; ");
        assert!(p.contains("wrong replies") && p.contains("the model holds"), "{nic:?}: {p}");
    }
}

/// The same seed twice: the same requests, the same replies, the same cost. On the nanoPU
/// two cores; on IceNIC one, at a rate it serves.
#[test]
fn same_seed_same_replies() {
    for nic in NICS {
        let (cores, s) = match nic {
            NicKind::Nanopu => (2, spec([0.2; 5], 8.0, 2000)),
            NicKind::IceNic | NicKind::Zeronic => (1, spec([0.2; 5], 2.0, 2000)),
            NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
        };
        let (a, b) = (run(nic, &s, cores, None), run(nic, &s, cores, None));
        assert_eq!((a.requests, a.rdma_ops, a.cost), (b.requests, b.rdma_ops, b.cost), "{nic:?}");
    }
}

/// The same requests on both NICs: the same verdicts, and each operation later on IceNIC
/// (DMA through memory and a driver on the core: docs/models/icenic.md) by more than 50 ns
/// at this light load (the two NICs' loopback latencies differ by 80 ns and more:
/// experiments/nic-compare).
#[test]
fn the_same_load_on_both_nics_gets_the_same_answers_icenic_later() {
    let s = spec([0.2; 5], 0.2, 1000);
    let (ice, nanopu) = (run(NicKind::IceNic, &s, 1, None), run(NicKind::Nanopu, &s, 1, None));
    assert_all_checked(NicKind::IceNic, &s, &ice, 1);
    let ops = |r: &LoadResult| r.rdma_ops.clone();
    assert_eq!(ops(&ice), ops(&nanopu), "light load: the same requests, the same replies judged");
    for (i, k) in KINDS.iter().enumerate() {
        let median = |r: &LoadResult| r.class_result(k.name(), Some(i), 0).latency.median;
        let (a, b) = (median(&ice), median(&nanopu));
        assert!(a > b + 50.0, "{k:?}: IceNIC median {a} ns, nanoPU {b} ns");
    }
}

/// Past what one core can serve, IceNIC's receive buffer fills and drops frames (it has no
/// flow control): the requests are lost and the run fails, naming the drops.
#[test]
fn frames_the_icenic_dropped_are_lost_requests_and_fail_the_run() {
    let s = spec([0.2; 5], 40.0, 2000);
    let r = run(NicKind::IceNic, &s, 1, None);
    common::assert_lost_to_icenic_drops(&s, &r);
}

/// IceNIC has one queue pair: an IceNIC server on several cores is refused before it starts.
#[test]
fn several_cores_on_an_icenic_server_are_refused() {
    let s = spec([0.2; 5], 1.0, 100);
    let e = common::icenic_refusal("rdma", &s, 4, s.rdma.as_ref().unwrap().server_args());
    assert!(e.starts_with("server.cores"), "{e}");
}
