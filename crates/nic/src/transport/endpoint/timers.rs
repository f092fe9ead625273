//! The endpoint's timers and the timeouts they drive: the sender's retransmission timeout
//! (one timer for all outgoing messages, at the earliest deadline), the receiver's (NDP: a
//! PULL that drew nothing; Homa: packets asked for again), the PULL pacer, and messages held
//! back by tail-latency injection. In a module of their own as each reaches into both the
//! sender's and the receiver's half.

use super::send::deadline;
use super::{incoming_view, reply, Actions, InKey, TAction, Timer, Transport};
use crate::transport::outmsgs::OutKey;
use crate::transport::params::Protocol;
use crate::transport::segment::flags;
use nanopu_sim::Time;

impl Transport {
    /// A timer this endpoint asked for (`TAction::Timer`) came due at `now`.
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
                let probe = (m.resends().is_empty() && u32::from(m.next_new) < m.packets()) as u32;
                m.resends().len() as u32 + probe
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
