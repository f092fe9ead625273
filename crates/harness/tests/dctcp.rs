//! DCTCP in the C TCP (`sw/tcp/tcp_dctcp.c`, built as `*_dctcp.elf`) with ECN marking in the
//! switches (`[switch] ecn_k_bytes`, `nanopu_net::fabric::ecn`): an incast of checked flows
//! through one switch port, Reno against DCTCP on the same fabric, judged by what the fabric
//! measured (docs/apps/tcp.md "DCTCP", experiments/dctcp). The fallback against a TCP
//! without ECN (smoltcp) is in `tcp.rs`.

use crate::common;

use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::report::cluster::{summarize_cluster, ClusterSummary};
use nanopu_cluster::{Outcome, Simulation};

/// Senders into node 0, and the bytes each sends (checked by the receiver, every byte).
const SENDERS: u32 = 8;
const BYTES: u64 = 200_000;
/// 1 Gb/s links and the DCTCP paper's K for 1 Gb/s, 20 full packets (SIGCOMM 2010 section
/// 4; docs/models/network.md "ECN"): the receiver's port is the bottleneck, not its core
/// (which takes about 5 Gb/s: experiments/tcp-workloads), so the queue builds in the switch.
const GBPS: u32 = 1;
const K_BYTES: u32 = 30_000;

/// `SENDERS` nodes each send one checked flow to node 0 with `elf` (tcp_flows.c), K set on
/// the switch whatever the congestion control, so that only the end hosts differ.
fn incast(elf: &str) -> ClusterSummary {
    let flows = format!("\"recv\", \"5001\", \"{SENDERS}\", \"{BYTES}\"");
    let send = format!("\"send:{}\", \"5001\", \"1\", \"{BYTES}\"", 0x0a00_0002u32);
    let text = format!(
        "max_us = 2000000.0\n[topology]\nkind = \"star\"\nnodes = {}\n[link]\nrate_gbps = {GBPS}\n\
         [switch]\necn_k_bytes = {K_BYTES}\n[node]\ncores = 1\n\
         [[program]]\nnodes = \"0\"\nelf = \"{elf}\"\nnic = \"icenic\"\nargs = [{flows}]\n\
         [[program]]\nnodes = \"1-{SENDERS}\"\nelf = \"{elf}\"\nnic = \"icenic\"\nargs = [{send}]\n",
        SENDERS + 1
    );
    let f = ClusterFile::parse(&text).unwrap();
    let mut sim = Simulation::cluster(&f, &common::sw_build().join("apps")).unwrap();
    let outcome = sim.run().unwrap();
    let s = summarize_cluster(&mut sim, outcome);
    assert_eq!(outcome, Outcome::AllExited, "{}", s.text());
    assert_eq!(s.cores_ok, SENDERS as usize + 1, "every flow checked, every byte: {}", s.text());
    s
}

/// Counter `key` of node `n`'s line `what: key=value ...`.
fn counter(s: &ClusterSummary, n: u32, what: &str, key: &str) -> u64 {
    let prefix = format!("node {n} core 0: ");
    let c = s.consoles.iter().find(|c| c.starts_with(&prefix)).expect("the node's console");
    let tag = format!("{what}: ");
    let line = c.lines().find_map(|l| l.strip_prefix(&prefix).unwrap_or(l).strip_prefix(&tag));
    let line = line.unwrap_or_else(|| panic!("no {what} line: {c}"));
    let kv = line.split_whitespace().find_map(|kv| kv.strip_prefix(&format!("{key}=")));
    kv.unwrap_or_else(|| panic!("no {key} in {line}")).parse().unwrap()
}

#[test]
fn dctcp_keeps_the_incast_queue_shorter_than_reno() {
    let reno = incast("tcp_flows.elf");
    let dctcp = incast("tcp_flows_dctcp.elf");
    let (r, d) = (&reno.fabric, &dctcp.fabric);
    let both = format!("Reno:\n{}\nDCTCP:\n{}", reno.text(), dctcp.text());
    assert_eq!(r.ecn_marks, 0, "Reno sends Not-ECT: nothing marked though K is set\n{both}");
    assert!(d.ecn_marks > 0, "the queue passed K and DCTCP's ECT packets were marked\n{both}");
    assert!(r.drops_band_full > 0, "Reno overflows the receiver's port\n{both}");
    assert!(d.drops_band_full < r.drops_band_full, "DCTCP loses fewer packets\n{both}");
    assert!(
        d.mean_switch_queue_bytes < r.mean_switch_queue_bytes,
        "the receiver port's queue is shorter on average\n{both}"
    );
    for n in 1..=SENDERS {
        assert_eq!(counter(&dctcp, n, "dctcp", "ecn_conns"), 1, "ECN negotiated\n{both}");
        assert!(counter(&dctcp, n, "dctcp", "ecn_reductions") > 0, "each sender cut its window\n{both}");
    }
    assert_eq!(counter(&dctcp, 0, "dctcp", "ce_in"), d.ecn_marks, "every mark reached the receiver\n{both}");
}
