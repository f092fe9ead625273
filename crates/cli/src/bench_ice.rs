//! `nanopu bench icenic-loopback-latency`: closed-loop echo through `ice_loopback.elf` on
//! an IceNIC node (docs/models/icenic.md), wire to wire at the test host with the
//! Ethernet MAC and serial I/O latency each way, as `loopback-latency` measures the
//! nanoPU node.

use nanopu_cluster::boot::{node_ip, node_mac};
use nanopu_cluster::config::NicKind;
use nanopu_cluster::ice_frame::{turned_around, udp_frame, Ends, PAYLOAD};
use nanopu_cluster::{NodeConfig, Outcome, Simulation};
use nanopu_sim::stats::summarize;
use nanopu_sim::{Rng, Time};
use serde_json::{json, Value};

/// Frame sizes, bytes in all (Ethernet, IPv4 and UDP headers included).
const SIZES: [usize; 6] = [64, 128, 256, 512, 1024, 1516];
/// Requests excluded from the statistics while caches warm up (as `loopback-latency`).
const WARMUP: usize = 16;

pub fn latency(elf: &[u8], requests: usize, mac_ns: f64) -> Result<Value, String> {
    let n = requests + WARMUP;
    let rows: Result<Vec<Value>, String> = SIZES.iter().map(|&len| row(elf, len, n, mac_ns)).collect();
    Ok(json!({ "benchmark": "icenic-loopback-latency", "unit": "ns", "requests": requests,
        "wire_definition": "wire to wire at the host: the request frame's first byte leaving to the reply frame's last byte arriving, with 26 ns of MAC and serial I/O each way; 200 Gb/s, no propagation; ice_loopback.elf polling on hart 0",
        "warmup": WARMUP, "sizes": rows? }))
}

fn row(elf: &[u8], len: usize, n: usize, mac_ns: f64) -> Result<Value, String> {
    let mut cfg = NodeConfig { nic_kind: NicKind::IceNic, args: vec![n.to_string()], ..Default::default() };
    cfg.port.mac_fs = Time::from_ns_f64(mac_ns).as_fs();
    let mut sim = Simulation::new(elf, cfg).map_err(|e| e.to_string())?;
    let mut rng = Rng::stream(1, len as u64);
    sim.host.send_frame_at(Time::from_us(2), frame(&mut rng, len));
    let mut sent = 1;
    sim.host.on_frame(move |now, _| {
        sent += 1;
        if sent > n {
            return vec![];
        }
        vec![(now + Time::from_ns(100), frame(&mut rng, len))]
    });
    match sim.run().map_err(|e| e.to_string())? {
        Outcome::AllExited => {}
        other => return Err(format!("unexpected end of the IceNIC loopback run: {}", other.name())),
    }
    let lat = latencies(&sim, n)?;
    let s = summarize(&lat[WARMUP..]);
    Ok(
        json!({ "frame_bytes": len, "payload_bytes": len - PAYLOAD, "wire_median_ns": s.median, "wire_p99_ns": s.p99 }),
    )
}

/// A UDP frame of `len` bytes from the test host to node 0, random payload.
fn frame(rng: &mut Rng, len: usize) -> Vec<u8> {
    let host = Ends { mac: node_mac(0) - 1, ip: nanopu_sim::packet::HOST_IP, port: 7000 };
    let node = Ends { mac: node_mac(0), ip: node_ip(0), port: 9000 };
    let payload: Vec<u8> = (0..len - PAYLOAD).map(|_| rng.next_u64() as u8).collect();
    udp_frame(host, node, &payload)
}

/// Each reply's latency, checked to be its request turned around.
fn latencies(sim: &Simulation, n: usize) -> Result<Vec<f64>, String> {
    let (sent, got) = (&sim.host.frames_sent, &sim.host.frames_received);
    if sent.len() != n || got.len() != n {
        return Err(format!("sent {} frames, received {} replies, expected {n}", sent.len(), got.len()));
    }
    let pairs = sent.iter().zip(got);
    if let Some((s, _)) = pairs.clone().find(|(s, r)| r.frame != turned_around(&s.frame)) {
        return Err(format!("a reply does not echo its request ({} bytes)", s.frame.len()));
    }
    Ok(pairs.map(|(s, r)| (r.time - s.time).as_ns_f64()).collect())
}
