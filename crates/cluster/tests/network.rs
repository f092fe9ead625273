//! Clusters on a packet-level network: every message delivered exactly once with its payload
//! intact (the programs check every word and exit non-zero otherwise), under trimming,
//! drops, random loss and multicast; and the same config and seed give the same bytes.

use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::report::cluster::{summarize_cluster, ClusterSummary};
use nanopu_cluster::Simulation;
use std::path::PathBuf;

fn experiments() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
}

fn load(rel: &str, edit: impl Fn(&mut ClusterFile)) -> (ClusterFile, PathBuf) {
    let (mut f, base) = ClusterFile::load(&experiments().join(rel)).unwrap();
    edit(&mut f);
    (f, base)
}

fn run(rel: &str, edit: impl Fn(&mut ClusterFile)) -> ClusterSummary {
    let (f, base) = load(rel, edit);
    let mut sim = Simulation::cluster(&f, &base).unwrap();
    let outcome = sim.run().unwrap_or_else(|e| panic!("{rel}: {e}"));
    let s = summarize_cluster(&mut sim, outcome);
    assert!(s.failures.is_empty(), "{rel}:\n{}", s.text());
    assert_eq!(s.cores_ok, s.cores, "{rel}");
    s
}

#[test]
fn incast_with_trimming_recovers_by_nack_and_with_drops_by_timeout() {
    let trim = run("incast/ndp-trim.toml", |_| {});
    let drop = run("incast/ndp-drop.toml", |_| {});
    for s in [&trim, &drop] {
        assert_eq!((s.messages_sent, s.messages_delivered), (80, 80));
    }
    assert!(trim.fabric.trims > 0 && trim.fabric.drops == 0, "{}", trim.text());
    assert!(drop.fabric.trims == 0 && drop.fabric.drops_band_full > 0, "{}", drop.text());
    assert_eq!(trim.transport.timeouts, 0, "trimmed packets are NACKed, not timed out");
    assert!(drop.transport.timeouts > 0);
    assert!(trim.last_arrival_ns < drop.last_arrival_ns);
}

#[test]
fn all_to_all_with_one_percent_loss_on_both_transports() {
    for rel in ["alltoall/leafspine-ndp.toml", "alltoall/leafspine-homa.toml"] {
        let s = run(rel, |_| {});
        assert_eq!(s.messages_delivered, 64 * 63, "{rel}");
        assert_eq!(s.messages_received, 64 * 63, "{rel}: nothing arrives twice at a core");
        assert!(s.fabric.drops_random > 0 && s.transport.retransmissions > 0, "{rel}: {}", s.text());
        assert!(s.problems.is_empty(), "{rel}: every sender saw its messages acknowledged:\n{}", s.text());
    }
}

/// NDP's rules (`docs/models/network.md`): 256 nodes on one switch, all-to-all of 1 KiB with
/// nothing lost, a timeout of 8 us. Each receiver's pacer takes about 11 us to pull the
/// trimmed half of its 255 messages, and each sender's NIC about 11 us to send its 255, both
/// longer than the timeout; a NACKed packet waits for its PULL, and a packet's timeout runs
/// from when it leaves the NIC, so nothing times out.
#[test]
fn ndp_waits_for_pulls_longer_than_the_timeout_without_timing_out() {
    let cfg = "seed = 1\nmax_us = 10000.0\n[topology]\nkind = \"star\"\nnodes = 256\n[node]\ncores = 1\n\
               [transport_params]\nrto_us = 8.0\n\
               [[program]]\nnodes = \"all\"\nelf = \"apps/alltoall.elf\"\nargs = [\"256\", \"1024\"]\n";
    let f = ClusterFile::parse(cfg).unwrap();
    let sw = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sw/build");
    let mut sim = Simulation::cluster(&f, &sw).unwrap();
    let outcome = sim.run().unwrap();
    let s = summarize_cluster(&mut sim, outcome);
    assert!(s.failures.is_empty() && s.cores_ok == s.cores, "{}", s.text());
    assert_eq!(s.messages_delivered, 256 * 255);
    assert!(s.fabric.trims > 10_000 && s.fabric.drops == 0, "{}", s.text());
    let t = &s.transport;
    assert_eq!((t.timeouts, t.pull_timeouts), (0, 0), "{}", s.text());
    assert_eq!(t.retransmissions, t.trimmed_received, "one resend per NACK, on its PULL");
    assert_eq!(t.pulls_sent, t.trimmed_received, "one PULL per trimmed 1-packet message");
}

/// An all-to-all of 1 KiB messages among 32 nodes, 2 leaves under one spine (16:1), with
/// the switches' `header_weight` and a time limit.
fn oversubscribed_all_to_all(header_weight: u8, max_us: u32) -> ClusterSummary {
    let cfg = format!(
        "seed = 1\nmax_us = {max_us}.0\n[topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = 16\nleaves = 2\n\
         spines = 1\n[switch]\nheader_weight = {header_weight}\n[node]\ncores = 1\n\
         [[program]]\nnodes = \"all\"\nelf = \"apps/alltoall.elf\"\nargs = [\"32\", \"1024\"]\n"
    );
    let sw = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sw/build");
    let mut sim = Simulation::cluster(&ClusterFile::parse(&cfg).unwrap(), &sw).unwrap();
    let outcome = sim.run().unwrap();
    summarize_cluster(&mut sim, outcome)
}

/// NDP under a 16:1 core (`docs/models/network.md`, "Bands, trimming, drops"). Each receiver
/// pulls at its own link's rate, 16 times what the one uplink carries, so nearly every
/// resend is trimmed again; with strict priority the trimmed headers, NACKs and PULLs then
/// fill the uplinks and data hardly crosses (congestion collapse). The NDP paper's switch serves
/// 10 headers to 1 data packet, and the all-to-all ends, slowly but surely.
#[test]
fn ndp_crosses_an_oversubscribed_core_when_headers_cannot_starve_data() {
    let wrr = oversubscribed_all_to_all(10, 10_000);
    assert!(wrr.failures.is_empty() && wrr.cores_ok == wrr.cores, "{}", wrr.text());
    assert_eq!(wrr.messages_delivered, 32 * 31);
    assert!(wrr.fabric.trims > 500 && wrr.fabric.drops == 0, "{}", wrr.text());
    assert_eq!(wrr.transport.timeouts, 0, "{}", wrr.text());
    assert!(wrr.last_arrival_ns < 30_000.0, "{}", wrr.text());
    // Strict priority, five times as long: the 480 messages within a leaf, and of the 512
    // across the core fewer than half (those that found room in the first burst).
    let strict = oversubscribed_all_to_all(0, 150);
    assert!(strict.messages_delivered < 32 * 15 + 256, "{}", strict.text());
    assert!(strict.fabric.trims > 20 * wrr.fabric.trims && strict.fabric.drops == 0, "{}", strict.text());
}

/// `alltoall_unrolled.elf` (one instruction per payload word) sends the words `alltoall.elf`
/// checks, whole blocks of 32 and a remainder alike, and its cores hand their messages to
/// the NIC sooner, so the last one arrives sooner (`docs/models/network.md`, "The 512-node
/// all-to-all beside htsim").
#[test]
fn unrolled_all_to_all_sends_the_same_words_sooner() {
    let run_star = |elf: &str, bytes: u32| {
        let cfg = format!(
            "seed = 1\nmax_us = 10000.0\n[topology]\nkind = \"star\"\nnodes = 16\n[node]\ncores = 1\n\
             [[program]]\nnodes = \"all\"\nelf = \"apps/{elf}.elf\"\nargs = [\"16\", \"{bytes}\"]\n"
        );
        let sw = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sw/build");
        let mut sim = Simulation::cluster(&ClusterFile::parse(&cfg).unwrap(), &sw).unwrap();
        let outcome = sim.run().unwrap();
        let s = summarize_cluster(&mut sim, outcome);
        assert!(s.failures.is_empty() && s.cores_ok == s.cores, "{elf} {bytes}: {}", s.text());
        assert_eq!(s.messages_delivered, 16 * 15, "{elf} {bytes}");
        s.last_arrival_ns
    };
    run_star("alltoall_unrolled", 264); // 33 words: one block of 32, one word alone
    let (plain, unrolled) = (run_star("alltoall", 1024), run_star("alltoall_unrolled", 1024));
    assert!(unrolled < plain * 0.7, "plain {plain} ns, unrolled {unrolled} ns");
}

#[test]
fn multicast_to_1024_nodes_with_loss_arrives_exactly_once() {
    let s = run("multicast/leafspine-1024.toml", |_| {});
    assert_eq!((s.messages_sent, s.messages_received), (1, 1023));
    assert!(s.fabric.drops_random > 0 && s.fabric.multicast_resends == s.fabric.drops_random);
}

#[test]
fn without_switch_multicast_the_nic_unicasts_to_each_member() {
    let s = run("multicast/leafspine-1024.toml", |f| {
        f.switch.multicast = Some(false);
        f.link.drop_prob = 0.0;
    });
    assert_eq!(s.messages_received, 1023);
    assert_eq!(s.fabric.multicast_resends, 0);
    assert_eq!(s.transport.data_packets_sent, 1023);
}

#[test]
fn same_config_and_seed_give_identical_results_and_pcap() {
    let once = || {
        let (f, base) = load("alltoall/leafspine-homa.toml", |_| {});
        let mut sim = Simulation::cluster(&f, &base).unwrap();
        sim.capture_at("switch:1:3").unwrap();
        let outcome = sim.run().unwrap();
        let pcap = sim.write_capture(Vec::new()).unwrap();
        (serde_json::to_string(&summarize_cluster(&mut sim, outcome)).unwrap(), pcap)
    };
    let (a, b) = (once(), once());
    assert!(a.1.len() > 1000);
    assert_eq!(a, b);
    let frames = nanopu_net::pcap::read_pcap(&a.1).unwrap();
    for (_, bytes) in &frames {
        nanopu_net::wire::Frame::parse(bytes, 1024).unwrap();
    }
}

#[test]
fn config_errors_name_the_field() {
    let (mut f, base) = load("incast/ndp-trim.toml", |_| {});
    f.program[0].nodes = "0-9".into();
    let e = Simulation::cluster(&f, &base).err().unwrap().to_string();
    assert!(e.contains("node 10 has no program"), "{e}");
    f.program[0].nodes = "all".into();
    f.program[0].elf = "missing.elf".into();
    let e = Simulation::cluster(&f, &base).err().unwrap().to_string();
    assert!(e.contains("program.elf") && e.contains("missing.elf"), "{e}");
    let e = ClusterFile::parse("seed = 1\n[topology]\nkind = \"star\"\nnodes = 2\nbogus = 3\n").unwrap_err();
    assert!(e.contains("bogus"), "{e}");
}

#[test]
fn message_records_join_sends_and_deliveries() {
    let (f, base) = load("incast/ndp-trim.toml", |_| {});
    let mut sim = Simulation::cluster(&f, &base).unwrap();
    sim.run().unwrap();
    let records = sim.message_records();
    assert_eq!(records.len(), 80);
    for r in &records {
        assert_eq!((r.dst_ip, r.len), (nanopu_cluster::node::boot::node_ip(0), 1024));
        assert!(r.delivered.unwrap() > r.sent);
    }
    let mut csv = Vec::new();
    sim.write_message_records(&mut csv).unwrap();
    assert_eq!(String::from_utf8(csv).unwrap().lines().count(), 81);
}

#[test]
fn a_link_that_goes_down_loses_what_crosses_it_and_the_run_says_so() {
    let (mut f, base) = load("incast/ndp-trim.toml", |_| {});
    f.faults = vec![nanopu_cluster::config::cluster::FaultFile::link("node:7", Some(0.0), None)];
    f.max_us = 300.0;
    let mut sim = Simulation::cluster(&f, &base).unwrap();
    let outcome = sim.run().unwrap();
    assert_eq!(outcome, nanopu_cluster::Outcome::TimeLimit);
    let e = nanopu_cluster::report::judge::judge(&sim, outcome).problems.join("\n");
    assert!(e.contains("time limit of 300.000 us") && e.contains("node 0, core 0"), "{e}");
    let undelivered: Vec<_> = sim.message_records().into_iter().filter(|r| r.delivered.is_none()).collect();
    assert_eq!(undelivered.len(), 1);
    assert_eq!(undelivered[0].src_ip, nanopu_cluster::node::boot::node_ip(7));
    let (src, dst) = (nanopu_cluster::node::boot::node_ip(7), nanopu_cluster::node::boot::node_ip(0));
    let unfinished = sim.unfinished();
    assert_eq!(
        (unfinished.len(), unfinished[0].0, unfinished[0].1),
        (1, src, dst),
        "its sender still has it"
    );
    assert!(e.contains("messages never acknowledged to their senders: 1 (10.0.0.9 to 10.0.0.2 (id "), "{e}");
}

#[test]
fn one_lossy_link_loses_only_its_own_packets() {
    let lossy = |p: Option<f64>| {
        run("alltoall/leafspine-ndp.toml", move |f| {
            f.link.drop_prob = 0.0;
            f.faults = vec![nanopu_cluster::config::cluster::FaultFile::link("node:3", None, p)];
            f.faults.retain(|x| x.drop_prob.is_some());
        })
    };
    let (clean, one) = (lossy(None), lossy(Some(0.2)));
    assert_eq!((clean.fabric.drops_random, clean.messages_delivered), (0, 64 * 63));
    assert_eq!(one.messages_delivered, 64 * 63);
    assert!(one.fabric.drops_random > 20, "{}", one.text());
}
