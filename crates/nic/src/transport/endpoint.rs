//! One NIC's transport endpoint: messages in, segments out, timers.

use super::deadlines::Deadlines;
use super::outmsgs::{OutKey, OutMsgs};
use super::params::{Protocol, TransportParams};
use super::receiver::InMsg;
use super::segment::{flags, Segment, MULTICAST_IP};
use super::sender::OutMsg;
use super::seqwin::{Seen, SeqWindow, SEQ_WINDOW};
use crate::message::Message;
use nanopu_sim::hash::IntMap as MsgMap;
use nanopu_sim::{Rng, Time};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

pub use nanopu_sim::packet::NODE_IP_BASE;

/// Something the transport wants done.
#[derive(Clone, Debug, PartialEq)]
pub enum TAction {
    /// Hand this packet to the node's port now.
    Transmit(Segment),
    /// A complete message for this node's cores.
    Deliver(Message),
    /// Call [`Transport::on_timer`] with this timer at this time.
    Timer(Time, Timer),
}

/// Where the transport's actions go, in the order it takes them: the caller's simulation,
/// which carries each out at once, or a vector (tests).
pub trait Actions {
    fn push(&mut self, a: TAction);
}

impl Actions for Vec<TAction> {
    fn push(&mut self, a: TAction) {
        Vec::push(self, a);
    }
}

/// The transport's timers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Timer {
    /// The PULL pacer may send the next PULL.
    Pull,
    /// The earliest retransmission deadline of this endpoint's outgoing messages. One timer
    /// per endpoint, not per message, keeps the event queue small.
    SenderRto,
    /// Homa: missing packets of an incoming message are asked for again.
    ReceiverRto { key: InKey },
    /// A message held back by tail-latency injection is released.
    Release { held: u64 },
}

/// An incoming message: (source IP, the source's sequence number for it; see `seqwin`).
pub type InKey = (u32, u32);

/// What the transport did, for reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransportCounters {
    pub messages_sent: u64,
    pub messages_delivered: u64,
    pub data_packets_sent: u64,
    pub retransmissions: u64,
    /// Senders' retransmission timeouts (NDP) and Homa's timeouts, one per message each time.
    pub timeouts: u64,
    /// NDP: PULLs repeated by a receiver whose last PULL drew nothing for `rto`.
    pub pull_timeouts: u64,
    pub trimmed_received: u64,
    pub duplicates_received: u64,
    pub pulls_sent: u64,
    pub grants_sent: u64,
    pub tail_delayed: u64,
}

/// One NIC's endpoint.
pub struct Transport {
    p: TransportParams,
    ip: u32,
    /// Sequence number of the next message started (its low 16 bits are its `msg_id`).
    next_seq: u32,
    rng: Rng,
    /// Boxed (an `OutMsg` is 176 bytes): see `OutMsgs`.
    out: OutMsgs,
    /// Messages waiting until the oldest unfinished one is less than `SEQ_WINDOW` behind
    /// (`seqwin`), in the order they came.
    blocked: VecDeque<Message>,
    inbound: MsgMap<InKey, InMsg>,
    /// Per source IP, what was delivered from it (`seqwin`).
    delivered: MsgMap<u32, SeqWindow>,
    /// Messages owed a PULL, one entry per PULL.
    pulls: VecDeque<InKey>,
    pull_free_at: Time,
    pull_armed: bool,
    /// When the pending `SenderRto` timer fires (others pending are stale).
    rto_at: Option<Time>,
    /// When each outgoing message times out.
    deadlines: Deadlines,
    /// When the node's link is free of what this endpoint has handed it so far.
    tx: TxClock,
    held: BTreeMap<u64, Message>,
    next_held: u64,
    pub counters: TransportCounters,
    /// Messages this endpoint started sending and delivered, in time order (kept only
    /// while `log_messages`).
    pub log: MessageLog,
    log_messages: bool,
}

/// One message event: who, how big, when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MsgEvent {
    pub src_ip: u32,
    pub src_context: u16,
    pub msg_id: u16,
    /// Destination IP (224.0.0.0 for multicast) and context.
    pub dst_ip: u32,
    pub dst_context: u16,
    pub len: u16,
    pub time: Time,
}

/// Per-message records of one endpoint.
#[derive(Clone, Debug, Default)]
pub struct MessageLog {
    pub sent: Vec<MsgEvent>,
    pub delivered: Vec<MsgEvent>,
}

impl Transport {
    pub fn new(p: TransportParams, ip: u32, rng: Rng) -> Result<Transport, String> {
        p.validate()?;
        let tx = TxClock { free_at: Time::ZERO, byte_time: p.byte_time };
        Ok(Transport {
            p,
            ip,
            next_seq: 0,
            rng,
            out: OutMsgs::default(),
            blocked: VecDeque::new(),
            inbound: MsgMap::default(),
            delivered: MsgMap::default(),
            pulls: VecDeque::new(),
            pull_free_at: Time::ZERO,
            pull_armed: false,
            rto_at: None,
            deadlines: Deadlines::default(),
            tx,
            held: BTreeMap::new(),
            next_held: 0,
            counters: TransportCounters::default(),
            log: MessageLog::default(),
            log_messages: true,
        })
    }

    /// Keep the per-message log (on by default). A run that never reads it can turn it
    /// off: it grows by about 50 bytes per message, a few KiB per node in a sort.
    pub fn set_message_log(&mut self, on: bool) {
        self.log_messages = on;
    }

    pub fn params(&self) -> &TransportParams {
        &self.p
    }

    /// This endpoint's IP address.
    pub fn ip(&self) -> u32 {
        self.ip
    }

    /// Messages still being sent or received (for end-of-run reports).
    pub fn in_flight(&self) -> (usize, usize) {
        (self.out.len() + self.held.len() + self.blocked.len(), self.inbound.len())
    }

    /// The unicast messages started and not yet acknowledged, as (destination IP, message
    /// id, sequence number), in no particular order: what a run that ends now has not
    /// delivered for sure (for end-of-run reports).
    pub fn unfinished(&self) -> Vec<(u32, u16, u32)> {
        self.out.iter().map(|((dst, id), m)| (dst, id, m.proto.mcast_seq)).collect()
    }

    // ---- sending -----------------------------------------------------------------------

    /// A message left the NIC's TX path at `now`.
    pub fn send_message(&mut self, now: Time, msg: Message, out: &mut impl Actions) {
        if self.p.tail_fraction > 0.0 && self.rng.next_f64() < self.p.tail_fraction {
            self.counters.tail_delayed += 1;
            self.next_held += 1;
            self.held.insert(self.next_held, msg);
            out.push(TAction::Timer(now + self.p.tail_delay, Timer::Release { held: self.next_held }));
            return;
        }
        self.start(now, msg, out);
    }

    fn start(&mut self, now: Time, msg: Message, out: &mut impl Actions) {
        self.counters.messages_sent += 1;
        match msg.group {
            Some(_) if self.p.multicast => self.admit(now, msg, out),
            Some((first, count)) => {
                let own = self.ip.wrapping_sub(NODE_IP_BASE);
                for n in (first..first.saturating_add(count)).filter(|&n| n != own) {
                    let copy = Message { dst_ip: NODE_IP_BASE + n, group: None, ..msg.clone() };
                    self.admit(now, copy, out);
                }
            }
            None => self.admit(now, msg, out),
        }
    }

    /// Start `msg` now, or queue it behind those already waiting if the oldest unfinished
    /// message is `SEQ_WINDOW` behind (the sender's half of the rule in `seqwin`).
    fn admit(&mut self, now: Time, msg: Message, out: &mut impl Actions) {
        if self.blocked.is_empty() && self.window_open() {
            return self.launch(now, msg, out);
        }
        self.blocked.push_back(msg);
    }

    /// May the message with sequence number `next_seq` start?
    fn window_open(&self) -> bool {
        self.out.oldest().is_none_or(|m| self.next_seq.wrapping_sub(m.proto.mcast_seq) < SEQ_WINDOW)
    }

    /// Start what waited, now that a message finished.
    fn unblock(&mut self, now: Time, out: &mut impl Actions) {
        while !self.blocked.is_empty() && self.window_open() {
            let msg = self.blocked.pop_front().expect("not empty");
            self.launch(now, msg, out);
        }
    }

    fn launch(&mut self, now: Time, msg: Message, out: &mut impl Actions) {
        match msg.group {
            Some(g) => self.start_multicast(now, msg, g, out),
            None => self.start_unicast(now, msg, out),
        }
    }

    /// The template of the message's packets, with the next sequence number.
    fn proto(&mut self, msg: &Message) -> Segment {
        let seq = self.next_seq;
        self.next_seq = seq.wrapping_add(1);
        let mut s = Segment::default();
        (s.src_ip, s.dst_ip, s.band, s.msg_id, s.msg_len) = (self.ip, msg.dst_ip, 1, seq as u16, msg.len);
        (s.src_context, s.dst_context, s.mcast_seq) = (msg.src_context, msg.dst_context, seq);
        s
    }

    fn record_sent(&mut self, proto: &Segment, now: Time) {
        if !self.log_messages {
            return;
        }
        let (src_ip, src_context, msg_id, dst_ip, dst_context, len) =
            (proto.src_ip, proto.src_context, proto.msg_id, proto.dst_ip, proto.dst_context, proto.msg_len);
        self.log.sent.push(MsgEvent { src_ip, src_context, msg_id, dst_ip, dst_context, len, time: now });
    }

    fn start_unicast(&mut self, now: Time, msg: Message, out: &mut impl Actions) {
        let proto = self.proto(&msg);
        self.record_sent(&proto, now);
        let packets = self.p.packets(msg.len);
        let allowed = match self.p.protocol {
            Protocol::Ndp => self.p.initial_window(packets),
            Protocol::Homa => self.p.unscheduled_packets(),
        };
        let key = (msg.dst_ip, proto.msg_id);
        let m = OutMsg::new(proto, Arc::new(msg.words), packets, allowed, now);
        self.out.insert(key, Box::new(m));
        self.pump(now, key, out);
        if self.p.protocol == Protocol::Homa {
            let m = self.out.get_mut(&key).expect("just started");
            self.deadlines.note(key, m, now + self.p.rto);
            self.arm_rto(now + self.p.rto, out);
        }
    }

    /// Make sure a `SenderRto` timer fires by `at`: the pending one fires at the earliest
    /// deadline.
    fn arm_rto(&mut self, at: Time, out: &mut impl Actions) {
        if self.rto_at.is_none_or(|t| at < t) {
            self.rto_at = Some(at);
            out.push(TAction::Timer(at, Timer::SenderRto));
        }
    }

    /// Multicast: every packet once; the switches make delivery reliable.
    fn start_multicast(
        &mut self,
        now: Time,
        msg: Message,
        (first, count): (u32, u32),
        out: &mut impl Actions,
    ) {
        let mut proto = self.proto(&msg);
        proto.dst_ip = MULTICAST_IP;
        self.record_sent(&proto, now);
        proto.flags = flags::MCAST;
        (proto.mcast_first, proto.mcast_count) = (first, count);
        let packets = self.p.packets(msg.len);
        let m = OutMsg::new(proto, Arc::new(msg.words), packets, packets, Time::ZERO);
        for o in 0..packets {
            self.counters.data_packets_sent += 1;
            self.tx.send(now, m.packet(&self.p, o), out);
        }
    }

    /// Send whatever the message's credit or grant now allows. An NDP packet carries the
    /// number of its transmission, which the receiver's answer echoes (`sender`).
    fn pump(&mut self, now: Time, key: OutKey, out: &mut impl Actions) {
        let Some(m) = self.out.get_mut(&key) else {
            return;
        };
        let ndp = self.p.protocol == Protocol::Ndp;
        loop {
            let resend = !m.resend.is_empty();
            let next = if ndp { m.next_ndp() } else { m.next_homa() };
            let Some(o) = next else { break };
            self.counters.data_packets_sent += 1;
            self.counters.retransmissions += resend as u64;
            let mut seg = m.packet(&self.p, o);
            let tx = tx_number(m.sent);
            seg.credit = if ndp { tx } else { 0 };
            let departs = self.tx.send(now, seg, out);
            if ndp {
                m.launched(o, tx, departs);
            }
        }
        if ndp {
            let at = m.ndp_deadline(self.p.rto, self.p.pull_wait);
            self.deadlines.note(key, m, at);
            self.arm_rto(at, out);
        }
    }

    // ---- receiving ---------------------------------------------------------------------

    /// `s` will arrive soon: start loading what its handling reads first (the sender's
    /// message state for an ACK, PULL or NACK; the shared payload's header for data, read to
    /// copy the words and written when the packet is dropped). Only a hint; results never
    /// depend on it.
    pub fn prefetch_for(&self, s: &Segment) {
        match &s.payload {
            Some(words) => nanopu_sim::hint::prefetch(&**words),
            None if !s.has(flags::DATA) => self.out.prefetch(&(s.src_ip, s.msg_id)),
            None => {}
        }
    }

    /// A packet for this node arrived at `now`.
    pub fn on_packet(&mut self, now: Time, s: Segment, out: &mut impl Actions) {
        if s.has(flags::DATA) {
            return self.on_data(now, s, out);
        }
        let key = (s.src_ip, s.msg_id);
        // The sequence number tells an answer about an earlier message under the same 16-bit
        // id (ids wrap) from one about this one.
        let Some(m) = self.out.get_mut(&key).filter(|m| m.proto.mcast_seq == s.mcast_seq) else {
            return;
        };
        if s.has(flags::ACK) {
            return self.on_ack(key, &s, now, out);
        }
        if s.has(flags::RESEND) {
            m.nack(s.pkt_offset);
        } else if s.has(flags::NACK) {
            m.nack_ndp(s.pkt_offset, s.credit, now);
        }
        if s.has(flags::RESEND) {
            // Homa: asking for a packet grants it (the GRANT that allowed it may be lost).
            m.allowed = m.allowed.max(s.pkt_offset as u32 + 1);
        }
        if s.has(flags::PULL) || s.has(flags::GRANT) {
            m.allowed = m.allowed.max(s.credit as u32);
            m.last_progress = now;
        }
        if s.has(flags::GRANT) {
            m.proto.band = s.prio;
        }
        // NDP: a NACKed packet goes again on a PULL (the first window is for new packets).
        self.pump(now, key, out);
    }

    fn on_ack(&mut self, key: OutKey, s: &Segment, now: Time, out: &mut impl Actions) {
        let m = self.out.get_mut(&key).expect("checked");
        let whole = self.p.protocol == Protocol::Homa;
        let done = if whole { true } else { m.ack(s.pkt_offset, now) };
        if done {
            self.out.remove(&key);
            self.unblock(now, out);
        } else {
            // The last packet in flight answered: the deadline may now be earlier.
            let at = deadline(&self.p, m);
            self.deadlines.note(key, m, at);
        }
    }

    fn on_data(&mut self, now: Time, s: Segment, out: &mut impl Actions) {
        let key = (s.src_ip, s.mcast_seq);
        // A message is open or delivered, never both, so most packets need one lookup.
        if !self.inbound.contains_key(&key) {
            let unicast = s.mcast_count == 0;
            match self.delivered.get(&s.src_ip).map_or(Seen::New, |w| w.seen(s.mcast_seq)) {
                Seen::Delivered => return self.duplicate_of_delivered(now, &s, out),
                // Finished at its sender (`seqwin`): nothing to answer.
                Seen::Behind if unicast => return self.counters.duplicates_received += 1,
                _ => self.open_inbound(now, key, &s, out),
            }
        }
        if s.has(flags::CHOP) {
            return self.on_trimmed(now, key, &s, out);
        }
        self.store(now, key, &s, out);
    }

    /// Answer a unicast duplicate as if it completed the message now: the sender may have
    /// lost every ACK so far, and without one it would resend forever.
    fn duplicate_of_delivered(&mut self, now: Time, s: &Segment, out: &mut impl Actions) {
        self.counters.duplicates_received += 1;
        if s.mcast_count == 0 {
            let credit = self.p.packets(s.msg_len) as u16;
            self.tx.send(now, reply(s, flags::ACK, credit), out);
        }
    }

    fn open_inbound(&mut self, now: Time, key: InKey, s: &Segment, out: &mut impl Actions) {
        let packets = self.p.packets(s.msg_len);
        let mut m = InMsg::new(s, packets, now);
        m.granted = packets.min(self.p.unscheduled_packets());
        self.inbound.insert(key, m);
        if self.p.protocol == Protocol::Homa && s.mcast_count == 0 {
            out.push(TAction::Timer(now + self.p.rto, Timer::ReceiverRto { key }));
        }
    }

    fn on_trimmed(&mut self, now: Time, key: InKey, s: &Segment, out: &mut impl Actions) {
        self.counters.trimmed_received += 1;
        if s.mcast_count != 0 {
            return;
        }
        let m = self.inbound.get_mut(&key).expect("opened");
        m.needed += 1;
        let ndp = self.p.protocol == Protocol::Ndp;
        let answer = if ndp { flags::NACK } else { flags::NACK | flags::RESEND };
        // The NACK names the transmission it answers (`sender`).
        self.tx.send(now, reply(s, answer, s.credit), out);
        if ndp {
            m.last_progress = now;
            self.maybe_pull(now, key, out);
        }
    }

    fn store(&mut self, now: Time, key: InKey, s: &Segment, out: &mut impl Actions) {
        let wps = (self.p.segment_bytes / 8) as usize;
        let m = self.inbound.get_mut(&key).expect("opened");
        if !m.store(s, wps, now) {
            self.counters.duplicates_received += 1;
        }
        let unicast = s.mcast_count == 0;
        if unicast && self.p.protocol == Protocol::Ndp {
            self.tx.send(now, reply(s, flags::ACK, s.credit), out);
        }
        if m.complete() {
            return self.deliver(now, key, s, out);
        }
        match (unicast, self.p.protocol) {
            (true, Protocol::Ndp) => self.maybe_pull(now, key, out),
            (true, Protocol::Homa) => self.regrant(now, out),
            _ => {}
        }
    }

    fn deliver(&mut self, now: Time, key: InKey, s: &Segment, out: &mut impl Actions) {
        let m = self.inbound.remove(&key).expect("complete");
        self.delivered.entry(key.0).or_default().delivered(key.1);
        self.counters.messages_delivered += 1;
        let (src_ip, src_context, msg_id, dst_ip, dst_context, len) =
            (m.src_ip, m.src_context, m.msg_id, self.ip, m.dst_context, m.len);
        if self.log_messages {
            self.log.delivered.push(MsgEvent {
                src_ip,
                src_context,
                msg_id,
                dst_ip,
                dst_context,
                len,
                time: now,
            });
        }
        if s.mcast_count == 0 && self.p.protocol == Protocol::Homa {
            self.tx.send(now, reply(s, flags::ACK, m.packets as u16), out);
            self.regrant(now, out);
        }
        out.push(TAction::Deliver(Message {
            src_ip: m.src_ip,
            src_context: m.src_context,
            dst_ip: self.ip,
            dst_context: m.dst_context,
            len: m.len,
            words: m.words,
            group: None,
        }));
    }

    // ---- NDP PULL pacing ---------------------------------------------------------------

    /// Owe the sender one more PULL if it still needs transmissions beyond those allowed
    /// (its first window and the PULLs owed so far).
    fn maybe_pull(&mut self, now: Time, key: InKey, out: &mut impl Actions) {
        let m = self.inbound.get_mut(&key).expect("open");
        if self.p.initial_window(m.packets) + m.pulled < m.needed {
            m.pulled += 1;
            self.pulls.push_back(key);
            self.pace(now, out);
        }
    }

    fn pace(&mut self, now: Time, out: &mut impl Actions) {
        if self.pull_armed {
            return;
        }
        if now >= self.pull_free_at {
            return self.send_pull(now, out);
        }
        self.pull_armed = true;
        out.push(TAction::Timer(self.pull_free_at, Timer::Pull));
    }

    fn send_pull(&mut self, now: Time, out: &mut impl Actions) {
        let ip = self.ip;
        while let Some(key) = self.pulls.pop_front() {
            let Some(m) = self.inbound.get_mut(&key) else {
                continue;
            };
            m.pull_sent += 1;
            m.last_progress = now;
            let credit = (self.p.initial_window(m.packets) + m.pull_sent) as u16;
            let to = incoming_view(ip, m, key);
            self.tx.send(now, reply(&to, flags::PULL, credit), out);
            self.counters.pulls_sent += 1;
            if !m.pull_timer {
                m.pull_timer = true;
                out.push(TAction::Timer(now + self.p.rto, Timer::ReceiverRto { key }));
            }
            self.pull_free_at = now + self.p.pull_interval;
            if !self.pulls.is_empty() {
                self.pull_armed = true;
                out.push(TAction::Timer(self.pull_free_at, Timer::Pull));
            }
            return;
        }
    }

    // ---- Homa grants ---------------------------------------------------------------------

    /// Grant the `overcommit` incoming messages with the fewest packets left (SRPT),
    /// keeping `rtt_bytes` granted ahead of what arrived; rank r gets band 2 + r.
    fn regrant(&mut self, now: Time, out: &mut impl Actions) {
        let mut open: Vec<(u32, (u32, u16, u16), InKey)> = self
            .inbound
            .iter()
            .filter(|(_, m)| !m.multicast && m.granted < m.packets)
            .map(|(k, m)| (m.packets - m.got_count, (m.src_ip, m.src_context, m.msg_id), *k))
            .collect();
        // Ties go by (source, context, message id), as they did before messages were keyed
        // by sequence number.
        open.sort_unstable();
        let (unsched, ip) = (self.p.unscheduled_packets(), self.ip);
        for (rank, (_, _, key)) in open.into_iter().take(self.p.overcommit as usize).enumerate() {
            let band = (2 + rank as u8).min(self.p.homa_bands - 1);
            let m = self.inbound.get_mut(&key).expect("listed");
            let target = m.packets.min(m.got_count + unsched);
            if target > m.granted {
                m.granted = target;
                let mut g = reply(&incoming_view(ip, m, key), flags::GRANT, target as u16);
                g.prio = band;
                self.tx.send(now, g, out);
                self.counters.grants_sent += 1;
            }
        }
    }

    // ---- timers ------------------------------------------------------------------------

    pub fn on_timer(&mut self, now: Time, t: Timer, out: &mut impl Actions) {
        match t {
            Timer::Pull => {
                self.pull_armed = false;
                self.send_pull(now, out);
            }
            Timer::SenderRto => self.sender_rto(now, out),
            Timer::ReceiverRto { key } if self.p.protocol == Protocol::Ndp => self.pull_rto(now, key, out),
            Timer::ReceiverRto { key } => self.receiver_rto(now, key, out),
            Timer::Release { held } => {
                if let Some(msg) = self.held.remove(&held) {
                    self.start(now, msg, out);
                }
            }
        }
    }

    /// Time out every outgoing message whose deadline has come, then re-arm at the earliest
    /// remaining deadline (deadlines only move later, so a message's timeout happens
    /// exactly at its own deadline).
    fn sender_rto(&mut self, now: Time, out: &mut impl Actions) {
        if self.rto_at != Some(now) {
            return; // superseded by an earlier one
        }
        let p = &self.p;
        for key in self.deadlines.due(now, &mut self.out, |m| deadline(p, m)) {
            self.time_out(now, key, out);
            let m = self.out.get_mut(&key).expect("a timeout never ends a message");
            self.deadlines.note(key, m, deadline(&self.p, m));
        }
        self.rto_at = None;
        let p = &self.p;
        if let Some(next) = self.deadlines.earliest(&mut self.out, |m| deadline(p, m)) {
            self.arm_rto(next, out);
        }
    }

    fn time_out(&mut self, now: Time, key: OutKey, out: &mut impl Actions) {
        let m = self.out.get_mut(&key).expect("due");
        self.counters.timeouts += 1;
        let again = match self.p.protocol {
            // The last resort: the packets in flight go again without waiting for a PULL;
            // with none in flight, one packet (a queued resend, else the next new one).
            Protocol::Ndp => m.requeue_in_flight(now).max(1),
            Protocol::Homa => {
                m.requeue_unacked();
                // Nothing to resend but packets never sent: the GRANT that would have let
                // them go was lost; probe with the next one.
                let probe = (m.resend.is_empty() && m.next_new < m.packets) as u32;
                m.resend.len() as u32 + probe
            }
        };
        m.allowed = m.allowed.max(m.sent + again);
        m.last_progress = now;
        self.pump(now, key, out);
    }

    /// NDP: an incoming message heard nothing for `rto` since its last PULL went. That PULL
    /// or what it let go was lost (a lost data packet whose header was lost too is its
    /// sender's to time out): grant one more transmission, which the sender spends on
    /// what it has queued. No timeout while a PULL of its own waits in the pacer.
    fn pull_rto(&mut self, now: Time, key: InKey, out: &mut impl Actions) {
        let rto = self.p.rto;
        let Some(m) = self.inbound.get_mut(&key) else {
            return;
        };
        if m.pulled > m.pull_sent {
            m.pull_timer = false;
            return;
        }
        if now < m.last_progress + rto {
            out.push(TAction::Timer(m.last_progress + rto, Timer::ReceiverRto { key }));
            return;
        }
        m.pull_timer = false;
        m.needed += 1;
        self.counters.pull_timeouts += 1;
        self.maybe_pull(now, key, out);
    }

    fn receiver_rto(&mut self, now: Time, key: InKey, out: &mut impl Actions) {
        let (rto, ip) = (self.p.rto, self.ip);
        let Some(m) = self.inbound.get_mut(&key) else {
            return;
        };
        let timer = Timer::ReceiverRto { key };
        if now < m.last_progress + rto {
            out.push(TAction::Timer(m.last_progress + rto, timer));
            return;
        }
        self.counters.timeouts += 1;
        m.last_progress = now;
        let to = incoming_view(ip, m, key);
        for o in m.missing_below(m.granted) {
            let mut r = reply(&to, flags::NACK | flags::RESEND, 0);
            r.pkt_offset = o;
            self.tx.send(now, r, out);
        }
        out.push(TAction::Timer(now + rto, timer));
    }
}

/// When an outgoing message times out. NDP: only packets in flight do, `rto` after the
/// latest of their departures and the answers since; a NACKed packet waits for its PULL
/// (`docs/models/network.md`, "NDP's rules"). Homa: `rto` without progress.
fn deadline(p: &TransportParams, m: &OutMsg) -> Time {
    match p.protocol {
        Protocol::Ndp => m.ndp_deadline(p.rto, p.pull_wait),
        Protocol::Homa => m.last_progress + p.rto,
    }
}

/// The transmission number a packet carries: the message's transmissions so far, in
/// 1..=65535 (0 means none in flight, `sender`).
fn tx_number(sent: u32) -> u16 {
    ((sent.max(1) - 1) % 0xffff + 1) as u16
}

/// The node's link as the endpoint has loaded it: the NIC's port sends what it is handed in
/// turn (control packets go ahead of data, which this ignores), so a packet leaves when
/// everything handed over before it has.
struct TxClock {
    free_at: Time,
    byte_time: Time,
}

impl TxClock {
    /// Hand `s` to the port now; when its last byte leaves.
    fn send(&mut self, now: Time, s: Segment, out: &mut impl Actions) -> Time {
        let bytes = nanopu_sim::packet::frame_len(s.flags, s.payload_len) as u64;
        self.free_at = self.free_at.max(now) + Time::from_fs(self.byte_time.as_fs() * bytes);
        out.push(TAction::Transmit(s));
        self.free_at
    }
}

/// What a packet of the incoming message looks like on arrival at `ip`, so that control
/// packets for its sender can be built with [`Segment::reply_to`].
fn incoming_view(ip: u32, m: &InMsg, key: InKey) -> Segment {
    let mut s = Segment::default();
    (s.src_ip, s.mcast_seq) = key;
    (s.src_context, s.msg_id) = (m.src_context, m.msg_id);
    (s.dst_ip, s.dst_context, s.msg_len) = (ip, m.dst_context, m.len);
    s
}

/// A control packet answering `to`, naming its message by sequence number as well as by id.
fn reply(to: &Segment, flags: u8, credit: u16) -> Segment {
    let mut r = Segment::reply_to(to, flags, credit);
    r.mcast_seq = to.mcast_seq;
    r
}
