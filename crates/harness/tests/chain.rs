//! Chain replication (`chain.elf`, docs/apps/chain.md) driven by its client on the test host:
//! writes acknowledged only once every replica applied them, linearizable reads at the tail,
//! and no acknowledged write lost when a replica (middle, head or tail) crashes under load
//! (three seeds each), on nanoPU nodes (`chain.elf`) and on IceNIC nodes (`chain_ice.elf`,
//! the same program through appnet, every message a UDP frame); a tail holding other values
//! and frames an IceNIC drops fail the run; bad configurations refused naming the key.

use crate::common;

use common::{elf, sw_build};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::node::boot::node_ip;
use nanopu_cluster::Simulation;
use nanopu_cluster::TestHost;
use nanopu_harness::apps::hostnet::HostNet;
use nanopu_harness::clients::chain::{self, ChainResult};
use nanopu_harness::config::chain::ChainFile;
use nanopu_harness::workload::kv::OP_SET;
use nanopu_sim::Time;

const NICS: [NicKind; 2] = [NicKind::Nanopu, NicKind::IceNic];

/// The chain's program on nodes with this NIC (sw/Makefile builds both from chain.c).
fn program(nic: NicKind) -> &'static str {
    match nic {
        NicKind::Nanopu => "apps/chain.elf",
        NicKind::IceNic | NicKind::Zeronic => "apps/chain_ice.elf",
        NicKind::Rdma => unreachable!("these apps have no RDMA NIC build"),
    }
}

/// A small store (quick to preload: about 1.1 us per item) hit by a write-heavy mix, so
/// that keys are written often and reads race writes.
fn config_on(nic: NicKind, extra: &str) -> ChainFile {
    let text = format!(
        "[chain]\nelf = \"{}\"\nnic = \"{}\"\n\
         [load]\nseed = 5\nrates_mrps = [1.0]\nrequests = 3000\nwarmup = 100\nstart_us = 400.0\ndrain_us = 100.0\n\
         [load.kv]\nitems_per_core = 200\nget_fraction = 0.5\nvalue_bytes = [8, 64]\n{extra}",
        program(nic),
        nic.name()
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
    for nic in NICS {
        let f = config_on(nic, "");
        let r = run(&f);
        assert_clean(&f, &r);
        assert_eq!((r.dropped, r.duplicates, r.reconfigs.len()), (0, 0, 0), "{nic:?}");
        let (sets, gets) = r.load.kv_ops.iter().zip(&r.sent_to).partition::<Vec<_>, _>(|(o, _)| o.set);
        assert!(sets.iter().all(|(_, &n)| n == 1) && gets.iter().all(|(_, &n)| n == 3), "head 1, tail 3");
    }
}

/// The check can fail on both NICs: a tail whose store was preloaded from another seed
/// (other values for the same keys) answers GETs of keys not yet written wrongly, and the
/// run reports them.
#[test]
fn a_tail_with_other_values_fails_the_check() {
    for nic in NICS {
        let f = config_on(nic, "");
        let mut cluster = f.cluster().unwrap();
        let mut tail = cluster.program[0].clone();
        cluster.program[0].nodes = "0-2".into();
        tail.nodes = "3".into();
        tail.args[2] = "6".into(); // the store's seed: 5 elsewhere
        cluster.program.push(tail);
        let spec = &f.specs().unwrap()[0];
        let r = chain::run(spec, &f.chain_spec().unwrap(), &cluster, &sw_build()).unwrap();
        let e = r.load.kv.as_ref().unwrap();
        assert!(e.wrong > 10, "{nic:?}: {e:?}");
        assert!(!r.load.problems(spec).is_empty(), "{nic:?}: the run fails");
    }
}

/// The same chain on IceNIC nodes is slower (every message is a frame the core builds and
/// copies), but by a bounded factor: a GET's median within 1x..3x of the nanoPU's.
#[test]
fn icenic_nodes_take_longer_per_request() {
    let median = |nic| {
        let f = config_on(nic, "");
        let r = run(&f);
        let spec = &f.specs().unwrap()[0];
        r.load.class_result("get", Some(0), spec.warmup).latency.median
    };
    let (np, ice) = (median(NicKind::Nanopu), median(NicKind::IceNic));
    assert!(ice > np && ice < np * 3.0, "GET median: nanoPU {np:?}, IceNIC {ice:?}");
}

/// IceNIC has no flow control: a load whose frames overflow a replica's receive buffer
/// loses forwarded writes. The run must fail and name the drops, never pass.
#[test]
fn frames_an_icenic_drops_fail_the_run() {
    let mut f = config_on(NicKind::IceNic, "");
    f.load.rates_mrps = vec![6.0];
    f.load.kv.as_mut().unwrap().value_bytes = [512, 512];
    let r = run(&f);
    let problems = r.load.problems(&f.specs().unwrap()[0]).join("; ");
    assert!(problems.contains("the IceNICs dropped"), "{problems}");
}

/// Replica `n`'s last applied write (`last_seq` in chain.c), read from its memory.
fn last_applied(sim: &Simulation, last_seq: u64, n: usize) -> u64 {
    let mut b = [0u8; 8];
    sim.nodes[n].mem.read(last_seq, &mut b).unwrap();
    u64::from_le_bytes(b)
}

/// The tail answers a write only once every replica applied it: whenever the client has k
/// acknowledgements (the head numbers writes in arrival order and the tail answers in that
/// order), every replica has applied write k. Checked every 100 ns of a burst of writes.
#[test]
fn a_write_is_acknowledged_only_once_every_replica_applied_it() {
    NICS.into_iter().for_each(acknowledged_only_once_applied);
}

fn acknowledged_only_once_applied(nic: NicKind) {
    let f = config_on(nic, "");
    let spec = &f.specs().unwrap()[0];
    let kv = spec.kv.as_ref().unwrap();
    let (requests, ops) = spec.schedule_kv(3_200_000_000).unwrap();
    let mut sim = Simulation::cluster(&f.cluster().unwrap(), &sw_build()).unwrap();
    let program = nanopu_riscv::Program::load(&elf(program(nic))).unwrap();
    let last_seq = program.symbol("last_seq").expect("chain.elf's symbol");
    let net = HostNet(nic);
    let sets = requests.iter().zip(&ops).filter(|(_, o)| o.set).take(500);
    for (r, op) in sets {
        net.send_at(&mut sim, r.sent, TestHost::message(0, node_ip(1), 0, &kv.request_words(op, r.sent.0)));
    }
    let (mut acks, mut t, mut checks) = (0, spec.start, 0);
    while acks < 500 {
        t += Time::from_ns(100);
        sim.set_deadline(t);
        sim.run().unwrap();
        let received = net.take_received(&mut sim).0;
        acks += received.iter().filter(|m| m.msg.words[0] & 0xff == OP_SET).count() as u64;
        let applied = (1..=3).map(|n| last_applied(&sim, last_seq, n)).min().unwrap();
        assert!(
            applied >= acks,
            "{nic:?} at {t}: {acks} writes acknowledged, a replica applied only {applied}"
        );
        checks += u64::from(acks > 0 && applied < acks + 5);
        assert!(t < Time::from_us(2000), "{nic:?}: only {acks} of 500 writes acknowledged");
    }
    assert!(checks > 100, "{nic:?}: the check ran while writes were in flight: {checks}");
}

/// A crash of replica `node` at 1.5 ms, mid-load, with this load seed.
fn crash_run(nic: NicKind, node: u32, seed: u64) -> (ChainFile, ChainResult) {
    let text = format!("[[faults]]\nkind = \"crash\"\nnode = {node}\nat_us = 1500.0\n");
    let mut f = config_on(nic, &text);
    f.load.seed = seed;
    let r = run(&f);
    (f, r)
}

/// The master finds the crashed replica within the timeout and a ping period of its last
/// answer, the chain takes it out, the client learns the new head and tail, and no
/// acknowledged write is lost (every written key read back at the end is checked). On
/// IceNIC the crashed node's NIC takes no frame after the crash (else its receive buffer
/// would fill and drop, failing the run).
fn assert_survives_crash(node: u32, head: u32, tail: u32) {
    for (nic, seed) in NICS.into_iter().flat_map(|n| [(n, 1), (n, 2), (n, 3)]) {
        let (f, r) = crash_run(nic, node, seed);
        let seed = format!("{seed} on {nic:?}");
        assert_clean(&f, &r);
        assert_eq!(r.reconfigs.len(), 1, "seed {seed}: {:?}", r.reconfigs);
        let c = &r.reconfigs[0];
        assert_eq!((c.failed, c.head, c.tail), (node, head, tail), "seed {seed}");
        let crash = Time::from_us(1500);
        assert!(c.detected > crash && c.detected < crash + Time::from_us(20 + 5 + 2), "seed {seed}: {c:?}");
        assert!(c.detected < c.reconfigured && c.reconfigured < c.learned, "seed {seed}: {c:?}");
        let after =
            |n: u32| (r.load.requests.iter().zip(&r.sent_to)).any(|(q, &to)| to == n && q.sent >= c.applied);
        assert!(!after(node) && after(head) && after(tail), "seed {seed}: requests follow the new chain");
    }
}

#[test]
fn a_middle_replica_crash_loses_no_acknowledged_write() {
    assert_survives_crash(2, 1, 3);
}

#[test]
fn a_head_crash_loses_no_acknowledged_write() {
    assert_survives_crash(1, 2, 3);
}

#[test]
fn a_tail_crash_loses_no_acknowledged_write() {
    assert_survives_crash(3, 1, 2);
}

#[test]
fn faults_other_than_replica_crashes_are_refused_naming_the_key() {
    let refused = |faults: &str, key: &str| {
        let text = format!(
            "[chain]\nelf = \"apps/chain.elf\"\n[load]\nrates_mrps = [1.0]\nrequests = 100\n[load.kv]\n{faults}"
        );
        let e = ChainFile::parse(&text).unwrap_err();
        assert!(e.contains(key), "{faults}: {e}");
    };
    refused("[[faults]]\nkind = \"crash\"\nnode = 0\nat_us = 5.0\n", "faults.node: node 0 is the master");
    refused("[[faults]]\nkind = \"crash\"\nnode = 4\nat_us = 5.0\n", "faults.node");
    refused("[[faults]]\nkind = \"partition\"\nnodes = [1]\nfrom_us = 1.0\nto_us = 2.0\n", "faults.kind");
    refused("[[faults]]\nkind = \"crash\"\nnode = 2\nat_us = -1.0\n", "faults.at_us");
    refused("[chain]\n", "chain");
}

/// Same configuration and seed, same figures: every request's times and every
/// reconfiguration, with a crash.
#[test]
fn same_seed_same_run() {
    for nic in NICS {
        let fingerprint = || {
            let (_, r) = crash_run(nic, 3, 4);
            let times: Vec<_> = r.load.requests.iter().map(|q| (q.sent, q.replied)).collect();
            format!("{times:?}{:?}{}", r.reconfigs, r.dropped)
        };
        assert_eq!(fingerprint(), fingerprint(), "{nic:?}");
    }
}

/// A replica crashed at 0 us never preloads its store nor tells the master it is ready, and
/// the master starts the chain only once every replica has: the run is refused naming the
/// fault's key and why, not `load.start_us` (reliability2 item 24).
#[test]
fn a_replica_crashed_before_the_chain_is_ready_is_blamed_on_the_fault() {
    let f = config_on(NicKind::Nanopu, "[[faults]]\nkind = \"crash\"\nnode = 2\nat_us = 0.0\n");
    let spec = &f.specs().unwrap()[0];
    let e = chain::run(spec, &f.chain_spec().unwrap(), &f.cluster().unwrap(), &sw_build()).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("faults.at_us: node 2 crashes at 0 us, before the chain is ready"), "{e}");
    assert!(e.contains("no replica joins later") && !e.contains("load.start_us: "), "{e}");
}
