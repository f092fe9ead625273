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
/// it takes frames more slowly than 5 Gb/s brings them, and IceNIC's receive buffers
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

/// What a run leaves: the C program's exit code, counters and console, the host's record.
struct Run {
    exit: Option<i64>,
    counters: Vec<(String, u64)>,
    console: String,
    host: nanopu_harness::clients::tcp::Outcome,
    lost: [u64; 2],
    delayed: [u64; 2],
    /// Frames from the node to the host, in arrival order.
    frames: Vec<Vec<u8>>,
}

impl Run {
    fn get(&self, key: &str) -> u64 {
        let found = self.counters.iter().find(|(k, _)| k == key);
        found.unwrap_or_else(|| panic!("no counter {key} in: {}", self.console)).1
    }
}

/// The counters of tcp_bulk's `tcp: key=value ...` line (none if it printed none).
fn counters(console: &str) -> Vec<(String, u64)> {
    let Some(line) = console.lines().find_map(|l| l.strip_prefix("tcp: ")) else { return Vec::new() };
    let kv = |kv: &str| kv.split_once('=').map(|(k, v)| (k.to_string(), v.parse().expect("a number")));
    line.split_whitespace().filter_map(kv).collect()
}

/// Run `elf` with `to_node` bytes in and `from_node` out over `link`, opened by `opener`,
/// with `flags` (nodelack, noreno).
fn run_elf(elf: &str, opener: Opener, to_node: u64, from_node: u64, link: Link, flags: &[&str]) -> Run {
    run_lingering(elf, opener, (to_node, from_node), link, flags, Time::ZERO)
}

/// [`run_elf`] with the host's FIN `linger` after its last byte.
fn run_lingering(
    elf: &str,
    opener: Opener,
    (to_node, from_node): (u64, u64),
    link: Link,
    flags: &[&str],
    linger: Time,
) -> Run {
    let mode = match opener {
        Opener::Host => "listen",
        Opener::Node => HOST_IP_ARG,
    };
    let mut args: Vec<String> =
        vec![mode.into(), PORT.to_string(), to_node.to_string(), from_node.to_string()];
    args.extend(flags.iter().map(|f| f.to_string()));
    let mut cfg = common::server_node(NicKind::IceNic, 1, args);
    cfg.port.rate_bps = GBPS * 1_000_000_000;
    cfg.max_cycles = 1 << 37; // smoltcp's timeouts are milliseconds, and back off
    let mut sim = Simulation::new(&common::elf(elf), cfg).unwrap();
    if link.loss > 0.0 {
        sim.host.lose_frames(link.loss, link.seed);
    }
    if link.reorder > 0.0 {
        sim.host.reorder_frames(link.reorder, Time::from_us(10), link.seed);
    }
    let p = Params { node: 0, port: PORT, opener, to_node, from_node, buffer: 128 << 10, linger };
    let peer = Peer::new(p).attach(&mut sim.host, START);
    let outcome = sim.run().unwrap();
    let console = String::from_utf8_lossy(&sim.nodes[0].cores[0].take_console()).to_string();
    assert_eq!(outcome, Outcome::AllExited, "the program ended: {console}");
    let exit = sim.nodes[0].cores[0].halted();
    let host = peer.lock().unwrap().outcome.clone();
    let frames = sim.host.frames_received.iter().map(|f| f.frame.clone()).collect();
    let (lost, delayed) = (sim.host.frames_lost, sim.host.frames_delayed);
    Run { exit, counters: counters(&console), console, host, lost, delayed, frames }
}

fn run(opener: Opener, to_node: u64, from_node: u64, link: Link, flags: &[&str]) -> Run {
    run_elf("apps/tcp_bulk.elf", opener, to_node, from_node, link, flags)
}

/// Every byte both ways arrived once and in order: the C program exited with 0 after
/// checking its `to_node` bytes and the end of stream (it exits 2 otherwise), and the host
/// received exactly `from_node` pattern bytes and then the node's FIN.
fn assert_delivered(r: &Run, to_node: u64, from_node: u64) {
    assert_eq!(r.exit, Some(0), "the node checked every byte: {}", r.console);
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
}

/// The TCP header of a frame from the node (Ethernet, IPv4 without options, then TCP).
fn tcp_header(frame: &[u8]) -> &[u8] {
    &frame[34..]
}

#[test]
fn both_ends_scale_their_windows() {
    let r = run(Opener::Host, 300_000, 1_000, Link::default(), &[]);
    assert_delivered(&r, 300_000, 1_000);
    let syn_ack = tcp_header(&r.frames[0]);
    assert_eq!(syn_ack[13] & 0x12, 0x12, "the node's first frame is its SYN-ACK");
    let options = &syn_ack[20..usize::from(syn_ack[12] >> 4) * 4];
    assert!(options.windows(3).any(|o| o == [3, 3, 3]), "it offers window scale 3 (RFC 7323): {options:?}");
    // A window field times 8: more than 16 bits could say, so the host could have more
    // than 64 KiB in flight.
    let wnd = |f: &Vec<u8>| u32::from(u16::from_be_bytes([tcp_header(f)[14], tcp_header(f)[15]])) << 3;
    assert!(r.frames[1..].iter().map(wnd).max().unwrap() > 65_535);
}

#[test]
fn delayed_acks_answer_every_second_segment_and_a_lone_one_by_timer() {
    let segs = |bytes: u64| bytes.div_ceil(1460);
    let delayed = run(Opener::Host, 146_000, 0, Link::default(), &[]);
    let every = run(Opener::Host, 146_000, 0, Link::default(), &["nodelack"]);
    assert_delivered(&delayed, 146_000, 0);
    assert_delivered(&every, 146_000, 0);
    let (d, e) = (delayed.get("acks_out"), every.get("acks_out"));
    assert!(e >= segs(146_000), "without delay, an ACK per segment: {e}");
    assert!(d <= segs(146_000) / 2 + 10, "with delay, about one per two segments (RFC 5681 4.2): {d}");
    // Two full segments (acknowledged together) and a short third, alone until the FIN.
    let lone = run_lingering(
        "apps/tcp_bulk.elf",
        Opener::Host,
        (3_000, 0),
        Link::default(),
        &[],
        Time::from_us(200),
    );
    assert_delivered(&lone, 3_000, 0);
    assert!(lone.get("delayed_acks") >= 1, "a lone segment is acknowledged by the timer: {}", lone.console);
}

#[test]
fn a_tcp_that_skips_reassembly_is_caught() {
    let link = Link { reorder: 0.1, seed: 1, ..Link::default() };
    let r = run_elf("apps/tcp_bulk_mutant.elf", Opener::Host, 200_000, 0, link, &[]);
    assert_eq!(r.exit, Some(2), "the mutant delivered bytes out of order: {}", r.console);
    assert!(r.console.contains("out of order"), "{}", r.console);
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
    // A loss among the last segments has too few followers for three duplicates: only the
    // timer repairs it (SACK, RACK or tail loss probes would; docs/apps/tcp.md).
    assert!(r.get("rto_timeouts") < r.get("fast_retransmits"), "most losses did not wait: {}", r.console);
}

#[test]
fn without_fast_retransmit_the_timer_repairs_every_loss() {
    let link = Link { loss: 0.02, seed: 7, ..Link::default() };
    let r = run(Opener::Host, 0, 400_000, link, &["noreno"]);
    assert_delivered(&r, 0, 400_000);
    assert_eq!(r.get("fast_retransmits"), 0, "{}", r.console);
    assert!(r.get("rto_timeouts") > 0, "losses were repaired by timeouts: {}", r.console);
}

/// Two IceNIC nodes through a switch, the C TCP at both ends: node 1 connects and sends,
/// node 0 listens and checks every byte; `link` loses frames on every link.
fn two_nodes(bytes: u64, drop_prob: f64) -> nanopu_cluster::report::cluster::ClusterSummary {
    let node0 = format!("[\"listen\", \"{PORT}\", \"{bytes}\", \"0\"]");
    let node1 = format!("[\"connect:167772162\", \"{PORT}\", \"0\", \"{bytes}\", \"finfirst\"]");
    let text = format!(
        "max_us = 2000000.0\n[topology]\nkind = \"star\"\nnodes = 2\n[link]\nrate_gbps = 100.0\n\
         drop_prob = {drop_prob}\n[node]\ncores = 1\n\
         [[program]]\nnodes = \"0\"\nelf = \"tcp_bulk.elf\"\nnic = \"icenic\"\nargs = {node0}\n\
         [[program]]\nnodes = \"1\"\nelf = \"tcp_bulk.elf\"\nnic = \"icenic\"\nargs = {node1}\n"
    );
    let f = nanopu_cluster::config::cluster::ClusterFile::parse(&text).unwrap();
    let mut sim = Simulation::cluster(&f, &common::sw_build().join("apps")).unwrap();
    let outcome = sim.run().unwrap();
    let s = nanopu_cluster::report::cluster::summarize_cluster(&mut sim, outcome);
    assert_eq!(outcome, Outcome::AllExited, "{}", s.text());
    s
}

#[test]
fn two_nodes_exchange_a_checked_stream_through_a_switch() {
    let s = two_nodes(1_000_000, 0.0);
    assert_eq!(s.cores_ok, 2, "both ends checked their streams: {}", s.text());
    let c = s.consoles.iter().find(|c| c.starts_with("node 0 core 0: tcp: ")).expect("node 0's counters");
    assert_eq!(
        counters(&c["node 0 core 0: ".len()..]).iter().find(|(k, _)| k == "bytes_in").unwrap().1,
        1_000_000
    );
}

#[test]
fn two_nodes_recover_from_loss_on_every_link() {
    let s = two_nodes(1_000_000, 0.01);
    assert_eq!(s.cores_ok, 2, "both ends checked their streams: {}", s.text());
    assert!(s.fabric.drops > 0, "the fabric lost frames: {}", s.text());
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let link = Link { loss: 0.02, reorder: 0.05, seed: 9 };
    let a = run(Opener::Host, 100_000, 100_000, link, &[]);
    let b = run(Opener::Host, 100_000, 100_000, link, &[]);
    assert_delivered(&a, 100_000, 100_000);
    assert_eq!(a.console, b.console, "the same counters, cycle for cycle");
    assert_eq!((a.lost, a.delayed, &a.frames), (b.lost, b.delayed, &b.frames), "the same frames");
}

#[test]
fn sack_blocks_from_smoltcp_repair_several_losses_in_one_recovery() {
    let link = Link { loss: 0.03, seed: 11, ..Link::default() };
    let sack = run(Opener::Host, 0, 400_000, link, &[]);
    let plain = run(Opener::Host, 0, 400_000, link, &["nosack"]);
    assert_delivered(&sack, 0, 400_000);
    assert_delivered(&plain, 0, 400_000);
    let syn_ack = tcp_header(&sack.frames[0]);
    let options = &syn_ack[20..usize::from(syn_ack[12] >> 4) * 4];
    assert!(options.windows(2).any(|o| o == [4, 2]), "SACK permitted both ways (RFC 2018): {options:?}");
    assert!(sack.get("sack_retransmits") > 0, "holes resent from SACK blocks: {}", sack.console);
    assert_eq!(plain.get("sack_retransmits"), 0, "{}", plain.console);
}

/// The DCTCP build (`tcp_bulk_dctcp.elf`, docs/apps/tcp.md "DCTCP") against smoltcp, which
/// does not do ECN: the node's SYN asks for it (ECE and CWR, RFC 3168 6.1.1), smoltcp's
/// SYN-ACK does not agree, a SYN-ACK answering smoltcp's plain SYN offers nothing, and the
/// connection runs as Reno/NewReno: no frame of the node is ECN-capable, every byte arrives
/// once and in order both ways under loss and reordering. Three link seeds: of seeds 1-30,
/// seed 5 ends with the node's close timing out (docs/apps/tcp.md "DCTCP": smoltcp's
/// one-a-second challenge ACKs in TIME-WAIT against our 15 retries).
#[test]
fn dctcp_falls_back_to_reno_against_a_tcp_without_ecn() {
    const ECE_CWR: u8 = 0xc0;
    for (seed, opener) in (1..=3).flat_map(|s| [(s, Opener::Host), (s, Opener::Node)]) {
        let link = Link { loss: 0.01, reorder: 0.02, seed };
        let r = run_elf("apps/tcp_bulk_dctcp.elf", opener, 200_000, 200_000, link, &[]);
        assert_delivered(&r, 200_000, 200_000);
        let dctcp =
            r.console.lines().find_map(|l| l.strip_prefix("dctcp: ")).expect("the DCTCP build's line");
        assert!(dctcp.starts_with("ecn_conns=0 "), "ECN was not agreed: {dctcp}");
        let flags: Vec<u8> = r.frames.iter().map(|f| tcp_header(f)[13]).collect();
        let syns: Vec<u8> = flags.iter().copied().filter(|fl| fl & 0x02 != 0).collect();
        assert!(!syns.is_empty(), "the node's SYN or SYN-ACK reached the host");
        let want = if opener == Opener::Node { ECE_CWR } else { 0 };
        assert!(syns.iter().all(|fl| fl & ECE_CWR == want), "{opener:?}: SYN flags {syns:x?}");
        assert!(flags.iter().all(|fl| fl & 0x02 != 0 || fl & ECE_CWR == 0), "ECE or CWR after the handshake");
        assert!(r.frames.iter().all(|f| f[15] & 3 == 0), "{opener:?}: a frame was ECT without ECN agreed");
    }
}
