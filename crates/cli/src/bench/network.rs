//! The network benchmark: an all-to-all on a leaf-spine, with the cores and without
//! (`fabric`), its packet-hops per host second and memory.

use super::common::Programs;
use super::BenchArgs;
use nanopu_cluster::Simulation;
use nanopu_nic::message::Message;
use nanopu_sim::Time;
use serde_json::{json, Value};

// ---- network speed --------------------------------------------------------------------------

/// Nodes per leaf of the benchmark's all-to-all leaf-spine.
const PER_LEAF: u32 = 16;
/// Nodes without `--nodes`: 16 leaves under 8 spines.
const DEFAULT_NODES: u32 = 256;
/// The shuffle's leaf-spine is the main job's (docs/nanosort.md): 64 nodes a leaf under 64
/// spines, so 16,384 nodes are its 256 leaves.
const SHUFFLE_PER_LEAF: u32 = 64;
const SHUFFLE_SPINES: u32 = 64;
/// The most nodes `--nodes` takes: the main job's 16,384 (with `--shuffle`).
const MAX_NODES: u32 = 16_384;
/// The most nodes of the all-to-all (1,024 nodes inject a million messages).
const MAX_ALL_TO_ALL: u32 = 1024;

/// `--nodes`: whole leaves of 16, from 32 (what each pattern takes is checked in `network`).
pub(super) fn parse_nodes(s: &str) -> Result<u32, String> {
    let n: u32 = s.parse().map_err(|_| format!("\"{s}\" is not a number of nodes"))?;
    match n {
        32..=MAX_NODES if n.is_multiple_of(PER_LEAF) => Ok(n),
        _ => Err(format!(
            "{n}: the network benchmark takes 32 to 1,024 nodes, a multiple of {PER_LEAF} (with --shuffle, \
             up to 16,384, a multiple of {SHUFFLE_PER_LEAF})"
        )),
    }
}

/// What the benchmark's nodes send, each message 1 KiB (one packet), all at 1 us.
#[derive(Clone, Copy, Debug)]
enum Pattern {
    /// A message to every other node.
    AllToAll,
    /// `--shuffle K`: node `i` sends one message to each of `K` nodes spread evenly over
    /// the cluster, `(i + 1 + j N / K) mod N` for `j` below `K`, so that each node also
    /// receives `K`: the traffic of a shuffle into `K` buckets, as NanoSort's levels
    /// send (docs/profile.md "The network").
    Shuffle(u32),
}

impl Pattern {
    fn of(a: &BenchArgs) -> Pattern {
        a.shuffle.map_or(Pattern::AllToAll, Pattern::Shuffle)
    }

    /// Whether `n` nodes can run it; why not.
    fn check(self, n: u32, with_cores: bool) -> Result<(), String> {
        match self {
            Pattern::AllToAll if n > MAX_ALL_TO_ALL => {
                Err(format!("--nodes {n}: the all-to-all takes 32 to 1,024 nodes (--shuffle takes up to 16,384)"))
            }
            Pattern::AllToAll => Ok(()),
            Pattern::Shuffle(_) if with_cores => {
                Err("--shuffle measures the network alone: add --network-only".into())
            }
            Pattern::Shuffle(_) if n < 2 * SHUFFLE_PER_LEAF || !n.is_multiple_of(SHUFFLE_PER_LEAF) => Err(format!(
                "--nodes {n}: the shuffle takes whole leaves of {SHUFFLE_PER_LEAF} nodes, at least two"
            )),
            Pattern::Shuffle(k) if k == 0 || k >= n || !n.is_multiple_of(k) => {
                Err(format!("--shuffle {k}: the messages a node sends must be at least 1, fewer than --nodes {n} and divide it"))
            }
            Pattern::Shuffle(_) => Ok(()),
        }
    }

    /// (nodes a leaf, leaves, spines) for `n` nodes. The all-to-all's: 16 nodes a leaf; 8
    /// spines below 512 nodes, so that a leaf's 16 nodes share 8 uplinks (2:1, the default
    /// 256 nodes' fabric), and 16 from 512 (issue 40's 32 leaves under 16 spines, 1:1).
    /// With one spine (32 nodes, 16:1) the all-to-all does not finish under the default
    /// strict priority of headers over data (`docs/models/network.md`, "Bands, trimming,
    /// drops"). The shuffle's: the main job's leaves and spines.
    fn shape(self, n: u32) -> (u32, u32, u32) {
        match self {
            Pattern::AllToAll => (PER_LEAF, n / PER_LEAF, if n < 512 { 8 } else { 16 }),
            Pattern::Shuffle(_) => (SHUFFLE_PER_LEAF, n / SHUFFLE_PER_LEAF, SHUFFLE_SPINES),
        }
    }

    /// Every (source, destination) of a message, in the order they are injected.
    fn pairs(self, n: u32) -> Box<dyn Iterator<Item = (u32, u32)>> {
        match self {
            Pattern::AllToAll => {
                Box::new((0..n).flat_map(move |s| (0..n).filter(move |&d| d != s).map(move |d| (s, d))))
            }
            Pattern::Shuffle(k) => {
                Box::new((0..n).flat_map(move |s| (0..k).map(move |j| (s, (s + 1 + j * (n / k)) % n))))
            }
        }
    }

    fn messages(self, n: u32) -> u64 {
        match self {
            Pattern::AllToAll => n as u64 * (n as u64 - 1),
            Pattern::Shuffle(k) => n as u64 * k as u64,
        }
    }

    fn describe(self, n: u32) -> String {
        let (per_leaf, leaves, spines) = self.shape(n);
        let what = match self {
            Pattern::AllToAll => format!("all-to-all of 1 KiB messages among {n} nodes"),
            Pattern::Shuffle(k) => {
                format!("shuffle of 1 KiB messages among {n} nodes, {k} sent and {k} received by each")
            }
        };
        format!("{what}, leaf-spine {leaves} leaves x {per_leaf} nodes, {spines} spines, 200 Gb/s, NDP")
    }
}

/// An `n`-node leaf-spine (`Pattern::shape`), NDP, every node running `elf`.
fn network_config(elf: &std::path::Path, n: u32, pattern: Pattern) -> String {
    let (per_leaf, leaves, spines) = pattern.shape(n);
    format!(
        "seed = 1\nmax_us = 100000.0\n[topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = {per_leaf}\nleaves = {leaves}\nspines = {spines}\n\
         [node]\ncores = 4\n[[program]]\nnodes = \"all\"\nelf = \"{}\"\nargs = [\"{n}\", \"1024\"]\n",
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
    let (n, pattern) = (a.nodes.unwrap_or(DEFAULT_NODES), Pattern::of(a));
    pattern.check(n, !a.network_only)?;
    let with_cores = if a.network_only { Value::Null } else { network_run(a, sw, "alltoall", None, n)? };
    let network_only = network_run(a, sw, "idle", Some(pattern), n)?;
    let rss = peak_rss().unwrap_or(0);
    // The fabric alone runs an all-to-all of its own: not at a shuffle's size.
    let fabric_alone = match pattern {
        Pattern::AllToAll => {
            let (per_leaf, leaves, spines) = pattern.shape(n);
            super::fabric::fabric_alone(per_leaf, leaves, spines)?
        }
        Pattern::Shuffle(_) => Value::Null,
    };
    let workload = pattern.describe(n);
    Ok(json!({ "benchmark": "network", "workload": workload,
        "with_cores": with_cores, "network_only": network_only, "fabric_alone": fabric_alone,
        "peak_rss_bytes": rss, "peak_rss_per_node_bytes": rss / n as u64 }))
}

/// One run: the all-to-all written and checked by the cores (`alltoall.elf`, `inject`
/// none), or the messages of `inject` put straight into idle nodes' transports so that only
/// the network is simulated.
fn network_run(
    a: &BenchArgs,
    sw: &Programs,
    app: &str,
    inject: Option<Pattern>,
    n: u32,
) -> Result<Value, String> {
    use nanopu_cluster::config::cluster::ClusterFile;
    use nanopu_cluster::report::cluster::summarize_cluster;
    sw.read(app)?;
    let pattern = inject.unwrap_or(Pattern::AllToAll);
    let file = ClusterFile::parse(&network_config(&sw.path(app)?, n, pattern))?;
    let (start, cpu) = (std::time::Instant::now(), super::common::cpu_seconds());
    let mut sim = Simulation::cluster(&file, std::path::Path::new(".")).map_err(|e| e.to_string())?;
    if let Some(t) = a.threads {
        sim.set_threads(t);
    }
    if let Some(p) = inject {
        inject_messages(&mut sim, p.pairs(n))?;
    }
    let setup = start.elapsed().as_secs_f64();
    let outcome = sim.run().map_err(|e| e.to_string())?;
    let (wall, cpu) = (start.elapsed().as_secs_f64(), super::common::cpu_seconds() - cpu);
    let s = summarize_cluster(&mut sim, outcome);
    if !s.failures.is_empty() || s.messages_received != pattern.messages(n) {
        return Err(format!("the {} failed:\n{}", pattern.describe(n), s.text()));
    }
    let chunks: usize = sim.nodes.iter().map(|n| n.mem.resident().chunks).sum();
    let dram_per_node = chunks as u64 * nanopu_riscv::sparse::CHUNK / sim.nodes.len() as u64;
    let (rate, threads) = (s.fabric.packet_hops as f64 / wall / 1e6, sim.threads().min(sim.partitions()));
    Ok(json!({ "packet_hops": s.fabric.packet_hops, "messages": s.messages_received, "events": sim.events(),
        "simulated_dram_per_node_bytes": dram_per_node, "threads": threads,
        "host_seconds": wall, "host_cpu_seconds": cpu, "setup_host_seconds": setup, "simulated_us": s.simulated_ns / 1e3,
        "million_packet_hops_per_host_second": rate, "million_packet_hops_per_host_core_second": rate / threads as f64 }))
}

fn inject_messages(sim: &mut Simulation, pairs: impl Iterator<Item = (u32, u32)>) -> Result<(), String> {
    use nanopu_cluster::node::boot::node_ip;
    for (src, dst) in pairs {
        // Made in place, as a core's netTX words are (one allocation, no copy).
        let words = (0..128).map(|i| ((src as u64) << 40) | ((dst as u64) << 20) | i).collect();
        let (src_ip, dst_ip, len) = (node_ip(src), node_ip(dst), 1024);
        let msg = Message { src_ip, src_context: 0, dst_ip, dst_context: 0, len, group: None, words };
        sim.inject(Time::from_us(1), src as usize, msg)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shuffle: each node sends `k` messages to `k` other nodes, all different, and
    /// receives `k`; its destinations cross the leaves as a shuffle into `k` buckets does.
    #[test]
    fn a_shuffle_sends_and_receives_k_per_node() {
        let (n, k) = (256, 16);
        let p = Pattern::Shuffle(k);
        let pairs: Vec<_> = p.pairs(n).collect();
        assert_eq!(pairs.len() as u64, p.messages(n));
        let (mut sent, mut received) = (vec![0; n as usize], vec![0; n as usize]);
        for &(s, d) in &pairs {
            assert!(s != d && d < n, "{s} -> {d}");
            (sent[s as usize], received[d as usize]) = (sent[s as usize] + 1, received[d as usize] + 1);
        }
        assert!(sent.iter().chain(&received).all(|&c| c == k), "{sent:?} {received:?}");
        let to: std::collections::BTreeSet<_> = pairs.iter().filter(|p| p.0 == 5).map(|p| p.1).collect();
        assert_eq!(to.len(), k as usize, "distinct destinations");
        let leaves: std::collections::BTreeSet<_> = to.iter().map(|d| d / SHUFFLE_PER_LEAF).collect();
        assert_eq!(leaves.len(), (n / SHUFFLE_PER_LEAF) as usize, "every leaf gets some");
    }

    #[test]
    fn the_all_to_all_sends_to_every_other_node() {
        let p = Pattern::AllToAll;
        let pairs: Vec<_> = p.pairs(32).collect();
        assert_eq!(pairs.len() as u64, p.messages(32));
        assert_eq!(pairs.len(), 32 * 31);
        assert!(pairs.iter().all(|&(s, d)| s != d));
    }

    /// What each pattern refuses, naming the flag.
    #[test]
    fn each_pattern_checks_its_size() {
        assert!(Pattern::AllToAll.check(1024, true).is_ok());
        assert!(Pattern::AllToAll.check(1040, false).unwrap_err().contains("--nodes 1040"));
        assert!(Pattern::Shuffle(16).check(16_384, false).is_ok());
        assert!(Pattern::Shuffle(16).check(256, true).unwrap_err().contains("--network-only"));
        assert!(Pattern::Shuffle(16).check(64, false).unwrap_err().contains("--nodes 64"));
        assert!(Pattern::Shuffle(16).check(272, false).unwrap_err().contains("--nodes 272"));
        for k in [0, 3, 256] {
            assert!(Pattern::Shuffle(k).check(256, false).unwrap_err().contains(&format!("--shuffle {k}")));
        }
        assert_eq!(Pattern::Shuffle(16).shape(16_384), (64, 256, 64), "the main job's leaf-spine");
        assert_eq!(Pattern::AllToAll.shape(512), (16, 32, 16), "issue 40's");
        assert!(parse_nodes(&MAX_NODES.to_string()).is_ok() && parse_nodes("16400").is_err());
    }
}
