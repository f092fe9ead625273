//! The endpoint's sending half: messages out, and the answers that come back for them.
//!
//! A message starts at once or waits for the sequence window (`seqwin`); its packets go as
//! the first window, PULLs or grants allow; ACKs end it, NACKs and RESENDs queue packets to
//! go again. Separate from the receiving half because the two share little but the link.

use super::{Actions, MsgEvent, TAction, Timer, Transport};
use crate::message::Message;
use crate::transport::outmsgs::OutKey;
use crate::transport::params::{Protocol, TransportParams};
use crate::transport::segment::{flags, Segment, MULTICAST_IP};
use crate::transport::sender::OutMsg;
use crate::transport::seqwin::SEQ_WINDOW;
use nanopu_sim::packet::NODE_IP_BASE;
use nanopu_sim::Time;

impl Transport {
    /// A message left the NIC's TX path at `now`. This and the steps to `launch` are
    /// `#[inline]`: each was a call of its own for every message (docs/profile.md).
    #[inline]
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

    #[inline]
    pub(super) fn start(&mut self, now: Time, msg: Message, out: &mut impl Actions) {
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
    #[inline]
    fn admit(&mut self, now: Time, msg: Message, out: &mut impl Actions) {
        if self.blocked.is_empty() && self.window_open() {
            return self.launch(now, msg, out);
        }
        self.blocked.push_back(msg);
    }

    /// May the message with sequence number `next_seq` start?
    #[inline]
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

    #[inline]
    fn launch(&mut self, now: Time, msg: Message, out: &mut impl Actions) {
        match msg.group {
            Some(g) => self.start_multicast(now, msg, g, out),
            None => self.start_unicast(now, msg, out),
        }
    }

    /// The template of the message's packets, with the next sequence number.
    #[inline]
    fn proto(&mut self, msg: &Message) -> Segment {
        let seq = self.next_seq;
        self.next_seq = seq.wrapping_add(1);
        let mut s = Segment::default();
        (s.src_ip, s.dst_ip, s.band, s.msg_id, s.msg_len) = (self.ip, msg.dst_ip, 1, seq as u16, msg.len);
        (s.src_context, s.dst_context, s.mcast_seq) = (msg.src_context, msg.dst_context, seq);
        s
    }

    #[inline]
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
        let m = OutMsg::new(proto, msg.words, packets, allowed, now);
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
    pub(super) fn arm_rto(&mut self, at: Time, out: &mut impl Actions) {
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
        let m = OutMsg::new(proto, msg.words, packets, packets, Time::ZERO);
        for o in 0..packets {
            self.counters.data_packets_sent += 1;
            self.tx.send(now, m.packet(&self.p, o), out);
        }
    }

    /// Send whatever the message's credit or grant now allows. An NDP packet carries the
    /// number of its transmission, which the receiver's answer echoes (`sender`).
    pub(super) fn pump(&mut self, now: Time, key: OutKey, out: &mut impl Actions) {
        let Some(m) = self.out.get_mut(&key) else {
            return;
        };
        let ndp = self.p.protocol == Protocol::Ndp;
        loop {
            let resend = !m.resends().is_empty();
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

    /// An answer (ACK, NACK, RESEND, PULL or GRANT) for one of this endpoint's messages.
    pub(super) fn on_answer(&mut self, now: Time, s: Segment, out: &mut impl Actions) {
        let key = (s.src_ip, s.msg_id);
        // The sequence number tells an answer about an earlier message under the same 16-bit
        // id (ids wrap) from one about this one.
        let Some(m) = self.out.get_mut(&key).filter(|m| m.proto.mcast_seq == s.mcast_seq) else {
            return;
        };
        if s.has(flags::ACK) {
            return self.on_ack(key, &s, now, out);
        }
        take_answer(m, &s, now);
        // NDP: a NACKed packet goes again on a PULL (the first window is for new packets).
        self.pump(now, key, out);
    }

    fn on_ack(&mut self, key: OutKey, s: &Segment, now: Time, out: &mut impl Actions) {
        let m = self.out.get_mut(&key).expect("checked");
        let whole = self.p.protocol == Protocol::Homa;
        let done = if whole { true } else { m.ack(s.pkt_offset, now) };
        if done {
            if let Some(m) = self.out.take(&key) {
                out.retire(m);
            }
            self.deadlines.tidy(&mut self.out);
            self.unblock(now, out);
        } else {
            // The last packet in flight answered: the deadline may now be earlier.
            let at = deadline(&self.p, m);
            self.deadlines.note(key, m, at);
        }
    }
}

/// What a NACK, RESEND, PULL or GRANT changes in the message it answers.
fn take_answer(m: &mut OutMsg, s: &Segment, now: Time) {
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
}

/// When an outgoing message times out. NDP: only packets in flight do, `rto` after the
/// latest of their departures and the answers since; a NACKed packet waits for its PULL
/// (`docs/models/network.md`, "NDP's rules"). Homa: `rto` without progress.
pub(super) fn deadline(p: &TransportParams, m: &OutMsg) -> Time {
    match p.protocol {
        Protocol::Ndp => m.ndp_deadline(p.rto, p.pull_wait),
        Protocol::Homa => m.last_progress + p.rto,
    }
}

/// The transmission number a packet carries: the message's transmissions so far, in
/// 1..=65535 (0 means none in flight, `sender`).
#[inline]
fn tx_number(sent: u32) -> u16 {
    ((sent.max(1) - 1) % 0xffff + 1) as u16
}
