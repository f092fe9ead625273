//! IceNIC nodes in clusters (docs/models/icenic.md "Clusters"): their raw frames travel the
//! fabric beside the nanoPU transport's packets, routed by destination IPv4; frames that
//! reach no node or a nanoPU node are counted; partitioned runs are identical whatever the
//! thread count.

use crate::common;

use common::sw_build;
use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::net::frame::{udp_frame, Ends};
use nanopu_cluster::report::cluster::{summarize_cluster, ClusterSummary};
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_sim::packet::HOST_IP;
use nanopu_sim::Time;

/// A cluster file: `topology` and `[[program]]` tables after the common keys (programs by
/// name in sw/build/apps).
fn cluster(topology: &str, programs: &str) -> Simulation {
    let text = format!("max_us = 200.0\n[topology]\n{topology}\n[node]\ncores = 1\n{programs}");
    let f = ClusterFile::parse(&text).unwrap();
    Simulation::cluster(&f, &sw_build().join("apps")).unwrap()
}

fn program(nodes: &str, elf: &str, nic: &str, args: &[&str]) -> String {
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    format!("[[program]]\nnodes = {nodes:?}\nelf = {elf:?}\nnic = {nic:?}\nargs = [{}]\n", args.join(", "))
}

fn run(sim: &mut Simulation) -> ClusterSummary {
    let outcome = sim.run().unwrap();
    let s = summarize_cluster(sim, outcome);
    assert_eq!(outcome, Outcome::AllExited, "{}", s.text());
    s
}

fn console_has(s: &ClusterSummary, node: u32, text: &str) -> bool {
    s.consoles.iter().any(|c| c.starts_with(&format!("node {node} core 0: ")) && c.contains(text))
}

#[test]
fn two_icenic_nodes_exchange_frames_through_a_switch() {
    let mut sim =
        cluster("kind = \"star\"\nnodes = 2", &program("all", "ice_pingpong.elf", "icenic", &["20", "64"]));
    sim.capture_at("node:0").unwrap();
    let s = run(&mut sim);
    assert_eq!(s.cores_ok, 2, "{}", s.text());
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    let ice = s.icenic.as_ref().expect("IceNIC totals");
    assert_eq!((ice.nodes, ice.frames_sent, ice.frames_received), (2, 40, 40), "{}", s.text());
    assert_eq!(s.fabric.packet_hops, 80, "each frame crosses two links");
    assert_eq!((s.messages_sent, s.transport.data_packets_sent), (0, 0), "no transport involved");
    assert!(console_has(&s, 0, "round trip") && console_has(&s, 1, "one way"), "{:?}", s.consoles);
    // The capture holds the frames as they are: 64 bytes, IPv4/UDP between the two nodes.
    let pcap = sim.write_capture(Vec::new()).unwrap();
    let frames = nanopu_net::pcap::read_pcap(&pcap).unwrap();
    assert_eq!(frames.len(), 40, "node 0 sent 20 and received 20");
    let first = &frames[0].1;
    assert_eq!(first.len(), 64);
    assert_eq!(&first[12..14], &[0x08, 0x00]);
    assert_eq!((&first[26..30], &first[30..34]), (&[10, 0, 0, 2][..], &[10, 0, 0, 3][..]));
}

#[test]
fn an_icenic_pair_and_a_nanopu_pair_share_one_network() {
    let programs = program("0-1", "pingpong.elf", "nanopu", &["8"])
        + &program("2-3", "ice_pingpong.elf", "icenic", &["10", "64"]);
    let mut sim = cluster("kind = \"star\"\nnodes = 4", &programs);
    let s = run(&mut sim);
    assert_eq!(s.cores_ok, 4, "{}", s.text());
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    assert_eq!((s.messages_sent, s.messages_delivered), (2, 2), "the nanoPU pair's ping and pong");
    let ice = s.icenic.as_ref().unwrap();
    assert_eq!((ice.nodes, ice.frames_sent, ice.frames_received), (2, 20, 20));
    assert_eq!(ice.strays, Default::default(), "nothing reached the wrong kind of NIC");
    assert!(console_has(&s, 0, "round trip") && console_has(&s, 0, "ok"), "{:?}", s.consoles);
    assert!(console_has(&s, 2, "round trip") && console_has(&s, 3, "one way"), "{:?}", s.consoles);
}

/// A frame from 10.0.0.1 to `dst`, 64 bytes.
fn host_frame(dst: u32) -> Vec<u8> {
    let from = Ends { mac: 0x0200_0a00_0001, ip: HOST_IP, port: 7000 };
    let to = Ends { mac: 0x0200_0a00_0000 | (dst & 0xff) as u64, ip: dst, port: 9000 };
    udp_frame(from, to, &[0x5a; 22])
}

#[test]
fn frames_to_no_node_or_to_a_nanopu_node_are_counted_and_reported() {
    let programs = program("0-1", "ice_pingpong.elf", "icenic", &["2", "64"])
        + &program("2", "pingpong.elf", "nanopu", &[]);
    let mut sim = cluster("kind = \"star\"\nnodes = 3", &programs);
    sim.host.send_frame_at(Time::from_us(1), host_frame(0x0a00_0063)); // 10.0.0.99: no node
    sim.host.send_frame_at(Time::from_us(1), host_frame(0x0a00_0004)); // node 2, nanoPU
    let s = run(&mut sim);
    assert_eq!(s.cores_ok, 3, "the IceNIC pair is not disturbed: {}", s.text());
    let ice = s.icenic.as_ref().unwrap();
    assert_eq!((ice.fabric_no_route, ice.strays.frames_at_nanopu_nodes), (1, 1), "{}", s.text());
    assert_eq!(s.fabric.drops_no_route, 1);
    let problems = s.problems.join("\n");
    assert!(
        problems.contains("1 packets were dropped for want of a route (1 of them IceNIC frames)"),
        "{problems}"
    );
    assert!(
        problems.contains("10.0.0.99") && problems.contains("1 IceNIC frames reached nanoPU nodes"),
        "{problems}"
    );
}

#[test]
fn transport_packets_to_an_icenic_node_are_counted() {
    let programs = program("0-1", "ice_pingpong.elf", "icenic", &["2", "64"]);
    let mut sim = cluster("kind = \"star\"\nnodes = 2", &programs);
    let msg = nanopu_cluster::host::TestHost::message(0, 0x0a00_0002, 0, &[1, 2]);
    sim.host.send_at(Time::from_us(1), msg);
    sim.set_deadline(Time::from_us(30));
    let outcome = sim.run().unwrap();
    let s = summarize_cluster(&mut sim, outcome);
    let ice = s.icenic.as_ref().unwrap();
    assert!(ice.strays.transport_at_icenic_nodes >= 1, "{}", s.text());
    assert!(
        s.problems.iter().any(|p| p.contains("transport packets reached IceNIC nodes")),
        "{:?}",
        s.problems
    );
    assert_eq!(ice.frames_received, 4, "the pair's own frames all arrived");
}

/// Three leaves of two nodes: a nanoPU pair on leaf 0 and two IceNIC pairs whose frames
/// cross the spine between leaves 1 and 2 (so between partitions), captured at the spine.
fn mixed_leaf_spine(threads: usize) -> (String, Vec<u8>) {
    let ice = |node: &str, peer: &str| program(node, "ice_pingpong.elf", "icenic", &["15", "200", peer]);
    let programs = program("0-1", "pingpong.elf", "nanopu", &["16"])
        + &ice("2", "4")
        + &ice("4", "2")
        + &ice("3", "5")
        + &ice("5", "3");
    let mut sim = cluster("kind = \"leaf-spine\"\nnodes_per_leaf = 2\nleaves = 3\nspines = 1", &programs);
    assert_eq!(sim.partitions(), 3, "one partition per leaf");
    sim.set_threads(threads);
    sim.capture_at("switch:3:1").unwrap();
    let s = run(&mut sim);
    assert_eq!(s.cores_ok, 6, "{}", s.text());
    let pcap = sim.write_capture(Vec::new()).unwrap();
    (serde_json::to_string(&s).unwrap(), pcap)
}

#[test]
fn frames_crossing_partitions_are_identical_with_1_2_and_3_threads() {
    let one = mixed_leaf_spine(1);
    assert_eq!(
        nanopu_net::pcap::read_pcap(&one.1).unwrap().len(),
        60,
        "30 frames each way at the spine's port to leaf 1"
    );
    assert_eq!(one, mixed_leaf_spine(2), "1 and 2 threads differ");
    assert_eq!(one, mixed_leaf_spine(3), "1 and 3 threads differ");
}

/// A crashed IceNIC node takes no frame and sends none, as a crashed nanoPU node (the
/// fabric's cut of a crashed node, docs/faults.md): of 20 frames sent to an echo server 1 us
/// apart, with its node crashing after the eleventh arrived, only those reach its NIC and
/// are echoed (chain replication's crash runs on IceNIC rely on it).
#[test]
fn a_crashed_icenic_node_takes_no_frame() {
    let crash = "[[faults]]\nkind = \"crash\"\nnode = 1\nat_us = 10.5\n";
    let programs = program("all", "ice_loopback.elf", "icenic", &["0", "1"]) + crash;
    let mut sim = cluster("kind = \"star\"\nnodes = 2", &programs);
    for i in 0..20 {
        sim.host.send_frame_at(Time::from_us(i) + Time::from_ns(100), host_frame(0x0a00_0003));
    }
    sim.set_deadline(Time::from_us(40));
    sim.run().unwrap();
    let ice = sim.nodes[1].ice().unwrap();
    assert_eq!(ice.counters.frames_received, 11, "frames sent at 0.1..10.1 us");
    assert_eq!(sim.host.frames_received.len(), 11, "echoes, none after the crash");
    assert!(sim.host.frames_received.iter().all(|f| f.time < Time::from_us(11)));
}
