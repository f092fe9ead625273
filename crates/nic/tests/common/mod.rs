//! Transport endpoints joined by a faulty in-test network: random loss, trimming, reordering
//! (a random extra delay per packet), duplication (a second copy, possibly milliseconds
//! later), and link flaps (a node's link down for a period, then up). Multicast packets are
//! replicated to the group's members and made reliable as the fabric does it (a copy lost on
//! the way is sent again after a timeout; docs/models/network.md), so only this network's own
//! duplication ever makes a second copy. After a run, `check` says whether every message was
//! delivered exactly once with its payload intact, or else names what was lost and checks
//! that the senders name it too.

#![allow(dead_code)]

use nanopu_nic::transport::{Protocol, Segment, TAction, Timer, Transport, TransportParams};
use nanopu_nic::Message;
use nanopu_sim::{EventQueue, Rng, Time};
use std::collections::BTreeMap;

pub const BASE: u32 = 0x0a00_0002;
pub const MULTICAST_IP: u32 = 0xe000_0000;
/// One-way delay of a packet without faults.
pub const WIRE: Time = Time::from_ns(500);
/// A lost multicast copy is sent again after this long (the fabric's default).
pub const MCAST_TIMEOUT: Time = Time::from_us(10);

/// A node's link is down from `from` until `until`: everything sent to or from it is lost.
#[derive(Clone, Debug)]
pub struct Flap {
    pub node: usize,
    pub from: Time,
    pub until: Time,
}

/// What the network does to packets.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Probability that a packet is lost (or, see `trim`, cut to its header).
    pub loss: f64,
    /// Probability that a lost unicast data packet is trimmed rather than dropped (NDP).
    pub trim: f64,
    /// Probability that a delivered packet arrives a second time...
    pub dup: f64,
    /// ...up to this much later than the first copy.
    pub late: Time,
    /// Each copy is delayed by up to this much more than `WIRE`, so packets overtake each other.
    pub jitter: Time,
    pub flaps: Vec<Flap>,
    /// Packets sent at a time and of a kind this says are dropped, whatever else happens.
    pub drop: Option<fn(Time, &Segment) -> bool>,
}

/// A message the test asked a node to send, and what became of it.
#[derive(Clone, Debug)]
pub struct Sent {
    pub from: usize,
    /// Unicast destination, or every member but the sender.
    pub to: Vec<usize>,
    pub msg: Message,
    /// The sequence number its sender gives it (the sender's count of messages before it).
    pub seq: u32,
}

enum Ev {
    Send(usize, Message),
    Packet(usize, Segment),
    /// A multicast copy from node .0 to node .1 tries again.
    Retry(usize, usize, Segment),
    Timer(usize, Timer),
}

/// What the test asked to be sent, and what was delivered.
#[derive(Default)]
pub struct Ledger {
    pub sent: Vec<Sent>,
    /// Messages each node was asked to send so far.
    started: Vec<u32>,
    /// (node, time, message) of every delivery.
    pub delivered: Vec<(usize, Time, Message)>,
}

pub struct World {
    pub nodes: Vec<Transport>,
    q: EventQueue<Ev>,
    rng: Rng,
    pub faults: Faults,
    pub ledger: Ledger,
}

/// Node `from`'s next message: `len` bytes to node `to`.
pub fn unicast(l: &mut Ledger, from: usize, to: usize, len: u16) -> Message {
    let msg = message(l, from, BASE + to as u32, len, None);
    record(l, from, vec![to], msg)
}

/// Node `from`'s next message: `len` bytes to nodes `first..first + count`.
pub fn multicast(l: &mut Ledger, from: usize, (first, count): (usize, usize), len: u16) -> Message {
    let msg = message(l, from, MULTICAST_IP, len, Some((first as u32, count as u32)));
    record(l, from, (first..first + count).filter(|&m| m != from).collect(), msg)
}

/// Words unique to this message, the first one naming it (the transport moves whole words,
/// so even a message shorter than a word carries its name).
fn message(l: &Ledger, from: usize, dst_ip: u32, len: u16, group: Option<(u32, u32)>) -> Message {
    let tag = ((from as u64) << 32) | l.sent.len() as u64;
    let mut r = Rng::new(tag ^ 0x9e37_79b9_7f4a_7c15);
    let mut words: Vec<u64> = (0..(len as usize).div_ceil(8)).map(|_| r.next_u64()).collect();
    words[0] = tag;
    let (src_ip, src_context, dst_context) = (BASE + from as u32, 1, 2);
    Message { src_ip, src_context, dst_ip, dst_context, len, group, words: words.into() }
}

fn record(l: &mut Ledger, from: usize, to: Vec<usize>, msg: Message) -> Message {
    if l.started.len() <= from {
        l.started.resize(from + 1, 0);
    }
    let seq = l.started[from];
    l.started[from] += 1;
    l.sent.push(Sent { from, to, msg: msg.clone(), seq });
    msg
}

pub fn params(protocol: Protocol) -> TransportParams {
    TransportParams { protocol, ..TransportParams::default() }
}

impl World {
    pub fn new(n: usize, p: TransportParams, faults: Faults, seed: u64) -> World {
        let nodes = (0..n).map(|i| Transport::new(p.clone(), BASE + i as u32, Rng::stream(seed, i as u64)));
        World {
            nodes: nodes.map(Result::unwrap).collect(),
            q: EventQueue::new(),
            rng: Rng::stream(seed, 1 << 20),
            faults,
            ledger: Ledger::default(),
        }
    }

    /// Node `from` sends `len` bytes to `to` at `at`.
    pub fn unicast(&mut self, at: Time, from: usize, to: usize, len: u16) {
        let msg = unicast(&mut self.ledger, from, to, len);
        self.q.push(at, Ev::Send(from, msg));
    }

    /// Node `from` multicasts `len` bytes to nodes `first..first + count` at `at`.
    pub fn multicast(&mut self, at: Time, from: usize, group: (usize, usize), len: u16) {
        let msg = multicast(&mut self.ledger, from, group, len);
        self.q.push(at, Ev::Send(from, msg));
    }

    /// Simulate until nothing is left or `limit`; true if nothing is left.
    pub fn run(&mut self, limit: Time) -> bool {
        while let Some(t) = self.q.peek_time() {
            if t > limit {
                return false;
            }
            let (t, ev) = self.q.pop().expect("peeked");
            self.step(t, ev);
        }
        true
    }

    fn step(&mut self, t: Time, ev: Ev) {
        let mut out = vec![];
        let node = match ev {
            Ev::Send(n, msg) => {
                self.nodes[n].send_message(t, msg, &mut out);
                n
            }
            Ev::Packet(n, s) => {
                self.nodes[n].on_packet(t, s, &mut out);
                n
            }
            Ev::Timer(n, timer) => {
                self.nodes[n].on_timer(t, timer, &mut out);
                n
            }
            Ev::Retry(from, to, s) => return self.hop(t, from, to, s),
        };
        self.apply(node, t, out);
    }

    fn apply(&mut self, node: usize, now: Time, actions: Vec<TAction>) {
        for a in actions {
            match a {
                TAction::Transmit(s) => self.transmit(now, node, s),
                TAction::Deliver(m) => self.ledger.delivered.push((node, now, m)),
                TAction::Timer(t, timer) => self.q.push(t, Ev::Timer(node, timer)),
            }
        }
    }

    fn transmit(&mut self, now: Time, from: usize, s: Segment) {
        if !s.is_multicast() {
            return self.cross(now, from, (s.dst_ip - BASE) as usize, s);
        }
        let (first, count) = (s.mcast_first as usize, s.mcast_count as usize);
        let end = (first + count).min(self.nodes.len());
        for to in (first..end).filter(|&m| m != from) {
            self.hop(now, from, to, s.clone());
        }
    }

    fn down(&self, node: usize, t: Time) -> bool {
        self.faults.flaps.iter().any(|f| f.node == node && f.from <= t && t < f.until)
    }

    fn lost(&mut self, now: Time, from: usize, to: usize) -> bool {
        self.down(from, now) || self.down(to, now) || self.rng.next_f64() < self.faults.loss
    }

    /// A unicast packet: lost, trimmed, or delivered (maybe twice).
    fn cross(&mut self, now: Time, from: usize, to: usize, mut s: Segment) {
        if self.faults.drop.is_some_and(|d| d(now, &s)) {
            return;
        }
        if self.lost(now, from, to) {
            let trim = s.is_data() && !s.is_trimmed() && self.rng.next_f64() < self.faults.trim;
            if !trim || self.down(from, now) || self.down(to, now) {
                return;
            }
            s.trim();
        }
        self.arrive(now, to, s);
    }

    /// A multicast copy: delivered (maybe twice), or tried again after the timeout.
    fn hop(&mut self, now: Time, from: usize, to: usize, s: Segment) {
        if self.lost(now, from, to) {
            return self.q.push(now + MCAST_TIMEOUT, Ev::Retry(from, to, s));
        }
        self.arrive(now, to, s);
    }

    fn arrive(&mut self, now: Time, to: usize, s: Segment) {
        let at = now + WIRE + self.up_to(self.faults.jitter);
        if self.rng.next_f64() < self.faults.dup {
            let again = at + self.up_to(self.faults.late);
            self.q.push(again, Ev::Packet(to, s.clone()));
        }
        self.q.push(at, Ev::Packet(to, s));
    }

    fn up_to(&mut self, t: Time) -> Time {
        Time(self.rng.below(t.0.max(1)))
    }

    pub fn check(&self) -> Result<Vec<(usize, usize)>, String> {
        self.ledger.check(&self.nodes)
    }
}

impl Ledger {
    /// Every delivery is of a message sent to that node, intact, and the first of it there;
    /// every message not delivered is unicast and still unfinished at its sender. Err names
    /// what went wrong; Ok gives the messages (index in `sent`, node) never delivered.
    pub fn check(&self, nodes: &[Transport]) -> Result<Vec<(usize, usize)>, String> {
        let got = self.deliveries()?;
        let mut lost = vec![];
        for (i, s) in self.sent.iter().enumerate() {
            for &to in &s.to {
                if !got.contains_key(&(i, to)) {
                    named_by_sender(nodes, s, to)?;
                    lost.push((i, to));
                }
            }
        }
        Ok(lost)
    }

    /// (index in `sent`, node) of every delivery; Err on a duplicate, a stranger or damage.
    fn deliveries(&self) -> Result<BTreeMap<(usize, usize), Time>, String> {
        let mut got = BTreeMap::new();
        for (node, t, m) in &self.delivered {
            let i = (m.words[0] & 0xffff_ffff) as usize;
            let s = self.sent.get(i).filter(|s| s.msg.words[0] == m.words[0]);
            let s = s.ok_or_else(|| format!("node {node} got a message never sent: {:x}", m.words[0]))?;
            if !s.to.contains(node) || m.words != s.msg.words || m.len != s.msg.len {
                return Err(format!("node {node} got message {i} damaged or misrouted at {t:?}"));
            }
            if let Some(first) = got.insert((i, *node), *t) {
                return Err(format!("node {node} got message {i} twice: at {first:?} and {t:?}"));
            }
        }
        Ok(got)
    }
}

/// A message `to` never got: its sender must report it unfinished (a multicast message is
/// never lost: the network resends its copies until they arrive).
fn named_by_sender(nodes: &[Transport], s: &Sent, to: usize) -> Result<(), String> {
    let unfinished = nodes[s.from].unfinished();
    let named = s.msg.group.is_none() && unfinished.contains(&(BASE + to as u32, s.seq as u16, s.seq));
    if named {
        return Ok(());
    }
    Err(format!("message {} from {} to {to} lost and not reported: {unfinished:?}", s.seq, s.from))
}
