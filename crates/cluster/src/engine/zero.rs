//! ZeroNIC nodes in the event loop (docs/models/zeronic.md): payload placed in registered
//! memory and payload read for a merge go through the node's memory system as IceNIC's DMA
//! does (`ice`), and the regions software registers are watched on every core of the node,
//! so that the payload bytes a core touches are counted.

use crate::engine::{Ev, Simulation};
use nanopu_nic::zeronic::{Writes, ZeroAction};

/// A ZeroNIC DMA that finished.
#[derive(Debug)]
pub enum ZeroEv {
    /// Payload placement `id`: write these bytes, then tell the NIC.
    Placed { id: u64, writes: Writes },
    /// The payload of a merge: read these bytes, then hand them to the NIC.
    PayloadRead { addr: u64, len: usize },
}

impl Simulation {
    /// Turn what node `n`'s ZeroNIC asked for into events.
    pub(crate) fn apply_zero(&mut self, n: usize, actions: Vec<ZeroAction>) {
        for a in actions {
            match a {
                ZeroAction::Ice(a) => self.apply_ice(n, vec![a]),
                ZeroAction::Place { at, id, writes, stream } => {
                    let lat = writes.iter().map(|(a, b)| self.dma_latency(n, *a, b.len(), at, true)).max();
                    let t = self.at(at + stream + lat.unwrap_or(0));
                    self.q.push(t, Ev::Zero { node: n, ev: Box::new(ZeroEv::Placed { id, writes }) });
                }
                ZeroAction::ReadPayload { at, addr, len, stream } => {
                    let lat = self.dma_latency(n, addr, len, at, false);
                    let t = self.at(at + lat + stream);
                    self.q.push(t, Ev::Zero { node: n, ev: Box::new(ZeroEv::PayloadRead { addr, len }) });
                }
            }
        }
    }

    fn zero_call(
        &mut self,
        n: usize,
        f: impl FnOnce(&mut nanopu_nic::zeronic::ZeroNic, u64, &mut Vec<ZeroAction>),
    ) {
        let now = self.cycles();
        let mut out = Vec::new();
        f(self.nodes[n].nic.zero_mut().expect("a ZeroNIC node"), now, &mut out);
        self.apply_zero(n, out);
    }

    pub(crate) fn zero_event(&mut self, n: usize, ev: ZeroEv) {
        match ev {
            ZeroEv::Placed { id, writes } => self.zero_placed(n, id, writes),
            ZeroEv::PayloadRead { addr, len } => {
                let mut payload = vec![0; len];
                if let Err(e) = self.nodes[n].mem.read(addr, &mut payload) {
                    return self.ice_fault(n, addr, e);
                }
                self.zero_call(n, |z, now, out| z.payload_read(now, payload, out));
            }
        }
    }

    /// The payload is in memory (and the L2); no core's L1 holds a stale copy.
    fn zero_placed(&mut self, n: usize, id: u64, writes: Writes) {
        for (addr, bytes) in &writes {
            let node = &mut self.nodes[n];
            if let Err(e) = node.mem.write(*addr, bytes) {
                return self.ice_fault(n, *addr, e);
            }
            node.cores.iter_mut().for_each(|c| c.snoop_invalidate(*addr, bytes.len()));
        }
        self.zero_call(n, |z, now, out| z.placed(now, id, out));
    }

    /// The control queue read a header to send.
    pub(crate) fn zero_header_read(&mut self, n: usize, frame: Vec<u8>) {
        self.zero_call(n, |z, now, out| z.header_read(now, frame, out));
    }

    /// A frame's last byte reaches node `n`'s ZeroNIC.
    pub(crate) fn zero_arrive(&mut self, n: usize, frame: Vec<u8>) {
        self.zero_call(n, |z, now, out| z.frame_arrived(now, frame, out));
    }

    /// Regions software registered in a core's run: every core of the node counts the
    /// payload bytes it loads or stores there (`Core::watch`).
    pub(crate) fn zero_watch_regions(&mut self, n: usize) {
        let node = &mut self.nodes[n];
        let Some(z) = node.nic.zero_mut() else { return };
        for r in z.take_new_regions() {
            node.cores.iter_mut().for_each(|c| c.watch(r.addr, r.len));
        }
    }
}
