//! The C TCP (sw/tcp, docs/apps/tcp.md) against an independent TCP: `tcp_bulk.elf` on an
//! IceNIC node, smoltcp on the test host (`nanopu_harness::clients::tcp`). Data both ways
//! at once, every byte once and in order (each end checks the other's pattern), with the
//! host's link lossy and reordering; and the C TCP's own counters show it recovering by
//! timeout and by three duplicate ACKs.

use crate::common;

use nanopu_cluster::config::NicKind;
use nanopu_cluster::{Outcome, Simulation};
use nanopu_harness::clients::tcp::{Opener, Params, Peer};
use nanopu_sim::Time;

/// When the host opens: after the node has posted its receive buffers and listens.
const START: Time = Time::from_us(20);
const PORT: u16 = 5001;
/// The host's link: a rate the node's core keeps up with (checking every byte it receives,
/// it takes frames more slowly than 5 Gb/s brings them, and IceNIC's ten receive buffers
/// then overflow: docs/apps/tcp.md "Speed"), so that what is lost is what a test injects.
const GBPS: u64 = 2;
/// 10.0.0.1, the test host, as tcp_bulk's `connect:` takes it.
const HOST_IP_ARG: &str = "connect:167772161";

/// The link's impairments.
#[derive(Clone, Copy, Default)]
struct Link {
    loss: f64,
    reorder: f64,
    seed: u64,
}

/// What a run leaves: the C program's counters, its console, the host's record.
struct Run {
    counters: Vec<(String, u64)>,
    console: String,
    host: nanopu_harness::clients::tcp::Outcome,
    lost: [u64; 2],
    delayed: [u64; 2],
}

impl Run {
    fn get(&self, key: &str) -> u64 {
        let found = self.counters.iter().find(|(k, _)| k == key);
        found.unwrap_or_else(|| panic!("no counter {key} in: {}", self.console)).1
    }
}

/// Run tcp_bulk with `to_node` bytes in and `from_node` out over `link`, opened by `opener`,
/// with `flags` (nodelack, noreno).
fn run(opener: Opener, to_node: u64, from_node: u64, link: Link, flags: &[&str]) -> Run {
    let mode = match opener {
        Opener::Host => "listen",
        Opener::Node => HOST_IP_ARG,
    };
    let mut args: Vec<String> =
        [mode.to_string(), PORT.to_string(), to_node.to_string(), from_node.to_string()].to_vec();
    args.extend(flags.iter().map(|f| f.to_string()));
    let mut cfg = common::server_node(NicKind::IceNic, 1, args);
    cfg.port.rate_bps = GBPS * 1_000_000_000;
    cfg.max_cycles = 1 << 37; // smoltcp's timeouts are milliseconds and back off
    let mut sim = Simulation::new(&common::elf("apps/tcp_bulk.elf"), cfg).unwrap();
    if link.loss > 0.0 {
        sim.host.lose_frames(link.loss, link.seed);
    }
    if link.reorder > 0.0 {
        sim.host.reorder_frames(link.reorder, Time::from_us(10), link.seed);
    }
    let p = Params { node: 0, port: PORT, opener, to_node, from_node, buffer: 128 << 10 };
    let peer = Peer::new(p).attach(&mut sim.host, START);
    let outcome = sim.run().unwrap();
    let console = String::from_utf8_lossy(&sim.nodes[0].cores[0].take_console()).to_string();
    if outcome != Outcome::AllExited {
        let mut pr = peer.lock().unwrap();
        eprintln!("DEBUG {}", pr.debug(Time::from_us(1700)));
        eprintln!("DEBUG ice {:?} console {console}", sim.nodes[0].ice().unwrap().counters);
        eprintln!("DEBUG state {:?} outcome {:?} sent {} recv {} rejected {:?}", pr.state(), pr.outcome, sim.host.frames_sent.len(), sim.host.frames_received.len(), sim.host.rejected);
        for f in sim.host.frames_sent.iter().rev().take(3) { eprintln!("sent {:?} {:02x?}", f.time, &f.frame[..f.frame.len().min(60)]); }
        for f in sim.host.frames_received.iter().rev().take(8) { eprintln!("recv {:?} {:02x?}", f.time, &f.frame[..f.frame.len().min(60)]); }
    }
    assert_eq!(outcome, Outcome::AllExited, "the program ended: {console}");
    let line = console.lines().find(|l| l.starts_with("tcp: ")).unwrap_or_else(|| panic!("no counters: {console}"));
    let counters = line[5..]
        .split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect();
    let host = peer.lock().unwrap().outcome.clone();
    eprintln!("DEBUG console {console} ice {:?} host {:?} now {:?}", sim.nodes[0].ice().unwrap().counters, host, sim.now());
    let (lost, delayed) = (sim.host.frames_lost, sim.host.frames_delayed);
    Run { counters, console, host, lost, delayed }
}

/// Every byte both ways arrived once and in order: the C program exited with 0 after
/// checking its `to_node` bytes and the end of stream (it exits 2 otherwise), and the host
/// received exactly `from_node` pattern bytes and then the node's FIN.
fn assert_delivered(r: &Run, to_node: u64, from_node: u64) {
    assert_eq!(r.host.first_wrong, None, "the host got the node's bytes in order: {}", r.console);
    assert_eq!(r.host.received, from_node, "the host got every byte once: {}", r.console);
    assert!(r.host.eof, "the node's FIN arrived after its bytes: {}", r.console);
    assert_eq!(r.host.sent, to_node);
    assert_eq!(r.get("bytes_in"), to_node, "the node read every byte once");
    assert_eq!(r.get("bytes_out"), from_node);
    assert_eq!(r.get("bad_checksums"), 0, "every segment's checksum agreed");
}

#[test]
fn a_clean_link_carries_both_directions_without_retransmitting() {
    let (to, from) = (300_000, 200_000);
    let r = run(Opener::Host, to, from, Link::default(), &[]);
    assert_delivered(&r, to, from);
    assert_eq!(r.get("segs_retransmitted"), 0, "nothing lost, nothing resent: {}", r.console);
    assert_eq!(r.get("rto_timeouts"), 0);
    assert!(r.get("delayed_acks") + r.get("acks_out") > 0);
}

#[test]
fn the_node_can_open_the_connection() {
    let (to, from) = (50_000, 80_000);
    let r = run(Opener::Node, to, from, Link::default(), &[]);
    assert_delivered(&r, to, from);
}

#[test]
fn every_byte_arrives_once_and_in_order_under_two_percent_loss() {
    let (to, from) = (200_000, 200_000);
    for seed in 1..=3 {
        let r = run(Opener::Host, to, from, Link { loss: 0.02, seed, ..Link::default() }, &[]);
        assert!(r.lost[0] > 0 && r.lost[1] > 0, "seed {seed}: frames were lost both ways: {:?}", r.lost);
        assert_delivered(&r, to, from);
        assert!(r.get("segs_retransmitted") > 0, "seed {seed}: the node resent: {}", r.console);
    }
}

#[test]
fn every_byte_arrives_once_and_in_order_under_reordering() {
    let (to, from) = (200_000, 200_000);
    for seed in 1..=3 {
        let r = run(Opener::Host, to, from, Link { reorder: 0.1, seed, ..Link::default() }, &[]);
        assert!(r.delayed[0] > 0 && r.delayed[1] > 0, "seed {seed}: frames were reordered both ways");
        assert_delivered(&r, to, from);
        assert!(r.get("ooo_segs_in") > 0, "seed {seed}: segments reached the node out of order");
    }
}

#[test]
fn every_byte_arrives_once_and_in_order_under_loss_and_reordering() {
    let (to, from) = (150_000, 150_000);
    for seed in 4..=6 {
        let link = Link { loss: 0.01, reorder: 0.05, seed };
        let r = run(Opener::Node, to, from, link, &[]);
        assert_delivered(&r, to, from);
    }
}

#[test]
fn three_duplicate_acks_trigger_a_fast_retransmit() {
    // The node sends; the host's ACKs come back for every segment (smoltcp delays none).
    let r = run(Opener::Host, 0, 400_000, Link { loss: 0.02, seed: 7, ..Link::default() }, &[]);
    assert_delivered(&r, 0, 400_000);
    assert!(r.get("fast_retransmits") > 0, "a loss was repaired by fast retransmit: {}", r.console);
    assert!(r.get("dupacks_in") >= 3 * r.get("fast_retransmits"), "each after three duplicate ACKs");
}

#[test]
fn without_fast_retransmit_the_timer_repairs_every_loss() {
    let link = Link { loss: 0.02, seed: 7, ..Link::default() };
    let r = run(Opener::Host, 0, 400_000, link, &["noreno"]);
    assert_delivered(&r, 0, 400_000);
    assert_eq!(r.get("fast_retransmits"), 0, "{}", r.console);
    assert!(r.get("rto_timeouts") > 0, "losses were repaired by timeouts: {}", r.console);
}
