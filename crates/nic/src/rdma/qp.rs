//! A queue pair's state, both halves: the requester (send queue, PSNs sent and
//! acknowledged, the local ACK timer) and the responder (receive queue, the expected PSN,
//! the NAK state). [IBA] ch. 9 (the reliable connection), as docs/models/rdma-nic.md
//! "Transport" summarizes it with its sources.

use super::wire::op;
use super::wr_op;
use std::collections::VecDeque;

/// A posted SEND or WRITE: its PSNs are `first_psn .. first_psn + npkts`, given at post
/// time (a request's packets are numbered consecutively, [IBA] ch. 9).
#[derive(Clone, Debug)]
pub(super) struct Wr {
    pub wr_id: u64,
    pub op: u8,
    pub laddr: u64,
    pub raddr: u64,
    pub len: u32,
    pub rkey: u32,
    pub first_psn: u64,
    pub npkts: u64,
}

/// A posted receive buffer.
#[derive(Clone, Copy, Debug)]
pub(super) struct RecvWr {
    pub wr_id: u64,
    pub addr: u64,
    pub len: u32,
}

/// One data packet to send: what the transmit side builds it from.
#[derive(Clone, Copy, Debug)]
pub(super) struct PktPlan {
    pub psn: u64,
    pub opcode: u8,
    pub addr: u64,
    pub len: usize,
    /// The RETH of a WRITE's first packet: (VA, rkey, total length).
    pub reth: Option<(u64, u32, u32)>,
    pub ack_req: bool,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Qp {
    /// (IPv4 address, QP number) of the other end, once connected.
    pub remote: Option<(u32, u32)>,
    /// The QP failed (a fatal NAK, retries exhausted): it sends nothing more.
    pub error: bool,
    // ---- requester ----
    pub sq: VecDeque<Wr>,
    /// The PSN the next posted request starts at.
    pub post_psn: u64,
    /// The next PSN to send.
    pub next_psn: u64,
    /// The oldest unacknowledged PSN.
    pub una: u64,
    /// One past the highest PSN ever sent: a packet below it is a retransmission.
    pub high_psn: u64,
    /// Retries (local ACK timeouts and NAK-sequence errors) since `una` last moved forward.
    pub retries: u32,
    /// The local ACK timer's generation (a timer of another generation is stale) and
    /// whether it runs.
    pub timer_gen: u32,
    pub timer_on: bool,
    /// No sending before this cycle (an RNR NAK's wait).
    pub rnr_until: u64,
    // ---- responder ----
    pub rq: VecDeque<RecvWr>,
    /// The expected PSN.
    pub epsn: u64,
    /// A NAK was sent for the current gap: no other until the gap closes ([IBA] ch. 9;
    /// Linux rxe `rxe_resp.c`, docs/models/rdma-nic.md).
    pub nak_sent: bool,
    /// Completed request messages, mod 2^24 on the wire.
    pub msn: u32,
    /// Bytes of the current SEND placed in the head receive buffer.
    pub recv_off: u32,
    /// Where the current WRITE's next byte goes.
    pub write_va: u64,
    /// Packets taken since the last ACK.
    pub unacked: u32,
    /// An ACK is queued for sending (it carries the expected PSN when it leaves).
    pub ack_queued: bool,
}

impl Qp {
    /// Queue a request, numbering its packets.
    pub fn post(&mut self, mut wr: Wr, mtu: usize) {
        wr.first_psn = self.post_psn;
        wr.npkts = (wr.len as u64).div_ceil(mtu as u64).max(1);
        self.post_psn += wr.npkts;
        self.sq.push_back(wr);
    }

    /// Can it send a data packet now?
    pub fn sendable(&self, now: u64, max_inflight: u32) -> bool {
        let room = self.next_psn - self.una < max_inflight as u64;
        self.remote.is_some() && !self.error && self.next_psn < self.post_psn && room && now >= self.rnr_until
    }

    /// The request holding `psn`.
    fn wr_of(&self, psn: u64) -> &Wr {
        let i = self.sq.partition_point(|w| w.first_psn + w.npkts <= psn);
        &self.sq[i]
    }

    /// The packet with PSN `psn`.
    pub fn plan(&self, psn: u64, mtu: usize) -> PktPlan {
        let w = self.wr_of(psn);
        let k = psn - w.first_psn;
        let off = k as usize * mtu;
        let len = (w.len as usize - off.min(w.len as usize)).min(mtu);
        let (first, last) = (k == 0, k + 1 == w.npkts);
        let opcode = opcode(w.op, first, last);
        let reth = (w.op == wr_op::WRITE && first).then_some((w.raddr, w.rkey, w.len));
        PktPlan { psn, opcode, addr: w.laddr + off as u64, len, reth, ack_req: last }
    }

    /// Go back to `psn`: everything from it is sent again.
    pub fn go_back(&mut self, psn: u64) {
        self.next_psn = psn.max(self.una).min(self.post_psn);
    }

    /// Everything below `upto` (past `una`) is acknowledged. An ACK of packets sent before a
    /// go-back can arrive after it and pass `next_psn`: what is acknowledged is not sent
    /// again, so sending goes on from `upto`. (Before, `next_psn` stayed behind `una`, the
    /// window's `next_psn - una` wrapped and the QP sent nothing until its retry timer.)
    pub fn acked(&mut self, upto: u64) {
        self.una = upto;
        self.next_psn = self.next_psn.max(upto);
    }

    /// The requests every packet of which is below `una`, now acknowledged, oldest first.
    pub fn take_acked(&mut self) -> Vec<Wr> {
        let n = self.sq.iter().take_while(|w| w.first_psn + w.npkts <= self.una).count();
        self.sq.drain(..n).collect()
    }

    /// A new local ACK timer generation (the old one is stale).
    pub fn rearm(&mut self, on: bool) -> u32 {
        self.timer_gen = self.timer_gen.wrapping_add(1);
        self.timer_on = on;
        self.timer_gen
    }
}

/// The opcode of a request's packet ([IBA] ch. 9; Linux `ib_pack.h`).
fn opcode(wr: u8, first: bool, last: bool) -> u8 {
    let send = wr == wr_op::SEND;
    match (first, last) {
        (true, true) if send => op::SEND_ONLY,
        (true, true) => op::WRITE_ONLY,
        (true, false) if send => op::SEND_FIRST,
        (true, false) => op::WRITE_FIRST,
        (false, true) if send => op::SEND_LAST,
        (false, true) => op::WRITE_LAST,
        (false, false) if send => op::SEND_MIDDLE,
        (false, false) => op::WRITE_MIDDLE,
    }
}

#[cfg(test)]
mod tests {
    use super::Qp;

    /// A go-back to PSN 3 of 10 sent, then the ACK of the first 8 (sent before the go-back):
    /// sending goes on from 8, within the window.
    #[test]
    fn an_ack_past_a_go_back_moves_sending_on() {
        let mut qp =
            Qp { remote: Some((1, 1)), post_psn: 10, next_psn: 10, high_psn: 10, una: 2, ..Qp::default() };
        qp.go_back(3);
        assert_eq!(qp.next_psn, 3);
        qp.acked(8);
        assert_eq!((qp.una, qp.next_psn), (8, 8));
        assert!(qp.sendable(0, 4), "the window counts from the acknowledged PSN");
    }
}
