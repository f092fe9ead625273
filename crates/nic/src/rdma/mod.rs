//! An RDMA NIC with a reliable-connection (RC) transport in hardware, as RoCEv2 NICs have
//! (docs/models/rdma-nic.md: every register, rule and parameter below, with its source).
//!
//! Software registers memory regions, connects queue pairs (QPs) and posts work requests
//! (SEND, RDMA WRITE, RECV) through memory-mapped registers: three words of a work queue
//! entry, then a doorbell word that posts it (the WQE written straight into the doorbell
//! page, as mlx5's BlueFlame does). The NIC moves payload by DMA straight from and to the
//! registered buffers (zero copy), cuts it into MTU packets with 24-bit PSNs, and runs the
//! InfiniBand RC protocol: the responder accepts only the next expected PSN, drops anything
//! else and sends one NAK (PSN sequence error) per gap, acknowledges duplicates, coalesces
//! ACKs; the requester goes back to the NAK's PSN (go-back-N) or to its oldest unacknowledged
//! PSN when the local ACK timer expires, and completes a work request once all of it is
//! acknowledged. Completions go to one completion queue the cores poll (or sleep on).
//!
//! [IBA] is the InfiniBand Architecture Specification, volume 1 (IBTA): chapter 9, the
//! transport layer, and annex A17, RoCEv2; docs/models/rdma-nic.md lists every source.
//!
//! Like IceNIC it never schedules anything: its methods return [`RdmaAction`]s with the
//! cycle (of the node clock) at which the caller must act; memory is the caller's.

mod params;
mod qp;
mod regs;
mod rx;
#[cfg(test)]
mod tests;
mod tx;
pub mod wire;

pub use params::RdmaParams;
pub use regs::{reg, status, wr_op};

use qp::Qp;
use std::collections::VecDeque;

/// Something the caller must do at cycle `at` of the node clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RdmaAction {
    /// Read `len` bytes at `addr` through the memory system from `at`; call
    /// [`RdmaNic::read_done`] with `tag` and the bytes `stream` cycles after the memory's
    /// latency.
    DmaRead { at: u64, tag: u64, addr: u64, len: usize, stream: u64 },
    /// Write `bytes` at `addr` from `at`; call [`RdmaNic::write_done`] with `tag` once the
    /// last byte is written (`stream` cycles plus the memory's latency).
    DmaWrite { at: u64, tag: u64, addr: u64, bytes: Vec<u8>, stream: u64 },
    /// `frame` starts onto the wire at `at`.
    Transmit { at: u64, frame: Vec<u8> },
    /// Call [`RdmaNic::timer`] with `timer` at `at`.
    Timer { at: u64, timer: RdmaTimer },
    /// The interrupt line may have moved: re-read [`RdmaNic::irq_level`] at `at`.
    Update { at: u64 },
}

/// A timer the NIC asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdmaTimer {
    /// The transmit side may go on (the link is free, or an RNR wait ended).
    Pump,
    /// QP `qp`'s local ACK timer, armed as generation `gen`.
    Retry { qp: u16, gen: u32 },
}

/// A deliberately broken NIC, for the tests that must catch one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mutant {
    /// The real NIC.
    #[default]
    None,
    /// The responder takes a packet past a gap as if it were the expected one.
    AcceptGaps,
    /// The responder executes a duplicate packet again.
    ReplayDuplicates,
}

/// Counters of what the NIC did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RdmaCounters {
    pub wrs_posted: u64,
    pub completions: u64,
    /// Data packets sent, first sendings and retransmissions.
    pub data_packets_sent: u64,
    /// Data packets sent again (go-back-N).
    pub retransmitted: u64,
    pub acks_sent: u64,
    pub naks_sent: u64,
    pub rnr_naks_sent: u64,
    pub packets_received: u64,
    pub acks_received: u64,
    pub naks_received: u64,
    /// Local ACK timer expiries that went back.
    pub timeouts: u64,
    /// Request packets below the expected PSN (acknowledged, not executed).
    pub duplicates: u64,
    /// Request packets past the expected PSN (dropped).
    pub out_of_sequence: u64,
    /// Packets the receive buffer had no room for.
    pub rx_buffer_drops: u64,
    /// Frames that were not RoCEv2 for a connected QP of this NIC.
    pub not_for_us: u64,
    pub dma_bytes_read: u64,
    pub dma_bytes_written: u64,
    /// Payload bytes placed in memory by SENDs and WRITEs taken in order.
    pub payload_bytes_placed: u64,
}

/// One completion: the CQE word software reads, and its byte count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cqe {
    pub wr_id: u32,
    pub qp: u16,
    pub op: u8,
    pub status: u8,
    pub len: u32,
}

impl Cqe {
    /// bit 63 valid, 62:56 status, 55:48 opcode, 47:32 QP, 31:0 wr_id.
    pub fn word(&self) -> u64 {
        1 << 63
            | (self.status as u64) << 56
            | (self.op as u64) << 48
            | (self.qp as u64) << 32
            | self.wr_id as u64
    }
}

/// A memory region: software's key for it, and its bytes.
#[derive(Clone, Copy, Debug)]
struct Mr {
    key: u32,
    base: u64,
    len: u64,
}

/// One node's RDMA NIC.
#[derive(Clone, Debug)]
pub struct RdmaNic {
    p: RdmaParams,
    mac: u64,
    ip: u32,
    qps: Vec<Qp>,
    mrs: Vec<Mr>,
    cq: VecDeque<Cqe>,
    /// The byte count of the completion software took last.
    last_len: u32,
    /// Interrupt armed: the line is up while a completion waits.
    armed: bool,
    /// Work-queue-entry words written per hart, until its doorbell.
    staged: Vec<[u64; 3]>,
    mr_staged: [u64; 2],
    /// An error the NIC cannot report through a completion (the CQ overflowed): the next
    /// register access stops the program with it.
    fatal: Option<String>,
    tx: tx::TxEngine,
    rx: rx::RxEngine,
    pub mutant: Mutant,
    pub counters: RdmaCounters,
}

impl RdmaNic {
    pub fn new(p: RdmaParams, mac: u64, ip: u32) -> Result<RdmaNic, String> {
        p.validate()?;
        Ok(RdmaNic {
            qps: (0..p.qps).map(|_| Qp::default()).collect(),
            mac,
            ip,
            mrs: Vec::new(),
            cq: VecDeque::new(),
            last_len: 0,
            armed: false,
            staged: Vec::new(),
            mr_staged: [0; 2],
            fatal: None,
            tx: tx::TxEngine::default(),
            rx: rx::RxEngine::default(),
            mutant: Mutant::None,
            counters: RdmaCounters::default(),
            p,
        })
    }

    pub fn params(&self) -> &RdmaParams {
        &self.p
    }

    /// The level of the interrupt line: armed, and a completion waits.
    pub fn irq_level(&self) -> bool {
        self.armed && !self.cq.is_empty()
    }

    /// Completions waiting in the completion queue.
    pub fn cq_len(&self) -> usize {
        self.cq.len()
    }

    /// Add a completion; an overflow is fatal (a CQ overrun, [IBA] ch. 11).
    fn complete(&mut self, now: u64, c: Cqe, out: &mut Vec<RdmaAction>) {
        if self.cq.len() == self.p.cq_depth {
            self.fatal = Some(format!(
                "RDMA NIC: completion queue overrun ({} entries); poll it sooner",
                self.p.cq_depth
            ));
            return;
        }
        self.cq.push_back(c);
        self.counters.completions += 1;
        out.push(RdmaAction::Update { at: now });
    }

    /// Is [addr, addr + len) inside a registered region (with key `key`, if given)?
    fn registered(&self, key: Option<u32>, addr: u64, len: u64) -> bool {
        let inside = |m: &&Mr| addr >= m.base && addr.saturating_add(len) <= m.base + m.len;
        self.mrs.iter().filter(|m| key.is_none_or(|k| k == m.key)).any(|m| inside(&m))
    }

    /// The MAC of the node at `ip`: our nodes' MACs are 02:00 followed by their IPv4
    /// address (crates/cluster node::boot), as ARP would resolve them.
    fn mac_of(ip: u32) -> u64 {
        0x0200_0000_0000 | ip as u64
    }

    /// Bytes a packet may carry.
    fn mtu(&self) -> usize {
        self.p.mtu
    }
}
