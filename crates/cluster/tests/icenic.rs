//! IceNIC nodes end to end (docs/models/icenic.md): `ice_loopback.elf` echoing frames
//! from the test host through DMA, completions and (in sleep mode) the interrupt line,
//! and the receive buffer dropping what it has no room for.

use crate::common;

use nanopu_cluster::config::NicKind;
use nanopu_cluster::net::frame::{turned_around, udp_frame, Ends, PAYLOAD};
use nanopu_cluster::node::boot::{node_ip, node_mac};
use nanopu_cluster::NodeConfig;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_sim::packet::HOST_IP;
use nanopu_sim::Time;

const HOST: Ends = Ends { mac: 0x0200_0a00_0001, ip: HOST_IP, port: 7000 };

fn node() -> Ends {
    Ends { mac: node_mac(0), ip: node_ip(0), port: 9000 }
}

fn ice_cfg(args: &[&str]) -> NodeConfig {
    let mut c = common::cfg(1);
    c.nic_kind = NicKind::IceNic;
    c.args = args.iter().map(|s| s.to_string()).collect();
    c
}

/// Frame `i`: `len` bytes in all, payload bytes derived from `i`.
fn frame(i: usize, len: usize) -> Vec<u8> {
    let payload: Vec<u8> = (0..len - PAYLOAD).map(|k| (i * 7 + k) as u8).collect();
    udp_frame(HOST, node(), &payload)
}

/// Echo `n` frames of `len` bytes one at a time (the next leaves 100 ns after a reply
/// arrives); every reply must be its request turned around. The latencies, ns: the
/// request's first byte leaving the host to the reply's last byte arriving.
fn echo(n: usize, len: usize, sleep: bool) -> (Simulation, Vec<f64>) {
    echo_with("apps/ice_loopback.elf", n, len, sleep, None)
}

/// `echo` with another echo program, and cores held to `run_ahead` cycles past global time.
fn echo_with(elf: &str, n: usize, len: usize, sleep: bool, run_ahead: Option<u64>) -> (Simulation, Vec<f64>) {
    let limit = n.to_string();
    let mode = if sleep { "1" } else { "0" };
    let mut sim = Simulation::new(&common::elf(elf), ice_cfg(&[&limit, mode])).unwrap();
    run_ahead.iter().for_each(|&c| sim.set_run_ahead(c));
    sim.host.send_frame_at(Time::from_us(2), frame(0, len));
    let mut sent = 1;
    sim.host.on_frame(move |now, _| {
        sent += 1;
        if sent > n {
            return vec![];
        }
        vec![(now + Time::from_ns(100), frame(sent - 1, len))]
    });
    assert_eq!(sim.run().unwrap(), Outcome::AllExited);
    let (sent, got) = (&sim.host.frames_sent, &sim.host.frames_received);
    assert_eq!((sent.len(), got.len()), (n, n), "every frame answered once");
    for (s, r) in sent.iter().zip(got) {
        assert_eq!(r.frame, turned_around(&s.frame), "reply is the request turned around");
    }
    let lat = sent.iter().zip(got).map(|(s, r)| (r.time - s.time).as_ns_f64()).collect();
    (sim, lat)
}

#[test]
fn ice_loopback_echoes_every_frame_through_dma() {
    let (sim, lat) = echo(30, 64, false);
    let ice = sim.nodes[0].ice().unwrap();
    assert_eq!((ice.counters.frames_received, ice.counters.frames_sent), (30, 30));
    assert_eq!(ice.counters.dropped_full, 0);
    // Through memory both ways and a polling core: far more than the wire's 64 bytes at
    // 200 Gb/s (2.56 ns each way), and the same for every frame once warm, but for the few
    // whose DMA write misses the L2 into a DRAM refresh (one every tREFI, 7,800 cycles
    // here: about every 12th frame).
    let warm = &lat[5..];
    assert!(warm.iter().all(|&l| l > 50.0 && l < 2000.0), "{lat:?}");
    let least = warm.iter().cloned().fold(f64::NAN, f64::min);
    let odd = warm.iter().filter(|&&l| l - least >= 20.0).count();
    assert!(odd <= warm.len() / 10, "warm latencies within 20 ns of each other: {lat:?}");
}

#[test]
fn ice_loopback_sleeping_in_wfi_is_woken_by_the_receive_interrupt() {
    let (sim, lat) = echo(12, 128, true);
    let core = sim.nodes[0].cores[0].stats();
    assert!(core.stall_wfi > 0, "the core slept in wfi: {core:?}");
    assert!(lat.iter().all(|&l| l < 2000.0), "{lat:?}");
}

#[test]
fn a_burst_overflows_the_receive_buffer_and_the_drops_are_counted() {
    // 400 frames of 256 bytes back to back at line rate (10.24 ns each), to a server that
    // answers one at a time: once its 64 posted buffers are taken, the 1,800-flit buffer
    // (56 frames of 32 flits) overflows.
    let mut sim = Simulation::new(&common::elf("apps/ice_loopback.elf"), ice_cfg(&["0"])).unwrap();
    for i in 0..400 {
        sim.host.send_frame_at(Time::from_us(2), frame(i, 256));
    }
    sim.set_deadline(Time::from_us(200));
    sim.run().unwrap();
    let c = sim.nodes[0].ice().unwrap().counters.clone();
    let got = sim.host.frames_received.len() as u64;
    assert!(c.dropped_full > 200, "{c:?}");
    assert_eq!(
        c.frames_received + c.dropped_full,
        400,
        "every frame either taken or counted as dropped: {c:?}"
    );
    assert_eq!(got, c.frames_received, "every frame taken was echoed");
    // What was echoed is what arrived first, in order.
    let first = turned_around(&frame(0, 256));
    assert_eq!(sim.host.frames_received[0].frame, first);
}

#[test]
fn the_byte_swap_instructions_check_frames_in_fewer_instructions() {
    let (shifts, _) = echo(20, 64, false);
    let (swaps, _) = echo_with("apps/ice_loopback_bswap.elf", 20, 64, false, None);
    let instret = |s: &Simulation| s.nodes[0].cores[0].stats().instret;
    assert!(instret(&swaps) < instret(&shifts), "{} against {}", instret(&swaps), instret(&shifts));
}

/// The run-ahead oracle (docs/architecture.md): cores one cycle past global time at most give
/// the same replies at the same times, polling and sleeping.
#[test]
fn running_ahead_changes_nothing_on_an_icenic_node() {
    for sleep in [false, true] {
        let (_, free) = echo(10, 96, sleep);
        let (_, held) = echo_with("apps/ice_loopback.elf", 10, 96, sleep, Some(1));
        assert_eq!(free, held, "sleep {sleep}");
    }
}

/// An IceNIC node has one NIC, IceNIC (docs/models/icenic.md "One NIC component"): a
/// program that uses the nanoPU NIC's registers there stops with an error saying so.
#[test]
fn an_icenic_node_has_no_nanopu_nic() {
    let sim = Simulation::new(&common::elf("apps/ice_loopback.elf"), ice_cfg(&["1"])).unwrap();
    assert!(sim.nodes[0].nic.nanopu().is_none() && sim.nodes[0].ice().is_some());
    assert_eq!(sim.nodes[0].irq_bit(), 11);
    let mut sim = Simulation::new(&common::elf("apps/pingpong.elf"), ice_cfg(&[])).unwrap();
    let e = sim.run().unwrap_err().to_string();
    assert!(e.contains("this node has IceNIC, not the nanoPU NIC"), "{e}");
}

/// The IceNIC programs are plain RISC-V, as a traditional host's (sw/Makefile, docs/abi.md
/// "x30/x31"): x30/x31 are ordinary registers the compiler uses, and our runtime's harts
/// still each exit on their own; the nanoPU builds of the same sources keep the nanoPU ABI.
#[test]
fn icenic_programs_are_plain_risc_v_with_our_runtime() {
    let load = |p: &str| nanopu_riscv::Program::load(&common::elf(p)).unwrap();
    for p in ["apps/ice_loopback.elf", "apps/mica_ice.elf", "apps/chain_ice.elf", "apps/nbody_ice.elf"] {
        let prog = load(p);
        assert!(!prog.is_nanopu() && prog.built_with_our_runtime(), "{p}");
    }
    let chain = load("apps/chain.elf");
    assert!(chain.is_nanopu() && chain.built_with_our_runtime());
}
