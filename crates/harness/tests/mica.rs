//! The key-value load against the MICA-style store (`mica.elf`, docs/apps/mica.md): every
//! GET returns the value of the last SET (or the preloaded one), on one core and on four
//! (static steering and JBSQ), with uniform and Zipf keys; a wrong reply fails the run.

use crate::common;

use common::{cfg, elf, mica_spec};
use nanopu_harness::loadgen::{LoadResult, LoadSpec};
use nanopu_harness::workload::kv::{Keys, Steering};
use nanopu_sim::Time;

fn run(s: &LoadSpec, server_args: Option<Vec<String>>) -> LoadResult {
    let kv = s.kv.as_ref().unwrap();
    let mut c = cfg(kv.cores as usize);
    c.max_cycles = 1 << 30; // beyond any run's deadline here (the longest is about 70 ms)
    c.args = server_args.unwrap_or_else(|| kv.server_args());
    s.run(&elf("apps/mica.elf"), c).unwrap()
}

/// Every request answered, every answer right, the start-up messages before the first.
fn assert_all_checked(s: &LoadSpec, r: &LoadResult) {
    common::assert_no_errors(s, r);
    assert_eq!(r.startup, s.kv.as_ref().unwrap().cores as usize, "one start-up message per core");
    let reads = r.kv_ops.iter().filter(|k| !k.set);
    let read_set = reads.filter(|k| k.answer.as_ref().is_some_and(|a| a.as_ref().is_ok_and(|&v| v > 0)));
    assert!(read_set.count() > 100, "GETs must read values the generator SET, not only preloaded ones");
}

#[test]
fn one_core_uniform_every_value_checked() {
    let s = mica_spec(1, Keys::Uniform, Steering::Static, 2.0);
    let r = run(&s, None);
    assert_all_checked(&s, &r);
    // The cost counts the requests, not the preloading before load.start_us (about 1,900
    // instructions per item): a request moves at most 68 words, a few instructions each,
    // and the core is busy for less than a request's latency.
    let [instructions, busy, _, _] = r.cost.per(s.requests);
    assert!((100.0..1500.0).contains(&instructions), "{instructions} instructions per request");
    let median_cycles = r.class_result("all", None, 0).latency.median * 3.2;
    assert!(busy > instructions && busy < median_cycles, "{busy} busy cycles, median {median_cycles}");
}

#[test]
fn one_core_zipf_every_value_checked() {
    let s = mica_spec(1, Keys::Zipf { theta: 0.99 }, Steering::Jbsq, 2.0);
    assert_all_checked(&s, &run(&s, None));
}

#[test]
fn four_cores_static_zipf_every_value_checked() {
    let s = mica_spec(4, Keys::Zipf { theta: 0.99 }, Steering::Static, 8.0);
    let r = run(&s, None);
    assert_all_checked(&s, &r);
    assert!(r.requests.iter().any(|q| q.context == 3), "requests go to every core's context");
}

#[test]
fn four_cores_jbsq_shared_partitions_every_value_checked() {
    let s = mica_spec(4, Keys::Zipf { theta: 0.99 }, Steering::Jbsq, 8.0);
    assert_all_checked(&s, &run(&s, None));
}

#[test]
fn a_store_preloaded_from_another_seed_is_caught() {
    let s = mica_spec(1, Keys::Uniform, Steering::Static, 2.0);
    let mut args = s.kv.as_ref().unwrap().server_args();
    args[2] = "12".into(); // the seed: other keys, other values
    let r = run(&s, Some(args));
    let e = r.kv.as_ref().unwrap();
    assert!(e.wrong > 500, "{e:?}");
    let p = r.problems(&s).join("; ");
    assert!(p.contains("wrong replies"), "{p}");
}

#[test]
fn requests_to_the_wrong_core_are_refused_and_counted() {
    // Static steering to a server whose cores share the partitions would pass; a server
    // in static mode that gets JBSQ-steered requests (all to core 0's context) must not.
    let s = mica_spec(4, Keys::Uniform, Steering::Jbsq, 4.0);
    let mut args = s.kv.as_ref().unwrap().server_args();
    args[0] = "static".into();
    let r = run(&s, Some(args));
    let e = r.kv.as_ref().unwrap();
    assert!(e.wrong > 1000 && e.examples[0].contains("status 2"), "{e:?}");
}

#[test]
fn same_seed_same_replies() {
    let s = mica_spec(4, Keys::Zipf { theta: 0.99 }, Steering::Jbsq, 8.0);
    let (a, b) = (run(&s, None), run(&s, None));
    assert_eq!((a.requests, a.kv_ops), (b.requests, b.kv_ops));
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

/// Enough SETs of large values that every partition appends more than its 16 MiB log, so
/// that space is reclaimed from the tail and live items are moved (with JBSQ, while other
/// cores read them): every GET still returns the last value set. Zipf keys, so that cold
/// keys' items are still live when the head comes round to them (with uniform keys every key
/// is set again before, and nothing is ever moved: a store that dropped live items passed).
#[test]
fn values_survive_the_log_wrapping_and_live_items_moving() {
    for (cores, steering) in [(1, Steering::Static), (2, Steering::Jbsq)] {
        let mut s = mica_spec(cores, Keys::Zipf { theta: 0.99 }, steering, 1.5 * cores as f64);
        let kv = s.kv.as_mut().unwrap();
        (kv.value_min, kv.get_fraction) = (512, 0.3);
        s.classes[0].fraction = 0.3;
        s.classes[1].fraction = 0.7;
        s.requests = 70_000 * cores as usize;
        s.start = Time::from_us(3000); // preloading 512-byte values takes longer
        let r = run(&s, None);
        assert_all_checked(&s, &r);
        let appended = appended_per_partition(&s, &r);
        assert!(appended.iter().all(|&b| b > 20 << 20), "{appended:?}");
    }
}
