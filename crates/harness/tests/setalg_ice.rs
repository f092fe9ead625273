//! The set algebra load against `setalg_ice.elf`, the index and intersection of `setalg.elf`
//! on an IceNIC node (docs/apps/setalg.md "On IceNIC"): queries and replies as UDP frames,
//! the server's index the generator's, every answer right, an index from another seed and
//! dropped frames failing the run, the same bytes from the same seed, and several cores
//! refused.

use crate::common;

use common::{elf, setalg_corpus as corpus, setalg_spec as spec};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::SimError;
use nanopu_harness::loadgen::{LoadResult, LoadSpec};
use nanopu_harness::workload::setalg::CLASSES;

fn run_on(nic: NicKind, s: &LoadSpec, args: Option<Vec<String>>) -> Result<LoadResult, SimError> {
    let args = args.unwrap_or_else(|| s.setalg.as_ref().unwrap().corpus.server_args());
    common::run_load("setalg", nic, s, args)
}

fn run(s: &LoadSpec) -> LoadResult {
    run_on(NicKind::IceNic, s, None).unwrap()
}

/// Every query answered over frames, every answer the generator's; no start-up message (an
/// IceNIC server sends none).
fn assert_all_right(s: &LoadSpec, r: &LoadResult) {
    common::assert_no_errors(s, r);
    assert_eq!((r.startup, r.setalg_ops.len()), (0, s.requests));
}

/// The server prints the generator's index line (the same code as setalg.elf builds it),
/// then answers every query right: empty intersections and ones cut at 32 ids among them.
#[test]
fn one_core_every_answer_right_over_icenic_frames() {
    let s = spec(0.3, 1500);
    let r = run(&s);
    assert_all_right(&s, &r);
    let line = corpus().index().start_up_line(&corpus());
    assert_eq!(r.server.console.lines().next(), Some(format!("core 0: {line}").as_str()));
    let ops = &r.setalg_ops;
    assert!(ops.iter().any(|o| o.expect[0] == 0) && ops.iter().any(|o| o.expect[0] > 32));
    for (i, name) in CLASSES.iter().enumerate() {
        assert!(r.class_result(name, Some(i), 0).replied > 300, "{name}");
    }
}

/// The same queries on both NICs: the same verdicts, and IceNIC's one-word queries (the
/// cheapest: their cost is the reply's) later by more than 50 ns at this light load (the two
/// NICs' loopback latencies differ by 80 ns and more: experiments/nic-compare).
#[test]
fn the_same_load_on_both_nics_gets_the_same_answers_icenic_later() {
    let s = spec(0.02, 400);
    let (ice, nanopu) = (run(&s), run_on(NicKind::Nanopu, &s, None).unwrap());
    assert_all_right(&s, &ice);
    assert_eq!(ice.setalg_ops, nanopu.setalg_ops);
    let median = |r: &LoadResult| r.class_result(CLASSES[0], Some(0), 0).latency.median;
    let (a, b) = (median(&ice), median(&nanopu));
    assert!(a > b + 50.0, "one-word queries: IceNIC median {a} ns, nanoPU {b} ns");
}

/// A server that built its index from another seed answers most queries differently.
#[test]
fn an_index_from_another_seed_is_caught() {
    let s = spec(0.3, 400);
    let mut args = s.setalg.as_ref().unwrap().corpus.server_args();
    args[0] = "10".into();
    let r = run_on(NicKind::IceNic, &s, Some(args)).unwrap();
    let e = r.kv.as_ref().unwrap();
    assert!(e.wrong > 200 && e.lost == 0, "{e:?}");
    let p = r.problems(&s).join("; ");
    assert!(p.contains("wrong replies") && p.contains("the index has"), "{p}");
}

/// Past what one core can serve, IceNIC's receive buffer fills and drops frames (it has no
/// flow control): the queries are lost and the run fails, naming the drops.
#[test]
fn frames_the_icenic_dropped_are_lost_requests_and_fail_the_run() {
    let s = spec(5.0, 1000);
    let r = run(&s);
    common::assert_lost_to_icenic_drops(&s, &r);
}

#[test]
fn same_seed_same_replies() {
    let s = spec(0.5, 1000);
    let (a, b) = (run(&s), run(&s));
    assert_eq!((a.requests, a.setalg_ops, a.cost), (b.requests, b.setalg_ops, b.cost));
}

#[test]
fn several_cores_are_refused() {
    let s = spec(0.3, 100);
    let c = common::server_node(NicKind::IceNic, 4, s.setalg.as_ref().unwrap().corpus.server_args());
    match s.run(&elf("apps/setalg_ice.elf"), c) {
        Err(SimError::Setup(e)) => assert!(e.starts_with("server.cores"), "{e}"),
        other => panic!("not refused: {:?}", other.map(|r| r.outcome)),
    }
}
