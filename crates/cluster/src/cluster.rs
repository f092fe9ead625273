//! Building a cluster run from a configuration file.

use crate::cluster_config::{parse_nodes, ClusterFile};
use crate::config::NodeConfig;
use crate::network::Network;
use crate::node::Node;
use crate::{SimError, Simulation};
use nanopu_nic::params::CoreSelection;
use nanopu_riscv::Program;
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
    let mut cache: BTreeMap<&str, Arc<Program>> = BTreeMap::new();
    let mut out = Vec::new();
    for p in &f.program {
        if !cache.contains_key(p.elf.as_str()) {
            let path = base.join(&p.elf);
            let bytes = std::fs::read(&path).map_err(|e| format!("program.elf: {}: {e}", path.display()))?;
            let prog = Program::load(&bytes).map_err(|e| format!("program.elf: {}: {e}", path.display()))?;
            cache.insert(p.elf.as_str(), Arc::new(prog));
        }
        out.push(cache[p.elf.as_str()].clone());
    }
    Ok(out)
}

/// Per-node configuration shared by every node.
fn node_config(f: &ClusterFile) -> Result<NodeConfig, String> {
    let (n, mut c) = (&f.node, NodeConfig::default());
    c.nic.cores = n.cores.unwrap_or(c.nic.cores);
    c.nic.max_msg_bytes = n.max_msg_bytes.unwrap_or(c.nic.max_msg_bytes);
    if let Some(s) = &n.core_selection {
        c.nic.core_selection = CoreSelection::parse(s).map_err(|e| format!("node.{e}"))?;
    }
    c.nic.jbsq_n = n.jbsq_n.unwrap_or(c.nic.jbsq_n);
    c.nic.msg_cycles = n.msg_cycles.unwrap_or(c.nic.msg_cycles);
    c.nic.idle_cycles = n.idle_cycles.unwrap_or(c.nic.idle_cycles);
    let timer_us = n.sched_timer_us.unwrap_or(0.0);
    if !(timer_us >= 0.0) {
        return Err("node.sched_timer_us: must not be negative".into());
    }
    c.nic.sched_timer_cycles = (timer_us * c.timing.clock_hz as f64 / 1e6).round() as u64;
    c.max_cycles = (f.max_us * c.timing.clock_hz as f64 / 1e6).round() as u64;
    Ok(c)
}

impl Simulation {
    /// A cluster as a configuration file describes it; ELF paths relative to `base`.
    pub fn cluster(f: &ClusterFile, base: &Path) -> Result<Simulation, SimError> {
        let setup = |e: String| SimError::Setup(e);
        let total = f.node_count().map_err(setup)?;
        let who = assignments(f, total).map_err(setup)?;
        let progs = programs(f, base).map_err(setup)?;
        let mut cfg = node_config(f).map_err(setup)?;
        cfg.validate().map_err(setup)?;
        let mut nodes = Vec::with_capacity(total as usize);
        let mut spins: Vec<Option<Arc<Vec<u64>>>> = vec![None; progs.len()];
        for (n, p) in who.iter().map(|p| p.expect("assigned")).enumerate() {
            cfg.args = f.program[p].args.clone();
            cfg.program_name = f.program[p].elf.rsplit('/').next().unwrap_or("program").to_string();
            let node = Node::new(n as u32, &progs[p], &cfg, spins[p].as_ref())
                .map_err(|e| setup(format!("node {n}: {e}")))?;
            spins[p].get_or_insert_with(|| node.spin_pcs.clone());
            nodes.push(node);
        }
        let mut sim = Simulation::with_nodes(nodes, &cfg)?;
        sim.net = Some(Network::new(f, total).map_err(setup)?);
        let hops = sim.clock.cycle_floor(nanopu_sim::Time::from_ns_f64(2.0 * f.link.propagation_ns));
        sim.cross_node_cycles = cfg.nic.tx_path_cycles + cfg.nic.rx_path_cycles + hops;
        Ok(sim)
    }
}
