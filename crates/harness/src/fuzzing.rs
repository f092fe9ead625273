//! Fuzz target bodies for the configuration files: the one-line cargo-fuzz targets in
//! `fuzz/` and the stable-Rust driver below both call these, so the same code is fuzzed
//! either way. A body must never panic on any input: a file is either refused with an
//! error or built.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nanopu_riscv::asm;

use crate::config::load::LoadFile;
use nanopu_cluster::config::cluster::{parse_nodes, ClusterFile};
use nanopu_cluster::Simulation;

/// Largest cluster an input is built into: building takes time linear in the nodes, and a
/// large valid cluster is slow to build rather than wrong.
const MAX_BUILT_NODES: u32 = 64;

/// Parses `data` as a cluster configuration, counts its nodes, resolves its `[[program]]`
/// node ranges and, for clusters of at most `MAX_BUILT_NODES`, builds it (every program
/// replaced by a small valid one, so that no input names a file to read). Returns whether
/// the file was accepted.
pub fn cluster_config(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(data) else { return false };
    let Ok(mut f) = ClusterFile::parse(text) else { return false };
    let Ok(total) = f.node_count() else { return false };
    if f.program.iter().any(|p| parse_nodes(&p.nodes, total).is_err()) {
        return false;
    }
    if total > MAX_BUILT_NODES {
        return true;
    }
    f.program.iter_mut().for_each(|p| p.elf = ELF.into());
    Simulation::cluster(&f, program_dir()).is_ok()
}

/// Parses `data` as a load-generator configuration, derives the server node's
/// configuration and the load specs from it and, for loads of at most
/// `MAX_SCHEDULED_REQUESTS`, draws their requests. Returns whether the file was accepted.
pub fn load_config(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(data) else { return false };
    let Ok(f) = LoadFile::parse(text) else { return false };
    let (Ok(node), Ok(specs)) = (f.node_config(), f.specs()) else { return false };
    for spec in specs.iter().filter(|s| s.requests <= MAX_SCHEDULED_REQUESTS) {
        let _ = spec.schedule(node.timing.clock_hz);
    }
    true
}

/// Most requests an input's schedule is drawn for: drawing is linear in the requests.
const MAX_SCHEDULED_REQUESTS: usize = 1000;

const ELF: &str = "fuzz.elf";

/// A directory holding `ELF`, a two-instruction program, written once per process.
fn program_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("nanopu-fuzz-{}", std::process::id()));
        let elf = asm::elf_image(&[asm::NOP, asm::jal(0, 0)], true);
        let written = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(dir.join(ELF), elf));
        written.expect("a temporary file");
        dir
    })
}

#[cfg(test)]
#[path = "../../../fuzz/driver.rs"]
mod driver;

#[cfg(test)]
mod tests {
    use super::*;

    /// Words a mutation splices into a file: keys, values at the edges of their ranges and
    /// TOML syntax.
    #[rustfmt::skip]
    const DICT: &[&[u8]] = &[
        b"nodes = ", b"nodes_per_leaf = ", b"leaves = ", b"spines = ", b"cores = ", b"max_us = ",
        b"rate_gbps = ", b"propagation_ns = ", b"drop_prob = ", b"bands = ", b"band_bytes = [",
        b"latency_ns = ", b"mcast_timeout_us = ", b"max_msg_bytes = ", b"jbsq_n = ", b"msg_cycles = ",
        b"sched_timer_us = ", b"tx_queue_bytes = ", b"idle_cycles = ", b"uplink = \"hash\"",
        b"rtt_pkts = ", b"rto_us = ", b"rtt_bytes = ", b"overcommit = ",
        b"tail_fraction = ", b"tail_delay_us = ", b"down_at_us = ", b"link = \"node:", b"leaf:0:up:",
        b"[[faults]]\n", b"[[program]]\nnodes = \"all\"\nelf = \"x\"\n", b"\"leaf-spine\"", b"\"homa\"",
        b"rates_mrps = [", b"requests = ", b"warmup = ", b"drain_us = ", b"service_ns = ", b"max_ns = ",
        b"fraction = ", b"contexts = [", b"mac_ns = ", b"\"exponential\"", b"\"fixed\"", b"\"rss\"",
        b"[load.kv]\n", b"items_per_core = ", b"get_fraction = ", b"theta = ", b"value_bytes = [",
        b"keys = \"uniform\"", b"steering = \"static\"", b"format = \"prototype\"", b"link_ns = ",
        b"reply_at = \"first_byte\"",
        b"[load.setalg]\n", b"documents = ", b"vocabulary = ", b"words_per_document = ",
        b"query_words = [", b"popularity = \"uniform\"",
        b"0", b"-1", b"1e300", b"-0.0", b"nan", b"inf", b"-inf", b"4294967295", b"4294967296",
        b"18446744073709551615", b"9223372036854775807", b"65535", b"65536", b"1048576", b"0.5",
        b"\n", b"[", b"]", b"\"", b",", b"=", b".",
    ];

    const STAR: &str = "seed = 3\nmax_us = 100.0\ntransport = \"homa\"\n[topology]\nkind = \"star\"\n\
        nodes = 4\n[link]\ndrop_prob = 0.1\n[switch]\nbands = 2\nband_bytes = [4096, 8192]\n\
        [node]\ncores = 2\n[[program]]\nnodes = \"0-3\"\nelf = \"a.elf\"\nargs = [\"1\"]\n\
        [[faults]]\nlink = \"node:1\"\ndown_at_us = 5.0\n";
    const LEAF_SPINE: &str = "[topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = 2\nleaves = 2\n\
        spines = 2\n[transport_params]\nrto_us = 50.0\n[[program]]\nnodes = \"all\"\nelf = \"a.elf\"\n\
        [[faults]]\nlink = \"leaf:1:up:0\"\ndrop_prob = 0.5\n";
    const LOAD: &str = "[server]\nelf = \"s.elf\"\ncores = 2\nsched_timer_us = 5.0\n[load]\n\
        rates_mrps = [1.0, 2.5]\nrequests = 10\narrivals = \"fixed\"\n[[load.class]]\nname = \"a\"\n\
        fraction = 1.0\nservice = \"exponential\"\nservice_ns = 500.0\nmax_ns = 5000.0\ncontexts = [0, 1]\n";
    const LOAD_KV: &str = "[server]\nelf = \"s.elf\"\ncores = 2\n[load]\nrates_mrps = [1.0]\nrequests = 10\n\
        [load.kv]\nitems_per_core = 3\nget_fraction = 0.5\ntheta = 0.5\nvalue_bytes = [8, 16]\nsteering = \"static\"\n";

    /// The hand-written files above and the experiments' cluster and load files, in name
    /// order (chain and Raft files are kinds of their own, with their own parsers).
    fn seeds(own: &[&str]) -> Vec<Vec<u8>> {
        let mut paths = Vec::new();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        for dir in std::fs::read_dir(root).into_iter().flatten().flatten() {
            paths.extend(std::fs::read_dir(dir.path()).into_iter().flatten().flatten().map(|f| f.path()));
        }
        paths.retain(|p| p.extension().is_some_and(|x| x == "toml"));
        paths.sort();
        let own_kind = |f: &Vec<u8>| {
            let text = String::from_utf8_lossy(f);
            !text.lines().any(|l| l.trim() == "[chain]" || l.trim() == "[raft]")
        };
        let files = paths.iter().filter_map(|p| std::fs::read(p).ok()).filter(own_kind);
        own.iter().map(|s| s.as_bytes().to_vec()).chain(files).collect()
    }

    #[test]
    fn the_seed_files_are_accepted() {
        assert!(cluster_config(STAR.as_bytes()) && cluster_config(LEAF_SPINE.as_bytes()));
        assert!(load_config(LOAD.as_bytes()) && load_config(LOAD_KV.as_bytes()));
        let accepted = |body: fn(&[u8]) -> bool| seeds(&[]).iter().filter(|s| body(s)).count();
        assert_eq!(accepted(cluster_config) + accepted(load_config), seeds(&[]).len());
    }

    #[test]
    #[ignore = "a bounded fuzz run: `make fuzz-smoke`, or --ignored with NANOPU_FUZZ_SECS"]
    fn fuzz_smoke_cluster_config() {
        let stats = driver::run("cluster_config", seeds(&[STAR, LEAF_SPINE]), DICT, cluster_config);
        assert!(stats.accepted > 0, "{stats:?}");
    }

    #[test]
    #[ignore = "a bounded fuzz run: `make fuzz-smoke`, or --ignored with NANOPU_FUZZ_SECS"]
    fn fuzz_smoke_load_config() {
        let stats = driver::run("load_config", seeds(&[LOAD, LOAD_KV]), DICT, load_config);
        assert!(stats.accepted > 0, "{stats:?}");
    }
}
