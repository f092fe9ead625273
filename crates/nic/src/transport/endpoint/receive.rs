//! The endpoint's receiving half: data packets in, reassembled into messages delivered
//! exactly once (`seqwin`).
//!
//! NDP ACKs every data packet and NACKs every trimmed one, and owes the sender a PULL for
//! each transmission still needed; Homa asks for a trimmed packet again at once (RESEND),
//! ACKs a message when it completes and re-grants as packets arrive. How those PULLs and
//! grants are paced is `pacing`'s.

use super::pacing::owes_pull;
use super::{
    incoming_view, reply, Actions, InKey, MsgEvent, TAction, Timer, Transport, TransportCounters, TxClock,
};
use crate::message::{Message, Words};
use crate::transport::params::{Protocol, TransportParams};
use crate::transport::receiver::{one_packet_words_of, InMsg};
use crate::transport::segment::{flags, Segment};
use crate::transport::seqwin::Seen;
use nanopu_sim::Time;

impl Transport {
    pub(super) fn on_data(&mut self, now: Time, s: Segment, out: &mut impl Actions) {
        let key = (s.src_ip, s.mcast_seq);
        // A message is open or delivered, never both, so most packets need one lookup.
        if self.take_open(now, key, &s, out) {
            return;
        }
        let (unicast, whole) = (s.mcast_count == 0, self.whole_ndp(&s));
        // A new message that came whole is recorded as delivered in the same look-up.
        match self.delivered.seen_whole(s.src_ip, s.mcast_seq, whole, unicast) {
            Seen::Delivered => self.duplicate_of_delivered(now, &s, out),
            // Finished at its sender (`seqwin`): nothing to answer.
            Seen::Behind if unicast => self.counters.duplicates_received += 1,
            _ if whole => self.deliver_whole(now, s, out),
            _ => {
                self.open_inbound(now, key, &s, out);
                self.take_open(now, key, &s, out);
            }
        }
    }

    /// `s` is a packet of the open message `key`: the message takes it and it is answered,
    /// with the one look-up of the message (`on_trimmed` and `store` each made their own,
    /// after `on_data`'s, and NDP's `maybe_pull` a third). False if `key` is not open.
    fn take_open(&mut self, now: Time, key: InKey, s: &Segment, out: &mut impl Actions) -> bool {
        let Some(m) = self.inbound.get_mut(&key) else {
            return false;
        };
        let (p, tx, counters) = (&self.p, &mut self.tx, &mut self.counters);
        let then = match s.has(flags::CHOP) {
            true => on_trimmed(m, p, tx, counters, (now, s), out),
            false => store(m, p, tx, counters, (now, s), out),
        };
        match then {
            Then::Nothing => {}
            Then::Pull => self.pull(now, key, out),
            Then::Regrant => self.regrant(now, out),
            Then::Deliver => self.deliver(now, key, s, out),
        }
        true
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

    /// NDP, and `s` is all of its message: one packet, not trimmed.
    fn whole_ndp(&self, s: &Segment) -> bool {
        let one = s.pkt_offset == 0 && self.p.packets(s.msg_len) == 1;
        one && self.p.protocol == Protocol::Ndp && !s.has(flags::CHOP)
    }

    /// A new message that came whole in `s` (`whole_ndp`): ACKed and delivered at once,
    /// exactly as opening it, storing `s` and completing it would (`open_inbound`, `store`,
    /// `deliver`), without an entry among the open messages. Nearly every message of a
    /// NanoSort is one packet. (`on_data` recorded it as delivered, in its look-up.)
    fn deliver_whole(&mut self, now: Time, s: Segment, out: &mut impl Actions) {
        if s.mcast_count == 0 {
            self.tx.send(now, reply(&s, flags::ACK, s.credit), out);
        }
        self.counters.messages_delivered += 1;
        self.record_delivered(&s, now);
        let (src, src_context, dst_context, len) = (s.src_ip, s.src_context, s.dst_context, s.msg_len);
        let words = one_packet_words_of(s);
        out.push(TAction::Deliver(self.delivery(src, src_context, dst_context, len, words)));
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

    fn deliver(&mut self, now: Time, key: InKey, s: &Segment, out: &mut impl Actions) {
        let m = self.inbound.remove(&key).expect("complete");
        self.delivered.delivered(key.0, key.1);
        self.counters.messages_delivered += 1;
        if self.log_messages {
            self.record_delivered(&incoming_view(self.ip, &m, key), now);
        }
        if s.mcast_count == 0 && self.p.protocol == Protocol::Homa {
            self.tx.send(now, reply(s, flags::ACK, m.packets as u16), out);
            self.regrant(now, out);
        }
        out.push(TAction::Deliver(self.delivery(m.src_ip, m.src_context, m.dst_context, m.len, m.words)));
    }

    /// The message delivered to this node's cores.
    fn delivery(&self, src_ip: u32, src_context: u16, dst_context: u16, len: u16, words: Words) -> Message {
        Message { src_ip, src_context, dst_ip: self.ip, dst_context, len, words, group: None }
    }

    /// Log the delivery of the message `s` is a packet of (or `incoming_view` shows).
    fn record_delivered(&mut self, s: &Segment, now: Time) {
        if !self.log_messages {
            return;
        }
        let (src_ip, src_context, msg_id, dst_ip, dst_context, len) =
            (s.src_ip, s.src_context, s.msg_id, self.ip, s.dst_context, s.msg_len);
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
}

/// What a packet of an open message leaves to the endpoint once the message took it.
enum Then {
    Nothing,
    /// NDP: queue the PULL the message is owed (`owes_pull` counted it).
    Pull,
    /// Homa: grants may change.
    Regrant,
    /// The message is complete.
    Deliver,
}

/// A trimmed packet of open message `m` arrived at `now`: counted, NACKed (unicast), and
/// under NDP a PULL owed for its transmission.
fn on_trimmed(
    m: &mut InMsg,
    p: &TransportParams,
    tx: &mut TxClock,
    counters: &mut TransportCounters,
    (now, s): (Time, &Segment),
    out: &mut impl Actions,
) -> Then {
    counters.trimmed_received += 1;
    if s.mcast_count != 0 {
        return Then::Nothing;
    }
    m.needed += 1;
    let ndp = p.protocol == Protocol::Ndp;
    let answer = if ndp { flags::NACK } else { flags::NACK | flags::RESEND };
    // The NACK names the transmission it answers (`sender`).
    tx.send(now, reply(s, answer, s.credit), out);
    if !ndp {
        return Then::Nothing;
    }
    m.last_progress = now;
    pulled(p, m)
}

/// A data packet of open message `m` arrived at `now`: stored (a duplicate counted), ACKed
/// under NDP, and what it leaves to do.
fn store(
    m: &mut InMsg,
    p: &TransportParams,
    tx: &mut TxClock,
    counters: &mut TransportCounters,
    (now, s): (Time, &Segment),
    out: &mut impl Actions,
) -> Then {
    let wps = (p.segment_bytes / 8) as usize;
    if !m.store(s, wps, now) {
        counters.duplicates_received += 1;
    }
    let unicast = s.mcast_count == 0;
    if unicast && p.protocol == Protocol::Ndp {
        tx.send(now, reply(s, flags::ACK, s.credit), out);
    }
    if m.complete() {
        return Then::Deliver;
    }
    match (unicast, p.protocol) {
        (true, Protocol::Ndp) => pulled(p, m),
        (true, Protocol::Homa) => Then::Regrant,
        _ => Then::Nothing,
    }
}

/// NDP: `Then::Pull` if `m` is owed one more PULL (`maybe_pull`'s test).
fn pulled(p: &TransportParams, m: &mut InMsg) -> Then {
    match owes_pull(p, m) {
        true => Then::Pull,
        false => Then::Nothing,
    }
}
