//! IceNIC nodes in the event loop: what an IceNIC's actions become (DMA through the node's
//! memory system, frames onto the wire, its interrupt line), and frames between the test
//! host and an IceNIC node (docs/models/icenic.md).

use crate::engine::{Ev, Simulation};
use crate::host::HostFrame;
use crate::node::ICE_IRQ_BIT;
use nanopu_nic::icenic::IceAction;
use nanopu_sim::time::serialization;
use nanopu_sim::Time;

/// The hart the IceNIC's interrupt reaches: hart 0, the PLIC context bare-metal programs
/// enable (docs/models/icenic.md "Interrupts").
const IRQ_HART: usize = 0;

impl Simulation {
    /// Turn what node `n`'s IceNIC asked for into events.
    pub(crate) fn apply_ice(&mut self, n: usize, actions: Vec<IceAction>) {
        for a in actions {
            match a {
                IceAction::Gets { at, addr, len } => {
                    let lat = self.dma_latency(n, addr, len, at, false);
                    self.ice_call(n, |ice, _, out| ice.gets_timed(lat, out));
                }
                IceAction::GetsIssued { at, addr, len } => {
                    self.q.push(self.at(at), Ev::IceIssued { node: n, addr, len: len as u32 })
                }
                IceAction::DataIn { at } => self.q.push(self.at(at), Ev::IceData { node: n }),
                IceAction::DmaRead { at, addr, len, stream } => {
                    let lat = self.dma_latency(n, addr, len, at, false);
                    self.q.push(self.at(at + lat + stream), Ev::IceRead { node: n, addr, len: len as u32 });
                }
                IceAction::DmaWrite { at, addr, frame, stream } => {
                    let lat = self.dma_latency(n, addr, frame.len(), at, true);
                    let t = self.at(at + stream + lat);
                    self.q.push(t, Ev::IceWrite { node: n, w: Box::new((addr, frame)) });
                }
                IceAction::Transmit { at, frame } => {
                    self.q.push(self.at(at), Ev::IceTx { node: n, frame: frame.into_boxed_slice() })
                }
                IceAction::Update { at } => self.q.push(self.at(at), Ev::IceIrq { node: n }),
            }
        }
    }

    /// The time node `n`'s memory system takes to move `len` bytes at `addr` for a NIC's DMA
    /// (a write if `write`) starting at cycle `at`.
    pub(crate) fn dma_latency(&mut self, n: usize, addr: u64, len: usize, at: u64, write: bool) -> u64 {
        let node = &mut self.nodes[n];
        nanopu_riscv::device_dma(&mut node.mem, &mut node.cores, addr, len, at, write)
    }

    pub(crate) fn ice_call(
        &mut self,
        n: usize,
        f: impl FnOnce(&mut nanopu_nic::icenic::IceNic, u64, &mut Vec<IceAction>),
    ) {
        let now = self.cycles();
        let mut out = Vec::new();
        f(self.nodes[n].nic.ice_mut().expect("an IceNIC node"), now, &mut out);
        self.apply_ice(n, out);
    }

    /// The reader issued a frame's last Get: hand the NIC the bytes memory holds now, which
    /// its Gets read (docs/models/icenic.md "Send path": the bytes of a frame).
    pub(crate) fn ice_gets_issued(&mut self, n: usize, addr: u64, len: usize) {
        let mut frame = vec![0; len];
        if let Err(e) = self.nodes[n].mem.read(addr, &mut frame) {
            return self.ice_fault(n, addr, e);
        }
        self.ice_call(n, |ice, now, out| ice.gets_issued(now, frame, out));
    }

    /// The DMA read of a frame to send finished (ZeroNIC's sender, whose send completes
    /// once the frame is whole): hand the NIC the bytes memory holds now.
    pub(crate) fn ice_read_done(&mut self, n: usize, addr: u64, len: usize) {
        let mut frame = vec![0; len];
        if let Err(e) = self.nodes[n].mem.read(addr, &mut frame) {
            return self.ice_fault(n, addr, e);
        }
        if self.nodes[n].nic.zero().is_some() {
            return self.zero_header_read(n, frame);
        }
        self.ice_call(n, |ice, now, out| ice.read_done(now, frame, out));
    }

    /// The DMA write of a received frame finished: the bytes are in memory (and the L2),
    /// and no core's L1 holds a stale copy of the lines.
    pub(crate) fn ice_write_done(&mut self, n: usize, addr: u64, frame: Vec<u8>) {
        let node = &mut self.nodes[n];
        if let Err(e) = node.mem.write(addr, &frame) {
            return self.ice_fault(n, addr, e);
        }
        node.cores.iter_mut().for_each(|c| c.snoop_invalidate(addr, frame.len()));
        self.ice_call(n, |ice, now, out| ice.write_done(now, frame.len(), out));
    }

    /// A DMA outside memory: the bus would answer with an error the NIC cannot report; the
    /// run stops with the program's mistake named.
    pub(crate) fn ice_fault(&mut self, n: usize, addr: u64, e: String) {
        let why = format!("IceNIC DMA at {addr:#x} (from a send or receive request): {e}");
        let pc = self.nodes[n].cores[IRQ_HART].pc();
        let error = nanopu_riscv::CoreError {
            hart: IRQ_HART,
            pc,
            kind: nanopu_riscv::ErrorKind::Platform(why),
            stack: None,
        };
        self.fail(self.now, self.nodes[n].index, IRQ_HART, error);
    }

    /// The IceNIC's interrupt line, driven into hart 0's `mip`.
    pub(crate) fn ice_irq(&mut self, n: usize) {
        let level = self.nodes[n].ice().is_some_and(|i| i.irq_level());
        self.nodes[n].cores[IRQ_HART].set_irq(ICE_IRQ_BIT, level);
        self.wake_if_interrupted((n, IRQ_HART));
    }

    /// A frame leaves node `n`'s port: onto the fabric in a cluster, to the test host on a
    /// single node.
    pub(crate) fn ice_transmit(&mut self, n: usize, frame: Box<[u8]>) {
        if self.net.is_some() {
            return self.frame_onto_fabric(crate::net::End::Node(n), &frame);
        }
        let l = &mut self.link;
        let ready = self.now + Time(l.port.mac_fs);
        let ser = serialization(frame.len() as u64, l.port.rate_bps);
        let t = crate::net::link::HostLink::cross_to_host(l, ready, ser);
        let t = t + self.host.frame_delay(1);
        self.q.push(t, Ev::HostFrame { frame });
    }

    /// A frame from the test host: over its link into the IceNIC's receive buffer, or in a
    /// cluster onto the fabric, to whichever node its IPv4 destination names.
    pub(crate) fn host_send_frame(&mut self, frame: Vec<u8>) {
        if frame.is_empty() {
            return self.host_frame_timer();
        }
        self.host.sends += 1;
        self.host.frames_sent.push(HostFrame { time: self.now, frame: frame.clone() });
        if self.net.is_some() {
            return self.frame_onto_fabric(crate::net::End::Host, &frame);
        }
        let l = &mut self.link;
        let ser = serialization(frame.len() as u64, l.port.rate_bps);
        let t = crate::net::link::HostLink::cross_to_node(l, self.now, ser);
        if !self.host.frame_lost(0) {
            let t = t + self.host.frame_delay(0);
            self.q.push(t, Ev::IceRx { node: 0, frame: frame.into_boxed_slice() });
        }
    }

    /// A timer the frame responder asked for (an empty frame): call it with no frame.
    fn host_frame_timer(&mut self) {
        let (replies, _) = self.host.frame_arrived(self.now, &[]);
        self.host_frame_replies(replies);
    }

    fn host_frame_replies(&mut self, replies: Vec<(Time, Vec<u8>)>) {
        for (t, f) in replies {
            self.q.push(t.max(self.now), Ev::HostFrameSend { frame: f.into_boxed_slice() });
        }
    }

    /// A frame's last byte reaches node `n`'s IceNIC.
    pub(crate) fn ice_arrive(&mut self, n: usize, frame: Vec<u8>) {
        self.last_arrival = self.now;
        if self.nodes[n].nic.zero().is_some() {
            return self.zero_arrive(n, frame);
        }
        self.ice_call(n, |ice, now, out| ice.frame_arrived(now, frame, out));
    }

    pub(crate) fn host_frame_arrive(&mut self, frame: Vec<u8>) {
        if self.host.frame_lost(1) {
            return;
        }
        let time = self.now;
        let (replies, done) = self.host.frame_arrived(time, &frame);
        self.host_done |= done;
        self.host.frames_received.push(HostFrame { time, frame });
        self.host_frame_replies(replies);
    }
}
