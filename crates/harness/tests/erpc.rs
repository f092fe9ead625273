//! The eRPC-like stack (docs/apps/erpc.md): `erpc_server.elf` on an IceNIC node, the
//! test host as its client (`nanopu_harness::clients::erpc`). Every request executed exactly once
//! under loss, messages across frame boundaries reassembled, credits never exceeded, a
//! resent request answered without running again (and the mutant without the server's
//! duplicate detection caught), the same run from the same seed.

use crate::common;

use nanopu_cluster::config::NicKind;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_harness::clients::erpc::{self, hdr, Client, ClientParams, Request};
use nanopu_sim::{Rng, Time};
use std::sync::{Arc, Mutex};

/// When the client starts: after the server has zeroed its memory and posted its buffers.
const START: Time = Time::from_us(100);

fn params() -> ClientParams {
    ClientParams { rto: Time::from_us(200), exit_type: Some(erpc::REQ_EXIT), ..Default::default() }
}

/// Run `requests` (then statistics and exit) against `elf` with the host's link at
/// `gbps`, losing frames with probability `loss` (seed `seed`); the client after the run.
fn run_at(
    gbps: u64,
    elf: &str,
    p: ClientParams,
    requests: Vec<Request>,
    loss: f64,
    seed: u64,
) -> (Simulation, Arc<Mutex<Client>>) {
    let mut cfg = common::cfg(1);
    cfg.nic_kind = NicKind::IceNic;
    cfg.port.rate_bps = gbps * 1_000_000_000;
    let mut sim = Simulation::new(&common::elf(elf), cfg).unwrap();
    let mut c = Client::new(p);
    requests.into_iter().chain(erpc::stats_and_exit()).for_each(|r| c.push(r));
    if loss > 0.0 {
        sim.host.lose_frames(loss, seed);
    }
    let h = c.attach(&mut sim.host, START);
    assert_eq!(sim.run().unwrap(), Outcome::AllExited);
    (sim, h)
}

/// [`run_at`] the default 200 Gb/s.
fn run(
    elf: &str,
    p: ClientParams,
    requests: Vec<Request>,
    loss: f64,
    seed: u64,
) -> (Simulation, Arc<Mutex<Client>>) {
    run_at(200, elf, p, requests, loss, seed)
}

/// IceNIC's receive buffer holds one full-size frame and part of a second
/// (docs/models/icenic.md): at 200 Gb/s, eight credits' worth of full-size frames
/// arrive faster than its DMA writer empties it and some are dropped (and resent). At
/// 25 Gb/s (eRPC's Ethernet clusters; docs/apps/erpc.md) none are: the tests that need a
/// lossless run use it.
const LOSSLESS_GBPS: u64 = 25;

fn no_nic_drops(sim: &Simulation) {
    let c = &sim.nodes[0].ice().unwrap().counters;
    assert_eq!((c.dropped_full, c.dropped_size), (0, 0), "the NIC dropped nothing");
}

/// `n` checked echoes with sizes drawn from `sizes`, random bytes.
fn checked(n: usize, sizes: &[usize], seed: u64) -> Vec<Request> {
    let mut rng = Rng::stream(seed, 7);
    (0..n)
        .map(|_| {
            let len = sizes[rng.below(sizes.len() as u64) as usize];
            erpc::checked_request(len, || rng.next_u64() as u8)
        })
        .collect()
}

/// Every request completed once, in the order queued, echoing its data; the server's
/// count of handler runs (the statistics response) is the number of requests.
fn assert_exactly_once(c: &Client, requests: &[Request]) {
    let mut done: Vec<_> = c.completed.iter().filter(|d| d.req_type == erpc::REQ_CHECKED).collect();
    done.sort_by_key(|d| d.index);
    assert_eq!(done.len(), requests.len(), "every request completed");
    for (d, r) in done.iter().zip(requests) {
        assert_eq!(d.response, r.data, "request {} echoed", d.index);
    }
    let stats = c.completed.iter().find(|d| d.req_type == erpc::REQ_STATS).expect("statistics answered");
    let runs = u64::from_le_bytes(stats.response[..8].try_into().unwrap());
    assert_eq!(runs, requests.len() as u64, "the server ran each request's handler once");
}

/// Sizes on both sides of one and two packets' data, and an empty-ish one.
const SIZES: [usize; 7] =
    [8, 64, hdr::PKT_DATA, hdr::PKT_DATA + 1, 2 * hdr::PKT_DATA, 2 * hdr::PKT_DATA + 1, 4096];

#[test]
fn multi_packet_messages_are_reassembled() {
    let reqs: Vec<Request> = SIZES.iter().map(|&n| erpc::checked_request(n, || 0xa5)).collect();
    let reqs = [reqs, checked(40, &SIZES, 1)].concat();
    let (sim, c) = run_at(LOSSLESS_GBPS, "apps/erpc_server.elf", params(), reqs.clone(), 0.0, 0);
    let c = c.lock().unwrap();
    no_nic_drops(&sim);
    assert_exactly_once(&c, &reqs);
    assert_eq!(c.stats.retransmits, 0, "no loss, no timeouts");
    let big = c.completed.iter().find(|d| d.response.len() == 4096).unwrap();
    assert_eq!(hdr::pkts(big.response.len()), 3, "4,096 bytes took three packets each way");
    assert!(sim.host.frames_received.iter().all(|f| f.frame.len() <= 1514), "no frame over the MTU");
}

#[test]
fn every_request_executes_once_under_one_percent_loss() {
    for seed in 1..=3 {
        let reqs = checked(300, &SIZES, seed);
        let (sim, c) = run("apps/erpc_server.elf", params(), reqs.clone(), 0.01, seed);
        let c = c.lock().unwrap();
        assert_exactly_once(&c, &reqs);
        let lost = sim.host.frames_lost;
        assert!(lost[0] > 0 && lost[1] > 0, "seed {seed}: frames lost both ways ({lost:?})");
        assert!(c.stats.retransmits > 0, "seed {seed}: losses recovered by timeouts");
    }
}

/// Without loss every packet the client sends is answered by exactly one, so the packets
/// outstanding at any moment are the frames sent less the frames received: never more than
/// the session's credits, counted from the host's log (not from the client's own count).
#[test]
fn credits_are_never_exceeded() {
    let reqs = checked(60, &[hdr::PKT_DATA * 2 + 100, 4096, 64], 4);
    let (sim, c) = run_at(LOSSLESS_GBPS, "apps/erpc_server.elf", params(), reqs.clone(), 0.0, 0);
    let c = c.lock().unwrap();
    no_nic_drops(&sim);
    assert_exactly_once(&c, &reqs);
    let mut ev: Vec<(Time, i64)> = sim.host.frames_sent.iter().map(|f| (f.time, 1)).collect();
    ev.extend(sim.host.frames_received.iter().map(|f| (f.time, -1)));
    ev.sort_by_key(|&(t, d)| (t, d)); // an answer at the same instant frees its credit first
    let peak = ev.iter().scan(0i64, |n, &(_, d)| Some(*n + d).inspect(|&v| *n = v)).max().unwrap();
    assert_eq!(peak, hdr::CREDITS as i64, "eight packets in flight at the peak, never more");
    assert_eq!(c.stats.max_in_flight, hdr::CREDITS);
}

/// Lose the first response to a request: the client times out and resends the request's
/// last packet; the server answers from its kept response. The mutant that runs the
/// handler again is caught by the same check.
#[test]
fn a_resent_request_is_executed_once() {
    for (elf, runs) in [("apps/erpc_server.elf", 2), ("apps/erpc_server_nodedup.elf", 3)] {
        let reqs = [erpc::checked_request(64, || 1), erpc::checked_request(2 * hdr::PKT_DATA + 9, || 2)];
        let mut cfg = common::cfg(1);
        cfg.nic_kind = NicKind::IceNic;
        let mut sim = Simulation::new(&common::elf(elf), cfg).unwrap();
        let mut c = Client::new(params());
        reqs.iter().cloned().chain(erpc::stats_and_exit()).for_each(|r| c.push(r));
        let c = Arc::new(Mutex::new(c));
        let h = c.clone();
        let mut dropped = false;
        // Drop the first response packet to arrive (of the 64-byte request, req_num 0).
        sim.host.on_frame(move |now, f| {
            let first_resp = f.len() > 42
                && hdr::Header::decode(&f[42..]).is_some_and(|x| x.pkt_type == hdr::PktType::Resp);
            if first_resp && !dropped {
                dropped = true;
                return vec![];
            }
            h.lock().unwrap().event(now, f)
        });
        sim.host.send_frame_at(START, Vec::new());
        assert_eq!(sim.run().unwrap(), Outcome::AllExited);
        let c = c.lock().unwrap();
        assert!(c.stats.retransmits >= 1, "{elf}: the lost response was recovered by a timeout");
        let stats = c.completed.iter().find(|d| d.req_type == erpc::REQ_STATS).expect("statistics answered");
        let got = u64::from_le_bytes(stats.response[..8].try_into().unwrap());
        assert_eq!(got, runs, "{elf}: handler runs for two requests, one of them resent");
    }
}

#[test]
fn same_seed_same_run() {
    let go = |seed| {
        let (sim, c) = run("apps/erpc_server.elf", params(), checked(80, &SIZES, 9), 0.01, seed);
        let c = c.lock().unwrap();
        let frames: Vec<_> = sim.host.frames_received.iter().map(|f| (f.time, f.frame.clone())).collect();
        (frames, c.completed.clone(), c.stats.clone())
    };
    let a = go(5);
    assert_eq!(a, go(5), "same seed, same frames, times and completions");
    assert_ne!(a.0, go(6).0, "another seed loses other frames");
}

/// The PCIe-attached variant (docs/models/icenic.md): the same echo, each DMA and register
/// read paying the PCIe latency. A one-packet echo needs at least a DMA write (one way) and
/// a DMA read (a round trip) and several register reads (round trips): more than 3 x 250 ns
/// slower than on chip.
#[test]
fn the_pcie_variant_pays_its_latency() {
    let echo = |pcie_ns: f64| {
        let mut cfg = common::cfg(1);
        cfg.nic_kind = NicKind::IceNic;
        cfg.pcie_ns = pcie_ns;
        let mut sim = Simulation::new(&common::elf("apps/erpc_server.elf"), cfg).unwrap();
        let mut c = Client::new(params());
        let reqs = checked(20, &[64], 3);
        reqs.iter().cloned().chain(erpc::stats_and_exit()).for_each(|r| c.push(r));
        let h = c.attach(&mut sim.host, START);
        assert_eq!(sim.run().unwrap(), Outcome::AllExited);
        let c = h.lock().unwrap();
        assert_exactly_once(&c, &reqs);
        let d = c.completed.iter().find(|d| d.index == 19).unwrap();
        (d.done - d.issued).as_ns_f64()
    };
    let (chip, pcie) = (echo(0.0), echo(250.0));
    assert!(pcie - chip > 750.0, "on chip {chip} ns, PCIe {pcie} ns");
}
