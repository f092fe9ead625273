//! The network benchmark: an all-to-all on a leaf-spine, with the cores and without
//! (`fabric`), its packet-hops per host second and memory.

use super::common::Programs;
use super::BenchArgs;
use nanopu_cluster::Simulation;
use nanopu_cluster::TestHost;
use nanopu_sim::Time;
use serde_json::{json, Value};

// ---- network speed --------------------------------------------------------------------------

/// A 256-node leaf-spine (16 leaves x 16 nodes, 8 spines), NDP, every node running `elf`.
fn network_config(elf: &std::path::Path) -> String {
    format!(
        "seed = 1\nmax_us = 100000.0\n[topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = 16\nleaves = 16\nspines = 8\n\
         [node]\ncores = 4\n[[program]]\nnodes = \"all\"\nelf = \"{}\"\nargs = [\"256\", \"1024\"]\n",
        elf.display()
    )
}

/// Peak resident memory of this process, bytes (Linux `VmHWM`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

pub(super) fn network(a: &BenchArgs, sw: &Programs) -> Result<Value, String> {
    let with_cores = if a.network_only { Value::Null } else { network_run(a, sw, "alltoall", false)? };
    let network_only = network_run(a, sw, "idle", true)?;
    let rss = peak_rss().unwrap_or(0);
    let fabric_alone = super::fabric::fabric_alone()?;
    Ok(json!({ "benchmark": "network",
        "workload": "all-to-all of 1 KiB messages among 256 nodes, leaf-spine 16 leaves x 16 nodes, 8 spines, 200 Gb/s, NDP",
        "with_cores": with_cores, "network_only": network_only, "fabric_alone": fabric_alone,
        "peak_rss_bytes": rss, "peak_rss_per_node_bytes": rss / 256, "target_million_packet_hops_per_host_core": 10 }))
}

/// One all-to-all: written and checked by the cores (`alltoall.elf`), or injected straight
/// into idle nodes' transports so that only the network is simulated.
fn network_run(a: &BenchArgs, sw: &Programs, app: &str, inject: bool) -> Result<Value, String> {
    use nanopu_cluster::config::cluster::ClusterFile;
    use nanopu_cluster::report::cluster::summarize_cluster;
    sw.read(app)?;
    let file = ClusterFile::parse(&network_config(&sw.path(app)?))?;
    let start = std::time::Instant::now();
    let mut sim = Simulation::cluster(&file, std::path::Path::new(".")).map_err(|e| e.to_string())?;
    if let Some(t) = a.threads {
        sim.set_threads(t);
    }
    if inject {
        inject_all_to_all(&mut sim, 256)?;
    }
    let setup = start.elapsed().as_secs_f64();
    let outcome = sim.run().map_err(|e| e.to_string())?;
    let wall = start.elapsed().as_secs_f64();
    let s = summarize_cluster(&mut sim, outcome);
    if !s.failures.is_empty() || s.messages_received != 256 * 255 {
        return Err(format!("the all-to-all failed:\n{}", s.text()));
    }
    let chunks: usize = sim.nodes.iter().map(|n| n.mem.resident().chunks).sum();
    let dram_per_node = chunks as u64 * nanopu_riscv::sparse::CHUNK / sim.nodes.len() as u64;
    let (rate, threads) = (s.fabric.packet_hops as f64 / wall / 1e6, sim.threads().min(sim.partitions()));
    Ok(json!({ "packet_hops": s.fabric.packet_hops, "messages": s.messages_received, "events": sim.events(),
        "simulated_dram_per_node_bytes": dram_per_node, "threads": threads,
        "host_seconds": wall, "setup_host_seconds": setup, "simulated_us": s.simulated_ns / 1e3,
        "million_packet_hops_per_host_second": rate, "million_packet_hops_per_host_core_second": rate / threads as f64 }))
}

fn inject_all_to_all(sim: &mut Simulation, n: u32) -> Result<(), String> {
    use nanopu_cluster::node::boot::node_ip;
    for (src, dst) in (0..n).flat_map(|s| (0..n).filter(move |&d| d != s).map(move |d| (s, d))) {
        let words: Vec<u64> = (0..128).map(|i| ((src as u64) << 40) | ((dst as u64) << 20) | i).collect();
        let mut msg = TestHost::message(0, node_ip(dst), 0, &words);
        msg.src_ip = node_ip(src);
        sim.inject(Time::from_us(1), src as usize, msg)?;
    }
    Ok(())
}
