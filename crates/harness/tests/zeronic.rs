//! ZeroNIC nodes (docs/models/zeronic.md): the C TCP as the control path on hart 0, the
//! application on hart 1 reading and writing payload where the NIC places and fetches it
//! (`tcp_zbulk.elf`). Every byte both ways once and in order under loss and reordering,
//! against smoltcp on the test host and between two ZeroNIC nodes; the payload bytes the
//! control core touches, counted by the simulator, are 0 while the application core's are
//! exactly the bytes it checked and wrote; a control path without reassembly is caught;
//! several tagged flows, from one sender or from several (incast), each checked in its own
//! ring.

use crate::common;

use nanopu_cluster::config::NicKind;
use nanopu_cluster::{Outcome, Simulation};
use nanopu_harness::clients::tcp::{Opener, Params, Peer};
use nanopu_nic::zeronic::ZeroCounters;
use nanopu_sim::Time;

const START: Time = Time::from_us(20);
const PORT: u16 = 5001;
/// The host's link: smoltcp's minimum RTO is 10 ms, so what is lost should be what the test
/// injects (docs/apps/tcp.md "Speed"); hart 1 checks bytes one at a time.
const GBPS: u64 = 2;

struct Run {
    exits: [Option<i64>; 2],
    console: String,
    host: nanopu_harness::clients::tcp::Outcome,
    nic: ZeroCounters,
    /// Payload bytes (in registered regions) each core loaded or stored.
    touched: [u64; 2],
    lost: [u64; 2],
    delayed: [u64; 2],
}

fn counter(console: &str, key: &str) -> u64 {
    let line = console.lines().find_map(|l| l.strip_prefix("tcp: ")).expect("the counters line");
    let kv = line.split_whitespace().find_map(|kv| kv.strip_prefix(&format!("{key}=")[..]));
    kv.unwrap_or_else(|| panic!("no {key}: {console}")).parse().unwrap()
}

/// `elf` on a two-core ZeroNIC node listening; smoltcp opens, sends `to_node` bytes and
/// takes `from_node`; the host's link loses `loss` of the frames each way and holds back
/// `reorder` of them by up to 10 us.
fn run(elf: &str, cores: usize, (to_node, from_node): (u64, u64), loss: f64, reorder: f64) -> Run {
    let args = vec!["listen".into(), PORT.to_string(), to_node.to_string(), from_node.to_string()];
    let mut cfg = common::server_node(NicKind::Zeronic, cores, args);
    cfg.port.rate_bps = GBPS * 1_000_000_000;
    cfg.max_cycles = 1 << 37;
    let mut sim = Simulation::new(&common::elf(elf), cfg).unwrap();
    if loss > 0.0 {
        // Seed 9: with 7, after the control path began coalescing (tcp_gro.c) the frames the
        // link lost from the node were all ACKs, and no resend from registered memory was
        // exercised; 9 loses some of its data segments.
        sim.host.lose_frames(loss, 9);
    }
    if reorder > 0.0 {
        sim.host.reorder_frames(reorder, Time::from_us(10), 7);
    }
    let p = Params {
        node: 0,
        port: PORT,
        opener: Opener::Host,
        to_node,
        from_node,
        buffer: 128 << 10,
        linger: Time::ZERO,
    };
    let peer = Peer::new(p).attach(&mut sim.host, START);
    let outcome = sim.run().unwrap();
    let node = &mut sim.nodes[0];
    let mut console = String::new();
    for c in node.cores.iter_mut() {
        console += &String::from_utf8_lossy(&c.take_console());
    }
    let exit = |i: usize| node.cores.get(i).and_then(|c| c.halted());
    let touched = |i: usize| node.cores.get(i).map_or(0, |c| c.watched_bytes());
    let run = Run {
        exits: [exit(0), exit(1)],
        nic: node.nic.zero().expect("a ZeroNIC node").counters.clone(),
        touched: [touched(0), touched(1)],
        host: peer.lock().unwrap().outcome.clone(),
        lost: sim.host.frames_lost,
        delayed: sim.host.frames_delayed,
        console,
    };
    assert!(outcome == Outcome::AllExited || run.exits[1] != Some(0), "{outcome:?}: {}", run.console);
    run
}

fn assert_delivered(r: &Run, to_node: u64, from_node: u64) {
    assert_eq!(r.exits, [Some(0), Some(0)], "both harts finished: {}", r.console);
    assert!(
        r.console.contains(&format!("app checked {to_node} bytes in, wrote {from_node} out")),
        "{}",
        r.console
    );
    assert_eq!(r.host.first_wrong, None, "the host got the node's bytes in order: {}", r.console);
    assert_eq!(
        (r.host.received, r.host.eof),
        (from_node, true),
        "every byte once, then the FIN: {}",
        r.console
    );
    assert_eq!(counter(&r.console, "bytes_in"), to_node);
    assert_eq!(counter(&r.console, "bad_checksums"), 0);
}

#[test]
fn every_byte_arrives_once_and_in_order_under_loss_and_reordering() {
    let (to, from) = (300_000, 200_000);
    let r = run("apps/tcp_zbulk.elf", 2, (to, from), 0.01, 0.05);
    assert_delivered(&r, to, from);
    assert!(
        r.lost.iter().sum::<u64>() > 0 && r.delayed.iter().sum::<u64>() > 0,
        "the link lost and reordered"
    );
    assert!(r.nic.bytes_placed >= to, "the NIC placed every byte, some twice: {:?}", r.nic);
    assert!(r.nic.bytes_merged >= from, "the NIC merged every byte sent: {:?}", r.nic);
    assert!(counter(&r.console, "ooo_segs_in") > 0, "segments arrived out of order: {}", r.console);
    assert!(
        counter(&r.console, "segs_retransmitted") > 0,
        "the node resent from registered memory: {}",
        r.console
    );
}

#[test]
fn the_control_core_touches_no_payload_byte() {
    let (to, from) = (100_000, 100_000);
    let r = run("apps/tcp_zbulk.elf", 2, (to, from), 0.01, 0.05);
    assert_delivered(&r, to, from);
    assert_eq!(r.touched[0], 0, "the control path (hart 0) loaded or stored payload: {:?}", r.touched);
    // The counter counts: the application read each byte it received and wrote each it sent.
    assert_eq!(r.touched[1], to + from, "the application core's payload bytes");
}

#[test]
fn a_control_path_that_skips_reassembly_is_caught() {
    let r = run("apps/tcp_zbulk_mutant.elf", 2, (200_000, 0), 0.02, 0.1);
    assert_ne!(r.exits[1], Some(0), "the mutant passed: {}", r.console);
    assert!(r.console.contains("received a wrong byte"), "{}", r.console);
}

#[test]
fn the_plain_socket_api_runs_unchanged_on_zeronic() {
    let (to, from) = (100_000, 100_000);
    let r = run("apps/tcp_bulk_zn.elf", 1, (to, from), 0.01, 0.05);
    assert_eq!(r.exits[0], Some(0), "{}", r.console);
    assert_eq!((r.host.received, r.host.first_wrong, r.host.eof), (from, None, true), "{}", r.console);
    assert_eq!(counter(&r.console, "bytes_in"), to);
    // One core is stack and application: tcp_recv and tcp_send copy each byte once, a word
    // at a time; a copy whose source and destination differ in alignment reads whole aligned
    // source words, up to 7 bytes on either side of its range (sw/tcp/tcp_int.h `tcp_copy`).
    let touched = r.touched[0];
    assert!(touched >= to + from && touched <= (to + from) * 101 / 100, "{touched}: {}", r.console);
}

/// Two ZeroNIC nodes through a switch, 1% of packets lost on every link: node 1 sends,
/// merging payload on transmit; node 0 places it; both control cores touch none of it.
#[test]
fn two_zeronic_nodes_exchange_a_checked_stream_under_loss() {
    let bytes = 1_000_000;
    let node0 = format!("[\"listen\", \"{PORT}\", \"{bytes}\", \"0\"]");
    let node1 = format!("[\"connect:167772162\", \"{PORT}\", \"0\", \"{bytes}\", \"finfirst\"]");
    let text = format!(
        "max_us = 2000000.0\n[topology]\nkind = \"star\"\nnodes = 2\n[link]\nrate_gbps = 100.0\n\
         drop_prob = 0.01\n[node]\ncores = 2\n\
         [[program]]\nnodes = \"0\"\nelf = \"tcp_zbulk.elf\"\nnic = \"zeronic\"\nargs = {node0}\n\
         [[program]]\nnodes = \"1\"\nelf = \"tcp_zbulk.elf\"\nnic = \"zeronic\"\nargs = {node1}\n"
    );
    let f = nanopu_cluster::config::cluster::ClusterFile::parse(&text).unwrap();
    let mut sim = Simulation::cluster(&f, &common::sw_build().join("apps")).unwrap();
    let outcome = sim.run().unwrap();
    let touched: Vec<u64> =
        sim.nodes.iter().flat_map(|n| n.cores.iter().map(|c| c.watched_bytes())).collect();
    let s = nanopu_cluster::report::cluster::summarize_cluster(&mut sim, outcome);
    assert_eq!(outcome, Outcome::AllExited, "{}", s.text());
    assert_eq!(s.cores_ok, 4, "every hart finished, every byte checked: {}", s.text());
    assert!(s.fabric.drops > 0, "the fabric lost packets: {}", s.text());
    assert_eq!(touched, vec![0, bytes, 0, bytes], "control cores none, applications each byte once");
}

/// A star of ZeroNIC nodes (two cores each) with 1 listener (node 0) taking `flows` tagged
/// flows of `bytes` from `senders` nodes (nodes 1.., `flows / senders` each), every link
/// losing `loss`: the outcome, the summary and each core's payload bytes touched.
fn zn_flows(
    elf: &str,
    senders: u32,
    flows: u32,
    bytes: u64,
    loss: f64,
) -> (Outcome, nanopu_cluster::report::cluster::ClusterSummary, Vec<u64>) {
    let per = flows / senders;
    let node0 = format!("[\"listen\", \"{PORT}\", \"{bytes}\", \"0\", \"flows={flows}\", \"tagged\"]");
    let others = format!(
        "[\"connect:167772162\", \"{PORT}\", \"0\", \"{bytes}\", \"finfirst\", \"flows={per}\", \"tagged\"]"
    );
    let text = format!(
        "max_us = 2000000.0\n[topology]\nkind = \"star\"\nnodes = {}\n[link]\nrate_gbps = 100.0\n\
         drop_prob = {loss}\n[node]\ncores = 2\n\
         [[program]]\nnodes = \"0\"\nelf = \"{elf}\"\nnic = \"zeronic\"\nargs = {node0}\n\
         [[program]]\nnodes = \"1-{senders}\"\nelf = \"{elf}\"\nnic = \"zeronic\"\nargs = {others}\n",
        senders + 1
    );
    let f = nanopu_cluster::config::cluster::ClusterFile::parse(&text).unwrap();
    let mut sim = Simulation::cluster(&f, &common::sw_build().join("apps")).unwrap();
    let outcome = sim.run().unwrap();
    let touched = sim.nodes.iter().flat_map(|n| n.cores.iter().map(|c| c.watched_bytes())).collect();
    (outcome, nanopu_cluster::report::cluster::summarize_cluster(&mut sim, outcome), touched)
}

/// Several flows into one ZeroNIC node, from one sender (4 flows) or from several (incast:
/// 4 senders under loss, 8 clean): every byte of every flow checked once and in order in its
/// own ring, and the control cores touch none of them.
#[test]
fn several_zeronic_flows_and_senders_deliver_every_byte_of_every_flow() {
    for (senders, flows, loss) in [(1, 4, 0.01), (4, 4, 0.01), (8, 8, 0.0)] {
        let bytes = 200_000;
        let (outcome, s, touched) = zn_flows("tcp_zbulk.elf", senders, flows, bytes, loss);
        assert_eq!(outcome, Outcome::AllExited, "{}", s.text());
        assert_eq!(s.cores_ok, s.cores, "every flow's bytes checked: {}", s.text());
        assert!(s.consoles[1].contains(&format!("app checked {} bytes in", u64::from(flows) * (bytes + 8))));
        assert!(loss == 0.0 || s.fabric.drops_random > 0, "the fabric lost packets: {}", s.text());
        let control: Vec<u64> = touched.iter().step_by(2).copied().collect();
        assert_eq!(control, vec![0; senders as usize + 1], "control cores touch no payload");
        assert_eq!(touched[1], u64::from(flows) * (bytes + 8), "the application each byte once");
    }
}

/// The reassembly mutant (`tcp_zbulk_mutant.elf`) with four flows under loss: the
/// receiver's per-flow checks catch it.
#[test]
fn several_flows_over_a_control_path_without_reassembly_fail_the_check() {
    let (_, s, _) = zn_flows("tcp_zbulk_mutant.elf", 1, 4, 200_000, 0.02);
    let caught = s.consoles.iter().any(|c| c.contains("tcp_zbulk: flow") && c.contains("wrong byte"));
    assert!(caught, "a wrong byte was found: {}", s.text());
}
