//! How a receiver paces its senders: NDP's PULL pacer (one PULL per MTU time for all
//! incoming messages together) and Homa's grants (shortest remaining message first, at most
//! `overcommit` messages at once). Separate from `receive` because both run on their own
//! clocks as well as on arrivals: the pacer's timer, and grants renewed as messages end.

use super::{incoming_view, reply, Actions, InKey, TAction, Timer, Transport};
use crate::transport::params::TransportParams;
use crate::transport::receiver::InMsg;
use crate::transport::segment::flags;
use nanopu_sim::Time;

impl Transport {
    /// Owe the sender one more PULL if it still needs transmissions beyond those allowed
    /// (its first window and the PULLs owed so far).
    pub(super) fn maybe_pull(&mut self, now: Time, key: InKey, out: &mut impl Actions) {
        let m = self.inbound.get_mut(&key).expect("open");
        if owes_pull(&self.p, m) {
            self.pull(now, key, out);
        }
    }

    /// Queue a PULL owed to the sender of `key` (`owes_pull`).
    pub(super) fn pull(&mut self, now: Time, key: InKey, out: &mut impl Actions) {
        self.pulls.push_back(key);
        self.pace(now, out);
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

    pub(super) fn send_pull(&mut self, now: Time, out: &mut impl Actions) {
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

    /// Grant the `overcommit` incoming messages with the fewest packets left (SRPT),
    /// keeping `rtt_bytes` granted ahead of what arrived; rank r gets band 2 + r.
    pub(super) fn regrant(&mut self, now: Time, out: &mut impl Actions) {
        let (unsched, ip) = (self.p.unscheduled_packets(), self.ip);
        for (rank, (_, _, key)) in self.srpt_order().into_iter().take(self.p.overcommit as usize).enumerate()
        {
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

    /// The unicast messages not yet wholly granted, fewest packets left first, as (packets
    /// left, tie-breaker, key).
    fn srpt_order(&self) -> Vec<(u32, (u32, u16, u16), InKey)> {
        let mut open: Vec<(u32, (u32, u16, u16), InKey)> = self
            .inbound
            .iter()
            .filter(|(_, m)| !m.multicast && m.granted < m.packets)
            .map(|(k, m)| (m.packets - m.got_count, (m.src_ip, m.src_context, m.msg_id), *k))
            .collect();
        // Ties go by (source, context, message id), not by the sequence number the messages
        // are keyed by.
        open.sort_unstable();
        open
    }
}

/// `maybe_pull`'s test on the message itself: whether it is owed one more PULL, counted
/// as queued if so.
#[inline]
pub(super) fn owes_pull(p: &TransportParams, m: &mut InMsg) -> bool {
    let owed = p.initial_window(m.packets) + m.pulled < m.needed;
    m.pulled += u32::from(owed);
    owed
}
