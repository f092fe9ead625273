//! The transmit side: which packet goes next (acknowledgments first, then queue pairs'
//! data round-robin), the DMA reads of payload kept in flight ahead of the wire, the MAC
//! sending no faster than the link, and the requester's reactions to ACKs, NAKs and its
//! local ACK timer (go-back-N; docs/models/rdma-nic.md "Transport").

use super::qp::PktPlan;
use super::wire::{self, syndrome, Aeth, Bth, Ends, Reth, PSN_MASK};
use super::{status, RdmaAction, RdmaNic, RdmaTimer};
use std::collections::VecDeque;

/// A data packet between its choice and the wire: headers built, payload read (or not yet).
#[derive(Clone, Debug)]
struct Slot {
    qp: usize,
    psn: u64,
    frame: Vec<u8>,
    /// Where the payload goes in `frame`.
    off: usize,
    ready: bool,
    /// Its QP went back (or failed) after it was chosen: it is not sent.
    stale: bool,
}

#[derive(Clone, Debug, Default)]
pub(super) struct TxEngine {
    /// Data packets in order, the oldest at the front; `head_tag` is the front's DMA tag.
    slots: VecDeque<Slot>,
    head_tag: u64,
    /// When the DMA read engine can start another read.
    dma_free: u64,
    /// When the MAC can start another frame.
    wire_free: u64,
    /// A `Pump` timer is pending for this cycle.
    pump_at: Option<u64>,
    /// A PFC PAUSE holds the port: nothing is sent.
    paused: bool,
    /// Acknowledgments to send: (QP, AETH syndrome).
    ctrl: VecDeque<(usize, u8)>,
    /// The QP the round-robin looks at first.
    rr: usize,
}

impl RdmaNic {
    /// Send what can be sent now, and start reading what comes next.
    pub(super) fn pump(&mut self, now: u64, out: &mut Vec<RdmaAction>) {
        loop {
            let sent = self.send_one(now, out);
            if !sent && !self.fill_one(now, out) {
                break;
            }
        }
        self.wake_at_wire_free(now, out);
    }

    /// One frame onto the wire, if the MAC is free and one is ready.
    fn send_one(&mut self, now: u64, out: &mut Vec<RdmaAction>) -> bool {
        if self.tx.wire_free > now || self.tx.paused {
            return false;
        }
        if let Some((q, syn)) = self.tx.ctrl.pop_front() {
            let frame = self.ack_frame(q, syn);
            return self.transmit(now, frame, out);
        }
        while self.tx.slots.front().is_some_and(|s| s.stale) {
            self.tx.slots.pop_front();
            self.tx.head_tag += 1;
        }
        if !self.tx.slots.front().is_some_and(|s| s.ready) {
            return false;
        }
        let s = self.tx.slots.pop_front().expect("checked");
        self.tx.head_tag += 1;
        self.sent_data(now, s.qp, s.psn, out);
        self.transmit(now, s.frame, out)
    }

    fn transmit(&mut self, now: u64, frame: Vec<u8>, out: &mut Vec<RdmaAction>) -> bool {
        self.tx.wire_free = now + self.p.wire_cycles(frame.len());
        out.push(RdmaAction::Transmit { at: now + self.p.tx_pipe_cycles, frame });
        true
    }

    /// A data packet left: count it, and start the QP's local ACK timer if it is not running.
    fn sent_data(&mut self, now: u64, q: usize, psn: u64, out: &mut Vec<RdmaAction>) {
        self.counters.data_packets_sent += 1;
        let qp = &mut self.qps[q];
        self.counters.retransmitted += (psn < qp.high_psn) as u64;
        qp.high_psn = qp.high_psn.max(psn + 1);
        if !qp.timer_on {
            let gen = qp.rearm(true);
            let at = now + self.p.ack_timeout_cycles();
            out.push(RdmaAction::Timer { at, timer: RdmaTimer::Retry { qp: q as u16, gen } });
        }
    }

    /// Choose the next data packet and start reading its payload, if there is room.
    fn fill_one(&mut self, now: u64, out: &mut Vec<RdmaAction>) -> bool {
        if self.tx.slots.len() >= self.p.dma_reads {
            return false;
        }
        let n = self.qps.len();
        let Some(q) =
            (0..n).map(|i| (self.tx.rr + i) % n).find(|&q| self.qps[q].sendable(now, self.p.max_inflight))
        else {
            return false;
        };
        self.tx.rr = (q + 1) % n;
        let plan = self.qps[q].plan(self.qps[q].next_psn, self.mtu());
        self.qps[q].next_psn += 1;
        let (frame, off) = self.data_frame(q, &plan);
        let tag = self.tx.head_tag + self.tx.slots.len() as u64;
        let ready = plan.len == 0;
        self.tx.slots.push_back(Slot { qp: q, psn: plan.psn, frame, off, ready, stale: false });
        if !ready {
            let at = now.max(self.tx.dma_free);
            let stream = self.p.dma_cycles(plan.len);
            self.tx.dma_free = at + stream;
            out.push(RdmaAction::DmaRead { at, tag, addr: plan.addr, len: plan.len, stream });
        }
        true
    }

    /// The MAC is busy but something waits: look again when it is free.
    fn wake_at_wire_free(&mut self, now: u64, out: &mut Vec<RdmaAction>) {
        let waiting = !self.tx.ctrl.is_empty() || self.tx.slots.front().is_some_and(|s| s.ready || s.stale);
        if self.tx.wire_free > now && waiting {
            self.pump_timer(self.tx.wire_free, out);
        }
    }

    fn pump_timer(&mut self, at: u64, out: &mut Vec<RdmaAction>) {
        if self.tx.pump_at.is_some_and(|p| p <= at) {
            return;
        }
        self.tx.pump_at = Some(at);
        out.push(RdmaAction::Timer { at, timer: RdmaTimer::Pump });
    }

    /// A PFC PAUSE (`on`) or resume reached the port (IEEE 802.1Qbb): the transmit side
    /// stops starting frames, or goes on.
    pub fn set_paused(&mut self, now: u64, on: bool, out: &mut Vec<RdmaAction>) {
        self.tx.paused = on;
        if !on {
            self.pump(now, out);
        }
    }

    /// A DMA read of a packet's payload finished.
    pub fn read_done(&mut self, now: u64, tag: u64, bytes: Vec<u8>, out: &mut Vec<RdmaAction>) {
        self.counters.dma_bytes_read += bytes.len() as u64;
        if let Some(s) = tag.checked_sub(self.tx.head_tag).and_then(|i| self.tx.slots.get_mut(i as usize)) {
            s.frame[s.off..s.off + bytes.len()].copy_from_slice(&bytes);
            s.ready = true;
        }
        self.pump(now, out);
    }

    /// A timer the NIC asked for.
    pub fn timer(&mut self, now: u64, t: RdmaTimer, out: &mut Vec<RdmaAction>) {
        match t {
            RdmaTimer::Pump => {
                if self.tx.pump_at == Some(now) {
                    self.tx.pump_at = None;
                }
            }
            RdmaTimer::Retry { qp, gen } => self.retry_timer(now, qp as usize, gen, out),
        }
        self.pump(now, out);
    }

    /// The local ACK timer expired: go back to the oldest unacknowledged PSN, a retry.
    fn retry_timer(&mut self, now: u64, q: usize, gen: u32, out: &mut Vec<RdmaAction>) {
        let qp = &mut self.qps[q];
        if qp.timer_gen != gen || !qp.timer_on || qp.error {
            return;
        }
        qp.rearm(false);
        if qp.una >= qp.next_psn && qp.una >= qp.high_psn {
            return; // nothing outstanding
        }
        self.counters.timeouts += 1;
        let una = qp.una;
        self.retry(now, q, una, out);
    }

    /// Go back to `psn` for a local ACK timeout or a NAK-sequence error, each of which uses
    /// one of the QP's `retry_cnt` retries; with none left, the QP fails ([IBA] ch. 9,
    /// docs/models/rdma-nic.md "Retry counting").
    fn retry(&mut self, now: u64, q: usize, psn: u64, out: &mut Vec<RdmaAction>) {
        let qp = &mut self.qps[q];
        qp.retries += 1;
        if qp.retries > self.p.retry_cnt {
            return self.fail(now, q, status::RETRY_EXC_ERR, out);
        }
        self.go_back(q, psn);
    }

    /// Go back to `psn`: the QP's packets not yet on the wire are dropped, and everything
    /// from `psn` is sent again (go-back-N).
    fn go_back(&mut self, q: usize, psn: u64) {
        self.qps[q].go_back(psn);
        self.tx.slots.iter_mut().filter(|s| s.qp == q).for_each(|s| s.stale = true);
    }

    /// The QP fails: its oldest request completes with `st`, the rest are flushed.
    fn fail(&mut self, now: u64, q: usize, st: u8, out: &mut Vec<RdmaAction>) {
        let qp = &mut self.qps[q];
        qp.error = true;
        qp.rearm(false);
        let wrs: Vec<_> = qp.sq.drain(..).collect();
        self.tx.slots.iter_mut().filter(|s| s.qp == q).for_each(|s| s.stale = true);
        for (i, w) in wrs.iter().enumerate() {
            let s = if i == 0 { st } else { status::WR_FLUSH_ERR };
            self.complete(now, Self::cqe(q, w.wr_id, w.op, s, 0), out);
        }
    }

    /// An ACK, RNR NAK or NAK for QP `q`'s requests ([IBA] ch. 9).
    pub(super) fn on_ack(&mut self, now: u64, q: usize, psn: u32, syn: u8, out: &mut Vec<RdmaAction>) {
        self.counters.acks_received += 1;
        let qp = &self.qps[q];
        let is_ack = syn >> 5 == 0;
        // An ACK acknowledges its PSN and all before; a NAK all before its PSN.
        let wire_psn = if is_ack { (psn + 1) & PSN_MASK } else { psn };
        let upto = wire::unwrap_psn(wire_psn, qp.una);
        if upto < qp.una || upto > qp.high_psn.max(qp.next_psn) {
            return; // an old acknowledgment, overtaken
        }
        self.advance(now, q, upto, out);
        match syn {
            _ if is_ack => {}
            syndrome::NAK_PSN_SEQ => {
                self.counters.naks_received += 1;
                self.retry(now, q, upto, out);
            }
            s if s >> 5 == 1 => {
                self.counters.naks_received += 1;
                self.qps[q].rnr_until = now + self.p.rnr_cycles;
                self.go_back(q, upto);
                self.pump_timer(now + self.p.rnr_cycles, out);
            }
            syndrome::NAK_ACCESS => self.fail(now, q, status::REM_ACCESS_ERR, out),
            _ => self.fail(now, q, status::REM_INV_REQ_ERR, out),
        }
        self.pump(now, out);
    }

    /// Everything below `upto` is acknowledged: complete the requests it finishes, and
    /// restart the local ACK timer if packets remain outstanding.
    fn advance(&mut self, now: u64, q: usize, upto: u64, out: &mut Vec<RdmaAction>) {
        let qp = &mut self.qps[q];
        if upto <= qp.una {
            return;
        }
        qp.acked(upto);
        qp.retries = 0; // forward progress gives the retries back
        let outstanding = qp.una < qp.next_psn;
        let gen = qp.rearm(outstanding);
        if outstanding {
            let at = now + self.p.ack_timeout_cycles();
            out.push(RdmaAction::Timer { at, timer: RdmaTimer::Retry { qp: q as u16, gen } });
        }
        for w in self.qps[q].take_acked() {
            self.complete(now, Self::cqe(q, w.wr_id, w.op, status::SUCCESS, w.len), out);
        }
    }

    /// The frame of a data packet, its payload to be filled at the returned offset.
    fn data_frame(&self, q: usize, plan: &PktPlan) -> (Vec<u8>, usize) {
        let (ip, rq) = self.qps[q].remote.expect("sendable QPs are connected");
        let bth =
            Bth { opcode: plan.opcode, dest_qp: rq, ack_req: plan.ack_req, psn: plan.psn as u32 & PSN_MASK };
        let reth = plan.reth.map(|(va, rkey, len)| Reth { va, rkey, len });
        wire::build(self.ends(q, ip), bth, reth, None, plan.len)
    }

    /// An acknowledgment from QP `q`'s responder: an ACK of everything below the expected
    /// PSN, or a NAK naming it.
    fn ack_frame(&mut self, q: usize, syn: u8) -> Vec<u8> {
        let qp = &mut self.qps[q];
        let (ip, rq) = qp.remote.expect("acknowledging QPs are connected");
        let is_ack = syn == syndrome::ACK;
        let psn = if is_ack { qp.epsn.wrapping_sub(1) } else { qp.epsn } as u32 & PSN_MASK;
        if is_ack {
            (qp.ack_queued, qp.unacked) = (false, 0);
        }
        let aeth = Aeth { syndrome: syn, msn: qp.msn & PSN_MASK };
        let bth = Bth { opcode: wire::op::ACK, dest_qp: rq, ack_req: false, psn };
        match syn >> 5 {
            0 => self.counters.acks_sent += 1,
            1 => self.counters.rnr_naks_sent += 1,
            _ => self.counters.naks_sent += 1,
        }
        wire::build(self.ends(q, ip), bth, None, Some(aeth), 0).0
    }

    fn ends(&self, q: usize, dst_ip: u32) -> Ends {
        Ends { src_mac: self.mac, dst_mac: Self::mac_of(dst_ip), src_ip: self.ip, dst_ip, src_qp: q as u32 }
    }

    /// Queue an acknowledgment of QP `q` (one plain ACK at a time: it carries the latest
    /// expected PSN when it leaves, coalescing the packets taken meanwhile).
    pub(super) fn queue_ctrl(&mut self, q: usize, syn: u8) {
        if syn == syndrome::ACK {
            if self.qps[q].ack_queued {
                return;
            }
            self.qps[q].ack_queued = true;
        }
        self.tx.ctrl.push_back((q, syn));
    }
}
