//! Two or more transport endpoints joined by a toy wire that delays every packet by a fixed
//! time and can trim or drop chosen packets: reliability under trimming and loss, PULL
//! pacing, Homa grants, multicast fallback, tail-delay injection.

use nanopu_nic::transport::{flags, Protocol, Segment, TAction, Timer, Transport, TransportParams};
use nanopu_nic::Message;
use nanopu_sim::{EventQueue, Rng, Time};

const BASE: u32 = 0x0a00_0002;
const WIRE: Time = Time::from_ns(500);

enum Ev {
    Packet(usize, Segment),
    Timer(usize, Timer),
}

/// Decides a packet's fate on the wire: deliver, trim, or drop.
type Fate = Box<dyn FnMut(&Segment) -> &'static str>;

struct World {
    nodes: Vec<Transport>,
    q: EventQueue<Ev>,
    delivered: Vec<(usize, Time, Message)>,
    sent: Vec<Segment>,
    fate: Fate,
}

impl World {
    fn new(n: usize, p: TransportParams, fate: Fate) -> World {
        let nodes =
            (0..n).map(|i| Transport::new(p.clone(), BASE + i as u32, Rng::stream(1, i as u64)).unwrap());
        World { nodes: nodes.collect(), q: EventQueue::new(), delivered: vec![], sent: vec![], fate }
    }

    fn apply(&mut self, node: usize, now: Time, actions: Vec<TAction>) {
        for a in actions {
            match a {
                TAction::Transmit(s) => self.transmit(now, s),
                TAction::Deliver(m) => self.delivered.push((node, now, m)),
                TAction::Timer(t, timer) => self.q.push(t, Ev::Timer(node, timer)),
            }
        }
    }

    fn transmit(&mut self, now: Time, mut s: Segment) {
        self.sent.push(s.clone());
        let to = (s.dst_ip - BASE) as usize;
        match (self.fate)(&s) {
            "drop" => {}
            "trim" => {
                s.trim();
                self.q.push(now + WIRE, Ev::Packet(to, s));
            }
            _ => self.q.push(now + WIRE, Ev::Packet(to, s)),
        }
    }

    fn send(&mut self, from: usize, to: usize, words: Vec<u64>) {
        let len = (words.len() * 8) as u16;
        let msg = Message {
            src_ip: BASE + from as u32,
            src_context: 1,
            dst_ip: BASE + to as u32,
            dst_context: 2,
            len,
            words: words.into(),
            group: None,
        };
        let mut out = vec![];
        self.nodes[from].send_message(Time::ZERO, msg, &mut out);
        self.apply(from, Time::ZERO, out);
    }

    fn run(&mut self) {
        while let Some((t, ev)) = self.q.pop() {
            assert!(t < Time::from_us(100_000), "runaway");
            let mut out = vec![];
            let node = match ev {
                Ev::Packet(n, s) => {
                    self.nodes[n].on_packet(t, s, &mut out);
                    n
                }
                Ev::Timer(n, timer) => {
                    self.nodes[n].on_timer(t, timer, &mut out);
                    n
                }
            };
            self.apply(node, t, out);
        }
    }
}

fn payload(n: usize, seed: u64) -> Vec<u64> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| r.next_u64()).collect()
}

fn ndp() -> TransportParams {
    TransportParams::default()
}

fn homa() -> TransportParams {
    TransportParams { protocol: Protocol::Homa, ..TransportParams::default() }
}

#[test]
fn ndp_sends_rtt_pkts_then_paces_pulls() {
    let mut w = World::new(2, ndp(), Box::new(|_| "ok"));
    let words = payload(8 * 128, 1); // 8 KiB: 8 packets
    w.send(0, 1, words.clone());
    let first: Vec<_> = w.sent.iter().filter(|s| s.has(flags::DATA)).collect();
    assert_eq!(first.len(), 2, "rtt_pkts packets before any PULL");
    w.run();
    assert_eq!(w.delivered.len(), 1);
    assert_eq!(*w.delivered[0].2.words, words[..]);
    let pulls: Vec<u16> = w.sent.iter().filter(|s| s.has(flags::PULL)).map(|s| s.credit).collect();
    // One PULL per packet beyond the first two: each arrival pulls one more until all are.
    assert_eq!(pulls, vec![3, 4, 5, 6, 7, 8]);
    assert_eq!(w.sent.iter().filter(|s| s.has(flags::ACK)).count(), 8);
    assert_eq!(w.nodes[0].in_flight(), (0, 0), "sender freed the message on the last ACK");
}

#[test]
fn ndp_resends_trimmed_packets_on_pull() {
    let mut trims = 0;
    let fate: Fate = Box::new(move |s| {
        if s.has(flags::DATA) && s.pkt_offset % 3 == 1 && trims < 3 {
            trims += 1;
            "trim"
        } else {
            "ok"
        }
    });
    let mut w = World::new(2, ndp(), fate);
    let words = payload(8 * 128, 2);
    w.send(0, 1, words.clone());
    w.run();
    assert_eq!(w.delivered.len(), 1);
    assert_eq!(*w.delivered[0].2.words, words[..]);
    assert_eq!(w.nodes[1].counters.trimmed_received, 3);
    assert_eq!(w.nodes[0].counters.retransmissions, 3);
    assert_eq!(w.nodes[0].counters.timeouts, 0, "NACKs, not timeouts, repaired the trims");
}

/// 100 senders, one packet each, every packet trimmed on its first two transmissions: the
/// receiver's pacer takes 200 PULL times (8.7 us), longer than the 2 us timeout, yet no
/// sender times out: a NACKed packet waits for its PULL (`docs/models/network.md`).
#[test]
fn ndp_nacked_packets_wait_for_their_pull_however_long() {
    let fate: Fate = Box::new(|s| if s.has(flags::DATA) && s.credit <= 2 { "trim" } else { "ok" });
    let p = TransportParams { rto: Time::from_us(2), ..ndp() };
    let mut w = World::new(101, p, fate);
    for from in 1..=100 {
        w.send(from, 0, payload(128, from as u64));
    }
    w.run();
    assert_eq!(w.delivered.len(), 100);
    assert!(w.delivered.last().unwrap().1 > Time::from_us(8), "the pacer took longer than the timeout");
    assert_eq!(w.nodes[0].counters.trimmed_received, 200);
    assert_eq!(w.nodes[0].counters.pulls_sent, 200, "one PULL per trimmed arrival");
    for n in &w.nodes[1..] {
        assert_eq!((n.counters.timeouts, n.counters.retransmissions), (0, 2));
    }
}

/// The one PULL a trimmed one-packet message needs is lost: the receiver, hearing nothing for
/// `rto` after sending it, pulls again; the sender, with nothing in flight, never times out.
#[test]
fn ndp_receiver_repeats_a_lost_pull() {
    let mut lost = false;
    let fate: Fate = Box::new(move |s| match s {
        s if s.has(flags::DATA) && s.credit == 1 => "trim",
        s if s.has(flags::PULL) && !lost => {
            lost = true;
            "drop"
        }
        _ => "ok",
    });
    let mut w = World::new(2, ndp(), fate);
    let words = payload(128, 9);
    w.send(0, 1, words.clone());
    w.run();
    assert_eq!(w.delivered.len(), 1);
    assert_eq!(*w.delivered[0].2.words, words[..]);
    assert!(w.delivered[0].1 > Time::from_us(20), "after the receiver's timeout");
    assert_eq!(w.nodes[1].counters.pull_timeouts, 1);
    assert_eq!(w.nodes[0].counters.timeouts, 0);
}

#[test]
fn ndp_recovers_silent_losses_by_timeout() {
    let mut dropped = 0;
    let fate: Fate = Box::new(move |s| {
        if s.has(flags::DATA) && s.pkt_offset == 5 && dropped < 2 {
            dropped += 1;
            "drop"
        } else {
            "ok"
        }
    });
    let mut w = World::new(2, ndp(), fate);
    let words = payload(8 * 128, 3);
    w.send(0, 1, words.clone());
    w.run();
    assert_eq!(w.delivered.len(), 1, "exactly once");
    assert_eq!(*w.delivered[0].2.words, words[..]);
    assert!(w.nodes[0].counters.timeouts >= 2);
}

#[test]
fn duplicates_are_delivered_once() {
    let mut lost = 0;
    let fate: Fate = Box::new(move |s| {
        if s.has(flags::ACK) && lost < 3 {
            lost += 1;
            return "drop";
        }
        "ok"
    });
    let mut w = World::new(2, ndp(), fate);
    w.send(0, 1, payload(300, 4));
    w.run();
    assert_eq!(w.delivered.len(), 1);
    assert!(w.nodes[1].counters.duplicates_received > 0, "the sender resent after losing ACKs");
    assert_eq!(w.nodes[0].in_flight(), (0, 0), "and finished once an ACK got through");
}

#[test]
fn homa_grants_after_unscheduled_bytes_and_prefers_short_messages() {
    let mut w = World::new(3, homa(), Box::new(|_| "ok"));
    w.send(0, 2, payload(128 * 40, 5)); // 40 packets
    w.send(1, 2, payload(128 * 12, 6)); // 12 packets
    let unscheduled = w.sent.iter().filter(|s| s.has(flags::DATA)).count();
    assert_eq!(unscheduled, 16, "8 KiB unscheduled from each sender");
    w.run();
    assert_eq!(w.delivered.len(), 2);
    assert_eq!(w.delivered[0].2.len, 12 * 1024, "SRPT finishes the short message first");
    let grants: Vec<_> = w.sent.iter().filter(|s| s.has(flags::GRANT)).collect();
    assert!(!grants.is_empty() && grants.iter().all(|g| g.prio >= 2));
}

#[test]
fn homa_asks_again_for_lost_packets() {
    let mut dropped = false;
    let fate: Fate = Box::new(move |s| {
        if s.has(flags::DATA) && s.pkt_offset == 3 && !dropped {
            dropped = true;
            return "drop";
        }
        "ok"
    });
    let mut w = World::new(2, homa(), fate);
    let words = payload(128 * 10, 7);
    w.send(0, 1, words.clone());
    w.run();
    assert_eq!(w.delivered.len(), 1);
    assert_eq!(*w.delivered[0].2.words, words[..]);
    assert!(w.sent.iter().any(|s| s.has(flags::RESEND) && s.pkt_offset == 3));
}

#[test]
fn multicast_without_switch_support_unicasts_to_each_member() {
    let p = TransportParams { multicast: false, ..ndp() };
    let mut w = World::new(6, p, Box::new(|_| "ok"));
    let msg = Message {
        src_ip: BASE + 2,
        src_context: 0,
        dst_ip: 0xe000_0000,
        dst_context: 0,
        len: 16,
        words: vec![1, 2].into(),
        group: Some((1, 4)),
    };
    let mut out = vec![];
    w.nodes[2].send_message(Time::ZERO, msg, &mut out);
    w.apply(2, Time::ZERO, out);
    w.run();
    let mut got: Vec<usize> = w.delivered.iter().map(|d| d.0).collect();
    got.sort();
    assert_eq!(got, vec![1, 3, 4], "members 1..=4 except the sender");
}

#[test]
fn tail_delay_holds_the_chosen_fraction_back() {
    let p = TransportParams { tail_fraction: 1.0, tail_delay: Time::from_us(4), ..ndp() };
    let mut w = World::new(2, p, Box::new(|_| "ok"));
    w.send(0, 1, payload(2, 8));
    w.run();
    assert_eq!(w.nodes[0].counters.tail_delayed, 1);
    assert!(w.delivered[0].1 >= Time::from_us(4) + WIRE);
}
