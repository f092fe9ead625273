//! `nanopu bench icenic-loopback-latency`: closed-loop echo (`ice_loopback.elf`) or stream
//! (`ice_stream.elf`, `--app stream`) on an IceNIC node (docs/models/icenic.md), wire to
//! wire at the test host with the Ethernet MAC and serial I/O latency each way, as
//! `loopback-latency` measures the nanoPU node, for the same payload sizes.

use super::common::{App, SIZES};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::net::frame::{turned_around, udp_frame, Ends, PAYLOAD};
use nanopu_cluster::node::boot::{node_ip, node_mac};
use nanopu_cluster::NodeConfig;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_sim::stats::summarize;
use nanopu_sim::{Rng, Time};
use serde_json::{json, Value};

/// Requests excluded from the statistics while caches warm up (as `loopback-latency`).
const WARMUP: usize = 16;

pub fn latency(elf: &[u8], app: App, requests: usize, mac_ns: f64) -> Result<Value, String> {
    let n = requests + WARMUP;
    let rows: Result<Vec<Value>, String> =
        SIZES.iter().map(|&len| row(elf, app, len as usize, n, mac_ns)).collect();
    Ok(json!({ "benchmark": "icenic-loopback-latency", "app": app.name(), "unit": "ns", "requests": requests,
        "nic_definition": "the request frame's first byte entering the NIC to the reply frame's last byte leaving it: the wire latency less the MAC and serial I/O latency both ways",
        "wire_definition": "wire to wire at the host: the request frame's first byte leaving to the reply frame's last byte arriving, with 26 ns of MAC and serial I/O each way; 200 Gb/s, no propagation; the program polling on hart 0; a frame is the payload plus 42 bytes of Ethernet, IPv4 and UDP headers",
        "warmup": WARMUP, "sizes": rows? }))
}

/// An IceNIC node of one core running `elf` with `args`, MAC and serial I/O of `mac_ns`.
pub fn ice_sim(elf: &[u8], args: &[String], mac_ns: f64) -> Result<Simulation, String> {
    let mut cfg = NodeConfig { nic_kind: NicKind::IceNic, args: args.to_vec(), ..Default::default() };
    cfg.nic.cores = 1;
    cfg.port.mac_fs = Time::from_ns_f64(mac_ns).as_fs();
    Simulation::new(elf, cfg).map_err(|e| e.to_string())
}

fn row(elf: &[u8], app: App, payload: usize, n: usize, mac_ns: f64) -> Result<Value, String> {
    let mut sim = ice_sim(elf, &[n.to_string()], mac_ns)?;
    let mut rng = Rng::stream(1, payload as u64);
    sim.host.send_frame_at(Time::from_us(2), frame(&mut rng, payload));
    let mut sent = 1;
    sim.host.on_frame(move |now, _| {
        sent += 1;
        if sent > n {
            return vec![];
        }
        vec![(now + Time::from_ns(100), frame(&mut rng, payload))]
    });
    match sim.run().map_err(|e| e.to_string())? {
        Outcome::AllExited => {}
        other => return Err(format!("unexpected end of the IceNIC {} run: {}", app.name(), other.name())),
    }
    let lat = latencies(&sim, app, n)?;
    let s = summarize(&lat[WARMUP..]);
    // The MAC and serial I/O delay is fixed each way, so the NIC's own latency (the request's
    // first byte entering it to the reply's last byte leaving it, as the nanoPU prototype's
    // latency module counts) is the wire latency less it twice.
    let nic = s.median - 2.0 * mac_ns;
    Ok(json!({ "payload_bytes": payload, "frame_bytes": payload + PAYLOAD,
        "nic_median_ns": nic, "wire_median_ns": s.median, "wire_p99_ns": s.p99 }))
}

/// A UDP frame from the test host to node 0 with `payload` bytes of random 8-byte words.
pub fn frame(rng: &mut Rng, payload: usize) -> Vec<u8> {
    let words: Vec<u64> = (0..payload / 8).map(|_| rng.next_u64()).collect();
    frame_of_words(&words)
}

/// A UDP frame from the test host to node 0 whose payload is `words`, in the cores'
/// (little-endian) byte order.
pub fn frame_of_words(words: &[u64]) -> Vec<u8> {
    let host = Ends { mac: node_mac(0) - 1, ip: nanopu_sim::packet::HOST_IP, port: 7000 };
    let node = Ends { mac: node_mac(0), ip: node_ip(0), port: 9000 };
    let payload: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    udp_frame(host, node, &payload)
}

/// The reply `app` owes `request`: turned around, each payload word through
/// `App::reply_word`.
pub fn reply_to(app: App, request: &[u8]) -> Vec<u8> {
    let mut f = turned_around(request);
    for w in f[PAYLOAD..].chunks_exact_mut(8) {
        let v = app.reply_word(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        w.copy_from_slice(&v.to_le_bytes());
    }
    f
}

/// Each reply's latency, checked to be what `app` owes its request.
fn latencies(sim: &Simulation, app: App, n: usize) -> Result<Vec<f64>, String> {
    let (sent, got) = (&sim.host.frames_sent, &sim.host.frames_received);
    if sent.len() != n || got.len() != n {
        return Err(format!("sent {} frames, received {} replies, expected {n}", sent.len(), got.len()));
    }
    let pairs = sent.iter().zip(got);
    if let Some((s, _)) = pairs.clone().find(|(s, r)| r.frame != reply_to(app, &s.frame)) {
        return Err(format!("a reply does not answer its request ({} bytes, {})", s.frame.len(), app.name()));
    }
    Ok(pairs.map(|(s, r)| (r.time - s.time).as_ns_f64()).collect())
}
