//! One NIC's transport endpoint: messages in, segments out, timers.
//!
//! This file holds the endpoint's state, what it tells its caller (actions, timers,
//! counters, the message log) and where packets come in. Its halves are apart because each
//! reads well on its own and touches its own part of the state:
//! - `send`: messages out: the sequence window, packets as credit or grants allow, and the
//!   answers (ACK, NACK, PULL, GRANT) that come back for them;
//! - `receive`: data packets in: reassembly, duplicates, ACKs and NACKs, delivery;
//! - `pacing`: how a receiver paces its senders: NDP's PULL pacer and Homa's SRPT grants;
//! - `timers`: the timers of both halves and the timeouts they drive.

mod pacing;
mod receive;
mod send;
mod timers;

use super::deadlines::Deadlines;
use super::outmsgs::OutMsgs;
use super::params::TransportParams;
use super::receiver::InMsg;
use super::segment::{flags, Segment};
use super::sender::OutMsg;
use super::seqwin::Delivered;
use crate::message::Message;
use nanopu_sim::hash::IntMap as MsgMap;
use nanopu_sim::{Rng, Time};
use std::collections::{BTreeMap, VecDeque};

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

    /// A message done sending, no longer the endpoint's: dropped here, or later by a
    /// caller that keeps a [`Retired`](crate::transport::retired::Retired) ring.
    fn retire(&mut self, m: Box<OutMsg>) {
        drop(m);
    }
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
    /// Boxed (an `OutMsg` is 160 bytes): see `OutMsgs`.
    out: OutMsgs,
    /// Messages waiting until the oldest unfinished one is less than `SEQ_WINDOW` behind
    /// (`seqwin`), in the order they came.
    blocked: VecDeque<Message>,
    inbound: MsgMap<InKey, InMsg>,
    /// Per source IP, what was delivered from it (`seqwin`).
    delivered: Delivered,
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
            delivered: Delivered::default(),
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

    /// Messages given to this endpoint that it has not started yet: held back by tail
    /// latency, or waiting for the sequence window (`seqwin`). None of them was delivered.
    pub fn not_started(&self) -> usize {
        self.held.len() + self.blocked.len()
    }

    /// Whether this endpoint delivered the message of sequence number `seq` from `src`
    /// (and still remembers it: a unicast one `SEQ_WINDOW` behind the newest was, `seqwin`).
    /// Its sender may still wait for an acknowledgement that was lost; the message was
    /// delivered all the same.
    pub fn has_delivered(&self, src: u32, seq: u32) -> bool {
        use super::seqwin::Seen;
        self.delivered.seen(src, seq) != Seen::New
    }

    /// A packet for this node arrived at `now`: data for the receiving half, an answer
    /// for the sending half.
    pub fn on_packet(&mut self, now: Time, s: Segment, out: &mut impl Actions) {
        if s.has(flags::DATA) {
            return self.on_data(now, s, out);
        }
        self.on_answer(now, s, out);
    }
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
    #[inline]
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
