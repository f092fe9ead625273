//! `nanopu bench erpc-loopback-latency` and `erpc-request-rate`: the eRPC-like stack
//! (docs/apps/erpc.md): `erpc_server.elf` on an IceNIC node, the test host as its client,
//! on the on-chip IceNIC and on the PCIe-attached variant (docs/models/icenic.md).

use super::common::{Columns, Programs, OUTSTANDING, SIZES};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::net::frame::PAYLOAD;
use nanopu_cluster::NodeConfig;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_harness::clients::erpc::{self, Client, ClientParams, Completed, Request};
use nanopu_sim::stats::summarize;
use nanopu_sim::{Rng, Time};
use serde_json::{json, Value};

/// Message sizes, bytes: one packet up to 1,456 bytes, then two and three.
const LATENCY_SIZES: [usize; 7] = [8, 64, 256, 512, 1024, 1456, 4096];
const RATE_SIZES: [usize; 4] = [8, 64, 256, 1024];
/// The PCIe variant's one-way latency, ns (*estimate*, docs/models/icenic.md
/// "PCIe-attached variant").
pub const PCIE_NS: f64 = 250.0;
/// Requests left out of the statistics while caches warm up (as the other benches).
const WARMUP: usize = 16;
/// When the client starts: after the server has zeroed its memory and posted buffers.
const START: Time = Time::from_us(100);

pub fn latency(elf: &[u8], requests: usize, mac_ns: f64) -> Result<Value, String> {
    let mut rows = Vec::new();
    for pcie in [0.0, PCIE_NS] {
        for &size in &LATENCY_SIZES {
            let (done, retransmits) = run(elf, pcie, mac_ns, 1, size, requests + WARMUP)?;
            let lat: Vec<f64> = done[WARMUP..].iter().map(|c| (c.done - c.issued).as_ns_f64()).collect();
            let s = summarize(&lat);
            rows.push(json!({ "pcie_ns": pcie, "msg_bytes": size, "packets": erpc::hdr::pkts(size),
                "wire_median_ns": s.median, "wire_p99_ns": s.p99, "retransmits": retransmits }));
        }
    }
    Ok(json!({ "benchmark": "erpc-loopback-latency", "unit": "ns", "requests": requests, "warmup": WARMUP,
        "definition": "echo RPCs one at a time (window 1) from the test host's eRPC-like client to erpc_server.elf on an IceNIC node; the request's first frame leaving the host to the response's last frame arriving, 26 ns of MAC and serial I/O each way, 200 Gb/s; pcie_ns 0 is the on-chip IceNIC, more the PCIe-attached variant",
        "rows": rows }))
}

pub fn rate(elf: &[u8], requests: usize, mac_ns: f64) -> Result<Value, String> {
    let mut rows = Vec::new();
    for pcie in [0.0, PCIE_NS] {
        for &size in &RATE_SIZES {
            let (done, retransmits) = run(elf, pcie, mac_ns, erpc::hdr::SLOTS, size, requests + WARMUP)?;
            let span = (done.last().expect("requests").done - done[WARMUP - 1].done).as_ns_f64();
            let mrps = requests as f64 / span * 1e3;
            rows.push(
                json!({ "pcie_ns": pcie, "msg_bytes": size, "mrps": mrps, "retransmits": retransmits }),
            );
        }
    }
    Ok(json!({ "benchmark": "erpc-request-rate", "unit": "million requests per second", "requests": requests,
        "window": erpc::hdr::SLOTS, "warmup": WARMUP,
        "definition": "echo RPCs from the test host's client with 8 outstanding (one session, 8 credits) to erpc_server.elf on one core of an IceNIC node; completions after the warm-up over the time from the warm-up's last completion to the last; 200 Gb/s",
        "rows": rows }))
}

/// The eRPC-like column of `nanopu bench nic-throughput --nic erpc` (definitions in
/// `bench_nic`): loopback requests per second per size with `OUTSTANDING` in flight, on
/// chip, no MAC latency, as the IceNIC column; no rx, tx or stream measurement (the
/// stack is measured as an RPC server: experiments/nic-compare marks them not measured).
pub fn nic_columns(sw: &Programs, n: usize, mark: usize) -> Result<Columns, String> {
    let elf = sw.read("erpc_server")?;
    let rows: Result<Vec<Value>, String> = SIZES
        .iter()
        .map(|&s| {
            let s = s as usize;
            let (done, _) = run(&elf, 0.0, 0.0, OUTSTANDING, s, n)?;
            let secs = (done[n - 1].done - done[mark - 1].done).as_secs_f64();
            let mut row = super::common::rate(n - mark, secs, s, PAYLOAD + erpc::hdr::BYTES + s);
            row["payload_bytes"] = json!(s);
            Ok(row)
        })
        .collect();
    Ok(("erpc", Value::Null, Value::Null, [Value::Array(rows?), Value::Null]))
}

/// `n` echo requests of `size` bytes with `window` outstanding: the completions by time,
/// and the client's timeouts (a frame the NIC dropped costs one, 5 ms, eRPC's default).
fn run(
    elf: &[u8],
    pcie_ns: f64,
    mac_ns: f64,
    window: usize,
    size: usize,
    n: usize,
) -> Result<(Vec<Completed>, u64), String> {
    let mut cfg = NodeConfig { nic_kind: NicKind::IceNic, pcie_ns, ..Default::default() };
    cfg.nic.cores = 1;
    cfg.port.mac_fs = Time::from_ns_f64(mac_ns).as_fs();
    let mut sim = Simulation::new(elf, cfg).map_err(|e| e.to_string())?;
    let p = ClientParams { window, exit_type: Some(erpc::REQ_EXIT), ..Default::default() };
    let mut client = Client::new(p);
    let mut rng = Rng::stream(1, size as u64);
    let reqs: Vec<Request> = (0..n).map(|_| echo(&mut rng, size)).collect();
    reqs.iter().cloned().chain(erpc::stats_and_exit()).for_each(|r| client.push(r));
    let h = client.attach(&mut sim.host, START);
    match sim.run().map_err(|e| e.to_string())? {
        Outcome::AllExited => {}
        other => return Err(format!("unexpected end of the eRPC run: {}", other.name())),
    }
    let c = h.lock().expect("client");
    let mut done: Vec<Completed> =
        c.completed.iter().filter(|d| d.req_type == erpc::REQ_ECHO).cloned().collect();
    check(&done, &reqs)?;
    done.sort_by_key(|d| d.done);
    Ok((done, c.stats.retransmits))
}

fn echo(rng: &mut Rng, size: usize) -> Request {
    Request {
        req_type: erpc::REQ_ECHO,
        data: (0..size).map(|_| rng.next_u64() as u8).collect(),
        after_all: false,
    }
}

/// Every request answered with its own data.
fn check(done: &[Completed], reqs: &[Request]) -> Result<(), String> {
    if done.len() != reqs.len() {
        return Err(format!("{} of {} requests completed", done.len(), reqs.len()));
    }
    match done.iter().find(|d| d.response != reqs[d.index].data) {
        Some(d) => Err(format!("request {} was not echoed", d.index)),
        None => Ok(()),
    }
}
