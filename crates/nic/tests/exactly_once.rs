//! Exactly-once delivery however late a duplicate comes (transport/seqwin.rs): a sender that
//! keeps resending because every ACK is lost for milliseconds, copies the network delivers
//! milliseconds late, a sender whose oldest message cannot finish, and more messages than
//! 16-bit message ids.
//!
//! The first two catch a receiver that forgets a delivered message after a fixed time, so
//! that a copy arriving later is delivered a second time.

mod common;

use common::{params, Faults, Flap, World, BASE};
use nanopu_nic::transport::seqwin::SEQ_WINDOW;
use nanopu_nic::transport::{flags, Protocol, Segment};
use nanopu_sim::Time;

const BOTH: [Protocol; 2] = [Protocol::Ndp, Protocol::Homa];

fn delivered_once(w: &World) {
    let lost = w.check().unwrap_or_else(|e| panic!("{e}"));
    assert!(lost.is_empty(), "never delivered: {lost:?}");
}

/// Every ACK is lost for the first 5 ms: the sender resends its messages for 5 ms, long
/// after they were delivered, and must finish once an ACK gets through.
#[test]
fn resent_for_milliseconds_after_delivery_yet_delivered_once() {
    fn no_acks_yet(t: Time, s: &Segment) -> bool {
        s.has(flags::ACK) && t < Time::from_us(5000)
    }
    for p in BOTH {
        let faults = Faults { drop: Some(no_acks_yet), ..Faults::default() };
        let mut w = World::new(3, params(p), faults, 1);
        for (i, len) in [64u16, 3000, 9000, 20_000].into_iter().enumerate() {
            w.unicast(Time::from_ns(100 * i as u64), i % 2, 2, len);
        }
        assert!(w.run(Time::from_us(50_000)), "{p:?}: the senders finish");
        delivered_once(&w);
        assert!(w.nodes[2].counters.duplicates_received > 100, "{p:?}: resent all along");
        assert_eq!((w.nodes[0].in_flight(), w.nodes[1].in_flight()), ((0, 0), (0, 0)));
    }
}

/// Every packet is delivered twice, the second copy up to 4 ms later.
#[test]
fn copies_milliseconds_late_are_dropped() {
    for p in BOTH {
        let faults = Faults { dup: 1.0, late: Time::from_us(4000), ..Faults::default() };
        let mut w = World::new(4, params(p), faults, 2);
        for i in 0..40u64 {
            let len = [8u16, 1024, 1500, 12_000][i as usize % 4];
            w.unicast(Time::from_ns(300 * i), i as usize % 4, (i as usize + 1 + i as usize / 4) % 4, len);
        }
        w.multicast(Time::from_ns(50), 1, (0, 4), 5000);
        assert!(w.run(Time::from_us(50_000)));
        delivered_once(&w);
    }
}

/// A sender whose oldest message cannot finish (its destination's link is down) starts no
/// message `SEQ_WINDOW` or more after it; those wait, in order, and go when it finishes.
#[test]
fn a_sender_holds_messages_a_window_behind_its_oldest_unfinished_one() {
    let up = Time::from_us(3000);
    let faults = Faults { flaps: vec![Flap { node: 1, from: Time::ZERO, until: up }], ..Faults::default() };
    let mut w = World::new(3, params(Protocol::Ndp), faults, 3);
    w.unicast(Time::ZERO, 0, 1, 100);
    let more = SEQ_WINDOW as u64 + 10;
    for i in 0..more {
        w.unicast(Time::from_ns(10 + 50 * i), 0, 2, 64);
    }
    let all_sent = Time::from_ns(10 + 50 * more);
    assert!(all_sent < up);
    w.run(all_sent + Time::from_us(100));
    let to_2 = w.ledger.delivered.iter().filter(|d| d.0 == 2).count() as u32;
    assert_eq!(to_2, SEQ_WINDOW - 1, "the messages after the window wait");
    assert_eq!(w.nodes[0].in_flight().0, 1 + 11, "the stuck one and those waiting");
    assert!(w.run(Time::from_us(20_000)));
    delivered_once(&w);
    let last = w.ledger.delivered.iter().filter(|d| d.0 == 2).map(|d| d.2.words[0]).collect::<Vec<_>>();
    assert!(last.windows(2).all(|x| x[0] < x[1]), "in the order they were sent");
}

/// More messages than 16-bit ids from one sender, with loss and late copies: ids wrap, and
/// copies arrive after the receiver delivered `SEQ_WINDOW` newer messages of their sender.
#[test]
fn seventy_thousand_messages_with_late_copies() {
    let faults = Faults {
        loss: 0.2,
        dup: 0.2,
        late: Time::from_us(4000),
        jitter: Time::from_ns(800),
        ..Faults::default()
    };
    let mut w = World::new(3, params(Protocol::Homa), faults, 4);
    for i in 0..70_000u64 {
        let to = if i % 7 == 0 { 2 } else { 1 };
        w.unicast(Time::from_ns(40 * i), 0, to, 8 + (i % 3) as u16 * 700);
    }
    assert!(w.run(Time::from_us(100_000)));
    delivered_once(&w);
    assert!(w.ledger.sent.iter().any(|s| s.seq > u16::MAX as u32));
    assert_eq!(w.ledger.delivered[0].2.src_ip, BASE);
}
