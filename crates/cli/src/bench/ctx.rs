//! `nanopu bench context-switch`: the nanokernel's switch from the NIC interrupt to the
//! target's first instruction (docs/platform.md section 2; the prototype measured 160 cycles), measured
//! by `ctxswitch.elf` on one core: a priority-1 context spins storing mcycle, a message for
//! the priority-0 context arrives, and that context reports the cycles between the last
//! store and its first instruction.

use nanopu_cluster::NodeConfig;
use nanopu_cluster::Simulation;
use nanopu_cluster::TestHost;
use nanopu_sim::stats::summarize;
use nanopu_sim::Time;
use serde_json::{json, Value};

/// Measurements; the first runs with cold caches (the frame and stack are first touched).
const PAIRS: u64 = 9;

pub fn context_switch(elf: &[u8]) -> Result<Value, String> {
    let mut cfg = NodeConfig::default();
    cfg.nic.cores = 1;
    let mut sim = Simulation::new(elf, cfg).map_err(|e| e.to_string())?;
    let ip = nanopu_cluster::node::boot::node_ip(0);
    for i in 0..PAIRS {
        let t = Time::from_ns(5_000 + 5_000 * i);
        sim.host.send_at(t, TestHost::message(3, ip, 1, &[100 + i]));
        sim.host.send_at(t + Time::from_ns(1_000), TestHost::message(4, ip, 0, &[i]));
    }
    sim.run().map_err(|e| e.to_string())?;
    let figures: Vec<u64> =
        sim.host.received.iter().filter(|r| r.msg.dst_context == 4).map(|r| r.msg.words[0]).collect();
    if figures.len() != PAIRS as usize || figures.contains(&0) {
        return Err(format!("ctxswitch.elf gave {figures:?}: expected {PAIRS} non-zero measurements"));
    }
    let warm = summarize(&figures[1..].iter().map(|&c| c as f64).collect::<Vec<_>>());
    Ok(json!({ "cold_cycles": figures[0], "warm_median_cycles": warm.median, "warm_max_cycles": warm.max,
        "all_cycles": figures, "prototype_cycles": 160 }))
}
