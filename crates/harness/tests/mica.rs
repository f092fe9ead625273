//! The key-value load against the MICA-style store (docs/apps/mica.md): `mica.elf` on the
//! nanoPU NIC, `mica_ice.elf` on IceNIC ("On IceNIC": requests and replies as UDP frames).
//! On both NICs: every GET returns the value of the last SET (or the preloaded one) on one
//! core, with uniform and Zipf keys; a store preloaded from another seed fails the run; the
//! same seed gives the same replies. On the nanoPU: four cores (static steering and JBSQ),
//! requests to the wrong core refused, the log wrapping with live items moved, and the cost
//! per request. On IceNIC: frames its receive buffer dropped fail the run, and what its
//! server cannot take is refused. And the same load on both: the same versions read,
//! IceNIC later.

use crate::common;

use common::{mica_spec, NICS};
use nanopu_cluster::config::NicKind;
use nanopu_harness::loadgen::{LoadResult, LoadSpec};
use nanopu_harness::workload::kv::{Keys, Steering};
use nanopu_sim::Time;

/// Run load `s` against `nic`'s build of the store on the load's cores, the server started
/// with `args` or else the load's own.
fn run(nic: NicKind, s: &LoadSpec, args: Option<Vec<String>>) -> LoadResult {
    let kv = s.kv.as_ref().unwrap();
    let args = args.unwrap_or_else(|| kv.server_args());
    common::run_load("mica", nic, kv.cores as usize, s, args).unwrap()
}

/// Every request answered, every answer right, the start-up messages (if the NIC's server
/// sends them) before the first, and GETs reading values the generator SET.
fn assert_all_checked(nic: NicKind, s: &LoadSpec, r: &LoadResult) {
    common::assert_no_errors(s, r);
    let cores = s.kv.as_ref().unwrap().cores as usize;
    assert_eq!(r.startup, common::startup_messages(nic, cores), "start-up messages");
    let reads = r.kv_ops.iter().filter(|k| !k.set);
    let read_set = reads.filter(|k| k.answer.as_ref().is_some_and(|a| a.as_ref().is_ok_and(|&v| v > 0)));
    assert!(read_set.count() > 100, "GETs must read values the generator SET, not only preloaded ones");
}

/// A rate one core of `nic` serves: 2 Mrps on the nanoPU, 0.5 on IceNIC (whose core copies
/// every frame and drives the NIC, and whose receive buffer drops what it cannot hold).
fn one_core_rate(nic: NicKind) -> f64 {
    match nic {
        NicKind::Nanopu => 2.0,
        NicKind::IceNic | NicKind::Zeronic => 0.5,
        NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
    }
}

/// One core, uniform and Zipf keys. The nanoPU's Zipf load is JBSQ-steered (one core: the
/// same core); an IceNIC server takes static steering only.
#[test]
fn one_core_every_value_checked() {
    for nic in NICS {
        let zipf_steering = match nic {
            NicKind::Nanopu => Steering::Jbsq,
            NicKind::IceNic | NicKind::Zeronic => Steering::Static,
            NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
        };
        for (keys, steering) in
            [(Keys::Uniform, Steering::Static), (Keys::Zipf { theta: 0.99 }, zipf_steering)]
        {
            let s = mica_spec(1, keys, steering, one_core_rate(nic));
            assert_all_checked(nic, &s, &run(nic, &s, None));
        }
    }
}

/// On the nanoPU the cost counts the requests, not the preloading before load.start_us
/// (about 1,900 instructions per item): a request moves at most 68 words, a few
/// instructions each, and the core is busy for less than a request's latency. (An IceNIC
/// core polls while idle: its busy cycles are all of its cycles.)
#[test]
fn the_nanopu_cost_counts_the_requests_not_the_preloading() {
    let s = mica_spec(1, Keys::Uniform, Steering::Static, 2.0);
    let r = run(NicKind::Nanopu, &s, None);
    assert_all_checked(NicKind::Nanopu, &s, &r);
    let [instructions, busy, _, _] = r.cost.per(s.requests);
    assert!((100.0..1500.0).contains(&instructions), "{instructions} instructions per request");
    let median_cycles = r.class_result("all", None, 0).latency.median * 3.2;
    assert!(busy > instructions && busy < median_cycles, "{busy} busy cycles, median {median_cycles}");
}

/// Four cores (nanoPU only: an IceNIC server runs on one), each serving its own partition.
#[test]
fn four_cores_static_zipf_every_value_checked() {
    let s = mica_spec(4, Keys::Zipf { theta: 0.99 }, Steering::Static, 8.0);
    let r = run(NicKind::Nanopu, &s, None);
    assert_all_checked(NicKind::Nanopu, &s, &r);
    assert!(r.requests.iter().any(|q| q.context == 3), "requests go to every core's context");
}

/// Four cores sharing the partitions, the nanoPU NIC steering each request to the core with
/// the shortest queue (JBSQ).
#[test]
fn four_cores_jbsq_shared_partitions_every_value_checked() {
    let s = mica_spec(4, Keys::Zipf { theta: 0.99 }, Steering::Jbsq, 8.0);
    assert_all_checked(NicKind::Nanopu, &s, &run(NicKind::Nanopu, &s, None));
}

/// A store preloaded from another seed holds other keys and other values: its replies are
/// wrong, and the run's problems say so.
#[test]
fn a_store_preloaded_from_another_seed_is_caught() {
    for nic in NICS {
        let s = mica_spec(1, Keys::Uniform, Steering::Static, one_core_rate(nic));
        let mut args = s.kv.as_ref().unwrap().server_args();
        args[2] = "12".into(); // the seed: other keys, other values
        let r = run(nic, &s, Some(args));
        let e = r.kv.as_ref().unwrap();
        assert!(e.wrong > 500, "{nic:?}: {e:?}");
        let p = r.problems(&s).join("; ");
        assert!(p.contains("wrong replies"), "{nic:?}: {p}");
    }
}

#[test]
fn requests_to_the_wrong_core_are_refused_and_counted() {
    // Static steering to a server whose cores share the partitions would pass; a server
    // in static mode that gets JBSQ-steered requests (all to core 0's context) must not.
    // Four cores: the nanoPU's.
    let s = mica_spec(4, Keys::Uniform, Steering::Jbsq, 4.0);
    let mut args = s.kv.as_ref().unwrap().server_args();
    args[0] = "static".into();
    let r = run(NicKind::Nanopu, &s, Some(args));
    let e = r.kv.as_ref().unwrap();
    assert!(e.wrong > 1000 && e.examples[0].contains("status 2"), "{e:?}");
}

/// The same seed twice: the same requests, the same replies, the same cost. On the nanoPU
/// four cores under JBSQ (whose choices depend on timing too); on IceNIC one core at a rate
/// it serves.
#[test]
fn same_seed_same_replies() {
    for nic in NICS {
        let s = match nic {
            NicKind::Nanopu => mica_spec(4, Keys::Zipf { theta: 0.99 }, Steering::Jbsq, 8.0),
            NicKind::IceNic | NicKind::Zeronic => {
                mica_spec(1, Keys::Zipf { theta: 0.99 }, Steering::Static, 1.0)
            }
            NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
        };
        let (a, b) = (run(nic, &s, None), run(nic, &s, None));
        assert_eq!((a.requests, a.kv_ops, a.cost), (b.requests, b.kv_ops, b.cost), "{nic:?}");
    }
}

/// Bytes of the items each partition's SETs appended to its log (`mica.c`: 3 words + value).
fn appended_per_partition(s: &LoadSpec, r: &LoadResult) -> Vec<u64> {
    let kv = s.kv.as_ref().unwrap();
    let mut bytes = vec![0; kv.cores as usize];
    for op in r.kv_ops.iter().filter(|o| o.set) {
        let (k, v) = (u64::from(op.key), u64::from(op.version));
        bytes[kv.partition(k) as usize] += 24 + 8 * kv.value(k, v).len() as u64;
    }
    bytes
}

/// On the nanoPU, enough SETs of large values that every partition appends more than its
/// 16 MiB log, so that space is reclaimed from the tail and live items are moved (with
/// JBSQ, while other cores read them): every GET still returns the last value set. Zipf
/// keys, so that cold keys' items are still live when the head comes round to them (with
/// uniform keys every key is set again before, and nothing is ever moved: a store that dropped
/// live items passed).
#[test]
fn values_survive_the_log_wrapping_and_live_items_moving() {
    for (cores, steering) in [(1, Steering::Static), (2, Steering::Jbsq)] {
        // Under a core's saturation with 512-byte values (1.5 Mrps a core was until the
        // memory system wrote dirty lines back, 2026-12-03).
        let mut s = mica_spec(cores, Keys::Zipf { theta: 0.99 }, steering, 1.2 * cores as f64);
        let kv = s.kv.as_mut().unwrap();
        (kv.value_min, kv.get_fraction) = (512, 0.3);
        s.classes[0].fraction = 0.3;
        s.classes[1].fraction = 0.7;
        s.requests = 70_000 * cores as usize;
        s.start = Time::from_us(3000); // preloading 512-byte values takes longer
        let r = run(NicKind::Nanopu, &s, None);
        assert_all_checked(NicKind::Nanopu, &s, &r);
        let appended = appended_per_partition(&s, &r);
        assert!(appended.iter().all(|&b| b > 20 << 20), "{appended:?}");
    }
}

/// The same requests on both NICs: the same answers, and IceNIC's later (DMA through
/// memory, a driver on the core: docs/models/icenic.md) by more than 50 ns at this light
/// load (their loopback latencies differ by 80 ns and more: experiments/nic-compare).
#[test]
fn the_same_load_on_both_nics_reads_the_same_versions_icenic_later() {
    let s = mica_spec(1, Keys::Uniform, Steering::Static, 0.5);
    let (ice, nanopu) = (run(NicKind::IceNic, &s, None), run(NicKind::Nanopu, &s, None));
    let answers = |r: &LoadResult| r.kv_ops.iter().map(|k| k.answer.clone()).collect::<Vec<_>>();
    assert_eq!(answers(&ice), answers(&nanopu), "light load: every request served before the next");
    let median = |r: &LoadResult| r.class_result("all", None, 0).latency.median;
    let (i, n) = (median(&ice), median(&nanopu));
    assert!(i > n + 50.0, "IceNIC median {i} ns, nanoPU {n} ns");
}

/// Past what one core can serve, IceNIC's receive buffer fills and drops frames (it has no
/// flow control): the requests are lost and the run fails, naming the drops.
#[test]
fn frames_the_icenic_dropped_are_lost_requests_and_fail_the_run() {
    let mut s = mica_spec(1, Keys::Uniform, Steering::Static, 20.0);
    s.requests = 2000;
    let r = run(NicKind::IceNic, &s, None);
    common::assert_lost_to_icenic_drops(&s, &r);
}

/// JBSQ steering, several cores and service-time classes (no store to check) are refused
/// before an IceNIC server starts, the error naming the key.
#[test]
fn what_an_icenic_server_cannot_take_is_refused() {
    let refused = |s: &LoadSpec, cores: usize| common::icenic_refusal("mica", s, cores, Vec::new());
    let jbsq = mica_spec(1, Keys::Uniform, Steering::Jbsq, 1.0);
    assert!(refused(&jbsq, 1).starts_with("load.kv.steering"));
    let four = mica_spec(4, Keys::Uniform, Steering::Static, 1.0);
    assert!(refused(&four, 4).starts_with("server.cores"));
    let mut service = mica_spec(1, Keys::Uniform, Steering::Static, 1.0);
    service.kv = None;
    assert!(refused(&service, 1).starts_with("load: an IceNIC server takes only"));
}
