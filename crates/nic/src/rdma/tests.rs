//! Two RDMA NICs joined by a lossy, reordering wire, driven by a small event loop of the
//! test's own (memory as a byte vector): every message and every written byte arrives
//! once and in order whatever the wire does, go-back-N is what repairs it, and the two
//! mutant NICs are caught.

use super::*;
use nanopu_sim::Rng;
use std::collections::BTreeMap;

const MEM_BASE: u64 = 0x8000_0000;
const MEM_BYTES: usize = 4 << 20;
/// Cycles of memory latency per DMA, and of one-way propagation.
const MEM_LAT: u64 = 100;
const PROP: u64 = 2_000;
const B_IP: u32 = 0x0a00_0003;
const A_IP: u32 = 0x0a00_0002;

#[derive(Debug)]
enum Ev {
    Read(usize, u64, u64, usize),
    Write(usize, u64, u64, Vec<u8>),
    Frame(usize, Vec<u8>),
    Timer(usize, RdmaTimer),
    Update,
}

struct Wire {
    loss: f64,
    reorder: f64,
    rng: Rng,
    lost: u64,
}

struct World {
    nics: [RdmaNic; 2],
    mem: [Vec<u8>; 2],
    q: BTreeMap<(u64, u64), Ev>,
    seq: u64,
    now: u64,
    wire: Wire,
}

impl World {
    fn new(loss: f64, reorder: f64, seed: u64, mutant: Mutant) -> World {
        let p = RdmaParams::default();
        let mut b = RdmaNic::new(p.clone(), 0x0200_0000_0000 | B_IP as u64, B_IP).unwrap();
        b.mutant = mutant;
        let a = RdmaNic::new(p, 0x0200_0000_0000 | A_IP as u64, A_IP).unwrap();
        let wire = Wire { loss, reorder, rng: Rng::new(seed), lost: 0 };
        World {
            nics: [a, b],
            mem: [vec![0; MEM_BYTES], vec![0; MEM_BYTES]],
            q: BTreeMap::new(),
            seq: 0,
            now: 0,
            wire,
        }
    }

    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.q.insert((at.max(self.now), self.seq), ev);
    }

    fn apply(&mut self, h: usize, acts: Vec<RdmaAction>) {
        for a in acts {
            match a {
                RdmaAction::DmaRead { at, tag, addr, len, stream } => {
                    self.push(at + MEM_LAT + stream, Ev::Read(h, tag, addr, len))
                }
                RdmaAction::DmaWrite { at, tag, addr, bytes, stream } => {
                    self.push(at + MEM_LAT + stream, Ev::Write(h, tag, addr, bytes))
                }
                RdmaAction::Transmit { at, frame } => self.transmit(at, h, frame),
                RdmaAction::Timer { at, timer } => self.push(at, Ev::Timer(h, timer)),
                RdmaAction::Update { at } => self.push(at, Ev::Update),
            }
        }
    }

    fn transmit(&mut self, at: u64, from: usize, frame: Vec<u8>) {
        let w = &mut self.wire;
        if w.rng.next_f64() < w.loss {
            w.lost += 1;
            return;
        }
        let extra = if w.rng.next_f64() < w.reorder { 1 + w.rng.below(20_000) } else { 0 };
        let ser = self.nics[from].params().wire_cycles(frame.len());
        self.push(at + ser + PROP + extra, Ev::Frame(1 - from, frame));
    }

    fn call(&mut self, h: usize, f: impl FnOnce(&mut RdmaNic, u64, &mut Vec<RdmaAction>)) {
        let mut out = Vec::new();
        f(&mut self.nics[h], self.now, &mut out);
        self.apply(h, out);
    }

    /// Run until nothing is left; still running at `limit` cycles fails the test.
    fn run(&mut self, limit: u64) {
        self.run_until(limit);
        assert!(self.q.is_empty(), "still running at {limit} cycles");
    }

    /// Run the events up to cycle `end`.
    fn run_until(&mut self, end: u64) {
        while self.q.first_key_value().is_some_and(|((t, _), _)| *t <= end) {
            let ((t, _), ev) = self.q.pop_first().expect("checked");
            self.now = t;
            match ev {
                Ev::Read(h, tag, addr, len) => {
                    let off = (addr - MEM_BASE) as usize;
                    let bytes = self.mem[h][off..off + len].to_vec();
                    self.call(h, |n, now, o| n.read_done(now, tag, bytes, o));
                }
                Ev::Write(h, tag, addr, bytes) => {
                    let off = (addr - MEM_BASE) as usize;
                    self.mem[h][off..off + bytes.len()].copy_from_slice(&bytes);
                    self.call(h, |n, now, o| n.write_done(now, tag, o));
                }
                Ev::Frame(h, f) => self.call(h, |n, now, o| n.frame_arrived(now, f, o)),
                Ev::Timer(h, t) => self.call(h, |n, now, o| n.timer(now, t, o)),
                Ev::Update => {}
            }
        }
    }

    fn reg(&mut self, h: usize, off: u64, v: u64) {
        let base = self.nics[h].params().base;
        self.call(h, |n, now, o| n.write(now, 0, base + off, 8, v, o).unwrap());
    }

    /// Post on host `h`'s QP `qp` a work request `op` with id `id` of `len` bytes at
    /// `laddr` (to `raddr` under `rkey`, for a WRITE).
    fn post(
        &mut self,
        h: usize,
        (qp, op, id): (u8, u8, u64),
        (laddr, raddr, len, rkey): (u64, u64, u32, u16),
    ) {
        self.reg(h, reg::WQE_ID, id);
        self.reg(h, reg::WQE_LADDR, laddr);
        self.reg(h, reg::WQE_RADDR, raddr);
        let v = len as u64 | (rkey as u64) << 32 | (op as u64) << 48 | (qp as u64) << 56;
        self.reg(h, reg::DOORBELL, v);
    }

    fn setup(&mut self, qps: u8) {
        for (h, peer) in [(0, B_IP), (1, A_IP)] {
            self.reg(h, reg::MR_BASE, MEM_BASE);
            self.reg(h, reg::MR_LEN, MEM_BYTES as u64);
            self.reg(h, reg::MR_REG, 7);
            for q in 0..qps {
                self.reg(h, reg::QP_CONNECT, q as u64 | (q as u64) << 8 | (peer as u64) << 32);
            }
        }
    }

    fn completions(&mut self, h: usize) -> Vec<(u64, u32)> {
        let base = self.nics[h].params().base;
        let mut v = Vec::new();
        loop {
            let mut out = Vec::new();
            let w = self.nics[h].read(self.now, base + reg::CQ_POP, 8, &mut out).unwrap();
            if w == 0 {
                return v;
            }
            let len = self.nics[h].read(self.now, base + reg::CQ_LEN, 4, &mut out).unwrap() as u32;
            v.push((w, len));
        }
    }
}

fn pattern(i: usize, salt: u8) -> u8 {
    ((i as u32).wrapping_mul(2_654_435_761) >> 24) as u8 ^ salt
}

/// What a run of SENDs and one big WRITE left.
struct Outcome {
    world: World,
    /// Byte offsets where the receiver's memory differs from what was sent.
    wrong: usize,
    recv_cqes: Vec<(u64, u32)>,
    send_cqes: usize,
}

const MSGS: usize = 40;
/// Message i is `msg_len(i)` bytes: 1 to 3 packets and some not a multiple of the MTU.
fn msg_len(i: usize) -> u32 {
    [100, 4096, 9000, 12_288, 1][i % 5]
}
const WRITE_BYTES: usize = 300_000;
const WRITE_SRC: u64 = MEM_BASE + (2 << 20);

/// A sends MSGS messages on QP 0 and writes WRITE_BYTES on QP 1 (two WRs); B checks.
fn bulk(loss: f64, reorder: f64, seed: u64, mutant: Mutant) -> Outcome {
    let mut w = World::new(loss, reorder, seed, mutant);
    w.setup(2);
    for i in 0..MSGS {
        let addr = MEM_BASE + (i as u64) * 16_384;
        w.post(1, (0, wr_op::RECV, i as u64), (addr, 0, 16_384, 0));
        let len = msg_len(i) as usize;
        for k in 0..len {
            w.mem[0][i * 16_384 + k] = pattern(k, i as u8);
        }
        w.mem[1][i * 16_384..(i + 1) * 16_384].fill(0xee);
    }
    let src = (WRITE_SRC - MEM_BASE) as usize;
    for k in 0..WRITE_BYTES {
        w.mem[0][src + k] = pattern(k, 0x5a);
        w.mem[1][src + k] = !pattern(k, 0x5a);
    }
    for i in 0..MSGS {
        w.post(0, (0, wr_op::SEND, 1000 + i as u64), (MEM_BASE + i as u64 * 16_384, 0, msg_len(i), 0));
    }
    let half = WRITE_BYTES as u32 / 2;
    w.post(0, (1, wr_op::WRITE, 2000), (WRITE_SRC, WRITE_SRC, half, 7));
    w.post(0, (1, wr_op::WRITE, 2001), (WRITE_SRC + half as u64, WRITE_SRC + half as u64, half, 7));
    w.run(2_000_000_000);
    let recv_cqes = w.completions(1);
    let send_cqes = w.completions(0).len();
    let mut wrong = (0..WRITE_BYTES).filter(|&k| w.mem[1][src + k] != pattern(k, 0x5a)).count();
    for i in 0..MSGS {
        let got = &w.mem[1][i * 16_384..i * 16_384 + msg_len(i) as usize];
        wrong += got.iter().enumerate().filter(|&(k, &b)| b != pattern(k, i as u8)).count();
    }
    Outcome { world: w, wrong, recv_cqes, send_cqes }
}

/// Every message completed once, in order, with its length, and every byte is right.
fn assert_delivered(o: &Outcome) {
    assert_eq!(o.wrong, 0, "every byte in place");
    let ids: Vec<u64> = o.recv_cqes.iter().map(|(w, _)| w & 0xffff_ffff).collect();
    assert_eq!(ids, (0..MSGS as u64).collect::<Vec<_>>(), "each receive completed once, in order");
    for (i, (w, len)) in o.recv_cqes.iter().enumerate() {
        assert_eq!((w >> 56) & 0x7f, status::SUCCESS as u64);
        assert_eq!(*len, msg_len(i), "message {i}'s length");
    }
    assert_eq!(o.send_cqes, MSGS + 2, "every send and write completed at the requester");
}

#[test]
fn a_clean_wire_delivers_without_retransmitting() {
    let o = bulk(0.0, 0.0, 1, Mutant::None);
    assert_delivered(&o);
    let c = &o.world.nics[0].counters;
    assert_eq!((c.retransmitted, c.timeouts, c.naks_received), (0, 0, 0));
    assert_eq!(
        o.world.nics[1].counters.payload_bytes_placed,
        (0..MSGS).map(|i| msg_len(i) as u64).sum::<u64>() + WRITE_BYTES as u64
    );
}

#[test]
fn one_percent_loss_and_reordering_are_repaired_by_go_back_n() {
    let mut lost = 0;
    for seed in 1..=6 {
        let o = bulk(0.01, 0.05, seed, Mutant::None);
        assert_delivered(&o);
        lost += o.world.wire.lost;
        if o.world.wire.lost == 0 {
            continue; // about 8% of runs of this size lose nothing at 1%
        }
        let (a, b) = (&o.world.nics[0].counters, &o.world.nics[1].counters);
        assert!(a.retransmitted > 0 && b.out_of_sequence > 0, "seed {seed}: {a:?} {b:?}");
        assert!(a.naks_received > 0, "seed {seed}: a gap was NAKed and gone back over: {a:?}");
        // Go-back-N resends everything after a gap: more than was lost.
        assert!(a.retransmitted > o.world.wire.lost / 2, "seed {seed}: {a:?}");
    }
    assert!(lost > 0, "the wire lost frames");
}

#[test]
fn a_lost_tail_is_repaired_by_the_timer() {
    // Heavy loss makes some request's last packets (no follower to reveal the gap) or
    // their ACK go missing: only the local ACK timer brings them back.
    let mut timeouts = 0;
    for seed in 1..=4 {
        let o = bulk(0.05, 0.0, seed, Mutant::None);
        assert_delivered(&o);
        timeouts += o.world.nics[0].counters.timeouts;
    }
    assert!(timeouts > 0, "some loss was repaired by the local ACK timer");
}

#[test]
fn a_responder_that_accepts_gaps_is_caught() {
    let caught = (1..=3).any(|seed| {
        let o = bulk(0.01, 0.05, seed, Mutant::AcceptGaps);
        o.wrong > 0 || o.recv_cqes.iter().enumerate().any(|(i, (_, l))| *l != msg_len(i))
    });
    assert!(caught, "a NIC that skips lost packets must fail the checks");
}

#[test]
fn a_responder_that_replays_duplicates_is_caught() {
    let caught = (1..=3).any(|seed| {
        let o = bulk(0.01, 0.05, seed, Mutant::ReplayDuplicates);
        let ids: Vec<u64> = o.recv_cqes.iter().map(|(w, _)| w & 0xffff_ffff).collect();
        o.wrong > 0 || ids != (0..MSGS as u64).collect::<Vec<_>>()
    });
    assert!(caught, "a NIC that executes duplicates again must fail the checks");
}

#[test]
fn a_write_outside_the_remote_region_fails_with_an_access_error() {
    let mut w = World::new(0.0, 0.0, 1, Mutant::None);
    w.setup(1);
    w.post(0, (0, wr_op::WRITE, 5), (MEM_BASE, MEM_BASE, 100, 9)); // key 9 is not registered
    w.post(0, (0, wr_op::WRITE, 6), (MEM_BASE, MEM_BASE, 100, 7));
    w.run(100_000_000);
    let c = w.completions(0);
    assert_eq!(c.len(), 2);
    assert_eq!((c[0].0 >> 56) & 0x7f, status::REM_ACCESS_ERR as u64);
    assert_eq!((c[1].0 >> 56) & 0x7f, status::WR_FLUSH_ERR as u64);
}

#[test]
fn a_send_without_a_receive_buffer_waits_for_one() {
    let mut w = World::new(0.0, 0.0, 1, Mutant::None);
    w.setup(1);
    w.post(0, (0, wr_op::SEND, 1), (MEM_BASE, 0, 64, 0));
    w.run_until(w.now + 40_000); // the first RNR NAK and its wait
    let rnr = w.nics[1].counters.rnr_naks_sent;
    assert!(rnr >= 1, "{:?}", w.nics[1].counters);
    w.post(1, (0, wr_op::RECV, 9), (MEM_BASE + 4096, 0, 64, 0));
    w.run(100_000_000);
    assert_eq!(w.completions(1).len(), 1);
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let a = bulk(0.02, 0.05, 9, Mutant::None);
    let b = bulk(0.02, 0.05, 9, Mutant::None);
    assert_eq!(a.world.nics[0].counters, b.world.nics[0].counters);
    assert_eq!(a.world.now, b.world.now);
}

#[test]
fn unregistered_local_buffers_are_refused_at_post() {
    let mut w = World::new(0.0, 0.0, 1, Mutant::None);
    w.setup(1);
    let base = w.nics[0].params().base;
    let mut o = Vec::new();
    w.nics[0].write(0, 0, base + reg::WQE_LADDR, 8, 0x1000, &mut o).unwrap();
    let e =
        w.nics[0].write(0, 0, base + reg::DOORBELL, 8, 64 | (wr_op::SEND as u64) << 48, &mut o).unwrap_err();
    assert!(e.contains("no registered memory region"), "{e}");
}

mod retry;
