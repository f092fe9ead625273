//! Raft on nanoPU nodes (sw/apps/raft.c, docs/apps/raft.md): elections with 3 and 5
//! replicas, replication under an open-loop client, a leader crash and a partition of the
//! leader during the load, retried writes applied once; every run's safety checks. The
//! elections, the crash, the partition and determinism also on IceNIC nodes (raft_ice.elf,
//! the same program through appnet, every message a UDP frame).

use crate::common;

use nanopu_cluster::config::NicKind;
use nanopu_cluster::Outcome;
use nanopu_harness::clients::raft::client::Op;
use nanopu_harness::clients::raft::{Fault, RaftResult, RaftSpec, Target};

const NICS: [NicKind; 2] = [NicKind::Nanopu, NicKind::IceNic];

fn spec(replicas: u32, seed: u64) -> RaftSpec {
    spec_on(NicKind::Nanopu, replicas, seed)
}

/// The test load on nodes with this NIC; on IceNIC the AppendEntries batch that fits one
/// frame (29 entries; 32 on the nanoPU).
fn spec_on(nic: NicKind, replicas: u32, seed: u64) -> RaftSpec {
    let elf = nanopu_harness::apps::elf_name("raft", nic);
    let mut s = RaftSpec::new(&common::sw_build().join("apps").join(elf), replicas, seed);
    s.nic = nic;
    s.batch = nanopu_harness::clients::raft::config::max_batch(nic, 0).min(s.batch);
    s.requests = 400;
    s.drain_us = 200.0;
    s
}

fn run_ok(s: &RaftSpec) -> RaftResult {
    let r = s.run().unwrap();
    assert_eq!(r.problems, Vec::<String>::new(), "seed {}", s.seed);
    assert_eq!(r.outcome, Outcome::HostDone, "every request answered");
    r
}

fn summary(r: &RaftResult) -> String {
    format!(
        "leaders {:?}, retries {}, redirects {}, set {:?}",
        r.announcements.iter().map(|a| (a.term, a.node, a.at.as_us_f64())).collect::<Vec<_>>(),
        r.retries,
        r.redirects,
        r.latency(Op::Set)
    )
}

#[test]
fn three_replicas_elect_one_leader_and_replicate() {
    for nic in NICS {
        let r = run_ok(&spec_on(nic, 3, 1));
        eprintln!("{nic:?}: {}", summary(&r));
        assert_eq!(r.announcements.len(), 1, "one election without faults: {}", summary(&r));
    }
}

/// On IceNIC nodes every message is a frame the core builds and copies: a write takes
/// longer than on the nanoPU, by a bounded factor (the same protocol and cores).
#[test]
fn icenic_writes_take_longer() {
    let median = |nic| run_ok(&spec_on(nic, 3, 1)).latency(Op::Set).median;
    let (np, ice) = (median(NicKind::Nanopu), median(NicKind::IceNic));
    assert!(ice > np && ice < 3.0 * np, "write median: nanoPU {np} ns, IceNIC {ice} ns");
}

/// An AppendEntries batch that does not fit one IceNIC frame is refused, naming the key.
#[test]
fn a_batch_beyond_one_frame_is_refused_on_icenic() {
    let mut s = spec_on(NicKind::IceNic, 3, 1);
    s.batch = 30;
    let e = s.validate().unwrap_err();
    assert!(e.contains("raft.batch") && e.contains("IceNIC"), "{e}");
    s.nic = NicKind::Nanopu;
    assert_eq!(s.validate(), Ok(()));
}

#[test]
fn five_replicas_elect_one_leader_and_replicate() {
    let r = run_ok(&spec(5, 1));
    assert_eq!(r.announcements.len(), 1, "{}", summary(&r));
    let leader = r.final_leader().unwrap();
    // Every replica holds the whole committed log (no faults: all of them keep up).
    let commit = r.replicas.iter().map(|x| x.commit).max().unwrap();
    assert!(commit as usize > s_requests(&r), "the log holds every request and the no-op");
    for x in &r.replicas {
        assert_eq!(x.term, r.announcements[0].term, "node {}", x.node);
        assert_eq!(x.role == 2, x.node == leader, "node {}: role {}", x.node, x.role);
    }
}

fn s_requests(r: &RaftResult) -> usize {
    r.requests.len()
}

/// Several seeds, 3 and 5 replicas: a different first leader for some, every run safe.
#[test]
fn seeds_elect_different_leaders_every_run_safe() {
    let mut leaders = Vec::new();
    for seed in 1..=4 {
        for n in [3, 5] {
            let r = run_ok(&spec(n, seed));
            leaders.push(r.final_leader().unwrap());
        }
    }
    leaders.sort();
    leaders.dedup();
    assert!(leaders.len() > 1, "the randomized timeouts pick different first leaders: {leaders:?}");
}

/// A retry timeout shorter than a write's latency: most requests are sent at least twice,
/// the log holds duplicates (34 at this seed, measured: most retries reach the leader
/// after the first copy was applied, and are answered from the table), each request is
/// executed once (on few keys, a duplicate SET
/// executed again would bring an older value back: the replay check catches it).
#[test]
fn retried_writes_are_applied_once() {
    let mut s = spec(3, 2);
    s.retry_us = 0.3;
    s.keys = 1;
    s.rate_mrps = 2.0;
    s.get_fraction = 0.3;
    let r = run_ok(&s);
    assert!(r.retries as usize > s.requests / 2, "{}", summary(&r));
    let best = r.replicas.iter().max_by_key(|x| x.commit).unwrap();
    let mut ids: Vec<u64> =
        best.log[1..=best.commit as usize].iter().map(|e| e.req).filter(|&q| q != 0).collect();
    let all = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), s.requests, "every request in the committed log");
    assert!(all > ids.len() + 20, "duplicates in the log: {all} entries for {} requests", ids.len());
    assert!(r.duplicate_replies > 0);
}

/// The leader crashes during the load: a new leader is elected, the client finds it by
/// retries and redirects, every request is answered and every run is safe (several seeds).
#[test]
fn leader_crash_during_load() {
    let runs = [(3, 1), (3, 2), (5, 3), (5, 4)];
    for (nic, (n, seed)) in NICS.into_iter().flat_map(|nic| runs.map(|r| (nic, r))) {
        let mut s = spec_on(nic, n, seed);
        s.faults = vec![Fault::Crash { node: Target::Leader, at_us: 300.0 }];
        let r = run_ok(&s);
        let Fault::Crash { node: Target::Node(dead), .. } = r.faults[0] else { panic!("{:?}", r.faults) };
        let new = r.final_leader().unwrap();
        assert!(new != dead && r.announcements.len() >= 2, "seed {seed}: {}", summary(&r));
        let after = r.announcements.iter().filter(|a| a.at.as_us_f64() > 300.0).count();
        assert!(after >= 1, "an election after the crash: {}", summary(&r));
        assert!(r.retries > 0, "requests sent to the dead leader were retried");
        let live_leaders = r.replicas.iter().filter(|x| x.node != dead && x.role == 2).count();
        assert_eq!(live_leaders, 1, "seed {seed} on {nic:?}: one leader among the live replicas");
    }
}

/// The leader is cut off from the other replicas and the host during the load, then the
/// network heals: the majority elects a new leader, the old one learns the newer term when
/// it can hear again and follows; one leader at the end, every run safe (several seeds).
#[test]
fn partition_of_the_leader_heals() {
    let runs = [(3, 1), (3, 2), (5, 3), (5, 4)];
    for (nic, (n, seed)) in NICS.into_iter().flat_map(|nic| runs.map(|r| (nic, r))) {
        let mut s = spec_on(nic, n, seed);
        s.faults = vec![Fault::Partition { node: Target::Leader, from_us: 300.0, to_us: 400.0 }];
        let r = run_ok(&s);
        let Fault::Partition { node: Target::Node(cut), .. } = r.faults[0] else { panic!("{:?}", r.faults) };
        let new = r.final_leader().unwrap();
        assert!(new != cut, "seed {seed}: the majority elected another leader: {}", summary(&r));
        let old = &r.replicas[cut as usize];
        let last = r.announcements.last().unwrap().term;
        assert_eq!((old.role, old.term), (0, last), "seed {seed}: the old leader follows in the last term");
        let leaders = r.replicas.iter().filter(|x| x.role == 2).count();
        assert_eq!(leaders, 1, "seed {seed}: one leader at the end");
        let best = r.replicas.iter().map(|x| x.commit).max().unwrap();
        // About 50 entries were committed without it; at the end it lags by at most the
        // entries in flight (the commit index reaches a follower with the next message).
        assert!(
            best - old.commit <= 3,
            "seed {seed} on {nic:?}: the old leader caught up: {} of {best}",
            old.commit
        );
    }
}

/// Same configuration and seed, same run: every request's latency, the same timeline.
#[test]
fn same_seed_same_run() {
    for nic in NICS {
        let mut s = spec_on(nic, 3, 5);
        s.faults = vec![Fault::Crash { node: Target::Leader, at_us: 300.0 }];
        let (a, b) = (s.run().unwrap(), s.run().unwrap());
        assert_eq!(a.requests, b.requests, "{nic:?}");
        assert_eq!(a.announcements, b.announcements, "{nic:?}");
        let other = spec_on(nic, 3, 6).run().unwrap();
        assert_ne!(a.requests, other.requests, "another seed, another run");
    }
}

/// A follower crashed at 0 us never writes its Raft state: the two live replicas elect a
/// leader and answer every request, the checks hold with the crashed one in its initial
/// state, and the report says it was crashed from the start (reliability2 item 23).
#[test]
fn a_replica_crashed_from_the_start_leaves_a_live_majority() {
    let mut s = spec(3, 1);
    s.faults = vec![Fault::Crash { node: Target::Node(2), at_us: 0.0 }];
    let r = run_ok(&s);
    assert!(!r.replicas[2].booted && r.replicas[..2].iter().all(|x| x.booted));
    assert!(r.final_leader().is_some_and(|n| n != 2), "{}", summary(&r));
    let text = nanopu_harness::clients::raft::report::text(&s, &r);
    assert!(text.contains("fault: crash of node 2 from the start"), "{text}");
    assert!(text.contains("node 2 crashed from the start (never booted)"), "{text}");
}

/// The prototype's 16-byte keys and 64-byte values (`raft_kv.elf`, docs/apps/raft.md "Keys
/// and values"): every SET carries 8 more words through the log and AppendEntries, and the
/// run is answered and safe; the one-word program refuses those SETs as malformed.
#[test]
fn the_prototypes_keys_and_values_are_replicated() {
    let mut s = spec(3, 1);
    s.elf = common::sw_build().join("apps").join("raft_kv.elf");
    s.extra_words = nanopu_harness::clients::raft::config::PROTOTYPE_EXTRA_WORDS;
    s.batch = nanopu_harness::clients::raft::config::max_batch(NicKind::Nanopu, s.extra_words);
    assert_eq!(s.batch, 17, "14-word entries in a 2,048-byte message");
    let r = run_ok(&s);
    let word = run_ok(&spec(3, 1));
    let (kv, one) = (r.latency(Op::Set).median, word.latency(Op::Set).median);
    assert!(kv > one, "a write of 64-byte values takes longer: {kv} ns against {one} ns");
    s.elf = common::sw_build().join("apps").join("raft.elf");
    let refused = s.run().unwrap();
    assert!(!refused.problems.is_empty(), "raft.elf answered 12-word SETs: {}", summary(&refused));
}

/// `[network] link_ns`: a replicated write crosses eight links (client to leader, leader to
/// a follower, back, and to the client), so 100 ns more per link moves its median by 800 ns
/// (at a light load, where a write never waits for the AppendEntries of the one before).
#[test]
fn a_write_crosses_eight_links() {
    let median = |link_ns| {
        let mut s = spec(3, 1);
        (s.link_ns, s.rate_mrps, s.requests) = (link_ns, 0.05, 200);
        run_ok(&s).latency(Op::Set).median
    };
    let moved = median(143.75) - median(43.75);
    assert!((moved - 800.0).abs() < 20.0, "the median moved by {moved} ns");
}
