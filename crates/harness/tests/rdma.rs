//! The one-sided RDMA load against `rdma.elf` (docs/apps/rdma.md): each operation's latency
//! on an idle server, a mixed load with every reply checked against the generator's model of
//! the region, and a server whose region differs caught.

use crate::common;

use common::{cfg, elf, rdma_spec as spec};
use nanopu_harness::loadgen::{LoadResult, LoadSpec};
use nanopu_harness::workload::rdma::KINDS;

fn run(s: &LoadSpec, cores: usize, server_args: Option<Vec<String>>) -> LoadResult {
    let mut c = cfg(cores);
    c.max_cycles = 1 << 32; // beyond any run's deadline here
    c.args = server_args.unwrap_or_else(|| s.rdma.as_ref().unwrap().server_args());
    s.run(&elf("apps/rdma.elf"), c).unwrap()
}

/// Every request answered, every answer the model's, one start-up message per core.
fn assert_all_checked(s: &LoadSpec, r: &LoadResult, cores: usize) {
    common::assert_no_errors(s, r);
    assert_eq!(r.startup, cores, "one start-up message per core");
    assert_eq!(r.rdma_ops.len(), s.requests);
}

/// Each operation alone on an idle server (one request at a time): it is served, checked,
/// within (10 ns, 1.5 us). READs move more words than CAS and FAA (8.5 on average against
/// one), and an indirect READ reads a pointer first, so each takes longer than the one before.
#[test]
fn each_operation_on_an_idle_server() {
    let mut median = [0.0; 5];
    for (i, m) in median.iter_mut().enumerate() {
        let mut mix = [0.0; 5];
        mix[i] = 1.0;
        let s = spec(mix, 0.05, 200);
        let r = run(&s, 1, None);
        assert_all_checked(&s, &r, 1);
        *m = r.class_result(KINDS[i].name(), Some(i), 0).latency.median;
        assert!((10.0..1500.0).contains(m), "{:?}: median {m} ns", KINDS[i]);
    }
    let [read, _, cas, faa, iread] = median;
    assert!(read > cas.max(faa) && iread > read, "{median:?}");
}

#[test]
fn a_mixed_load_every_reply_checked() {
    let s = spec([0.2; 5], 4.0, 4000);
    let r = run(&s, 1, None);
    assert_all_checked(&s, &r, 1);
    let failed_cas = r.rdma_ops.iter().filter(|o| o.kind == KINDS[2] && o.request[2] != o.expect[1]);
    assert!(failed_cas.count() > 100, "CAS that do not match are checked too");
}

#[test]
fn four_cores_every_reply_checked() {
    let s = spec([0.2; 5], 8.0, 4000);
    let r = run(&s, 4, None);
    assert_all_checked(&s, &r, 4);
}

/// Four cores near their saturation serve requests in flight together in other orders than
/// they were sent: the check leaves data such an order explains unjudged, judges the rest.
/// At this seed and load one reply differs from the send-order model that way (measured:
/// the strict send-order check called it wrong), so the path is exercised. Which load does
/// it depends on the cores' timing: 88 Mrps did until the branch predictor followed Rocket's
/// (none at 84, 90, 92, 94 since).
#[test]
fn four_cores_near_saturation_other_orders_are_not_wrong() {
    let s = spec([0.2; 5], 86.0, 40_000);
    let r = run(&s, 4, None);
    assert_all_checked(&s, &r, 4);
    let e = r.kv.as_ref().unwrap();
    assert!((1..s.requests / 1000).contains(&e.unchecked), "{e:?}");
}

#[test]
fn a_region_filled_from_another_seed_is_caught() {
    let s = spec([0.2; 5], 2.0, 1000);
    let r = run(&s, 1, Some(vec!["10".into()]));
    let e = r.kv.as_ref().unwrap();
    // Every reply but a WRITE's carries region words: all of them differ.
    assert!(e.wrong > 700 && e.lost == 0, "{e:?}");
    let p = r.problems(&s).join("; ");
    assert!(p.contains("wrong replies") && p.contains("the model holds"), "{p}");
}

#[test]
fn same_seed_same_replies() {
    let s = spec([0.2; 5], 8.0, 2000);
    let (a, b) = (run(&s, 2, None), run(&s, 2, None));
    assert_eq!((a.requests, a.rdma_ops), (b.requests, b.rdma_ops));
}
