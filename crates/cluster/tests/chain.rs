//! Chain replication (`chain.elf`, docs/apps/chain.md) driven by its client on the test host:
//! writes acknowledged only once every replica applied them, linearizable reads at the tail,
//! and no acknowledged write lost when a replica (middle, head or tail) crashes under load.

mod common;

use common::sw_build;
use nanopu_cluster::chain::{self, ChainResult};
use nanopu_cluster::chain_config::ChainFile;

/// A small store (quick to preload: about 1.1 us per item) hit by a write-heavy mix, so
/// that keys are written often and reads race writes.
fn config(extra: &str) -> ChainFile {
    let text = format!(
        "[chain]\nelf = \"apps/chain.elf\"\n\
         [load]\nseed = 5\nrates_mrps = [1.0]\nrequests = 3000\nwarmup = 100\nstart_us = 400.0\ndrain_us = 100.0\n\
         [load.kv]\nitems_per_core = 200\nget_fraction = 0.5\nvalue_bytes = [8, 64]\n{extra}"
    );
    ChainFile::parse(&text).unwrap()
}

fn run(f: &ChainFile) -> ChainResult {
    let spec = &f.specs().unwrap()[0];
    chain::run(spec, &f.chain_spec().unwrap(), &f.cluster().unwrap(), &sw_build()).unwrap()
}

/// No wrong reply, no lost request, nothing unexpected from the nodes.
fn assert_clean(f: &ChainFile, r: &ChainResult) {
    let spec = &f.specs().unwrap()[0];
    assert_eq!(r.load.problems(spec), Vec::<String>::new());
    let e = r.load.kv.as_ref().unwrap();
    assert_eq!((e.wrong, e.lost, r.load.unexpected), (0, 0, 0), "{e:?}");
    assert!(r.final_reads > 100, "every written key read back: {}", r.final_reads);
}

#[test]
fn a_chain_without_failures_answers_every_request_right() {
    let f = config("");
    let r = run(&f);
    assert_clean(&f, &r);
    assert_eq!((r.dropped, r.duplicates, r.reconfigs.len()), (0, 0, 0));
    let to: Vec<u32> = r.sent_to.iter().copied().collect();
    let (sets, gets) = r.load.kv_ops.iter().zip(&to).partition::<Vec<_>, _>(|(o, _)| o.set);
    assert!(sets.iter().all(|(_, &n)| n == 1) && gets.iter().all(|(_, &n)| n == 3), "head 1, tail 3");
}

#[test]
fn debug_print() {
    let f = config("");
    let r = run(&f);
    let spec = &f.specs().unwrap()[0];
    for (i, c) in ["get", "set"].iter().enumerate() {
        let x = r.load.class_result(c, Some(i), spec.warmup); let c = 0;
        eprintln!("{c}: {} {} measured {} replied {:.3} Mrps median {} p99 {}", x.class, x.measured, x.replied, x.achieved_mrps, x.latency.median, x.latency.p99);
    }
    eprintln!("{:?} final {} console {:?} outcome {:?} boot {}", r.load.kv, r.final_reads, r.load.server, r.load.outcome, r.load.startup);
}
