//! The receive side: a frame's transport processing (the responder's PSN check, SEND and
//! WRITE placement, the requester's ACKs and NAKs), the receive buffer, and the DMA writes
//! that place payload, whose completions reach the CQ in order (docs/models/rdma-nic.md
//! "Transport").

use super::wire::{self, op, syndrome, Parsed};
use super::{status, wr_op, Cqe, Mutant, RdmaAction, RdmaNic};
use std::cmp::Ordering;
use std::collections::VecDeque;

/// A DMA write under way, and the completion that waits for it.
#[derive(Clone, Debug)]
struct Placing {
    bytes: usize,
    done: bool,
    cqe: Option<Cqe>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct RxEngine {
    /// In order; `head_tag` is the front's DMA tag.
    writes: VecDeque<Placing>,
    head_tag: u64,
    /// When the DMA write engine can start another write.
    dma_free: u64,
    /// Payload bytes held until their writes finish.
    buffered: usize,
}

impl RdmaNic {
    /// A frame's last byte reached the NIC at `now`.
    pub fn frame_arrived(&mut self, now: u64, frame: Vec<u8>, out: &mut Vec<RdmaAction>) {
        let now = now + self.p.rx_pipe_cycles;
        self.counters.packets_received += 1;
        let Some(p) = wire::parse(&frame) else {
            self.counters.not_for_us += 1;
            return;
        };
        let q = p.bth.dest_qp as usize;
        let from_peer = |ip: u32| self.qps.get(q).and_then(|qp| qp.remote).is_some_and(|(r, _)| r == ip);
        if !from_peer(p.src_ip) {
            self.counters.not_for_us += 1;
            return;
        }
        match (p.bth.opcode, p.aeth) {
            (op::ACK, Some(a)) => self.on_ack(now, q, p.bth.psn, a.syndrome, out),
            _ => self.on_request(now, q, &p, out),
        }
    }

    /// A request packet: only the expected PSN is executed; a duplicate is acknowledged, a
    /// packet past a gap dropped with one NAK per gap ([IBA] ch. 9; Linux rxe `rxe_resp.c`).
    fn on_request(&mut self, now: u64, q: usize, p: &Parsed, out: &mut Vec<RdmaAction>) {
        let qp = &mut self.qps[q];
        let psn = wire::unwrap_psn(p.bth.psn, qp.epsn);
        match psn.cmp(&qp.epsn) {
            Ordering::Less => return self.duplicate(now, q, p, out),
            Ordering::Greater if self.mutant != Mutant::AcceptGaps => {
                self.counters.out_of_sequence += 1;
                if !std::mem::replace(&mut qp.nak_sent, true) {
                    self.queue_ctrl(q, syndrome::NAK_PSN_SEQ);
                    self.pump(now, out);
                }
                return;
            }
            _ => {}
        }
        if self.rx.buffered + p.payload.len() > self.p.rx_buffer_bytes {
            self.counters.rx_buffer_drops += 1;
            return;
        }
        match self.execute(now, q, p, out) {
            Ok(()) => self.accepted(q, psn, p.bth.ack_req),
            Err(syn) => self.queue_ctrl(q, syn),
        }
        self.pump(now, out);
    }

    fn duplicate(&mut self, now: u64, q: usize, p: &Parsed, out: &mut Vec<RdmaAction>) {
        self.counters.duplicates += 1;
        if self.mutant == Mutant::ReplayDuplicates {
            let _ = self.execute(now, q, p, out);
        }
        self.queue_ctrl(q, syndrome::ACK);
        self.pump(now, out);
    }

    /// The expected packet was taken: expect the next, and acknowledge when asked to or
    /// after `ack_coalesce` packets.
    fn accepted(&mut self, q: usize, psn: u64, ack_req: bool) {
        let qp = &mut self.qps[q];
        (qp.epsn, qp.nak_sent) = (psn + 1, false);
        qp.unacked += 1;
        if ack_req || qp.unacked >= self.p.ack_coalesce {
            self.queue_ctrl(q, syndrome::ACK);
        }
    }

    /// Carry out a request packet: place its payload; a NAK syndrome if it cannot be.
    fn execute(&mut self, now: u64, q: usize, p: &Parsed, out: &mut Vec<RdmaAction>) -> Result<(), u8> {
        let o = p.bth.opcode;
        let last = matches!(o, op::SEND_LAST | op::SEND_ONLY | op::WRITE_LAST | op::WRITE_ONLY);
        match o {
            op::SEND_FIRST | op::SEND_MIDDLE | op::SEND_LAST | op::SEND_ONLY => {
                self.send_packet(now, q, p, out)
            }
            op::WRITE_FIRST | op::WRITE_ONLY => {
                let r = p.reth.ok_or(syndrome::NAK_INVALID)?;
                if !self.registered(Some(r.rkey), r.va, r.len as u64) {
                    return Err(syndrome::NAK_ACCESS);
                }
                self.qps[q].write_va = r.va;
                self.write_packet(now, q, p.payload, last, out);
                Ok(())
            }
            op::WRITE_MIDDLE | op::WRITE_LAST => {
                self.write_packet(now, q, p.payload, last, out);
                Ok(())
            }
            _ => Err(syndrome::NAK_INVALID),
        }
    }

    /// A SEND's packet into the head receive buffer; its last completes the receive.
    fn send_packet(&mut self, now: u64, q: usize, p: &Parsed, out: &mut Vec<RdmaAction>) -> Result<(), u8> {
        let o = p.bth.opcode;
        let qp = &mut self.qps[q];
        if matches!(o, op::SEND_FIRST | op::SEND_ONLY) {
            qp.recv_off = 0;
        }
        let r = *qp.rq.front().ok_or(syndrome::RNR_NAK)?;
        let n = p.payload.len() as u32;
        if qp.recv_off + n > r.len {
            return Err(syndrome::NAK_INVALID);
        }
        let addr = r.addr + qp.recv_off as u64;
        qp.recv_off += n;
        let mut cqe = None;
        if matches!(o, op::SEND_LAST | op::SEND_ONLY) {
            qp.rq.pop_front();
            qp.msn += 1;
            cqe = Some(Self::cqe(q, r.wr_id, wr_op::RECV, status::SUCCESS, qp.recv_off));
        }
        self.place(now, addr, p.payload, cqe, out);
        Ok(())
    }

    fn write_packet(&mut self, now: u64, q: usize, payload: &[u8], last: bool, out: &mut Vec<RdmaAction>) {
        let qp = &mut self.qps[q];
        let addr = qp.write_va;
        qp.write_va += payload.len() as u64;
        qp.msn += last as u32;
        self.place(now, addr, payload, None, out);
    }

    /// Write `payload` at `addr` by DMA; `cqe` completes once it and every earlier write
    /// are in memory.
    fn place(&mut self, now: u64, addr: u64, payload: &[u8], cqe: Option<Cqe>, out: &mut Vec<RdmaAction>) {
        let n = payload.len();
        self.counters.payload_bytes_placed += n as u64;
        let tag = self.rx.head_tag + self.rx.writes.len() as u64;
        self.rx.writes.push_back(Placing { bytes: n, done: n == 0, cqe });
        if n == 0 {
            return self.retire(now, out);
        }
        self.rx.buffered += n;
        let at = now.max(self.rx.dma_free);
        let stream = self.p.dma_cycles(n);
        self.rx.dma_free = at + stream;
        out.push(RdmaAction::DmaWrite { at, tag, addr, bytes: payload.to_vec(), stream });
    }

    /// A DMA write finished: its bytes are in memory.
    pub fn write_done(&mut self, now: u64, tag: u64, out: &mut Vec<RdmaAction>) {
        let w = &mut self.rx.writes[(tag - self.rx.head_tag) as usize];
        w.done = true;
        self.rx.buffered -= w.bytes;
        self.counters.dma_bytes_written += w.bytes as u64;
        self.retire(now, out);
    }

    /// Completions of the writes finished in order.
    fn retire(&mut self, now: u64, out: &mut Vec<RdmaAction>) {
        while self.rx.writes.front().is_some_and(|w| w.done) {
            let w = self.rx.writes.pop_front().expect("checked");
            self.rx.head_tag += 1;
            if let Some(c) = w.cqe {
                self.complete(now, c, out);
            }
        }
    }
}
