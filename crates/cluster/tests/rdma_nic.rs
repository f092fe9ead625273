//! RDMA NIC nodes in clusters (docs/models/rdma-nic.md): `rdma_bulk.elf` moves bytes
//! between nodes over the NIC's reliable connections and checks every byte at the
//! receiver; under 1% loss on every link and reordering from per-packet spraying, every
//! byte still arrives once and in order, repaired by go-back-N; a NIC that skips a gap or
//! replays a duplicate is caught by the same checks. Several senders into one receiver
//! (incast) put every byte in its sender's range.

use crate::common;

use common::sw_build;
use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::report::cluster::{summarize_cluster, ClusterSummary};
use nanopu_cluster::Simulation;
use nanopu_nic::rdma::{Mutant, RdmaCounters};

/// 10.0.0.2 + n, as rdma_bulk takes a peer's address.
fn ip(n: u32) -> String {
    (0x0a00_0002u32 + n).to_string()
}

/// Node `from` sends `bytes` to node `to` on `qps` QPs (`op`: "write" or "send").
fn pair(from: u32, to: u32, bytes: u64, qps: u32, op: &str, msg: u64) -> String {
    pair_keys(from, to, (bytes, qps, op, msg), "")
}

/// `pair` with more `[[program]]` keys for both ends.
fn pair_keys(from: u32, to: u32, (bytes, qps, op, msg): (u64, u32, &str, u64), keys: &str) -> String {
    let prog = |n: u32, role: &str, peer: u32| {
        format!(
            "[[program]]\nnodes = \"{n}\"\nelf = \"rdma_bulk.elf\"\nnic = \"rdma\"\n{keys}\
             args = [\"{role}\", \"{}\", \"{bytes}\", \"{qps}\", \"{op}\", \"{msg}\"]\n",
            ip(peer)
        )
    };
    prog(to, "recv", from) + &prog(from, "send", to)
}

/// A cluster: `topology` keys, every link losing `drop_prob` of its packets, `programs`.
fn cluster(topology: &str, drop_prob: f64, seed: u64, programs: &str) -> Simulation {
    cluster_with(topology, drop_prob, seed, "", programs)
}

/// `cluster` with more `[switch]` keys.
fn cluster_with(topology: &str, drop_prob: f64, seed: u64, switch: &str, programs: &str) -> Simulation {
    cluster_at(100.0, topology, drop_prob, seed, switch, programs)
}

/// `cluster_with` at `gbps` on every link.
fn cluster_at(
    gbps: f64,
    topology: &str,
    drop_prob: f64,
    seed: u64,
    switch: &str,
    programs: &str,
) -> Simulation {
    let text = format!(
        "max_us = 200000.0\nseed = {seed}\n[topology]\n{topology}\n[link]\nrate_gbps = {gbps}\n\
         drop_prob = {drop_prob}\n[switch]\nuplink = \"spray\"\n{switch}[node]\ncores = 1\n{programs}"
    );
    let f = ClusterFile::parse(&text).unwrap();
    Simulation::cluster(&f, &sw_build().join("apps")).unwrap()
}

/// Two nodes on each of two leaves, two spines sprayed per packet: nodes 0 and 1 send to
/// nodes 2 and 3 at once, so the uplinks' queues differ and a flow's packets overtake
/// each other.
const LEAF_SPINE: &str = "kind = \"leaf-spine\"\nnodes_per_leaf = 2\nleaves = 2\nspines = 2";

fn crossing(op: &str, drop_prob: f64, seed: u64) -> Simulation {
    let programs = pair(0, 2, 600_000, 2, op, 32_768) + &pair(1, 3, 600_000, 2, op, 32_768);
    cluster(LEAF_SPINE, drop_prob, seed, &programs)
}

fn run(sim: &mut Simulation) -> ClusterSummary {
    let outcome = sim.run().unwrap();
    summarize_cluster(sim, outcome)
}

/// Every node exited with 0: each receiver found every byte in place, each message whole
/// and in order (rdma_bulk exits 2 otherwise).
fn assert_all_checked(s: &ClusterSummary) {
    assert_eq!(s.cores_ok, s.cores, "every transfer checked: {}", s.text());
    let recvs =
        s.consoles.iter().filter(|c| c.contains("rdma: role=recv") && c.contains("checked=1")).count();
    assert_eq!(recvs * 2, s.cores, "each receiver reported: {:?}", s.consoles);
}

fn counters(sim: &Simulation) -> RdmaCounters {
    let mut t = RdmaCounters::default();
    for c in sim.nodes.iter().filter_map(|n| n.nic.rdma()).map(|r| &r.counters) {
        t.retransmitted += c.retransmitted;
        t.out_of_sequence += c.out_of_sequence;
        t.naks_received += c.naks_received;
        t.timeouts += c.timeouts;
        t.duplicates += c.duplicates;
        t.data_packets_sent += c.data_packets_sent;
    }
    t
}

#[test]
fn a_clean_star_delivers_every_byte_without_retransmitting() {
    let mut sim = cluster("kind = \"star\"\nnodes = 2", 0.0, 1, &pair(1, 0, 1_000_000, 4, "write", 65_536));
    let s = run(&mut sim);
    assert_eq!(sim.nodes.len(), 2);
    assert_eq!(s.cores_ok, 2, "{}", s.text());
    let c = counters(&sim);
    assert_eq!((c.retransmitted, c.timeouts, c.out_of_sequence), (0, 0, 0), "{c:?}");
    // 1,000,000 bytes in 4,096-byte packets (16 WRs of 64 KiB, each ending short).
    assert!(c.data_packets_sent >= 245, "{c:?}");
}

#[test]
fn spraying_reorders_and_go_back_n_repairs_it() {
    let mut sim = crossing("write", 0.0, 1);
    let s = run(&mut sim);
    assert_all_checked(&s);
    let c = counters(&sim);
    assert!(c.out_of_sequence > 0, "packets overtook each other: {c:?}");
    assert!(c.retransmitted > 0 && c.naks_received > 0, "a reordered packet looks lost to go-back-N: {c:?}");
}

#[test]
fn every_byte_arrives_once_and_in_order_under_one_percent_loss_and_reordering() {
    for (op, seed) in [("write", 1), ("write", 2), ("send", 3), ("send", 4)] {
        let mut sim = crossing(op, 0.01, seed);
        let s = run(&mut sim);
        assert!(s.fabric.drops > 0, "{op} seed {seed}: the fabric lost packets: {}", s.text());
        assert_all_checked(&s);
        let c = counters(&sim);
        assert!(c.retransmitted > 0 && c.naks_received > 0, "{op} seed {seed}: go-back-N resent: {c:?}");
    }
}

/// `crossing` with every node's NIC a mutant: a receiver's check must fail (rdma_bulk
/// exits 2 naming a wrong byte, or a message out of order or of the wrong length).
fn mutant_caught(m: Mutant, op: &str) -> bool {
    (1..=3).any(|seed| {
        let mut sim = crossing(op, 0.01, seed);
        sim.nodes.iter_mut().filter_map(|n| n.nic.rdma_mut()).for_each(|r| r.mutant = m);
        // A mutant may also place a packet where no memory is (the run stops with that
        // error): not the check's catch, so that seed does not count.
        let Ok(outcome) = sim.run() else { return false };
        let s = summarize_cluster(&mut sim, outcome);
        s.failures.iter().any(|f| f.contains("byte is wrong") || f.contains("out of order"))
    })
}

#[test]
fn a_nic_that_skips_a_lost_packet_is_caught() {
    assert!(mutant_caught(Mutant::AcceptGaps, "write"));
    assert!(mutant_caught(Mutant::AcceptGaps, "send"));
}

#[test]
fn a_nic_that_replays_a_duplicate_is_caught() {
    assert!(mutant_caught(Mutant::ReplayDuplicates, "write"));
}

/// Nodes 0 and 1 (leaf 0) write to nodes 2 and 3 (leaf 1) at once over leaf 0's one
/// uplink, whose data band holds 40 KiB: twice its rate arrives, and its queue overflows
/// unless PFC pauses the senders.
fn shared_uplink(pfc: bool) -> (Simulation, ClusterSummary) {
    let programs = pair(0, 2, 1_000_000, 1, "write", 65_536) + &pair(1, 3, 1_000_000, 1, "write", 65_536);
    let band = "band_bytes = [65536, 40960]\n";
    let keys = match pfc {
        true => format!("{band}pfc = true\npfc_xoff_bytes = 16384\npfc_xon_bytes = 8192\n"),
        false => band.to_string(),
    };
    let topology = "kind = \"leaf-spine\"\nnodes_per_leaf = 2\nleaves = 2\nspines = 1";
    let mut sim = cluster_with(topology, 0.0, 1, &keys, &programs);
    let s = run(&mut sim);
    (sim, s)
}

#[test]
fn pfc_turns_congestion_loss_into_pauses() {
    let (lossy_sim, lossy) = shared_uplink(false);
    assert_all_checked(&lossy);
    assert!(lossy.fabric.drops > 0, "without PFC the shared uplink drops: {}", lossy.text());
    assert!(counters(&lossy_sim).retransmitted > 0);
    let (sim, s) = shared_uplink(true);
    assert_all_checked(&s);
    assert_eq!(s.fabric.drops, 0, "PFC keeps the fabric lossless: {}", s.text());
    let stats = sim.net_stats().expect("a cluster");
    assert!(stats.pfc_pauses > 0 && stats.pfc_resumes > 0, "{stats:?}");
    assert_eq!(counters(&sim).retransmitted, 0, "nothing lost, nothing resent");
}

/// Nodes 1..=n each send `bytes` to node 0 on `qps` QPs of their own (incast): sender i is
/// node 0's peer i-1, its bytes at offset (i-1) x `bytes` there.
fn incast(n: u32, bytes: u64, qps: u32, op: &str) -> String {
    let prog = |node: u32, args: String| {
        format!("[[program]]\nnodes = \"{node}\"\nelf = \"rdma_bulk.elf\"\nnic = \"rdma\"\nargs = [{args}]\n")
    };
    let common = format!("\"{bytes}\", \"{qps}\", \"{op}\", \"65536\"");
    let mut text = prog(0, format!("\"recv\", \"{}\", {common}, \"peers={n}\"", ip(1)));
    for i in 1..=n {
        text += &prog(i, format!("\"send\", \"{}\", {common}, \"index={}\"", ip(0), i - 1));
    }
    text
}

#[test]
fn several_senders_into_one_receiver_put_every_byte_in_its_place() {
    // Seeds whose 1% loss hits these short runs (seed 3 loses nothing of the SENDs' 721 hops).
    for (n, op, loss, seed) in
        [(4, "write", 0.0, 1), (4, "send", 0.0, 1), (3, "write", 0.01, 1), (3, "send", 0.01, 2)]
    {
        let star = format!("kind = \"star\"\nnodes = {}", n + 1);
        let mut sim = cluster(&star, loss, seed, &incast(n, 300_000, 2, op));
        let s = run(&mut sim);
        assert_eq!(s.cores_ok, s.cores, "{op} {n} senders, loss {loss}: every byte checked: {}", s.text());
        let want = format!("rdma: role=recv bytes={} peers={n} qps=2", u64::from(n) * 300_000);
        assert!(s.consoles[0].contains(&want) && s.consoles[0].contains("checked=1"), "{}", s.consoles[0]);
        if loss > 0.0 {
            assert!(
                s.fabric.drops_random > 0 && counters(&sim).retransmitted > 0,
                "go-back-N resent: {}",
                s.text()
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let (mut a, mut b) = (crossing("send", 0.01, 5), crossing("send", 0.01, 5));
    let (sa, sb) = (run(&mut a), run(&mut b));
    assert_all_checked(&sa);
    assert_eq!(sa.consoles, sb.consoles, "the same cycles, counter for counter");
    assert_eq!(sa.rdma, sb.rdma);
    assert_eq!(a.net_stats(), b.net_stats());
}

/// experiments/host-stacks' failed run (RDMA, 5 Gb/s, hashed uplinks), made small: nodes 0
/// and 1 write 400,000 bytes each to nodes 2 and 3 through leaf 0's one uplink, twice its
/// rate offered, with the default data band (80 KiB: 131 us of sending at 5 Gb/s, as long
/// as the default local ACK timeout). `keys`: more `[[program]]` keys, `switch`: `[switch]`'s.
fn shared_uplink_5g(keys: &str, switch: &str) -> (Simulation, ClusterSummary) {
    let w = (400_000, 1, "write", 65_536);
    let programs = pair_keys(0, 2, w, keys) + &pair_keys(1, 3, w, keys);
    let topology = "kind = \"leaf-spine\"\nnodes_per_leaf = 2\nleaves = 2\nspines = 1";
    let mut sim = cluster_at(5.0, topology, 0.0, 1, switch, &programs);
    let s = run(&mut sim);
    (sim, s)
}

/// Node `n`'s NIC counters.
fn node_counters(sim: &Simulation, n: usize) -> RdmaCounters {
    sim.nodes[n].nic.rdma().expect("an RDMA node").counters.clone()
}

#[test]
fn a_flow_locked_out_of_a_full_queue_exhausts_its_retries() {
    // docs/models/rdma-nic.md "Lock-out": both senders send back to back at the rate the
    // uplink drains, node 1's frames reach the full queue just before node 0's, so node 1's
    // take every place a departure frees and node 0's are dropped. Node 0's QP sees no
    // ACK and no NAK (its receiver gets nothing past a gap to NAK): only its timer, which
    // expires retry_cnt + 1 times without progress.
    let (sim, s) = shared_uplink_5g("", "");
    let failed = "node 0 core 0: rdma: node 0: a work request failed (status 2, ";
    assert!(s.consoles.iter().any(|c| c.starts_with(failed)), "RETRY_EXC_ERR: {:?}", s.consoles);
    assert!(s
        .consoles
        .iter()
        .any(|c| c.starts_with("node 3 core 0: rdma: role=recv") && c.contains("checked=1")));
    let (tx0, rx2, tx1, rx3) =
        (node_counters(&sim, 0), node_counters(&sim, 2), node_counters(&sim, 1), node_counters(&sim, 3));
    assert!(tx0.timeouts > sim.nodes[0].nic.rdma().unwrap().params().retry_cnt as u64, "{tx0:?}");
    assert!(s.fabric.drops > 0 && s.fabric.drops_band_full == s.fabric.drops, "{}", s.text());
    // Node 0's requests reach its receiver far less often than node 1's reach theirs.
    let share =
        |rx: &RdmaCounters, tx: &RdmaCounters| rx.packets_received as f64 / tx.data_packets_sent as f64;
    assert!(share(&rx2, &tx0) < 0.5 * share(&rx3, &tx1), "locked out: {tx0:?} {rx2:?} {tx1:?} {rx3:?}");
}

#[test]
fn retries_that_outlast_the_other_flow_or_pfc_let_both_flows_finish() {
    // The same run with the local ACK timeout doubled: 8 retries now span 2.1 ms, more than
    // the winning flow's 400,000 bytes take (0.64 ms at 5 Gb/s), so the locked-out QP is
    // still retrying when the queue frees; and with PFC (the fabric RoCE expects), which
    // pauses the senders instead of dropping: every byte of both flows arrives.
    let (_, s) = shared_uplink_5g("rdma_ack_timeout_exp = 6\n", "");
    assert_all_checked(&s);
    let (sim, s) = shared_uplink_5g("", "pfc = true\n");
    assert_all_checked(&s);
    assert_eq!(s.fabric.drops, 0, "{}", s.text());
    assert_eq!(counters(&sim).timeouts, 0);
}
