//! Retry counting ([IBA] ch. 9; docs/models/rdma-nic.md "Retry counting"): a local ACK
//! timeout and a NAK-sequence error each use one of `retry_cnt` retries, an acknowledgment
//! that moves forward (an ACK, or a NAK's implied one) gives them back, and the QP fails
//! with `RETRY_EXC_ERR` on the retry after the last. The wire loses everything; the test
//! plays the responder's acknowledgments. Each test fails on a NIC whose NAKs use no retry.

use super::*;
use crate::rdma::wire::{self, syndrome, Aeth, Bth, Ends};

/// A world whose wire loses every frame, with a 3-packet WRITE posted by A on QP 0.
fn posted() -> World {
    let mut w = World::new(1.0, 0.0, 1, Mutant::None);
    w.setup(1);
    w.post(0, (0, wr_op::WRITE, 42), (MEM_BASE, MEM_BASE, 3 * 4096, 7));
    w.run_until(w.now + 20_000); // all three packets sent (and lost)
    w
}

/// B's acknowledgment (`syn`) of A's QP 0 naming `psn`, handed to A, then `gap` cycles.
fn ack(w: &mut World, syn: u8, psn: u32, gap: u64) {
    let ends =
        Ends { src_mac: 0x0200_0000_0000 | B_IP as u64, dst_mac: 0, src_ip: B_IP, dst_ip: A_IP, src_qp: 0 };
    let bth = Bth { opcode: wire::op::ACK, dest_qp: 0, ack_req: false, psn };
    let (frame, _) = wire::build(ends, bth, None, Some(Aeth { syndrome: syn, msn: 0 }), 0);
    w.call(0, |n, now, o| n.frame_arrived(now, frame, o));
    w.run_until(w.now + gap);
}

/// `n` NAK-sequence errors naming `psn`, `NAK_GAP` apart.
fn naks(w: &mut World, psn: u32, n: u32) {
    (0..n).for_each(|_| ack(w, syndrome::NAK_PSN_SEQ, psn, NAK_GAP));
}

/// A's completion statuses so far.
fn statuses(w: &mut World) -> Vec<u64> {
    w.completions(0).iter().map(|(c, _)| (c >> 56) & 0x7f).collect()
}

/// NAKs 1,000 cycles apart: far inside one local ACK timeout (419,430 cycles).
const NAK_GAP: u64 = 1_000;

#[test]
fn nak_sequence_errors_use_up_the_retry_count() {
    let mut w = posted();
    let retry_cnt = w.nics[0].params().retry_cnt;
    naks(&mut w, 0, retry_cnt);
    assert_eq!(statuses(&mut w), Vec::<u64>::new(), "{retry_cnt} retries are allowed");
    naks(&mut w, 0, 1);
    assert_eq!(w.nics[0].counters.timeouts, 0, "NAKs alone, before any timer expiry");
    assert_eq!(statuses(&mut w), vec![status::RETRY_EXC_ERR as u64], "the retry after the last fails");
}

#[test]
fn an_ack_that_moves_forward_gives_the_retries_back() {
    let mut w = posted();
    let retry_cnt = w.nics[0].params().retry_cnt;
    naks(&mut w, 0, retry_cnt);
    ack(&mut w, syndrome::ACK, 0, NAK_GAP); // PSN 0 received: progress
    ack(&mut w, syndrome::ACK, 0, NAK_GAP); // the same again: no progress, nothing back
    naks(&mut w, 1, retry_cnt);
    assert_eq!(statuses(&mut w), Vec::<u64>::new(), "the count restarted at the ACK");
    naks(&mut w, 1, 1);
    assert_eq!(statuses(&mut w), vec![status::RETRY_EXC_ERR as u64]);
}

#[test]
fn a_nak_that_moves_forward_restarts_the_count_and_uses_one() {
    let mut w = posted();
    let retry_cnt = w.nics[0].params().retry_cnt;
    naks(&mut w, 0, retry_cnt);
    naks(&mut w, 1, 1); // PSN 0 received, 1 missing: one retry
    naks(&mut w, 1, retry_cnt - 1);
    assert_eq!(statuses(&mut w), Vec::<u64>::new(), "{retry_cnt} retries since PSN 0 was acknowledged");
    naks(&mut w, 1, 1);
    assert_eq!(statuses(&mut w), vec![status::RETRY_EXC_ERR as u64]);
}

#[test]
fn a_nak_then_timer_expiries_share_one_count() {
    let mut w = posted();
    let (retry_cnt, timeout) = (w.nics[0].params().retry_cnt, w.nics[0].params().ack_timeout_cycles());
    naks(&mut w, 0, 1);
    w.run_until(w.now + retry_cnt as u64 * timeout); // the NAK, then retry_cnt - 1 expiries
    assert_eq!(w.nics[0].counters.timeouts, retry_cnt as u64 - 1);
    assert_eq!(statuses(&mut w), Vec::<u64>::new());
    w.run_until(w.now + 2 * timeout);
    assert_eq!(w.nics[0].counters.timeouts, retry_cnt as u64, "the last expiry is the one too many");
    assert_eq!(statuses(&mut w), vec![status::RETRY_EXC_ERR as u64]);
}
