//! The set algebra load against `setalg.elf` (docs/apps/setalg.md): the server's index is
//! the generator's (its start-up checksum), every answer is right at low load on one core
//! and on four, and a server whose index differs is caught.

use crate::common;

use common::{cfg, elf, setalg_corpus as corpus, setalg_spec as spec};
use nanopu_harness::config::load::LoadFile;
use nanopu_harness::loadgen::{LoadResult, LoadSpec};
use nanopu_harness::workload::setalg::CLASSES;

fn run(s: &LoadSpec, cores: usize, server_args: Option<Vec<String>>) -> LoadResult {
    let mut c = cfg(cores);
    c.max_cycles = 1 << 32; // beyond any run's deadline here
    c.args = server_args.unwrap_or_else(|| s.setalg.as_ref().unwrap().corpus.server_args());
    s.run(&elf("apps/setalg.elf"), c).unwrap()
}

/// Every request answered, every answer the generator's, one start-up message per core.
fn assert_all_right(s: &LoadSpec, r: &LoadResult, cores: usize) {
    common::assert_no_errors(s, r);
    assert_eq!(r.startup, cores, "one start-up message per core");
    assert_eq!(r.setalg_ops.len(), s.requests);
}

/// The server prints its index's size and checksum when built: the same line as the
/// generator's index of the same corpus (the C and Rust generators agree).
#[test]
fn the_servers_index_is_the_generators() {
    let s = spec(0.5, 200);
    let r = run(&s, 1, None);
    let line = corpus().index().start_up_line(&corpus());
    assert_eq!(r.server.console.lines().next(), Some(format!("core 0: {line}").as_str()));
}

#[test]
fn one_core_every_answer_right() {
    let s = spec(1.0, 2000);
    let r = run(&s, 1, None);
    assert_all_right(&s, &r, 1);
    let ops = &r.setalg_ops;
    // The check saw both kinds of answer: empty intersections and ones cut at 32 ids.
    assert!(ops.iter().any(|o| o.expect[0] == 0) && ops.iter().any(|o| o.expect[0] > 32));
    for (i, name) in CLASSES.iter().enumerate() {
        let c = r.class_result(name, Some(i), 0);
        assert!(c.replied > 400 && (20.0..20_000.0).contains(&c.latency.median), "{name}: {c:?}");
    }
}

#[test]
fn four_cores_every_answer_right() {
    let s = spec(4.0, 4000);
    let r = run(&s, 4, None);
    assert_all_right(&s, &r, 4);
}

/// A server that built its index from another seed answers most queries differently.
#[test]
fn an_index_from_another_seed_is_caught() {
    let s = spec(1.0, 400);
    let mut args = s.setalg.as_ref().unwrap().corpus.server_args();
    args[0] = "10".into();
    let r = run(&s, 1, Some(args));
    let e = r.kv.as_ref().unwrap();
    assert!(e.wrong > 200 && e.lost == 0, "{e:?}");
    let p = r.problems(&s).join("; ");
    assert!(p.contains("wrong replies") && p.contains("the index has"), "{p}");
}

#[test]
fn same_seed_same_replies() {
    let s = spec(4.0, 1000);
    let (a, b) = (run(&s, 4, None), run(&s, 4, None));
    assert_eq!((a.requests, a.setalg_ops), (b.requests, b.setalg_ops));
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
