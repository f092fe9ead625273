//! Building a cluster run from a configuration file.

use crate::config::cluster::{parse_nodes, ClusterFile};
use crate::config::keys::Given;
use crate::config::{check, NodeConfig};
use crate::net::Network;
use crate::node::{Node, Shared};
use crate::SimError;
use crate::Simulation;
use nanopu_riscv::{AbiChoice, Program};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The program and arguments of each node, from the `[[program]]` entries.
fn assignments(f: &ClusterFile, total: u32) -> Result<Vec<Option<usize>>, String> {
    let mut who = vec![None; total as usize];
    for (i, p) in f.program.iter().enumerate() {
        for n in parse_nodes(&p.nodes, total)? {
            who[n as usize] = Some(i);
        }
    }
    match who.iter().position(Option::is_none) {
        Some(n) => Err(format!("program: node {n} has no program (add a [[program]] entry covering it)")),
        None => Ok(who),
    }
}

/// Load every distinct ELF once.
fn programs(f: &ClusterFile, base: &Path) -> Result<Vec<Arc<Program>>, String> {
    let mut cache: BTreeMap<(&str, AbiChoice), Arc<Program>> = BTreeMap::new();
    let mut out = Vec::new();
    for p in &f.program {
        let key = (p.elf.as_str(), p.abi_choice()?);
        if let std::collections::btree_map::Entry::Vacant(slot) = cache.entry(key) {
            slot.insert(Arc::new(load(&base.join(&p.elf), key.1)?));
        }
        out.push(cache[&key].clone());
    }
    Ok(out)
}

/// One program file, loaded with the ABI its `[[program]]` asks for.
fn load(path: &Path, abi: AbiChoice) -> Result<Program, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("program.elf: {}: {e}", path.display()))?;
    Program::load_as(&bytes, &Default::default(), abi)
        .map_err(|e| format!("program.elf: {}: {e}", path.display()))
}

/// Per-node configuration shared by every node (the file is validated: no check here
/// repeats `ClusterFile::validate`, but every time conversion is a checked one).
fn node_config(f: &ClusterFile) -> Result<NodeConfig, String> {
    let (n, mut c) = (&f.node, NodeConfig::default());
    c.nic.cores = n.cores.unwrap_or(c.nic.cores);
    c.exit = n.exit_mode()?;
    c.engine = n.engine()?;
    c.timing = n.memory()?.apply(c.timing);
    let hz = c.timing.clock_hz;
    n.nic_settings.apply(&mut c.nic, Given::Section("node"), hz)?;
    c.max_cycles = f.limit_cycles()?;
    c.rdma.link_bps = (f.link.rate_gbps * 1e9).round() as u64;
    Ok(c)
}

/// Bytes a cluster takes once built, before its first instruction: an *estimate* from peak
/// memory measured on idle stars and leaf-spines of 16-65,536 nodes (debug and release
/// builds share the data structures): about 14.5 KB for each of a node's first four cores
/// (with the node's share: caches, NIC and transport state, stack pages), 5.5 KB for each
/// further core and 0.81 KB per port (queues, link RNG), plus the process; 30% high for
/// one-core nodes, within 5% otherwise. What the run puts in flight comes on top.
pub(crate) fn setup_bytes_estimate(nodes: u64, cores: u64, ports: u64) -> u64 {
    let (core, extra_core) = (14_848, 5_632);
    let per_node = core * cores.min(4) + extra_core * cores.saturating_sub(4);
    (10 << 20) + nodes * per_node + ports * 810
}

/// Refuse a cluster whose estimated setup memory exceeds `available` bytes.
fn check_memory(nodes: u64, cores: u64, ports: u64, available: Option<u64>) -> Result<(), String> {
    let need = setup_bytes_estimate(nodes, cores, ports);
    match available {
        Some(have) if need > have => Err(format!(
            "topology: {nodes} nodes of {cores} cores and {ports} ports need about {:.1} GB to \
             build (an estimate, before the run's own traffic), more than the {:.1} GB of memory \
             available; use fewer nodes, cores or switch ports",
            need as f64 / 1e9,
            have as f64 / 1e9
        )),
        _ => Ok(()),
    }
}

/// Memory this process may still take, bytes: the least of the kernel's `MemAvailable`
/// and what a cgroup limit (v2 `memory.max`, v1 `memory.limit_in_bytes`) leaves. None
/// when none of them can be read (the check is then skipped).
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| mem_available(&t));
    let v2 = cgroup_room("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current");
    let v1 = cgroup_room(
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
        "/sys/fs/cgroup/memory/memory.usage_in_bytes",
    );
    [meminfo, v2, v1].into_iter().flatten().min()
}

/// `MemAvailable` of a /proc/meminfo text, bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A cgroup's limit minus its usage ("max" or an unreadable file: no limit).
fn cgroup_room(limit: &str, usage: &str) -> Option<u64> {
    let read = |p: &str| std::fs::read_to_string(p).ok()?.trim().parse::<u64>().ok();
    Some(read(limit)?.saturating_sub(read(usage).unwrap_or(0)))
}

/// Fewest cycles a NIC of this configuration takes from a core's send to a core of
/// another node seeing it, besides the links: the nanoPU NIC's TX and RX paths, or an
/// IceNIC's shortest (a DMA read hitting the L2, the transmit pipe, the receive pipe and a
/// DMA write hitting the L2, for the shortest frame; docs/models/icenic.md "Clusters"), or
/// the RDMA NIC's transmit and receive pipes (docs/models/rdma-nic.md), whichever is
/// least, so that the bound holds for every node of a mixed cluster.
fn nic_path_cycles(cfg: &NodeConfig) -> u64 {
    let nanopu = cfg.nic.tx_path_cycles + cfg.nic.rx_path_cycles;
    let i = &cfg.ice;
    let stream = (i.min_frame_bytes as u64).div_ceil(i.flit_bytes.max(1));
    let ice = i.tx_pipe_cycles + i.rx_pipe_cycles + 2 * (cfg.timing.l2_latency + stream);
    let rdma = cfg.rdma.tx_pipe_cycles + cfg.rdma.rx_pipe_cycles;
    nanopu.min(ice).min(rdma)
}

/// What this process builds of the cluster: every partition and node, or across MPI ranks
/// the partitions its rank advances (`ranks::owned`), their nodes (numbered leaf by leaf,
/// so consecutive) and their ports and switches. The other ranks' are never built: what
/// crosses ranks is packets (docs/parallel.md, "Across MPI ranks").
struct Share {
    parts: Option<std::ops::Range<u32>>,
    nodes: std::ops::Range<usize>,
    /// The ports of `parts`, for the memory estimate.
    ports: u64,
}

fn rank_share(f: &ClusterFile) -> Result<Share, String> {
    let p = crate::net::fabric_params(f)?;
    let wiring = nanopu_net::fabric::Wiring::new(p.topology).with_host(p.host);
    let all = 0..wiring.nodes as usize;
    let Some(r) = crate::engine::ranks::current() else {
        return Ok(Share { parts: None, nodes: all, ports: wiring.port_count() });
    };
    let mine = crate::engine::ranks::owned(wiring.partitions() as usize, r.size(), r.rank())?;
    let of = |n: usize| wiring.part_of_node(n as u32) as usize;
    let start = all.clone().find(|&n| of(n) >= mine.start).unwrap_or(all.end);
    let end = (start..all.end).find(|&n| of(n) >= mine.end).unwrap_or(all.end);
    let parts = mine.start as u32..mine.end as u32;
    let ports = nanopu_net::fabric::Scope::parts(&wiring, parts.clone()).ports.len() as u64;
    Ok(Share { parts: Some(parts), nodes: start..end, ports })
}

impl Simulation {
    /// A cluster as a configuration file describes it; ELF paths relative to `base`.
    pub fn cluster(f: &ClusterFile, base: &Path) -> Result<Simulation, SimError> {
        let setup = |e: String| SimError::Setup(e);
        f.validate().map_err(setup)?;
        let size = f.topology().and_then(|t| t.size()).map_err(setup)?;
        let cores = f.node.cores.unwrap_or(NodeConfig::default().nic.cores) as u64;
        let share = rank_share(f).map_err(setup)?;
        let block = share.nodes.clone();
        check_memory(block.len() as u64, cores, share.ports, available_memory()).map_err(setup)?;
        let who = assignments(f, size.nodes).map_err(setup)?;
        let progs = programs(f, base).map_err(setup)?;
        let mut cfg = node_config(f).map_err(setup)?;
        cfg.validate().map_err(setup)?;
        let (rdma, ice) = (cfg.rdma.clone(), cfg.ice.clone());
        let mut nodes = Vec::with_capacity(block.len());
        let mut shared: Vec<Shared> = progs.iter().map(|_| Shared::default()).collect();
        for (n, p) in who.iter().map(|p| p.expect("assigned")).enumerate().take(block.end).skip(block.start) {
            cfg.args = f.program[p].args.clone();
            cfg.nic_kind = f.program[p].nic_kind().map_err(setup)?;
            cfg.pcie_ns = f.program[p].pcie().map_err(setup)?;
            cfg.zero = f.program[p].zero_params(cfg.timing.clock_hz).map_err(setup)?;
            cfg.rdma = f.program[p].rdma_params(&rdma).map_err(setup)?;
            cfg.ice = f.program[p].ice_params(&ice).map_err(setup)?;
            cfg.program_name = f.program[p].elf.rsplit('/').next().unwrap_or("program").to_string();
            let node = Node::new(n as u32, &progs[p], &cfg, &mut shared[p])
                .map_err(|e| setup(format!("node {n}: {e}")))?;
            nodes.push(node);
        }
        let mut sim = Simulation::with_nodes(nodes, &cfg)?;
        sim.base = block.start;
        sim.net = Some(Network::new(f, &mut sim.nodes, share.parts).map_err(setup)?);
        sim.faults = f.checked_faults().map_err(setup)?;
        sim.schedule_crashes(&sim.faults.clone());
        let prop = check::time_ns(f.link.propagation_ns, "link.propagation_ns").map_err(setup)?;
        let hops = sim.clock.cycle_floor(prop + prop);
        sim.cross_node_cycles = nic_path_cycles(&cfg) + hops;
        sim.set_limit_name("max_us");
        Ok(sim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_estimate_follows_the_measurements() {
        // Measured peaks: 16,384 x 4 cores 0.99 GB; 65,536 x 1 core 0.81 GB; 4,096 x 64
        // cores 1.56 GB; 4 x 4 x 4,096 leaf-spine (16.8 M ports) 13.48 GB.
        let gb = |n, c, p| setup_bytes_estimate(n, c, p) as f64 / 1e9;
        assert!((0.99..1.1).contains(&gb(16_384, 4, 32_768)), "{}", gb(16_384, 4, 32_768));
        assert!((0.81..1.1).contains(&gb(65_536, 1, 131_072)), "{}", gb(65_536, 1, 131_072));
        assert!((1.56..1.7).contains(&gb(4_096, 64, 8_192)), "{}", gb(4_096, 64, 8_192));
        assert!((13.48..14.0).contains(&gb(16, 1, 16_810_016)), "{}", gb(16, 1, 16_810_016));
    }

    #[test]
    fn a_cluster_larger_than_memory_is_refused_with_the_estimate() {
        let e = check_memory(1 << 20, 4, 1 << 21, Some(8 << 30)).unwrap_err();
        assert!(e.contains("about 64.0 GB") && e.contains("an estimate") && e.contains("8.6 GB"), "{e}");
        assert!(check_memory(1 << 20, 4, 1 << 21, None).is_ok());
        assert!(check_memory(16, 4, 100, Some(1 << 30)).is_ok());
    }

    #[test]
    fn meminfo_is_read_in_bytes() {
        let t = "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(mem_available(t), Some(20_000_000 * 1024));
    }
}
