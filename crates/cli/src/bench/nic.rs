//! `nanopu bench nic-throughput --nic NIC`: what one core gets through a NIC
//! (experiments/nic-compare), each rate measured in steady state over a stated window:
//!
//! - **rx**: the host floods the node with 64-byte messages back to back at line rate; the
//!   program receives and discards them (`rxcount.elf` on the nanoPU, reading every word
//!   from netRX; `ice_tput.elf` on IceNIC, keeping 64 receive buffers posted and reading
//!   each frame's type word). Rate on IceNIC: frames the program took after the MARK-th,
//!   over the cycles from taking it to taking the last (its own `mcycle` readings); the
//!   host offers 16 frames per `--requests` at line rate, and the NIC drops what its
//!   receive buffer has no room for (reported). On the nanoPU (no drops): see `nanopu_rx`.
//! - **tx**: the program sends 64-byte messages to the host as fast as it can
//!   (`txflood.elf`; `ice_tput.elf` keeping the send queue full); the host counts. Rate:
//!   messages arriving at the host after the MARK-th, over the time from the MARK-th's
//!   arrival to the last's.
//! - **loopback** and **stream**: requests per second of the echo server (`loopback.elf`
//!   on one core, `ice_loopback.elf`) and of stream (`stream.elf`, `ice_stream.elf`: every
//!   word + 1) per payload size, the host keeping `OUTSTANDING` requests in
//!   flight (a new one as each reply arrives). Rate: replies after the MARK-th over the time
//!   from its arrival to the last's.
//!
//! MARK is a tenth of the messages (`--requests`, default 2,000): the window leaves out the
//! start, where caches are cold and queues fill. No MAC latency (it lengthens the round
//! trip, which the outstanding requests cover, not the rates).

use super::common::{
    console_value, node_cfg, rate, request, App, Columns, Programs, OUTSTANDING, PAYLOAD, SIZES, START,
};
use nanopu_cluster::host::HostMessage;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_cluster::TestHost;
use nanopu_sim::{Rng, Time};
use serde_json::{json, Value};

/// The NICs `nic-throughput` measures.
///
/// The eRPC-like software stack (docs/apps/erpc.md) is the third column of the comparison:
/// its loopback requests per second (`bench_erpc::nic_columns`); rx, tx and stream are
/// not measured for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Nic {
    /// The nanoPU NIC: messages through the register file.
    Nanopu,
    /// IceNIC: frames through DMA and memory (docs/models/icenic.md).
    Icenic,
    /// The eRPC-like RPC stack on an IceNIC node (docs/apps/erpc.md).
    Erpc,
}

pub fn throughput(sw: &Programs, nic: Nic, n: usize) -> Result<Value, String> {
    let mark = n / 10;
    if mark == 0 {
        return Err(format!("--requests {n}: at least 10, the first tenth being left out"));
    }
    let (name, rx, tx, [loopback, stream]) = match nic {
        Nic::Nanopu => nanopu(sw, n, mark)?,
        Nic::Icenic => super::ice_tput::icenic(sw, n, mark)?,
        Nic::Erpc => super::erpc::nic_columns(sw, n, mark)?,
    };
    Ok(json!({ "benchmark": "nic-throughput", "nic": name, "cores": 1, "payload_bytes": PAYLOAD,
        "messages": n, "window_starts_after": mark, "loopback_outstanding": OUTSTANDING,
        "rx": rx, "tx": tx, "loopback": loopback, "stream": stream,
        "definition": "rx: the host floods 64-byte messages at 200 Gb/s and the program receives them, rate from the program's cycle counter between the window's first and last message; tx: the program sends 64-byte messages as fast as it can, rate from their arrivals at the host; loopback and stream: requests per second with 8 in flight, every reply checked; windows leave out the first tenth of the messages; wire_gbps counts each packet's headers, payload_gbps the payload alone" }))
}

fn nanopu(sw: &Programs, n: usize, mark: usize) -> Result<Columns, String> {
    let rx = nanopu_rx(&sw.read("rxcount")?, n)?;
    let tx = nanopu_tx(&sw.read("txflood")?, n, mark)?;
    let rates = |app: App| -> Result<Value, String> {
        let elf = sw.read(app.name())?;
        let rows: Result<Vec<Value>, String> =
            SIZES.iter().map(|&s| nanopu_loopback(&elf, app, s, n, mark)).collect();
        Ok(Value::Array(rows?))
    };
    Ok(("nanopu", rx, tx, [rates(App::Loopback)?, rates(App::Stream)?]))
}

/// Bytes on the wire of a one-packet nanoPU message of `payload` bytes.
fn nanopu_wire(sim: &Simulation, payload: usize) -> usize {
    sim.port().header_bytes as usize + payload
}

/// `rxcount.elf` prints only when it consumed the last message, so the nanoPU's window is
/// every message after the warm-up one: from the first's last byte reaching the node (as
/// `bench rx` measures) to the last consumed. The program is backlogged throughout (the
/// messages arrive faster than it takes them), so the window is steady but for the first
/// message's path through the NIC, a few ns of tens of us.
fn nanopu_rx(elf: &[u8], n: usize) -> Result<Value, String> {
    let mut cfg = node_cfg(1, 0.0);
    cfg.args = vec![n.to_string()];
    let mut sim = Simulation::new(elf, cfg).map_err(|e| e.to_string())?;
    let mut rng = Rng::stream(5, n as u64);
    sim.host.send_at(START, request(&mut rng, PAYLOAD as u16)); // the warm-up message
    (0..n).for_each(|_| sim.host.send_at(START + Time::from_us(1), request(&mut rng, PAYLOAD as u16)));
    if sim.run().map_err(|e| e.to_string())? != Outcome::AllExited {
        return Err("rxcount.elf did not exit".into());
    }
    let console = String::from_utf8_lossy(&sim.nodes[0].cores[0].take_console()).into_owned();
    let end = sim.clock().time_of(console_value(&console, "end_cycle")?);
    let secs = (end - sim.host.sent[1].time).as_secs_f64();
    Ok(rate(n, secs, PAYLOAD, nanopu_wire(&sim, PAYLOAD)))
}

fn nanopu_tx(elf: &[u8], n: usize, mark: usize) -> Result<Value, String> {
    let mut sim = Simulation::new(elf, node_cfg(1, 0.0)).map_err(|e| e.to_string())?;
    let node = nanopu_cluster::node::boot::node_ip(0);
    sim.host.send_at(START, TestHost::message(0, node, 0, &[n as u64, (PAYLOAD / 8) as u64]));
    if sim.run().map_err(|e| e.to_string())? != Outcome::Quiescent {
        return Err("txflood.elf stopped; it should wait for the next start message".into());
    }
    let got = &sim.host.received;
    let bad = got.iter().enumerate().find(|(i, r)| *r.msg.words != [*i as u64; PAYLOAD / 8]);
    if got.len() != n || bad.is_some() {
        return Err(format!(
            "txflood.elf: expected {n} messages, each i carrying i; got {} ({bad:?})",
            got.len()
        ));
    }
    let secs = (got[n - 1].time - got[mark - 1].time).as_secs_f64();
    Ok(rate(n - mark, secs, PAYLOAD, nanopu_wire(&sim, PAYLOAD)))
}

fn nanopu_loopback(elf: &[u8], app: App, size: u16, n: usize, mark: usize) -> Result<Value, String> {
    let mut sim = Simulation::new(elf, node_cfg(1, 0.0)).map_err(|e| e.to_string())?;
    let mut rng = Rng::stream(6, size as u64);
    (0..OUTSTANDING).for_each(|_| sim.host.send_at(START, request(&mut rng, size)));
    let mut sent = OUTSTANDING;
    sim.host.on_receive(move |now, _| {
        sent += 1;
        if sent > n {
            return vec![];
        }
        vec![(now, request(&mut rng, size))]
    });
    if sim.run().map_err(|e| e.to_string())? != Outcome::Quiescent {
        return Err(format!("{}.elf stopped; it should serve forever", app.name()));
    }
    let (sent, got) = (&sim.host.sent, &sim.host.received);
    let answers = |s: &HostMessage, r: &HostMessage| {
        r.msg.words.iter().zip(s.msg.words.iter()).all(|(r, s)| *r == app.reply_word(*s))
            && r.msg.len == s.msg.len
    };
    if sent.len() != n || got.len() != n || !sent.iter().zip(got).all(|(s, r)| answers(s, r)) {
        return Err(format!(
            "{}.elf: sent {}, {} replies, or a reply not its request's",
            app.name(),
            sent.len(),
            got.len()
        ));
    }
    let secs = (got[n - 1].time - got[mark - 1].time).as_secs_f64();
    let mut row = rate(n - mark, secs, size as usize, nanopu_wire(&sim, size as usize));
    row["payload_bytes"] = json!(size);
    Ok(row)
}
