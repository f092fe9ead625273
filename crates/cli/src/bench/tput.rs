//! `nanopu bench loopback-throughput`: one core answering 16-byte requests with
//! `loopback_tput.elf` (the per-request work of the prototype's throughput program), measured
//! two ways:
//!
//! - as the prototype measured it (l-nic/chipyard `software/net-app-tester/net-app-tester.py`,
//!   `LoopbackTest.do_throughput_test`): a config message and 20 requests sent back to back
//!   from the testers' context 0x1234; the program writes the config's arrival stamp into
//!   every reply, so the port's latency module writes into the last reply the cycles from the
//!   config's first word entering the NIC to that reply leaving it; the rate is the 21
//!   messages over that time. This is the figure compared with the prototype's 118 Mrps.
//! - over a long run: N requests (default 20,000) sent back to back, N over the time from the
//!   config leaving the host to the last reply arriving. (Not between the first and the last
//!   reply: the port sends its ACKs before any reply, so under this load the replies wait
//!   until the requests stop coming.)

use nanopu_cluster::NodeConfig;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_cluster::TestHost;
use nanopu_nic::stamp::TEST_CONTEXT;
use nanopu_nic::Message;
use nanopu_sim::Time;
use serde_json::{json, Value};

/// The prototype's tester: `LoopbackTest.num_msgs` requests after one config message.
const PROTOTYPE_REQUESTS: usize = 20;
/// When the host starts sending: after the core has registered its context.
const START: Time = Time::from_us(2);
/// The start time the steady-state run configures (unstamped: any value; it is checked).
const START_STAMP: u64 = 0x5747_4152_5400_0001;

pub fn throughput(elf: &[u8], steady_requests: usize) -> Result<Value, String> {
    let (mrps, cycles) = prototype_method(elf)?;
    let steady = long_run(elf, steady_requests)?;
    Ok(json!({ "benchmark": "loopback-throughput", "cores": 1, "payload_bytes": 16,
        "million_requests_per_second": mrps, "prototype_method_cycles": cycles,
        "prototype_method_requests": PROTOTYPE_REQUESTS,
        "long_run_mrps": steady, "long_run_requests": steady_requests,
        "prototype_reference_mrps": 118,
        "definition": "loopback_tput.elf (the prototype's throughput program's per-request work, its per-request instructions the same once compiled); as the prototype's tester measured: a config message and 20 16-byte requests back to back from context 0x1234, 21 messages over the cycles from the config's first word entering the NIC to the last reply leaving it (the latency module's stamp); long_run_mrps: 16-byte requests back to back, requests over the time from the config leaving the host to the last reply arriving" }))
}

/// One core, no MAC latency: the latency module sits between the MAC and the NIC.
fn sim(elf: &[u8]) -> Result<Simulation, String> {
    let mut cfg = NodeConfig::default();
    cfg.nic.cores = 1;
    Simulation::new(elf, cfg).map_err(|e| e.to_string())
}

/// The prototype's measurement: (Mrps, cycles from the config in to the last reply out).
fn prototype_method(elf: &[u8]) -> Result<(f64, u32), String> {
    let mut sim = sim(elf)?;
    let n = PROTOTYPE_REQUESTS;
    let node = nanopu_cluster::node::boot::node_ip(0);
    sim.host.send_at(START, TestHost::message(TEST_CONTEXT, node, 0, &[0, n as u64, 0]));
    (0..n).for_each(|_| sim.host.send_at(START, TestHost::message(TEST_CONTEXT, node, 0, &[1, 0])));
    let got = run(&mut sim, n)?;
    let cycles = stamp_latency_cycles(&got[n - 1]);
    let secs = cycles as f64 / NodeConfig::default().timing.clock_hz as f64;
    Ok(((n + 1) as f64 / secs / 1e6, cycles))
}

/// A long run: `n` requests over the time from the config leaving to the last reply arriving.
fn long_run(elf: &[u8], n: usize) -> Result<f64, String> {
    let mut sim = sim(elf)?;
    let node = nanopu_cluster::node::boot::node_ip(0);
    sim.host.send_at(START, TestHost::message(0, node, 0, &[0, n as u64, START_STAMP]));
    (0..n).for_each(|i| sim.host.send_at(START, TestHost::message(0, node, 0, &[1, i as u64])));
    let got = run(&mut sim, n)?;
    if got.iter().any(|m| *m.words != [1, START_STAMP]) {
        return Err("a reply does not carry the type and the configured start time".into());
    }
    let last = sim.host.received[n - 1].time;
    Ok(n as f64 / (last - sim.host.sent[0].time).as_secs_f64() / 1e6)
}

/// Run until `n` replies came back; they must be 16-byte replies of type 1.
fn run(sim: &mut Simulation, n: usize) -> Result<Vec<Message>, String> {
    // The server polls with idle writes, as the prototype's does, so the run never goes
    // quiescent: it ends with the last reply.
    sim.host.stop_after(n, |_| true);
    match sim.run().map_err(|e| e.to_string())? {
        Outcome::HostDone => {}
        other => return Err(format!("unexpected end of the throughput run: {}", other.name())),
    }
    let got: Vec<Message> = sim.host.received.iter().map(|r| r.msg.clone()).collect();
    if got.len() != n || got.iter().any(|m| m.len != 16 || m.words[0] != 1) {
        return Err(format!("sent {n} requests, received {} replies or wrong ones", got.len()));
    }
    Ok(got)
}

/// The latency the port wrote into the last 4 bytes of a reply, in cycles of the node's clock.
pub fn stamp_latency_cycles(m: &Message) -> u32 {
    let bytes = m.payload_bytes();
    u32::from_be_bytes(bytes[bytes.len() - 4..].try_into().expect("4 bytes"))
}
