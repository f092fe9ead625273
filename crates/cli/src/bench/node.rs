//! One node's benchmarks: loopback latency against the prototype's stamps, RX of queued
//! messages, and the instruction-set simulator's speed.

use super::common::{node_cfg, request, App, Programs, SIZES, START};
use super::{BenchArgs, MAC_NS};
use nanopu_cluster::host::HOST_IP;
use nanopu_cluster::NodeConfig;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_nic::Message;
use nanopu_sim::stats::summarize;
use nanopu_sim::{Rng, Time};
use serde_json::{json, Value};

/// Requests excluded from latency statistics while caches warm up.
const WARMUP: usize = 16;

// ---- loopback latency -----------------------------------------------------------------------

pub(super) fn latency(a: &BenchArgs, sw: &Programs) -> Result<Value, String> {
    let elf = sw.read(a.app().name())?;
    let n = a.requests.unwrap_or(500) + WARMUP;
    let rows: Result<Vec<Value>, String> =
        SIZES.iter().map(|&len| latency_row(&elf, a.app(), len, n)).collect();
    Ok(json!({ "benchmark": "loopback-latency", "app": a.app().name(), "unit": "ns", "requests": n - WARMUP,
        "nic_definition": "the prototype's latency module: requests from context 0x1234; first word of the request's last packet entering the NIC to the last word of the reply's last packet leaving it, read from the reply's stamp (MAC excluded)",
        "wire_definition": "wire to wire at the host: the request's first byte leaving to the reply's last byte arriving, with 26 ns of MAC and serial I/O each way; 200 Gb/s, no propagation",
        "warmup": WARMUP,
        "prototype_reference_16B": { "nic_ns": 17, "wire_ns": 69 },
        "sizes": rows? }))
}

fn latency_row(elf: &[u8], app: App, len: u16, n: usize) -> Result<Value, String> {
    let mut sim = Simulation::new(elf, node_cfg(4, MAC_NS)).map_err(|e| e.to_string())?;
    let mut rng = Rng::stream(1, len as u64);
    sim.host.send_at(START, stamped_request(&mut rng, len));
    let mut sent = 1usize;
    sim.host.on_receive(move |now, _| {
        if sent >= n {
            return vec![];
        }
        sent += 1;
        vec![(now + Time::from_ns(100), stamped_request(&mut rng, len))]
    });
    finish(&mut sim)?;
    let (nic, wire) = paired_latencies(&sim, app, n)?;
    let (nic, wire) = (summarize(&nic[WARMUP..]), summarize(&wire[WARMUP..]));
    Ok(json!({ "payload_bytes": len, "nic_median_ns": nic.median, "nic_p99_ns": nic.p99,
        "wire_median_ns": wire.median, "wire_p99_ns": wire.p99 }))
}

/// A request from the testers' context 0x1234, so that the port stamps it. Its last word,
/// where the stamps go, is 0: `stream.elf` adds one to it before the port writes the
/// stamps over it, and no carry may reach the stamp.
fn stamped_request(rng: &mut Rng, len: u16) -> Message {
    let mut m = Message { src_context: nanopu_nic::stamp::TEST_CONTEXT, ..request(rng, len) };
    let words = std::sync::Arc::get_mut(&mut m.words).expect("a new message's words are its own");
    words.last_mut().into_iter().for_each(|w| *w = 0);
    m
}

fn finish(sim: &mut Simulation) -> Result<(), String> {
    match sim.run().map_err(|e| e.to_string())? {
        Outcome::Quiescent => Ok(()),
        Outcome::AllExited => Err("the loopback program exited; it should serve forever".into()),
        other => Err(format!("unexpected end of the loopback run: {}", other.name())),
    }
}

/// The latency of each request, the NIC's (from the reply's stamp) and wire to wire at the
/// host, pairing the i-th reply with the i-th request (one outstanding).
fn paired_latencies(sim: &Simulation, app: App, n: usize) -> Result<(Vec<f64>, Vec<f64>), String> {
    let (sent, got) = (&sim.host.sent, &sim.host.received);
    if got.len() != n || sent.len() != n {
        return Err(format!("sent {} requests, received {} replies, expected {n}", sent.len(), got.len()));
    }
    let (port, ns_per_cycle) = (sim.port(), 1e9 / NodeConfig::default().timing.clock_hz as f64);
    let first_byte = |m: &Message| {
        let packets = (m.len as u64).div_ceil(port.segment_bytes as u64).max(1);
        nanopu_sim::time::serialization(packets * port.header_bytes as u64 + m.len as u64, port.rate_bps)
    };
    let mut out = (Vec::new(), Vec::new());
    for (s, r) in sent.iter().zip(got) {
        check_stamped_reply(app, &s.msg, &r.msg)?;
        out.0.push(super::tput::stamp_latency_cycles(&r.msg) as f64 * ns_per_cycle);
        out.1.push((r.time - s.time + first_byte(&s.msg)).as_ns_f64());
    }
    Ok(out)
}

/// The reply `app` owes a stamped request: its words through `App::reply_word`, but the
/// last (where the port writes the stamps).
fn check_stamped_reply(app: App, req: &Message, rep: &Message) -> Result<(), String> {
    let unstamped = |m: &Message| m.words[..m.words.len().saturating_sub(1)].to_vec();
    let want: Vec<u64> = unstamped(req).into_iter().map(|w| app.reply_word(w)).collect();
    if rep.dst_ip != HOST_IP || rep.len != req.len || unstamped(rep) != want || req.len < 8 {
        return Err(format!("{} reply does not answer the request: sent {req:?}, got {rep:?}", app.name()));
    }
    Ok(())
}

// ---- receive path ---------------------------------------------------------------------------

pub(super) fn rx(sw: &Programs) -> Result<Value, String> {
    let elf = sw.read("rxcount")?;
    let rows: Result<Vec<Value>, String> = [1usize, 64].iter().map(|&k| rx_row(&elf, k)).collect();
    Ok(json!({ "benchmark": "rx", "payload_bytes": 16, "rows": rows?,
        "definition": "after one warm-up message, from the first timed message's last byte reaching the NIC to the core having read and marked done the last one (mcycle printed by rxcount.elf); messages sent back to back at 200 Gb/s",
        "prototype_reference": { "1_message_ns": 8, "64_messages_ns": 400 } }))
}

fn rx_row(elf: &[u8], k: usize) -> Result<Value, String> {
    let mut cfg = node_cfg(4, 0.0);
    cfg.args = vec![k.to_string()];
    let mut sim = Simulation::new(elf, cfg).map_err(|e| e.to_string())?;
    let mut rng = Rng::stream(3, k as u64);
    sim.host.send_at(START, request(&mut rng, 16));
    let timed = START + Time::from_us(1);
    (0..k).for_each(|_| sim.host.send_at(timed, request(&mut rng, 16)));
    if sim.run().map_err(|e| e.to_string())? != Outcome::AllExited {
        return Err("rxcount.elf did not exit".into());
    }
    let console = String::from_utf8_lossy(&sim.nodes[0].cores[0].take_console()).into_owned();
    let end: u64 = console
        .trim()
        .strip_prefix("end_cycle=")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("rxcount.elf printed {console:?}, expected end_cycle=N"))?;
    let arrival = sim.host.sent[1].time;
    let ns = (sim.clock().time_of(end) - arrival).as_ns_f64();
    Ok(json!({ "messages": k, "ns": ns, "ns_per_message": ns / k as f64 }))
}

// ---- ISS speed ------------------------------------------------------------------------------

pub(super) fn iss(sw: &Programs, engine: nanopu_riscv::Engine) -> Result<Value, String> {
    let elf = sw.read("compute")?;
    let mut cfg = node_cfg(1, 0.0);
    cfg.max_cycles = 20_000_000_000;
    cfg.engine = engine;
    let mut sim = Simulation::new(&elf, cfg).map_err(|e| e.to_string())?;
    let start = std::time::Instant::now();
    let outcome = sim.run().map_err(|e| e.to_string())?;
    let wall = start.elapsed().as_secs_f64();
    let core = &sim.nodes[0].cores[0];
    if outcome != Outcome::AllExited || core.halted() != Some(0) {
        return Err(format!("compute.elf did not exit cleanly: {outcome:?}, {:?}", core.halted()));
    }
    let instret = core.stats().instret;
    Ok(json!({ "benchmark": "iss", "program": "compute.elf", "engine": engine.name(),
        "instructions": instret,
        "cycles": core.cycle(), "host_seconds": wall,
        "million_instructions_per_host_second": instret as f64 / wall / 1e6 }))
}
