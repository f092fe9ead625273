//! `nanopu bench nic-throughput --nic icenic`: the IceNIC column (definitions in
//! `bench_nic`; the programs `ice_tput.elf` and `ice_loopback.elf`, docs/models/icenic.md).

use super::common::{console_value, rate, App, Columns, Programs, OUTSTANDING, PAYLOAD, SIZES, START};
use super::ice::{frame, frame_of_words, ice_sim, reply_to};
use nanopu_cluster::net::frame::PAYLOAD as HEADERS;
use nanopu_cluster::NodeConfig;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_sim::{Rng, Time};
use serde_json::{json, Value};

/// The first payload word of `ice_tput.elf`'s frames: their type.
const DATA: u64 = 0;
const DONE: u64 = 1;
const START_TX: u64 = 2;
/// Frames the host offers per message of `--requests`: at line rate it sends far more than
/// the program takes (the rest are dropped), and the program must take enough of them for
/// the window.
const OFFERED_PER_MESSAGE: usize = 16;
/// How long after the flood's last frame has left the done frame follows: time for the
/// program to drain what the NIC holds (at most 64 receive buffers and the packet buffer,
/// a few microseconds), so that the done frame is never the one dropped.
const DRAIN: Time = Time::from_us(20);

pub fn icenic(sw: &Programs, n: usize, mark: usize) -> Result<Columns, String> {
    let tput = sw.read("ice_tput")?;
    let (rx, tx) = (rx(&tput, n, mark)?, tx(&tput, n, mark)?);
    let rates = |app: App| -> Result<Value, String> {
        let elf = sw.read(&format!("ice_{}", app.name()))?;
        let rows: Result<Vec<Value>, String> =
            SIZES.iter().map(|&s| loopback(&elf, app, s as usize, n, mark)).collect();
        Ok(Value::Array(rows?))
    };
    Ok(("icenic", rx, tx, [rates(App::Loopback)?, rates(App::Stream)?]))
}

/// A frame of `ice_tput.elf`: `kind`, then `arg` in the remaining words of the payload.
fn typed(kind: u64, arg: u64) -> Vec<u8> {
    let mut words = vec![arg; PAYLOAD / 8];
    words[0] = kind;
    frame_of_words(&words)
}

fn run_to_exit(sim: &mut Simulation, what: &str) -> Result<(), String> {
    match sim.run().map_err(|e| e.to_string())? {
        Outcome::AllExited => Ok(()),
        other => {
            let c = &sim.nodes[0].ice().expect("an IceNIC node").counters;
            let drops = c.dropped_full + c.dropped_size;
            Err(format!("{what} did not exit: {} (the NIC dropped {drops} frames)", other.name()))
        }
    }
}

fn rx(elf: &[u8], requests: usize, mark: usize) -> Result<Value, String> {
    let mut sim = ice_sim(elf, &["0".into(), mark.to_string()], 0.0)?;
    let n = requests * OFFERED_PER_MESSAGE;
    (0..n).for_each(|i| sim.host.send_frame_at(START, typed(DATA, i as u64)));
    let flood = nanopu_sim::time::serialization((n * (HEADERS + PAYLOAD)) as u64, sim.port().rate_bps);
    sim.host.send_frame_at(START + flood + DRAIN, typed(DONE, 0));
    run_to_exit(&mut sim, "ice_tput.elf (receive)")?;
    let console = String::from_utf8_lossy(&sim.nodes[0].cores[0].take_console()).into_owned();
    let frames = console_value(&console, "frames")? as usize;
    let (m, end) = (console_value(&console, "mark_cycle")?, console_value(&console, "end_cycle")?);
    let dropped = sim.nodes[0].ice().expect("an IceNIC node").counters.dropped_full as usize;
    if frames + dropped != n || frames < requests {
        return Err(format!("ice_tput.elf took {frames} of {n} frames, the NIC dropped {dropped}; expected {requests} or more taken and the rest dropped"));
    }
    let secs = (end - m) as f64 / NodeConfig::default().timing.clock_hz as f64;
    let mut v = rate(frames - mark, secs, PAYLOAD, HEADERS + PAYLOAD);
    v["offered"] = json!(n);
    v["dropped"] = json!(dropped);
    Ok(v)
}

fn tx(elf: &[u8], n: usize, mark: usize) -> Result<Value, String> {
    let mut sim = ice_sim(elf, &["1".into()], 0.0)?;
    let start = typed(START_TX, n as u64);
    sim.host.send_frame_at(START, start.clone());
    run_to_exit(&mut sim, "ice_tput.elf (transmit)")?;
    let mut want = reply_to(App::Loopback, &start);
    want[HEADERS..HEADERS + 8].copy_from_slice(&DATA.to_le_bytes());
    let got = &sim.host.frames_received;
    if got.len() != n || got.iter().any(|f| f.frame != want) {
        return Err(format!(
            "ice_tput.elf: expected {n} data frames, the start frame turned around; got {}",
            got.len()
        ));
    }
    let secs = (got[n - 1].time - got[mark - 1].time).as_secs_f64();
    Ok(rate(n - mark, secs, PAYLOAD, HEADERS + PAYLOAD))
}

/// The first `OUTSTANDING` requests leave this far apart, so that they do not arrive as a
/// burst that the receive packet buffer (2 full-size frames) could not hold; after them
/// each reply's arrival sends the next.
const SPACING: Time = Time::from_ns(200);

fn loopback(elf: &[u8], app: App, size: usize, n: usize, mark: usize) -> Result<Value, String> {
    let mut sim = ice_sim(elf, &[n.to_string()], 0.0)?;
    let mut rng = Rng::stream(6, size as u64);
    for i in 0..OUTSTANDING {
        sim.host.send_frame_at(START + Time(SPACING.0 * i as u64), frame(&mut rng, size));
    }
    let mut sent = OUTSTANDING;
    sim.host.on_frame(move |now, _| {
        sent += 1;
        if sent > n {
            return vec![];
        }
        vec![(now, frame(&mut rng, size))]
    });
    run_to_exit(&mut sim, &format!("ice_{}.elf, {size}-byte payloads,", app.name()))?;
    let (sent, got) = (&sim.host.frames_sent, &sim.host.frames_received);
    let echoed = sent.len() == n
        && got.len() == n
        && sent.iter().zip(got).all(|(s, r)| r.frame == reply_to(app, &s.frame));
    if !echoed {
        return Err(format!(
            "ice_{}.elf: sent {}, {} replies, or a reply not its request's",
            app.name(),
            sent.len(),
            got.len()
        ));
    }
    let secs = (got[n - 1].time - got[mark - 1].time).as_secs_f64();
    let mut row = rate(n - mark, secs, size, HEADERS + size);
    row["payload_bytes"] = json!(size);
    Ok(row)
}
