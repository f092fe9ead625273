//! The programs of the nanoPU-against-IceNIC comparison (experiments/nic-compare) checked by
//! what they answer: stream on an IceNIC node increments every payload word (and refuses a
//! payload that is not whole words), the IceNIC throughput program counts what it took and
//! what the NIC dropped, and the transmit programs on both NICs send exactly what they were
//! asked to.

use crate::common;

use nanopu_cluster::config::NicKind;
use nanopu_cluster::net::frame::{turned_around, udp_frame, Ends, PAYLOAD};
use nanopu_cluster::node::boot::{node_ip, node_mac};
use nanopu_cluster::NodeConfig;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_cluster::TestHost;
use nanopu_sim::packet::HOST_IP;
use nanopu_sim::{Rng, Time};

const HOST: Ends = Ends { mac: 0x0200_0a00_0001, ip: HOST_IP, port: 7000 };

fn ice_cfg(args: &[&str]) -> NodeConfig {
    let mut c = common::cfg(1);
    c.nic_kind = NicKind::IceNic;
    c.args = args.iter().map(|s| s.to_string()).collect();
    c
}

/// A UDP frame to node 0 carrying `words` in the cores' (little-endian) byte order.
fn frame(words: &[u64]) -> Vec<u8> {
    let node = Ends { mac: node_mac(0), ip: node_ip(0), port: 9000 };
    udp_frame(HOST, node, &words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>())
}

fn words_of(frame: &[u8]) -> Vec<u64> {
    frame[PAYLOAD..].chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn ice_stream_returns_every_payload_word_incremented() {
    let mut rng = Rng::new(9);
    let mut sim = Simulation::new(&common::elf("apps/ice_stream.elf"), ice_cfg(&["6"])).unwrap();
    // 8 bytes to 1 KiB, a word of all ones among them (it wraps to 0).
    for (i, n) in [1usize, 2, 8, 32, 64, 128].into_iter().enumerate() {
        let mut words: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        words[0] = u64::MAX;
        sim.host.send_frame_at(Time::from_us(2 + 2 * i as u64), frame(&words));
    }
    assert_eq!(sim.run().unwrap(), Outcome::AllExited);
    assert_eq!(sim.nodes[0].cores[0].halted(), Some(0));
    let (sent, got) = (&sim.host.frames_sent, &sim.host.frames_received);
    assert_eq!(got.len(), 6, "every frame answered");
    for (s, r) in sent.iter().zip(got) {
        let want: Vec<u64> = words_of(&s.frame).iter().map(|w| w.wrapping_add(1)).collect();
        assert_eq!(words_of(&r.frame), want, "every word incremented");
        assert_eq!(r.frame[..PAYLOAD], turned_around(&s.frame)[..PAYLOAD], "headers turned around");
    }
}

#[test]
fn ice_stream_refuses_a_payload_of_part_words() {
    let mut sim = Simulation::new(&common::elf("apps/ice_stream.elf"), ice_cfg(&["1"])).unwrap();
    let node = Ends { mac: node_mac(0), ip: node_ip(0), port: 9000 };
    sim.host.send_frame_at(Time::from_us(2), udp_frame(HOST, node, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]));
    assert_eq!(sim.run().unwrap(), Outcome::AllExited);
    assert_eq!(sim.nodes[0].cores[0].halted(), Some(2));
    let console = String::from_utf8_lossy(&sim.nodes[0].cores[0].take_console()).into_owned();
    assert!(console.contains("not a whole number of 8-byte words"), "{console}");
    assert!(sim.host.frames_received.is_empty());
}

/// `ice_tput.elf` receiving: `n` data frames at line rate, then a done frame.
fn ice_receive(n: usize) -> (Simulation, String) {
    let mut sim = Simulation::new(&common::elf("apps/ice_tput.elf"), ice_cfg(&["0", "5"])).unwrap();
    (0..n).for_each(|i| sim.host.send_frame_at(Time::from_us(2), frame(&[0, i as u64, 0, 0, 0, 0, 0, 0])));
    sim.host.send_frame_at(Time::from_us(40), frame(&[1, 0, 0, 0, 0, 0, 0, 0]));
    assert_eq!(sim.run().unwrap(), Outcome::AllExited);
    assert_eq!(sim.nodes[0].cores[0].halted(), Some(0));
    let console = String::from_utf8_lossy(&sim.nodes[0].cores[0].take_console()).into_owned();
    (sim, console)
}

fn value(console: &str, key: &str) -> u64 {
    let w = console.split_whitespace().find_map(|w| w.strip_prefix(key)?.strip_prefix('='));
    w.and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no {key}= in {console:?}"))
}

#[test]
fn ice_tput_counts_what_it_took_and_the_nic_counts_what_it_dropped() {
    // Eight frames fit the posted buffers and the packet buffer: all taken.
    let (_, few) = ice_receive(8);
    assert_eq!(value(&few, "frames"), 8, "{few}");
    // 1,000 at line rate (4.24 ns each) to a core that takes one in tens of ns: beyond the 64
    // posted buffers and the 1,800-flit packet buffer most are dropped, and the program's
    // count and the NIC's drops add up to what was sent.
    let (sim, many) = ice_receive(1000);
    let ice = &sim.nodes[0].ice().unwrap().counters;
    let taken = value(&many, "frames");
    assert!(ice.dropped_full > 500, "{ice:?}");
    assert_eq!(taken + ice.dropped_full, 1000, "{many} {ice:?}");
    assert!(value(&many, "end_cycle") > value(&many, "mark_cycle"), "{many}");
}

#[test]
fn ice_tput_transmits_the_start_frame_turned_around_n_times() {
    let mut sim = Simulation::new(&common::elf("apps/ice_tput.elf"), ice_cfg(&["1"])).unwrap();
    let start = frame(&[2, 100, 5, 5, 5, 5, 5, 5]);
    sim.host.send_frame_at(Time::from_us(2), start.clone());
    assert_eq!(sim.run().unwrap(), Outcome::AllExited);
    let got = &sim.host.frames_received;
    let mut want = turned_around(&start);
    want[PAYLOAD..PAYLOAD + 8].copy_from_slice(&0u64.to_le_bytes());
    assert_eq!(got.len(), 100);
    assert!(got.iter().all(|f| f.frame == want));
    // More than the 64 send requests the queue holds, so the program refilled it.
    assert_eq!(sim.nodes[0].ice().unwrap().counters.frames_sent, 100);
}

#[test]
fn txflood_sends_n_messages_each_carrying_its_index() {
    let mut sim = Simulation::new(&common::elf("apps/txflood.elf"), common::cfg(1)).unwrap();
    sim.host.send_at(Time::from_us(2), TestHost::message(3, node_ip(0), 0, &[25, 8]));
    sim.host.send_at(Time::from_us(20), TestHost::message(3, node_ip(0), 0, &[4, 1]));
    assert_eq!(sim.run().unwrap(), Outcome::Quiescent);
    let got: Vec<Vec<u64>> = sim.host.received.iter().map(|r| r.msg.words.to_vec()).collect();
    let want: Vec<Vec<u64>> = (0..25).map(|i| vec![i; 8]).chain((0..4).map(|i| vec![i])).collect();
    assert_eq!(got, want);
    assert!(sim.host.received.iter().all(|r| r.msg.dst_context == 3));
}

#[test]
fn txflood_refuses_a_bad_start_message() {
    let mut sim = Simulation::new(&common::elf("apps/txflood.elf"), common::cfg(1)).unwrap();
    sim.host.send_at(Time::from_us(2), TestHost::message(3, node_ip(0), 0, &[5, 0]));
    sim.run().unwrap();
    assert_eq!(sim.nodes[0].cores[0].halted(), Some(2));
}
