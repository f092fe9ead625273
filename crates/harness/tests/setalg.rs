//! The set algebra load (docs/apps/setalg.md): `setalg.elf` on the nanoPU NIC,
//! `setalg_ice.elf` (the same index and intersection) on IceNIC ("On IceNIC": queries and
//! replies as UDP frames). On both NICs: the server's index is the generator's (its start-up
//! checksum) and every answer is right on one core, a server whose index differs is caught,
//! the same seed gives the same replies. On the nanoPU: four cores. On IceNIC: frames its
//! receive buffer dropped fail the run, and several cores are refused. And the same load on
//! both: the same verdicts, one-word queries later on IceNIC. Load files' `[load.setalg]`
//! refused naming the bad key.

use crate::common;

use common::{setalg_corpus as corpus, setalg_spec as spec, NICS};
use nanopu_cluster::config::NicKind;
use nanopu_harness::config::load::LoadFile;
use nanopu_harness::loadgen::{LoadResult, LoadSpec};
use nanopu_harness::workload::setalg::CLASSES;

/// Run load `s` against `nic`'s build of the server on `cores` cores, started with `args`
/// or else the load's corpus.
fn run(nic: NicKind, s: &LoadSpec, cores: usize, args: Option<Vec<String>>) -> LoadResult {
    let args = args.unwrap_or_else(|| s.setalg.as_ref().unwrap().corpus.server_args());
    common::run_load("setalg", nic, cores, s, args).unwrap()
}

/// Every request answered, every answer the generator's, the start-up messages the NIC's
/// server sends (one per core on the nanoPU, none on IceNIC).
fn assert_all_right(nic: NicKind, s: &LoadSpec, r: &LoadResult, cores: usize) {
    common::assert_no_errors(s, r);
    assert_eq!(r.startup, common::startup_messages(nic, cores), "start-up messages");
    assert_eq!(r.setalg_ops.len(), s.requests);
}

/// One core, at a rate it serves (IceNIC's core copies every frame and drives the NIC: it
/// serves less). The server prints its index's size and checksum when built: the same line
/// as the generator's index of the same corpus (the C and Rust generators agree). Then every
/// query is answered right, empty intersections and ones cut at 32 ids among them, each
/// class answered (more than a fifth of the queries each: a quarter are sent) in a plausible
/// time.
#[test]
fn one_core_every_answer_right() {
    for nic in NICS {
        let s = match nic {
            NicKind::Nanopu => spec(1.0, 2000),
            NicKind::IceNic | NicKind::Zeronic => spec(0.3, 1500),
            NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
        };
        let r = run(nic, &s, 1, None);
        let line = corpus().index().start_up_line(&corpus());
        assert_eq!(r.server.console.lines().next(), Some(format!("core 0: {line}").as_str()), "{nic:?}");
        assert_all_right(nic, &s, &r, 1);
        let ops = &r.setalg_ops;
        // The check saw both kinds of answer: empty intersections and ones cut at 32 ids.
        assert!(ops.iter().any(|o| o.expect[0] == 0) && ops.iter().any(|o| o.expect[0] > 32), "{nic:?}");
        for (i, name) in CLASSES.iter().enumerate() {
            let c = r.class_result(name, Some(i), 0);
            let answered = c.replied > s.requests / 5 && (20.0..20_000.0).contains(&c.latency.median);
            assert!(answered, "{nic:?} {name}: {c:?}");
        }
    }
}

/// Four cores (nanoPU only: an IceNIC server runs on one).
#[test]
fn four_cores_every_answer_right() {
    let s = spec(4.0, 4000);
    let r = run(NicKind::Nanopu, &s, 4, None);
    assert_all_right(NicKind::Nanopu, &s, &r, 4);
}

/// A server that built its index from another seed answers most queries differently.
#[test]
fn an_index_from_another_seed_is_caught() {
    for nic in NICS {
        let rate = match nic {
            NicKind::Nanopu => 1.0,
            NicKind::IceNic | NicKind::Zeronic => 0.3,
            NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
        };
        let s = spec(rate, 400);
        let mut args = s.setalg.as_ref().unwrap().corpus.server_args();
        args[0] = "10".into();
        let r = run(nic, &s, 1, Some(args));
        let e = r.kv.as_ref().unwrap();
        assert!(e.wrong > 200 && e.lost == 0, "{nic:?}: {e:?}");
        let p = r.problems(&s).join("; ");
        assert!(p.contains("wrong replies") && p.contains("the index has"), "{nic:?}: {p}");
    }
}

/// The same seed twice: the same requests, the same replies, the same cost. On the nanoPU
/// four cores; on IceNIC one, at a rate it serves.
#[test]
fn same_seed_same_replies() {
    for nic in NICS {
        let (cores, s) = match nic {
            NicKind::Nanopu => (4, spec(4.0, 1000)),
            NicKind::IceNic | NicKind::Zeronic => (1, spec(0.5, 1000)),
            NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
        };
        let (a, b) = (run(nic, &s, cores, None), run(nic, &s, cores, None));
        assert_eq!((a.requests, a.setalg_ops, a.cost), (b.requests, b.setalg_ops, b.cost), "{nic:?}");
    }
}

/// The same queries on both NICs: the same verdicts, and IceNIC's one-word queries (the
/// cheapest: their cost is the reply's) later by more than 50 ns at this light load (the two
/// NICs' loopback latencies differ by 80 ns and more: experiments/nic-compare).
#[test]
fn the_same_load_on_both_nics_gets_the_same_answers_icenic_later() {
    let s = spec(0.02, 400);
    let (ice, nanopu) = (run(NicKind::IceNic, &s, 1, None), run(NicKind::Nanopu, &s, 1, None));
    assert_all_right(NicKind::IceNic, &s, &ice, 1);
    assert_eq!(ice.setalg_ops, nanopu.setalg_ops);
    let median = |r: &LoadResult| r.class_result(CLASSES[0], Some(0), 0).latency.median;
    let (a, b) = (median(&ice), median(&nanopu));
    assert!(a > b + 50.0, "one-word queries: IceNIC median {a} ns, nanoPU {b} ns");
}

/// Past what one core can serve, IceNIC's receive buffer fills and drops frames (it has no
/// flow control): the queries are lost and the run fails, naming the drops.
#[test]
fn frames_the_icenic_dropped_are_lost_requests_and_fail_the_run() {
    let s = spec(5.0, 1000);
    let r = run(NicKind::IceNic, &s, 1, None);
    common::assert_lost_to_icenic_drops(&s, &r);
}

/// IceNIC has one queue pair: an IceNIC server on several cores is refused before it starts.
#[test]
fn several_cores_on_an_icenic_server_are_refused() {
    let s = spec(0.3, 100);
    let e = common::icenic_refusal("setalg", &s, 4, s.setalg.as_ref().unwrap().corpus.server_args());
    assert!(e.starts_with("server.cores"), "{e}");
}

/// A load file's `[load.setalg]` gives the server's arguments and the classes; a bad value is
/// refused before anything runs, the error naming its key.
#[test]
fn bad_configs_are_refused_naming_the_key() {
    let good = "[server]\nelf = \"s.elf\"\n[load]\nrates_mrps = [1.0]\nrequests = 10\n[load.setalg]\n\
                documents = 1024\nvocabulary = 2048\n";
    let f = LoadFile::parse(good).unwrap();
    assert_eq!(f.node_config().unwrap().args, ["1", "1024", "2048", "16"]);
    for (line, key) in [
        ("documents = 70000", "load.setalg.documents"),
        ("documents = 8192\nwords_per_document = 64", "load.setalg.documents"),
        ("vocabulary = 2", "load.setalg.vocabulary"),
        ("words_per_document = 65", "load.setalg.words_per_document"),
        ("query_words = [1.0, 1.0, 0.0, 0.0]", "load.setalg.query_words"),
        ("query_words = [-0.5, 1.5, 0.0, 0.0]", "load.setalg.query_words"),
        ("popularity = \"pareto\"", "load.setalg.popularity"),
        ("theta = 0.0", "load.setalg.theta"),
    ] {
        let text = good.replace("documents = 1024\nvocabulary = 2048\n", &format!("{line}\n"));
        let e = LoadFile::parse(&text).err().unwrap_or_else(|| panic!("accepted {line}"));
        assert!(e.starts_with(&format!("{key}: ")), "{line}: {e}");
    }
    let both = good.to_string() + "[load.rdma]\n";
    assert!(LoadFile::parse(&both).unwrap_err().starts_with("load.setalg: not with"));
}
