//! Programs driven by the test host through the node's port, as the prototype's Scapy tests
//! drove them: replies are checked by content, and runs are deterministic.

use crate::common;

use common::*;
use nanopu_cluster::host::HOST_IP;
use nanopu_cluster::node::boot::node_ip;
use nanopu_cluster::Outcome;
use nanopu_cluster::Simulation;
use nanopu_cluster::TestHost;
use nanopu_sim::{Rng, Time};

/// Send `n` requests of `words` random words each, 1 us apart, to context 0; return the run.
fn drive(app: &str, cores: usize, n: usize, words: usize) -> Simulation {
    let mut sim = Simulation::new(&elf(app), cfg(cores)).unwrap();
    let mut rng = Rng::new(42);
    for i in 0..n {
        let payload: Vec<u64> = (0..words).map(|_| rng.next_u64()).collect();
        let msg = TestHost::message(7, node_ip(0), 0, &payload);
        sim.host.send_at(Time::from_us(2 + i as u64), msg);
    }
    assert_eq!(sim.run().unwrap(), Outcome::Quiescent);
    sim
}

#[test]
fn loopback_echoes_every_message_to_its_sender() {
    let sim = drive("apps/loopback.elf", 4, 20, 3);
    assert_eq!(sim.host.received.len(), 20);
    for (s, r) in sim.host.sent.iter().zip(&sim.host.received) {
        assert_eq!((r.msg.dst_ip, r.msg.dst_context, r.msg.src_ip), (HOST_IP, 7, node_ip(0)));
        assert_eq!(r.msg.words, s.msg.words);
        assert!(r.time > s.time);
    }
}

#[test]
fn stream_increments_every_word() {
    let sim = drive("apps/stream.elf", 4, 10, 5);
    assert_eq!(sim.host.received.len(), 10);
    for (s, r) in sim.host.sent.iter().zip(&sim.host.received) {
        let want: Vec<u64> = s.msg.words.iter().map(|w| w.wrapping_add(1)).collect();
        assert_eq!(r.msg.words.to_vec(), want);
    }
}

#[test]
fn same_config_same_results() {
    let fingerprint = || {
        let mut sim = drive("apps/loopback.elf", 4, 50, 2);
        let s = nanopu_cluster::report::summarize(&mut sim, Outcome::Quiescent);
        format!("{:?}{:?}", serde_json::to_string(&s).unwrap(), sim.host.received)
    };
    assert_eq!(fingerprint(), fingerprint());
}

/// The dot-product servers reply with sum(weight[i] * x[i]), weight[i] = (i % 256) + 1.
fn dot(words: &[u64]) -> u64 {
    let w = |i: usize| (i % 256) as u64 + 1;
    words.iter().enumerate().fold(0u64, |acc, (i, x)| acc.wrapping_add(w(i).wrapping_mul(*x)))
}

#[test]
fn dot_product_servers_compute_the_same_sums() {
    for app in ["apps/dotprod_reg.elf", "apps/dotprod_mem.elf"] {
        let sim = drive(app, 4, 20, 40);
        assert_eq!(sim.host.received.len(), 20, "{app}");
        for (s, r) in sim.host.sent.iter().zip(&sim.host.received) {
            assert_eq!(*r.msg.words, [dot(&s.msg.words)], "{app}");
        }
    }
}

#[test]
fn throughput_server_reports_every_hundredth_message() {
    let sim = drive("apps/throughput.elf", 1, 250, 1);
    let counts: Vec<u64> = sim.host.received.iter().map(|r| r.msg.words[0]).collect();
    assert_eq!(counts, vec![100, 200]);
}

/// A raw frame from the host to node 0, context 0, carrying `payload`.
fn raw_frame(payload: &[u8]) -> Vec<u8> {
    use nanopu_net::wire::Flags;
    frame_to([2, 0, 10, 0, 0, 2], node_ip(0), Flags::DATA, payload)
}

/// A raw frame from the host to MAC `mac` and IPv4 `ip`, context 0: of kind `flags`,
/// carrying `payload` (a control packet: none, for a message of 16 bytes).
fn frame_to(mac: [u8; 6], ip: u32, flags: nanopu_net::wire::Flags, payload: &[u8]) -> Vec<u8> {
    use nanopu_net::wire::ethernet::{Mac, ETHERTYPE_IPV4};
    use nanopu_net::wire::ipv4::PROTO_NDP;
    use nanopu_net::wire::{EthernetRepr, Frame, FrameRepr, Ipv4Repr, TransportRepr};
    let repr = FrameRepr {
        eth: EthernetRepr { src: Mac([2, 0, 10, 0, 0, 1]), dst: Mac(mac), ethertype: ETHERTYPE_IPV4 },
        ip: Ipv4Repr { src: HOST_IP, dst: ip, protocol: PROTO_NDP, tos: 0, payload_len: 0, ttl: 64 },
        transport: TransportRepr {
            flags,
            msg_len: if payload.is_empty() { 16 } else { payload.len() as u16 },
            src_context: 5,
            ..Default::default()
        },
    };
    Frame::emit(&repr, payload, 1024).unwrap().into_bytes()
}

/// The docs (docs/python.md, "Scapy layers") say a frame the NIC cannot take is dropped and
/// listed: one to another MAC or IPv4 address is, and a control packet is named by its kind
/// (a PULL as Scapy builds it by default, msg_len 0, included), never answered.
#[test]
fn raw_frames_to_another_address_or_of_a_control_kind_are_dropped_and_listed() {
    use nanopu_net::wire::Flags;
    let mut sim = Simulation::new(&elf("apps/loopback.elf"), cfg(4)).unwrap();
    let node0 = [2, 0, 10, 0, 0, 2];
    let payload: Vec<u8> = (1..=16).collect();
    let mut pull = frame_to(node0, node_ip(0), Flags::PULL, &[]);
    pull[14 + 20 + 8..14 + 20 + 10].fill(0); // msg_len 0, Scapy's default
    let frames = [
        frame_to([2, 0, 10, 0, 0, 0x63], node_ip(0), Flags::DATA, &payload),
        frame_to(node0, 0xc0a8_0101, Flags::DATA, &payload),
        pull,
        frame_to(node0, node_ip(0), Flags::ACK, &[]),
        frame_to(node0, node_ip(0), Flags::NACK | Flags::RESEND, &[]),
    ];
    for (i, f) in frames.into_iter().enumerate() {
        sim.host.send_raw_at(Time::from_us(2 + i as u64), f);
    }
    assert_eq!(sim.run().unwrap(), Outcome::Quiescent);
    assert!(sim.host.received.is_empty(), "{:?}", sim.host.received);
    let why: Vec<&str> = sim.host.rejected.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(why.len(), 5, "{why:?}");
    let expected = ["MAC 02:00:0a:00:00:63", "IPv4 192.168.1.1", "PULL packet", "ACK packet", "Homa RESEND"];
    for (w, e) in why.iter().zip(expected) {
        assert!(w.contains(e), "{e:?} not in {w:?}");
    }
}

#[test]
fn raw_frames_reach_the_program_and_malformed_ones_are_dropped_with_a_reason() {
    let mut sim = Simulation::new(&elf("apps/loopback.elf"), cfg(4)).unwrap();
    let payload: Vec<u8> = (1..=16).collect();
    sim.host.send_raw_at(Time::from_us(2), raw_frame(&payload));
    let mut bad = raw_frame(&payload);
    bad[14 + 10] ^= 0xff; // corrupt the IPv4 header checksum
    sim.host.send_raw_at(Time::from_us(3), bad);
    sim.host.send_raw_at(Time::from_us(4), vec![0; 10]);
    assert_eq!(sim.run().unwrap(), Outcome::Quiescent);
    assert_eq!(sim.host.received.len(), 1);
    assert_eq!(sim.host.received[0].msg.payload_bytes(), payload);
    assert_eq!(sim.host.received[0].msg.dst_context, 5);
    let why: Vec<&str> = sim.host.rejected.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(why.len(), 2, "{why:?}");
    assert!(why[0].contains("checksum") && why[1].contains("ethernet"), "{why:?}");
}

#[test]
fn scripted_replies_answer_what_arrived() {
    use nanopu_cluster::host::Rule;
    let mut sim = Simulation::new(&elf("apps/loopback.elf"), cfg(4)).unwrap();
    sim.host.send_at(Time::from_us(1), TestHost::message(7, node_ip(0), 0, &[1, 100]));
    // A "map" reply (first word 1) is answered by a "reduce" message (2, double) after 500 ns.
    let reduce = Rule { first_word: Some(1), delay: Time::from_ns(500), ..Rule::new(|w| vec![2, w[1] * 2]) };
    let last = Rule { first_word: Some(2), src_context: Some(0), ..Rule::new(|w| vec![3, w[1] + 5]) };
    sim.host.reply_with(reduce);
    sim.host.reply_with(last);
    assert_eq!(sim.run().unwrap(), Outcome::Quiescent);
    let got: Vec<_> = sim.host.received.iter().map(|r| r.msg.words.to_vec()).collect();
    assert_eq!(got, vec![vec![1, 100], vec![2, 200], vec![3, 205]]);
    let (first_back, second_out) = (sim.host.received[0].time, sim.host.sent[1].time);
    assert!(second_out >= first_back + Time::from_ns(500), "{first_back:?} {second_out:?}");
    assert_eq!((sim.host.sent[1].msg.src_context, sim.host.sent[1].msg.dst_context), (7, 0));
}

#[test]
fn a_message_as_frames_parses_back_to_itself() {
    use nanopu_cluster::host::message_of_frame;
    use nanopu_cluster::net::capture::frames_of_message;
    let m = TestHost::message(3, node_ip(0), 9, &[0x0102_0304_0506_0708, u64::MAX]);
    let frames = frames_of_message(&m).unwrap();
    assert_eq!(frames.len(), 1);
    assert_eq!(message_of_frame(&frames[0], 1).unwrap(), m);
    let long = TestHost::message(0, node_ip(0), 1, &vec![7; 257]); // 2,056 bytes: 3 segments
    let frames = frames_of_message(&long).unwrap();
    assert_eq!(frames.iter().map(Vec::len).collect::<Vec<_>>(), [64 + 1024, 64 + 1024, 64 + 8]);
    let empty = TestHost::message(0, node_ip(0), 1, &[]);
    let e = frames_of_message(&empty).unwrap_err();
    assert!(e.contains("msg_len 0"), "an empty message has no frame on the wire: {e}");
}

/// The node's port sends the transport's control frame for every request (128 bytes, before
/// any reply) besides the replies (docs/models/node.md, "The port towards the test host"):
/// a burst of requests to `loopback_tput.elf`, whose core needs 16 cycles a request, is
/// answered no faster than one ACK frame and one reply frame per request on the wire, and
/// the replies wait until the burst's ACKs have left.
#[test]
fn a_burst_is_answered_at_the_port_rate_with_acks_before_replies() {
    let n = 50u64;
    let mut sim = Simulation::new(&elf("apps/loopback_tput.elf"), cfg(1)).unwrap();
    let start = Time::from_us(2);
    sim.host.send_at(start, TestHost::message(0, node_ip(0), 0, &[0, n, 9]));
    (0..n).for_each(|i| sim.host.send_at(start, TestHost::message(0, node_ip(0), 0, &[1, i])));
    sim.host.stop_after(n as usize, |_| true);
    assert_eq!(sim.run().unwrap(), Outcome::HostDone);
    let wire = |bytes: u64| nanopu_sim::time::serialization(bytes, 200_000_000_000);
    let (ack, reply) = (wire(128), wire(64 + 16));
    let first_arrival = sim.host.sent[0].time + wire(64 + 24);
    let got = &sim.host.received;
    assert!(got.iter().all(|r| *r.msg.words == [1, 9]));
    let floor = first_arrival + Time((ack.0 + reply.0) * n);
    assert!(
        got[n as usize - 1].time >= floor,
        "last reply at {:?}, port floor {floor:?}",
        got[n as usize - 1].time
    );
    let acks_done = first_arrival + Time(ack.0 * (n + 1));
    assert!(
        got[0].time >= acks_done,
        "first reply at {:?} before the burst's ACKs left ({acks_done:?})",
        got[0].time
    );
}
