//! RDMA NIC nodes in the event loop: what an RDMA NIC's actions become (DMA through the
//! node's memory system, frames onto the wire, timers, its interrupt line) and its events
//! handed back (docs/models/rdma-nic.md).

use crate::engine::{Ev, Simulation};
use crate::node::ICE_IRQ_BIT;
use nanopu_nic::rdma::{RdmaAction, RdmaNic, RdmaTimer};

/// The hart the RDMA NIC's interrupt reaches (as IceNIC's, docs/models/icenic.md
/// "Interrupts").
const IRQ_HART: usize = 0;

/// An RDMA NIC's event, due at its time.
#[derive(Debug)]
pub enum RdmaEv {
    /// A DMA read finished: hand the NIC the bytes memory holds now.
    Read {
        tag: u64,
        addr: u64,
        len: usize,
    },
    /// A DMA write finished: the bytes go into memory now.
    Write {
        tag: u64,
        addr: u64,
        bytes: Vec<u8>,
    },
    /// A frame starts onto the wire.
    Tx {
        frame: Vec<u8>,
    },
    Timer(RdmaTimer),
    /// Re-evaluate the interrupt line.
    Irq,
}

impl Simulation {
    /// Turn what node `n`'s RDMA NIC asked for into events.
    pub(crate) fn apply_rdma(&mut self, n: usize, actions: Vec<RdmaAction>) {
        for a in actions {
            let (at, ev) = match a {
                RdmaAction::DmaRead { at, tag, addr, len, stream } => {
                    (at + stream + self.dma_latency(n, addr, len, at, false), RdmaEv::Read { tag, addr, len })
                }
                RdmaAction::DmaWrite { at, tag, addr, bytes, stream } => (
                    at + stream + self.dma_latency(n, addr, bytes.len(), at, true),
                    RdmaEv::Write { tag, addr, bytes },
                ),
                RdmaAction::Transmit { at, frame } => (at, RdmaEv::Tx { frame }),
                RdmaAction::Timer { at, timer } => (at, RdmaEv::Timer(timer)),
                RdmaAction::Update { at } => (at, RdmaEv::Irq),
            };
            self.q.push(self.at(at), Ev::Rdma { node: n, ev: Box::new(ev) });
        }
    }

    pub(crate) fn rdma_event(&mut self, n: usize, ev: RdmaEv) {
        match ev {
            RdmaEv::Read { tag, addr, len } => self.rdma_read_done(n, tag, addr, len),
            RdmaEv::Write { tag, addr, bytes } => self.rdma_write_done(n, tag, addr, bytes),
            RdmaEv::Tx { frame } => self.ice_transmit(n, frame.into_boxed_slice()),
            RdmaEv::Timer(t) => self.rdma_call(n, |r, now, out| r.timer(now, t, out)),
            RdmaEv::Irq => self.rdma_irq(n),
        }
    }

    fn rdma_call(&mut self, n: usize, f: impl FnOnce(&mut RdmaNic, u64, &mut Vec<RdmaAction>)) {
        let now = self.cycles();
        let mut out = Vec::new();
        f(self.nodes[n].nic.rdma_mut().expect("an RDMA NIC node"), now, &mut out);
        self.apply_rdma(n, out);
    }

    fn rdma_read_done(&mut self, n: usize, tag: u64, addr: u64, len: usize) {
        let mut bytes = vec![0; len];
        if let Err(e) = self.nodes[n].mem.read(addr, &mut bytes) {
            return self.rdma_fault(n, addr, e);
        }
        self.rdma_call(n, |r, now, out| r.read_done(now, tag, bytes, out));
    }

    /// The bytes are in memory (and the L2), and no core's L1 holds a stale copy.
    fn rdma_write_done(&mut self, n: usize, tag: u64, addr: u64, bytes: Vec<u8>) {
        let node = &mut self.nodes[n];
        if let Err(e) = node.mem.write(addr, &bytes) {
            return self.rdma_fault(n, addr, e);
        }
        node.cores.iter_mut().for_each(|c| c.snoop_invalidate(addr, bytes.len()));
        self.rdma_call(n, |r, now, out| r.write_done(now, tag, out));
    }

    /// A PFC PAUSE or resume reached an endpoint's port: an RDMA NIC stops or restarts its
    /// transmit side (IEEE 802.1Qbb: the MAC client stops); other NICs are held by their
    /// port alone.
    pub(crate) fn rdma_pause(&mut self, end: crate::net::End, on: bool) {
        if let crate::net::End::Node(n) = end {
            if self.nodes[n].nic.rdma().is_some() {
                self.rdma_call(n, |r, now, out| r.set_paused(now, on, out));
            }
        }
    }

    /// A frame's last byte reaches node `n`'s RDMA NIC.
    pub(crate) fn rdma_arrive(&mut self, n: usize, frame: Vec<u8>) {
        self.last_arrival = self.now;
        self.rdma_call(n, |r, now, out| r.frame_arrived(now, frame, out));
    }

    /// A DMA outside memory (a registered region the program placed badly): the run stops
    /// with the program's mistake named.
    fn rdma_fault(&mut self, n: usize, addr: u64, e: String) {
        let why = format!("RDMA NIC DMA at {addr:#x} (a registered memory region): {e}");
        let pc = self.nodes[n].cores[IRQ_HART].pc();
        let kind = nanopu_riscv::ErrorKind::Platform(why);
        let error = nanopu_riscv::CoreError { hart: IRQ_HART, pc, kind, stack: None };
        self.fail(self.now, self.nodes[n].index, IRQ_HART, error);
    }

    fn rdma_irq(&mut self, n: usize) {
        let level = self.nodes[n].nic.rdma().is_some_and(|r| r.irq_level());
        self.nodes[n].cores[IRQ_HART].set_irq(ICE_IRQ_BIT, level);
        self.wake_if_interrupted((n, IRQ_HART));
    }
}

impl Simulation {
    /// The fabric's totals (a cluster run's; none for a single node), PFC's among them.
    pub fn net_stats(&self) -> Option<nanopu_net::fabric::FabricStats> {
        self.net.as_ref().map(|n| n.fabric.stats())
    }
}
