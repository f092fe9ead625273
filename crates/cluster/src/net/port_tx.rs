//! The node's port towards the test host in runs of one node: the NIC's transmit interface.
//!
//! The prototype's NIC answers every data packet it receives with a control frame from its
//! transport, and those frames share the one transmit interface with the replies (l-nic/lnic
//! commit cbfa155; docs/models/node.md, "The port towards the test host"):
//! - the ingress asks for an ACK and a PULL for every data packet (`genPULL = true` in
//!   l-nic/chipyard `vivado/p4src/lnic_ingress.p4`);
//! - `PktGen.scala` sends them as one frame when a PULL token is free, else the ACK at once
//!   and the PULL later, one per token; a token comes back one PULL interval after it is
//!   used;
//! - `Arbiter.scala` puts control frames strictly before data frames;
//! - a control frame is 128 bytes on the wire (`Egress.scala`: a 64-byte header flit and
//!   `PktGen`'s one 64-byte flit; IPv4 length 20 + `LNIC_CTRL_PKT_BYTES` 94).
//!
//! So the port sends one frame at a time, control frames first; the test host's own ACKs
//! for the replies are not modelled (the prototype's tester sent them from Python, long after).

use nanopu_nic::Message;
use nanopu_sim::Time;
use std::collections::VecDeque;

/// Bytes on the wire of one control frame of the prototype's NIC (see the module text).
pub const CTRL_FRAME_BYTES: u64 = 128;

/// PULL tokens: one PULL may leave per interval.
#[derive(Debug)]
pub(crate) struct PullPacer {
    interval: Time,
    /// When the next token is free (a token is free at once after a long quiet spell).
    next_token: Time,
    /// PULLs waiting for a token.
    pending: u32,
}

impl PullPacer {
    pub fn new(interval: Time) -> PullPacer {
        PullPacer { interval, next_token: Time::ZERO, pending: 0 }
    }

    /// A data packet arrived at `now`: the control frames it adds to the port's queue (its
    /// ACK, with the PULL if a token is free) and those of earlier PULLs whose token came.
    pub fn on_data(&mut self, now: Time) -> u32 {
        let paced = self.release(now, false);
        if self.next_token <= now {
            self.next_token = now + self.interval;
        } else {
            self.pending += 1;
        }
        paced + 1
    }

    /// The waiting PULLs whose token has come by `now` (`inclusive`) or before it; each
    /// takes its token. (`PktGen` moves a paced PULL only in a cycle without an arrival.)
    pub fn release(&mut self, now: Time, inclusive: bool) -> u32 {
        let mut n = 0;
        while self.pending > 0 && (self.next_token < now || inclusive && self.next_token == now) {
            self.next_token += self.interval;
            self.pending -= 1;
            n += 1;
        }
        n
    }

    /// When the next waiting PULL may leave, if one waits.
    pub fn next_pull(&self) -> Option<Time> {
        (self.pending > 0).then_some(self.next_token)
    }
}

/// What the port sends next.
pub(crate) enum Frame {
    Ctrl,
    Data(Message),
}

/// The frames waiting at the port and when the one on the wire ends.
#[derive(Debug)]
pub(crate) struct PortTx {
    pub free_at: Time,
    ctrl: u32,
    data: VecDeque<Message>,
    pub pacer: PullPacer,
    /// The wake-up already asked for, so that each is asked for once.
    pub wake_at: Option<Time>,
}

impl PortTx {
    pub fn new(pull_interval: Time) -> PortTx {
        PortTx {
            free_at: Time::ZERO,
            ctrl: 0,
            data: VecDeque::new(),
            pacer: PullPacer::new(pull_interval),
            wake_at: None,
        }
    }

    pub fn ctrl(&mut self, frames: u32) {
        self.ctrl += frames;
    }

    pub fn data(&mut self, msg: Message) {
        self.data.push_back(msg);
    }

    /// The next frame to start at `now`, control first (the port must be free).
    pub fn next(&mut self, now: Time) -> Option<Frame> {
        self.ctrl += self.pacer.release(now, true);
        if self.ctrl > 0 {
            self.ctrl -= 1;
            return Some(Frame::Ctrl);
        }
        self.data.pop_front().map(Frame::Data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ack_carries_the_pull_while_a_token_is_free_else_pulls_wait_a_token_each() {
        let mut p = PullPacer::new(Time(100));
        assert_eq!(p.on_data(Time(1_000)), 1, "token free: one ACK+PULL frame");
        assert_eq!(p.on_data(Time(1_010)), 1, "no token: the ACK alone");
        assert_eq!(p.on_data(Time(1_020)), 1);
        assert_eq!(p.next_pull(), Some(Time(1_100)));
        assert_eq!(p.release(Time(1_099), true), 0);
        assert_eq!(p.release(Time(1_100), false), 0, "an arrival at the token's cycle takes it");
        assert_eq!(p.release(Time(1_100), true), 1);
        assert_eq!(p.next_pull(), Some(Time(1_200)));
        assert_eq!(p.on_data(Time(1_250)), 2, "the PULL whose token came, then this ACK");
        assert_eq!(p.next_pull(), Some(Time(1_300)));
    }

    #[test]
    fn control_frames_leave_before_data() {
        let mut port = PortTx::new(Time(100));
        port.data(crate::host::TestHost::message(0, 1, 0, &[1]));
        port.ctrl(1);
        assert!(matches!(port.next(Time(0)), Some(Frame::Ctrl)));
        assert!(matches!(port.next(Time(0)), Some(Frame::Data(_))));
        assert!(port.next(Time(0)).is_none());
    }
}
