//! Issue 36's workloads over the C TCP (sw/tcp) on IceNIC nodes, checked end to end by the
//! programs themselves (docs/apps/tcp-workloads.md): several bulk flows between two nodes
//! and from several senders into one (`tcp_flows.c`), a ring all-reduce
//! (`tcp_allreduce.c`), and a RESP key-value server with pipelined clients that check every
//! reply against their model of the store (`tcp_kv.c`, `tcp_kv_client.c`); clean, under 1%
//! loss on every link and under reordering (packets sprayed over a leaf-spine's spines), and
//! the test hooks that spoil delivered data, which the checks must catch. The all-reduce and
//! the key-value store also run unchanged on ZeroNIC nodes (the same sources built with
//! `-DTCP_ZERONIC`, `*_zn.elf`: tcp.h's plain API over ZeroNIC's control path), and the
//! all-reduce on RDMA NIC nodes (`rdma_allreduce.c`: the same inputs and check over the NIC's
//! reliable connections), and the key-value store there too (`rdma_kv.c`, `rdma_kv_client.c`:
//! the same store, RESP text and checked model, each request and reply one SEND).

use crate::common;

use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::report::cluster::{summarize_cluster, ClusterSummary};
use nanopu_cluster::{Outcome, Simulation};

const PORT: u16 = 5001;

/// A node's IPv4 address as the programs take it (10.0.0.(2+n), host order).
fn ip(node: u32) -> u32 {
    0x0a00_0002 + node
}

/// The host stack a program runs on: the C TCP over IceNIC (traditional, copying), or the
/// same TCP as ZeroNIC's control path with the NIC placing and fetching payload.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stack {
    Ice,
    Zero,
}

impl Stack {
    /// The build of program `name` for this stack (sw/Makefile: TCP_APPS, TCP_ZN_PLAIN).
    fn elf(self, name: &str) -> String {
        match self {
            Stack::Ice => format!("{name}.elf"),
            Stack::Zero => format!("{name}_zn.elf"),
        }
    }

    fn nic(self) -> &'static str {
        match self {
            Stack::Ice => "icenic",
            Stack::Zero => "zeronic",
        }
    }
}

/// One `[[program]]` of a cluster file.
struct Program {
    nodes: String,
    elf: String,
    nic: &'static str,
    args: Vec<String>,
}

fn program(nodes: impl ToString, elf: &str, args: &[String]) -> Program {
    Program { nodes: nodes.to_string(), elf: elf.to_string(), nic: "icenic", args: args.to_vec() }
}

/// Program `name` (no `.elf`) built for `stack`.
fn program_on(stack: Stack, nodes: impl ToString, name: &str, args: &[String]) -> Program {
    Program { nic: stack.nic(), ..program(nodes, &stack.elf(name), args) }
}

/// The network: a star of `n` nodes, or a leaf-spine of `leaves` leaves with
/// `per_leaf` nodes each and four spines (packets sprayed over them: reordering).
#[derive(Clone, Copy)]
enum Net {
    Star(u32),
    LeafSpine { leaves: u32, per_leaf: u32 },
}

impl Net {
    fn toml(self) -> String {
        match self {
            Net::Star(n) => format!("kind = \"star\"\nnodes = {n}\n"),
            Net::LeafSpine { leaves, per_leaf } => {
                format!("kind = \"leaf-spine\"\nleaves = {leaves}\nnodes_per_leaf = {per_leaf}\nspines = 4\n")
            }
        }
    }
}

/// Run `programs` on `net` with links of `gbps` losing `loss` of their packets; every core
/// must exit (with any code: the tests judge the codes).
fn run(net: Net, gbps: f64, loss: f64, programs: &[Program]) -> ClusterSummary {
    let (outcome, s) = run_any(net, gbps, loss, programs);
    assert_eq!(outcome, Outcome::AllExited, "{}", s.text());
    s
}

/// [`run`], however it ends (a test hook's failure leaves its peers waiting).
fn run_any(net: Net, gbps: f64, loss: f64, programs: &[Program]) -> (Outcome, ClusterSummary) {
    let mut text = format!(
        "max_us = 2000000.0\n[topology]\n{}[link]\nrate_gbps = {gbps}\ndrop_prob = {loss}\n[node]\ncores = 1\n",
        net.toml()
    );
    for p in programs {
        let args: Vec<String> = p.args.iter().map(|a| format!("\"{a}\"")).collect();
        text += &format!(
            "[[program]]\nnodes = \"{}\"\nelf = \"{}\"\nnic = \"{}\"\nargs = [{}]\n",
            p.nodes,
            p.elf,
            p.nic,
            args.join(", ")
        );
    }
    let f = ClusterFile::parse(&text).unwrap();
    let mut sim = Simulation::cluster(&f, &common::sw_build().join("apps")).unwrap();
    let outcome = sim.run().unwrap();
    (outcome, summarize_cluster(&mut sim, outcome))
}

/// The console of node `n`'s core 0.
fn console(s: &ClusterSummary, n: u32) -> &str {
    let prefix = format!("node {n} core 0: ");
    let c = s.consoles.iter().find(|c| c.starts_with(&prefix));
    c.map_or("", |c| &c[prefix.len()..])
}

/// The `key=value` counters of node `n`'s line starting `what: `.
fn counters(s: &ClusterSummary, n: u32, what: &str) -> Vec<(String, u64)> {
    let tag = format!("{what}: ");
    let Some(line) = console(s, n).lines().find_map(|l| l.strip_prefix(tag.as_str())) else {
        panic!("node {n} printed no `{what}:` line: {}", s.text())
    };
    let kv = |kv: &str| kv.split_once('=').map(|(k, v)| (k.to_string(), v.parse().expect("a number")));
    line.split_whitespace().filter_map(kv).collect()
}

fn get(s: &ClusterSummary, n: u32, what: &str, key: &str) -> u64 {
    let c = counters(s, n, what);
    c.iter().find(|(k, _)| k == key).unwrap_or_else(|| panic!("no {key} in node {n}'s {what} line")).1
}

// ---- bulk flows ----

fn recv_args(flows: u32, bytes: u64, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["recv".into(), PORT.to_string(), flows.to_string(), bytes.to_string()];
    a.extend(extra.iter().map(|e| e.to_string()));
    a
}

fn send_args(to: u32, flows: u32, bytes: u64) -> Vec<String> {
    vec![format!("send:{}", ip(to)), PORT.to_string(), flows.to_string(), bytes.to_string()]
}

/// Node 0 receives `flows` flows of `bytes` from node 1 over a star.
fn two_nodes(flows: u32, bytes: u64, loss: f64, extra: &[&str]) -> ClusterSummary {
    run(Net::Star(2), 100.0, loss, &two_node_programs(flows, bytes, extra))
}

fn two_node_programs(flows: u32, bytes: u64, extra: &[&str]) -> [Program; 2] {
    [
        program(0, "tcp_flows.elf", &recv_args(flows, bytes, extra)),
        program(1, "tcp_flows.elf", &send_args(0, flows, bytes)),
    ]
}

/// Every flow's bytes arrived once and in order: both nodes exited with 0 (the receiver
/// checks every byte, each header once, each stream's end) and the counts agree.
fn assert_flows_delivered(s: &ClusterSummary, receiver: u32, flows: u32, bytes: u64) {
    assert_eq!(s.cores_ok, s.cores, "every node checked its flows and exited with 0: {}", s.text());
    assert_eq!(get(s, receiver, "flows", "flows"), u64::from(flows));
    assert_eq!(get(s, receiver, "flows", "bytes"), u64::from(flows) * bytes);
    let headers = 8 * u64::from(flows);
    assert_eq!(get(s, receiver, "tcp", "bytes_in"), u64::from(flows) * bytes + headers, "read once");
    assert_eq!(get(s, receiver, "tcp", "bad_checksums"), 0);
}

#[test]
fn one_to_eight_flows_between_two_nodes_arrive_once_and_in_order() {
    for flows in [1, 2, 4, 8] {
        let s = two_nodes(flows, 150_000, 0.0, &[]);
        assert_flows_delivered(&s, 0, flows, 150_000);
    }
}

#[test]
fn eight_flows_between_two_nodes_survive_one_percent_loss() {
    let s = two_nodes(8, 150_000, 0.01, &[]);
    assert_flows_delivered(&s, 0, 8, 150_000);
    assert!(s.fabric.drops_random > 0, "the links lost packets: {}", s.text());
    assert!(get(&s, 1, "tcp", "segs_retransmitted") > 0, "the sender resent: {}", console(&s, 1));
}

/// Four senders on one leaf, two flows each, into node 4 on the other leaf, whose
/// neighbours 5-7 send one flow each: the first leaf sprays its packets over four spines,
/// so they arrive out of order, and `loss` of all packets are lost.
fn incast_over_leaf_spine(loss: f64) -> ClusterSummary {
    let bytes = 100_000;
    let progs = [
        program(4, "tcp_flows.elf", &recv_args(11, bytes, &[])),
        program("0-3", "tcp_flows.elf", &send_args(4, 2, bytes)),
        program("5-7", "tcp_flows.elf", &send_args(4, 1, bytes)),
    ];
    let s = run(Net::LeafSpine { leaves: 2, per_leaf: 4 }, 2.0, loss, &progs);
    assert_flows_delivered(&s, 4, 11, bytes);
    s
}

#[test]
fn several_senders_into_one_receiver_arrive_once_and_in_order_reordered_and_lossy() {
    let s = incast_over_leaf_spine(0.01);
    assert!(get(&s, 4, "tcp", "ooo_segs_in") > 0, "segments arrived out of order: {}", console(&s, 4));
    assert!(s.fabric.drops_random > 0, "the links lost packets: {}", s.text());
    let resent: u64 = [0, 1, 2, 3, 5, 6, 7].map(|n| get(&s, n, "tcp", "segs_retransmitted")).iter().sum();
    assert!(resent > 0, "the senders resent: {}", s.text());
}

#[test]
fn several_senders_into_one_receiver_on_a_clean_star() {
    let progs = [
        program(0, "tcp_flows.elf", &recv_args(8, 100_000, &[])),
        program("1-8", "tcp_flows.elf", &send_args(0, 1, 100_000)),
    ];
    let s = run(Net::Star(9), 100.0, 0.0, &progs);
    assert_flows_delivered(&s, 0, 8, 100_000);
}

#[test]
fn a_dropped_or_duplicated_read_fails_the_flow_check() {
    for hook in ["dropone", "dupone"] {
        let (_, s) = run_any(Net::Star(2), 100.0, 0.0, &two_node_programs(2, 150_000, &[hook]));
        let c = console(&s, 0);
        assert!(c.contains("delivered out of order, twice"), "{hook}: the receiver's check failed: {c}");
        assert!(!c.lines().any(|l| l.starts_with("flows: ")), "{hook}: and it never reported success: {c}");
    }
    let clean = two_nodes(2, 150_000, 0.0, &[]);
    assert_flows_delivered(&clean, 0, 2, 150_000);
}

// ---- ring all-reduce ----

fn allreduce(hosts: u32, elems: u32, loss: f64) -> ClusterSummary {
    allreduce_on(Stack::Ice, hosts, elems, loss)
}

fn allreduce_on(stack: Stack, hosts: u32, elems: u32, loss: f64) -> ClusterSummary {
    let args = [hosts.to_string(), elems.to_string(), PORT.to_string()];
    let progs = [program_on(stack, format!("0-{}", hosts - 1), "tcp_allreduce", &args)];
    let s = run(Net::Star(hosts), 100.0, loss, &progs);
    assert_eq!(s.cores_ok, hosts as usize, "every rank checked every element: {}", s.text());
    for n in 0..hosts {
        assert_eq!(get(&s, n, "allreduce", "rank"), u64::from(n));
        assert_eq!(get(&s, n, "allreduce", "elems"), u64::from(elems));
        // Each rank receives 2(N-1) chunks of elems/N elements.
        let chunks = 2 * u64::from(hosts - 1);
        assert_eq!(get(&s, n, "tcp", "bytes_in"), chunks * u64::from(elems / hosts) * 8, "rank {n}");
    }
    s
}

#[test]
fn a_rank_that_skips_one_addition_fails_every_ranks_check() {
    let args = ["8".to_string(), (8 * 1024).to_string(), PORT.to_string(), "skipone".into()];
    let (_, s) = run_any(Net::Star(8), 100.0, 0.0, &[program("0-7", "tcp_allreduce.elf", &args)]);
    for n in 0..8 {
        let c = console(&s, n);
        assert!(c.contains("allreduce: rank ") && c.contains(", not "), "rank {n} found a wrong sum: {c}");
        assert!(!c.contains("allreduce: rank="), "rank {n} never reported success: {c}");
    }
}

#[test]
fn a_ring_all_reduce_over_eight_hosts_sums_every_element() {
    allreduce(8, 8 * 1024, 0.0);
}

#[test]
fn a_ring_all_reduce_over_sixteen_hosts_sums_every_element() {
    allreduce(16, 16 * 256, 0.0);
}

#[test]
fn a_ring_all_reduce_survives_one_percent_loss() {
    let s = allreduce(8, 8 * 1024, 0.01);
    assert!(s.fabric.drops_random > 0, "the links lost packets: {}", s.text());
}

// ---- key-value store ----

/// Node 0 serves `clients` clients (nodes 1..), each `requests` requests `depth` deep, on `stack`.
fn kv(stack: Stack, clients: u32, depth: u32, requests: u32, loss: f64) -> ClusterSummary {
    let progs = kv_programs(stack, clients, depth, requests, &[]);
    let (outcome, s) = run_any(Net::Star(clients + 1), 100.0, loss, &progs);
    assert_eq!(outcome, Outcome::AllExited, "{}", s.text());
    s
}

fn kv_programs(stack: Stack, clients: u32, depth: u32, requests: u32, server_extra: &[&str]) -> [Program; 2] {
    let mut sargs = vec![PORT.to_string(), clients.to_string()];
    sargs.extend(server_extra.iter().map(|e| e.to_string()));
    let cargs: Vec<String> = [format!("connect:{}", ip(0)), PORT.to_string(), depth.to_string()]
        .into_iter()
        .chain([requests, 64, 100, 50].map(|v| v.to_string()))
        .collect();
    [
        program_on(stack, 0, "tcp_kv", &sargs),
        program_on(stack, format!("1-{clients}"), "tcp_kv_client", &cargs),
    ]
}

fn assert_kv_checked(s: &ClusterSummary, clients: u32, requests: u32) {
    assert_eq!(s.cores_ok, s.cores, "every client checked every reply: {}", s.text());
    let total = u64::from(clients * requests);
    assert_eq!(get(s, 0, "kv", "requests"), total, "the server answered each request once");
    for n in 1..=clients {
        assert_eq!(get(s, n, "kvc", "requests"), u64::from(requests));
        assert!(get(s, n, "kvc", "hits") > 0, "GETs found values: {}", console(s, n));
        assert!(get(s, n, "kvc", "gets") > get(s, n, "kvc", "hits"), "and some found none");
    }
}

#[test]
fn pipelined_clients_get_every_reply_the_model_predicts() {
    for depth in [1, 8, 32] {
        let s = kv(Stack::Ice, 3, depth, 400, 0.0);
        assert_kv_checked(&s, 3, 400);
    }
}

#[test]
fn the_key_value_replies_stay_right_under_one_percent_loss() {
    let s = kv(Stack::Ice, 3, 16, 400, 0.01);
    assert_kv_checked(&s, 3, 400);
    assert!(s.fabric.drops_random > 0, "the links lost packets: {}", s.text());
}

#[test]
fn a_server_that_loses_sets_is_caught_by_the_clients_model() {
    let (_, s) = run_any(Net::Star(4), 100.0, 0.0, &kv_programs(Stack::Ice, 3, 8, 400, &["loseset"]));
    let stale =
        |n| console(&s, n).contains("not the value of the last SET") || console(&s, n).contains("null, but");
    assert!((1..=3).any(stale), "a client saw a value its model does not hold: {}", s.text());
    assert!((1..=3).all(|n| !console(&s, n).contains("kvc: ")), "no client reported success: {}", s.text());
}

#[test]
fn the_same_lossy_reordered_run_gives_the_same_counters() {
    let a = incast_over_leaf_spine(0.01);
    let b = incast_over_leaf_spine(0.01);
    assert_eq!(a.consoles, b.consoles, "the same counters, cycle for cycle");
    assert_eq!(a.fabric.drops_random, b.fabric.drops_random);
}

// ---- the same programs on ZeroNIC nodes ----

/// The run went over ZeroNIC: on every node the NIC placed every byte the program read (some
/// twice if resent) and merged every byte it sent, as the TCP's counters say.
fn assert_zeronic_moved_payload(s: &ClusterSummary, nodes: u32) {
    assert_eq!(s.zeronic.len(), nodes as usize, "every node has a ZeroNIC: {}", s.text());
    for z in &s.zeronic {
        assert!(z.bytes_placed >= get(s, z.node, "tcp", "bytes_in"), "node {}: {}", z.node, s.text());
        assert!(z.bytes_merged >= get(s, z.node, "tcp", "bytes_out"), "node {}: {}", z.node, s.text());
        assert_eq!(z.bad_checksums, 0, "node {}", z.node);
    }
}

#[test]
fn a_ring_all_reduce_over_eight_zeronic_hosts_sums_every_element() {
    let s = allreduce_on(Stack::Zero, 8, 8 * 1024, 0.0);
    assert_zeronic_moved_payload(&s, 8);
}

#[test]
fn a_ring_all_reduce_on_zeronic_survives_one_percent_loss() {
    let s = allreduce_on(Stack::Zero, 8, 8 * 1024, 0.01);
    assert!(s.fabric.drops_random > 0, "the links lost packets: {}", s.text());
    assert!((0..8).map(|n| get(&s, n, "tcp", "segs_retransmitted")).sum::<u64>() > 0, "{}", s.text());
    assert_zeronic_moved_payload(&s, 8);
}

#[test]
fn a_zeronic_rank_that_skips_one_addition_fails_the_check() {
    let args = ["8".to_string(), (8 * 1024).to_string(), PORT.to_string(), "skipone".into()];
    let (_, s) = run_any(Net::Star(8), 100.0, 0.0, &[program_on(Stack::Zero, "0-7", "tcp_allreduce", &args)]);
    for n in 0..8 {
        let c = console(&s, n);
        assert!(c.contains("allreduce: rank ") && c.contains(", not "), "rank {n} found a wrong sum: {c}");
        assert!(!c.contains("allreduce: rank="), "rank {n} never reported success: {c}");
    }
}

#[test]
fn pipelined_clients_of_a_zeronic_server_get_every_reply_the_model_predicts() {
    for depth in [1, 16] {
        let s = kv(Stack::Zero, 3, depth, 400, 0.0);
        assert_kv_checked(&s, 3, 400);
        assert_zeronic_moved_payload(&s, 4);
    }
}

#[test]
fn zeronic_key_value_replies_stay_right_under_one_percent_loss() {
    let s = kv(Stack::Zero, 3, 16, 400, 0.01);
    assert_kv_checked(&s, 3, 400);
    assert!(s.fabric.drops_random > 0, "the links lost packets: {}", s.text());
}

#[test]
fn a_zeronic_server_that_loses_sets_is_caught() {
    let (_, s) = run_any(Net::Star(4), 100.0, 0.0, &kv_programs(Stack::Zero, 3, 8, 400, &["loseset"]));
    let stale =
        |n| console(&s, n).contains("not the value of the last SET") || console(&s, n).contains("null, but");
    assert!((1..=3).any(stale), "a client saw a value its model does not hold: {}", s.text());
    assert!((1..=3).all(|n| !console(&s, n).contains("kvc: ")), "no client reported success: {}", s.text());
}

// ---- the ring all-reduce on RDMA NIC nodes ----

fn rdma_allreduce_programs(hosts: u32, elems: u32, extra: &[&str]) -> [Program; 1] {
    let mut args = vec![hosts.to_string(), elems.to_string()];
    args.extend(extra.iter().map(|e| e.to_string()));
    let p = program(format!("0-{}", hosts - 1), "rdma_allreduce.elf", &args);
    [Program { nic: "rdma", ..p }]
}

fn rdma_allreduce(hosts: u32, elems: u32, loss: f64) -> ClusterSummary {
    let s = run(Net::Star(hosts), 100.0, loss, &rdma_allreduce_programs(hosts, elems, &[]));
    assert_eq!(s.cores_ok, hosts as usize, "every rank checked every element: {}", s.text());
    let bytes = 2 * u64::from(hosts - 1) * u64::from(elems / hosts) * 8;
    for n in 0..hosts {
        assert_eq!(get(&s, n, "allreduce", "rank"), u64::from(n));
        assert_eq!(get(&s, n, "rdma", "bytes_in"), bytes, "rank {n} received 2(N-1) chunks");
        assert_eq!(get(&s, n, "rdma", "bytes_out"), bytes, "rank {n} sent 2(N-1) chunks");
    }
    s
}

#[test]
fn a_ring_all_reduce_over_eight_rdma_hosts_sums_every_element() {
    let s = rdma_allreduce(8, 8 * 1024, 0.0);
    let r = s.rdma.as_ref().expect("RDMA NIC totals");
    assert_eq!((r.nodes, r.retransmitted), (8, 0), "{}", s.text());
}

#[test]
fn a_ring_all_reduce_on_rdma_survives_one_percent_loss() {
    let s = rdma_allreduce(8, 8 * 1024, 0.01);
    assert!(s.fabric.drops_random > 0, "the links lost packets: {}", s.text());
    assert!(s.rdma.as_ref().unwrap().retransmitted > 0, "go-back-N resent: {}", s.text());
}

#[test]
fn an_rdma_rank_that_skips_one_addition_fails_every_ranks_check() {
    let (_, s) = run_any(Net::Star(8), 100.0, 0.0, &rdma_allreduce_programs(8, 8 * 1024, &["skipone"]));
    for n in 0..8 {
        let c = console(&s, n);
        assert!(c.contains("an element is wrong"), "rank {n} found a wrong sum: {c}");
        assert!(!c.contains("allreduce: rank="), "rank {n} never reported success: {c}");
    }
}

// ---- the key-value store on RDMA NIC nodes ----

/// `rdma_kv.c` on node 0 serving `clients` `rdma_kv_client.c`s (nodes 1..), each `requests`
/// requests `depth` deep: the same store, RESP text and checked model as the TCP programs,
/// every request and reply one SEND.
fn rdma_kv_programs(clients: u32, depth: u32, requests: u32, server_extra: &[&str]) -> [Program; 2] {
    let mut sargs = vec![clients.to_string()];
    sargs.extend(server_extra.iter().map(|e| e.to_string()));
    let cargs = [depth, requests, 64, 100, 50].map(|v| v.to_string());
    let server = program(0, "rdma_kv.elf", &sargs);
    let client = program(format!("1-{clients}"), "rdma_kv_client.elf", &cargs);
    [Program { nic: "rdma", ..server }, Program { nic: "rdma", ..client }]
}

fn rdma_kv(clients: u32, depth: u32, requests: u32, loss: f64) -> ClusterSummary {
    let s = run(Net::Star(clients + 1), 100.0, loss, &rdma_kv_programs(clients, depth, requests, &[]));
    assert_kv_checked(&s, clients, requests);
    for n in 1..=clients {
        // Each request and its reply is one SEND; QUIT is one more of each.
        assert_eq!(get(&s, n, "rdma", "completions"), 2 * u64::from(requests + 1) + 1, "{}", console(&s, n));
    }
    s
}

#[test]
fn pipelined_clients_of_an_rdma_server_get_every_reply_the_model_predicts() {
    for depth in [1, 8, 32] {
        let s = rdma_kv(3, depth, 400, 0.0);
        let r = s.rdma.as_ref().expect("RDMA NIC totals");
        assert_eq!((r.nodes, r.retransmitted), (4, 0), "{}", s.text());
    }
}

#[test]
fn rdma_key_value_replies_stay_right_under_one_percent_loss() {
    let s = rdma_kv(3, 16, 400, 0.01);
    assert!(s.fabric.drops_random > 0, "the links lost packets: {}", s.text());
    assert!(s.rdma.as_ref().unwrap().retransmitted > 0, "go-back-N resent: {}", s.text());
}

#[test]
fn an_rdma_server_that_loses_sets_is_caught() {
    let (_, s) = run_any(Net::Star(4), 100.0, 0.0, &rdma_kv_programs(3, 8, 400, &["loseset"]));
    let stale =
        |n| console(&s, n).contains("not the value of the last SET") || console(&s, n).contains("null, but");
    assert!((1..=3).any(stale), "a client saw a value its model does not hold: {}", s.text());
    assert!((1..=3).all(|n| !console(&s, n).contains("kvc: ")), "no client reported success: {}", s.text());
}
