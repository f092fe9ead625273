//! The client side of the eRPC-like RPC protocol (docs/apps/erpc.md), run by the test host
//! against `sw/apps/erpc_server.c` on an IceNIC node. The packet header's layout is
//! defined once here for Rust ([`hdr`]); `sw/include/erpc.h` is the C side of the same
//! layout, and the tests check that the two agree by talking.
//!
//! The client is a state machine driven by the host's frame responder
//! ([`nanopu_cluster::TestHost::on_frame`]): each call hands it the time and a frame (or an empty
//! frame: a timer it asked for) and takes back the frames to send (and timers, as empty
//! frames). As in eRPC, the client drives reliability: session credits bound the packets
//! it has not had answered, and a request that makes no progress for `rto` goes back to
//! its last answered packet and is resent from there (go-back-N).

use nanopu_cluster::net::frame::{dst_port, udp_frame, Ends, PAYLOAD};
use nanopu_cluster::node::boot::{node_ip, node_mac};
use nanopu_sim::Time;
use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

/// The eRPC packet header: 16 bytes after UDP, little-endian (eRPC's `pkthdr_t` holds its
/// bitfields in host order; docs/apps/erpc.md "Packet header").
pub mod hdr {
    /// Header bytes.
    pub const BYTES: usize = 16;
    /// eRPC's `kPktHdrMagic`, in bits 47:44 of the request-number word.
    pub const MAGIC: u64 = 11;
    /// Bits of the request number (eRPC's `kReqNumBits`).
    pub const REQ_NUM_BITS: u32 = 44;
    /// The server's datapath UDP port (`ERPC_UDP_PORT`).
    pub const SERVER_PORT: u16 = 31882;
    /// Data bytes per packet: a 1,500-byte IPv4 packet less IPv4, UDP and this header.
    pub const PKT_DATA: usize = 1500 - 20 - 8 - BYTES;
    /// The server's largest message (`ERPC_MAX_MSG`).
    pub const MAX_MSG: usize = 4096;
    /// Request slots per session (eRPC's `kSessionReqWindow`).
    pub const SLOTS: usize = 8;
    /// Session credits (eRPC's `kSessionCredits`).
    pub const CREDITS: usize = 8;

    /// The four packet types, in eRPC's numbering.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum PktType {
        Req = 0,
        Rfr = 1,
        Cr = 2,
        Resp = 3,
    }

    /// One header's fields.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Header {
        pub req_type: u8,
        pub msg_size: u32,
        pub session: u16,
        pub pkt_type: PktType,
        pub pkt_num: u16,
        pub req_num: u64,
    }

    impl Header {
        pub fn encode(&self) -> [u8; BYTES] {
            let mut b = [0u8; BYTES];
            b[0..4].copy_from_slice(&(u32::from(self.req_type) | self.msg_size << 8).to_le_bytes());
            b[4..6].copy_from_slice(&self.session.to_le_bytes());
            b[6..8].copy_from_slice(&(self.pkt_type as u16 | self.pkt_num << 2).to_le_bytes());
            b[8..16].copy_from_slice(&(self.req_num | MAGIC << REQ_NUM_BITS).to_le_bytes());
            b
        }

        /// The header at the start of `b`, if it is long enough and has the magic.
        pub fn decode(b: &[u8]) -> Option<Header> {
            let w = |r: std::ops::Range<usize>| {
                b.get(r).map(|s| s.iter().rev().fold(0u64, |v, &x| v << 8 | x as u64))
            };
            let (t, pkt, rn) = (w(0..4)?, w(6..8)?, w(8..16)?);
            if rn >> REQ_NUM_BITS & 15 != MAGIC {
                return None;
            }
            let pkt_type = [PktType::Req, PktType::Rfr, PktType::Cr, PktType::Resp][(pkt & 3) as usize];
            Some(Header {
                req_type: t as u8,
                msg_size: (t >> 8) as u32,
                session: w(4..6)? as u16,
                pkt_type,
                pkt_num: (pkt >> 2) as u16,
                req_num: rn & ((1 << REQ_NUM_BITS) - 1),
            })
        }
    }

    /// Packets a message of `size` bytes takes (an empty message takes one).
    pub fn pkts(size: usize) -> usize {
        size.div_ceil(PKT_DATA).max(1)
    }
}

use hdr::{Header, PktType};

/// The client's parameters.
#[derive(Clone, Debug)]
pub struct ClientParams {
    /// The session number (the server's session of the same number answers).
    pub session: u16,
    /// Requests outstanding at once, at most [`hdr::SLOTS`].
    pub window: usize,
    /// Packets sent and not yet answered, at most: eRPC's session credits, 8.
    pub credits: usize,
    /// Retransmission timeout (eRPC's `kRpcRTOUs` is 5 ms; tests use less, docs/apps/erpc.md).
    pub rto: Time,
    /// A request of this type (the server's exit) is given up after 5 timeouts: a server
    /// that has exited answers no more.
    pub exit_type: Option<u8>,
}

impl Default for ClientParams {
    fn default() -> Self {
        ClientParams {
            session: 0,
            window: hdr::SLOTS,
            credits: hdr::CREDITS,
            rto: Time::from_us(5000),
            exit_type: None,
        }
    }
}

/// A request to make: its type and data.
#[derive(Clone, Debug)]
pub struct Request {
    pub req_type: u8,
    pub data: Vec<u8>,
    /// Issue only once every earlier request has completed (a statistics or exit request).
    pub after_all: bool,
}

/// A completed request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completed {
    /// Its position in the order requests were queued.
    pub index: usize,
    pub req_num: u64,
    pub req_type: u8,
    /// When its first packet was handed to the link, and when its response was complete.
    pub issued: Time,
    pub done: Time,
    pub response: Vec<u8>,
}

/// What the client saw (for tests and benches).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientStats {
    pub packets_sent: u64,
    pub retransmits: u64,
    /// Most packets unanswered at once.
    pub max_in_flight: usize,
    /// Answers dropped: duplicates or out of order.
    pub dropped_answers: u64,
    /// Frames that were not eRPC packets of this session.
    pub bad_frames: u64,
}

/// One outstanding request in its slot.
#[derive(Clone, Debug)]
struct Slot {
    index: usize,
    req_num: u64,
    req_type: u8,
    req: Vec<u8>,
    /// Client packets sent (request packets, then RFRs), and answers received, in order.
    num_tx: usize,
    num_rx: usize,
    resp: Vec<u8>,
    resp_size: Option<usize>,
    issued: Time,
    progress: Time,
    timeouts: u32,
}

impl Slot {
    fn req_pkts(&self) -> usize {
        hdr::pkts(self.req.len())
    }

    /// Client packets this request takes in all: its request packets, then an RFR for
    /// each response packet after the first (known once the first has arrived).
    fn total_tx(&self) -> usize {
        self.req_pkts() + self.resp_size.map_or(0, |s| hdr::pkts(s) - 1)
    }

    /// The answer expected to client packet `k`: a CR for all request packets but the last,
    /// then response packets in order.
    fn expected(&self, k: usize) -> (PktType, usize) {
        match k.checked_sub(self.req_pkts() - 1) {
            None => (PktType::Cr, k),
            Some(r) => (PktType::Resp, r),
        }
    }
}

/// The client of one session.
pub struct Client {
    p: ClientParams,
    me: Ends,
    server: Ends,
    pending: VecDeque<(usize, Request)>,
    queued: usize,
    slots: Vec<Option<Slot>>,
    next_req_num: Vec<u64>,
    timers: BTreeSet<Time>,
    pub completed: Vec<Completed>,
    pub stats: ClientStats,
}

impl Client {
    /// A client on the test host talking to node 0's server.
    pub fn new(p: ClientParams) -> Client {
        let me = Ends { mac: node_mac(0) - 1, ip: nanopu_sim::packet::HOST_IP, port: 40000 + p.session };
        let server = Ends { mac: node_mac(0), ip: node_ip(0), port: hdr::SERVER_PORT };
        assert!(p.window >= 1 && p.window <= hdr::SLOTS, "window 1 to {}", hdr::SLOTS);
        Client {
            p,
            me,
            server,
            pending: VecDeque::new(),
            queued: 0,
            slots: vec![None; hdr::SLOTS],
            next_req_num: (0..hdr::SLOTS as u64).collect(),
            timers: BTreeSet::new(),
            completed: Vec::new(),
            stats: ClientStats::default(),
        }
    }

    /// Queue a request (sent in order as slots and credits allow).
    pub fn push(&mut self, r: Request) {
        assert!(r.data.len() <= hdr::MAX_MSG, "request longer than the server's {} bytes", hdr::MAX_MSG);
        self.pending.push_back((self.queued, r));
        self.queued += 1;
    }

    /// Are all queued requests complete?
    pub fn done(&self) -> bool {
        self.pending.is_empty() && self.slots.iter().all(Option::is_none)
    }

    /// Hand the client to the host: it starts sending at `start`. The returned handle
    /// reads its state after the run.
    pub fn attach(self, host: &mut nanopu_cluster::TestHost, start: Time) -> Arc<Mutex<Client>> {
        let c = Arc::new(Mutex::new(self));
        let h = c.clone();
        host.on_frame(move |now, f| h.lock().expect("client lock").event(now, f));
        host.send_frame_at(start, Vec::new()); // a timer: the first sends
        c
    }

    /// A frame arrived (or, empty, a timer fired): the frames to send and timers to set.
    pub fn event(&mut self, now: Time, frame: &[u8]) -> Vec<(Time, Vec<u8>)> {
        if frame.is_empty() {
            self.timers.remove(&now);
            self.time_out(now);
        } else {
            self.receive(now, frame);
        }
        let mut out = Vec::new();
        self.issue(now);
        self.send(now, &mut out);
        self.arm(now, &mut out);
        out
    }

    fn in_flight(&self) -> usize {
        self.slots.iter().flatten().map(|s| s.num_tx - s.num_rx).sum()
    }

    /// Start queued requests in free slots, up to the window.
    fn issue(&mut self, now: Time) {
        let busy = self.slots.iter().flatten().count();
        for _ in busy..self.p.window {
            let Some((_, r)) = self.pending.front() else { return };
            if r.after_all && self.slots.iter().any(Option::is_some) {
                return;
            }
            let (index, r) = self.pending.pop_front().expect("checked");
            let i = self.slots.iter().position(Option::is_none).expect("a free slot");
            let req_num = self.next_req_num[i];
            self.next_req_num[i] += hdr::SLOTS as u64;
            self.slots[i] = Some(Slot {
                index,
                req_num,
                req_type: r.req_type,
                req: r.data,
                num_tx: 0,
                num_rx: 0,
                resp: Vec::new(),
                resp_size: None,
                issued: now,
                progress: now,
                timeouts: 0,
            });
        }
    }

    /// Send what credits allow, slot by slot.
    fn send(&mut self, now: Time, out: &mut Vec<(Time, Vec<u8>)>) {
        for i in 0..self.slots.len() {
            while self.in_flight() < self.p.credits {
                let Some(s) = self.slots[i].as_mut().filter(|s| s.num_tx < s.total_tx()) else { break };
                let f = packet(self.me, self.server, self.p.session, s);
                s.num_tx += 1;
                s.progress = s.progress.max(now);
                out.push((now, f));
                self.stats.packets_sent += 1;
                self.stats.max_in_flight = self.stats.max_in_flight.max(self.in_flight());
            }
        }
    }

    /// A timer for the earliest timeout, unless one is set no later.
    fn arm(&mut self, now: Time, out: &mut Vec<(Time, Vec<u8>)>) {
        let next = self
            .slots
            .iter()
            .flatten()
            .filter(|s| s.num_tx > s.num_rx)
            .map(|s| s.progress + self.p.rto)
            .min();
        let Some(t) = next else { return };
        if self.timers.range(now..=t).next().is_none() {
            self.timers.insert(t);
            out.push((t, Vec::new()));
        }
    }

    /// Requests without progress for `rto` go back to their last answered packet.
    fn time_out(&mut self, now: Time) {
        let (rto, exit) = (self.p.rto, self.p.exit_type);
        for slot in self.slots.iter_mut() {
            let Some(s) = slot.as_mut().filter(|s| s.num_tx > s.num_rx && s.progress + rto <= now) else {
                continue;
            };
            s.timeouts += 1;
            if Some(s.req_type) == exit && s.timeouts > 5 {
                *slot = None;
                continue;
            }
            s.num_tx = s.num_rx;
            s.progress = now;
            self.stats.retransmits += 1;
        }
    }

    /// An answer: taken if it is the next one its slot expects, else dropped.
    fn receive(&mut self, now: Time, f: &[u8]) {
        let Some(h) = self.parse(f) else {
            self.stats.bad_frames += 1;
            return;
        };
        let i = (h.req_num % hdr::SLOTS as u64) as usize;
        let Some(s) = self.slots[i].as_mut().filter(|s| s.req_num == h.req_num && s.num_rx < s.num_tx) else {
            self.stats.dropped_answers += 1;
            return;
        };
        if s.expected(s.num_rx) != (h.pkt_type, h.pkt_num as usize) {
            self.stats.dropped_answers += 1;
            return;
        }
        s.num_rx += 1;
        s.progress = now;
        if h.pkt_type == PktType::Resp {
            s.resp_size.get_or_insert(h.msg_size as usize);
            s.resp.extend_from_slice(&f[PAYLOAD + hdr::BYTES..]);
        }
        if s.resp_size.is_some_and(|n| s.num_rx == s.total_tx() && s.resp.len() == n) {
            self.complete(i, now);
        }
    }

    fn complete(&mut self, i: usize, now: Time) {
        let s = self.slots[i].take().expect("an outstanding slot");
        self.completed.push(Completed {
            index: s.index,
            req_num: s.req_num,
            req_type: s.req_type,
            issued: s.issued,
            done: now,
            response: s.resp,
        });
    }

    /// The header of a frame to this client's session from the server.
    fn parse(&self, f: &[u8]) -> Option<Header> {
        if dst_port(f)? != self.me.port {
            return None;
        }
        let h = Header::decode(&f[PAYLOAD..])?;
        let answer = matches!(h.pkt_type, PktType::Cr | PktType::Resp);
        (answer && h.session == self.p.session).then_some(h)
    }
}

/// The frame of the slot's next client packet (`num_tx`): a request packet or an RFR.
fn packet(me: Ends, server: Ends, session: u16, s: &Slot) -> Vec<u8> {
    let k = s.num_tx;
    let (pkt_type, pkt_num, data) = if k < s.req_pkts() {
        let off = k * hdr::PKT_DATA;
        (PktType::Req, k, &s.req[off..(off + hdr::PKT_DATA).min(s.req.len())])
    } else {
        (PktType::Rfr, k - s.req_pkts() + 1, &[][..])
    };
    let h = Header {
        req_type: s.req_type,
        msg_size: if pkt_type == PktType::Req { s.req.len() as u32 } else { 0 },
        session,
        pkt_type,
        pkt_num: pkt_num as u16,
        req_num: s.req_num,
    };
    let mut payload = h.encode().to_vec();
    payload.extend_from_slice(data);
    udp_frame(me, server, &payload)
}

/// The digest a checked echo (request type 2 of `erpc_server.c`) carries in its last 8
/// bytes: h = h * 31 + byte over the bytes before them, from h = their count.
pub fn digest(data: &[u8]) -> u64 {
    data.iter().fold(data.len() as u64, |h, &b| h.wrapping_mul(31).wrapping_add(b as u64))
}

/// A checked echo request of `len` bytes (at least 8): `fill` bytes, then their digest.
pub fn checked_request(len: usize, mut fill: impl FnMut() -> u8) -> Request {
    let mut data: Vec<u8> = (0..len - 8).map(|_| fill()).collect();
    let d = digest(&data);
    data.extend_from_slice(&d.to_le_bytes());
    Request { req_type: REQ_CHECKED, data, after_all: false }
}

/// Request types of `sw/apps/erpc_server.c`.
pub const REQ_ECHO: u8 = 1;
pub const REQ_CHECKED: u8 = 2;
pub const REQ_STATS: u8 = 3;
pub const REQ_EXIT: u8 = 4;

/// The statistics request (after every earlier one) and the exit request.
pub fn stats_and_exit() -> [Request; 2] {
    let r = |t| Request { req_type: t, data: Vec::new(), after_all: true };
    [r(REQ_STATS), r(REQ_EXIT)]
}
