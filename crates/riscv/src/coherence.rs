//! What the cores of one node see of each other's stores: the coherence of their private L1
//! D-caches behind the shared L2 (docs/models/node.md "Cores sharing memory").
//!
//! The cores of a node run one after another, each a few cycles past the others
//! (crates/cluster `dispatch`). While another core of its node could read memory, a core
//! notes the lines it stores to and the cycle of each line's last store; after its run the
//! other cores observe them: the line leaves their L1 D-cache, as the inclusive L2's probe
//! takes it away on the prototype, so their next access misses and refills from the L2
//! (`l2_latency`). A core that reads a line stored at a cycle still in its own future (the
//! writer ran a few cycles ahead) waits for that cycle first: a store is never seen before
//! it is made.

use crate::core::Core;
use crate::mem::NodeMem;

/// A line number and the cycle of the last store to it.
pub type LineStore = (u64, u64);

/// One core's side of coherence.
#[derive(Default)]
pub(crate) struct Coherence {
    /// Note stores for the other cores (another core of the node has yet to finish).
    pub(crate) sharing: bool,
    /// Lines stored to since the others last observed this core, in order.
    stores: Vec<LineStore>,
    /// Lines other cores stored to at cycles after this core's clock when it observed them.
    future: Vec<LineStore>,
}

impl Core {
    /// Note stores for the node's other cores from now on (`on`), or stop.
    pub fn set_sharing(&mut self, on: bool) {
        self.coh.sharing = on;
        if !on {
            self.coh.stores.clear();
        }
    }

    /// The lines this core stored to since the last call, each with its last store's cycle.
    pub fn take_stores(&mut self) -> Vec<LineStore> {
        std::mem::take(&mut self.coh.stores)
    }

    /// Another core of the node stored to these lines: drop them from the L1 D-cache, and
    /// remember the stores this core's clock has not yet reached.
    pub fn observe_stores(&mut self, stores: &[LineStore]) {
        let now = self.cycle;
        self.coh.future.retain(|&(_, s)| s > now);
        for &(line, s) in stores {
            self.l1d.invalidate(line);
            if s > now {
                self.coh.future.push((line, s));
            }
        }
        self.dline = u64::MAX;
    }

    /// Note a store to `addr` at the current cycle (only while sharing).
    #[inline(always)]
    pub(crate) fn note_store(&mut self, addr: u64) {
        let line = addr >> self.line_shift;
        match self.coh.stores.last_mut() {
            Some(last) if last.0 == line => last.1 = self.cycle,
            _ => self.coh.stores.push((line, self.cycle)),
        }
    }

    /// Before an L1 miss of `line`: if another core stored to it at a cycle still ahead of
    /// this core's clock, the access waits until then (the new data is not there before).
    #[inline(always)]
    pub(crate) fn await_store(&mut self, line: u64) {
        if self.coh.future.is_empty() {
            return;
        }
        let s = self.coh.future.iter().filter(|&&(l, _)| l == line).map(|&(_, s)| s).max();
        if let Some(s) = s.filter(|&s| s > self.cycle) {
            self.stats.stall_mem += s - self.cycle;
            self.cycle = s;
        }
    }
}

impl Core {
    /// Is this core at a jump or a taken branch to itself? Then it touches no memory until
    /// an interrupt takes it elsewhere: the prototype's runtime parks cores 1.. so
    /// (`while (hartid != 0) {}`), and they need not be kept in step with the others.
    pub fn loops_in_place(&self, mem: &NodeMem) -> bool {
        let mut b = [0u8; 4];
        if mem.read(self.pc, &mut b[..2]).is_err() {
            return false;
        }
        let low = u16::from_le_bytes([b[0], b[1]]);
        if low & 3 != 3 {
            return self.compressed_self_loop(low);
        }
        mem.read(self.pc, &mut b).is_ok() && self.self_loop(u32::from_le_bytes(b))
    }

    /// `jal rd, 0`, or a B-type branch of offset 0 whose condition holds (RISC-V
    /// unprivileged spec 2.5).
    fn self_loop(&self, insn: u32) -> bool {
        if insn & 0x7f == 0x6f && insn >> 12 == 0 {
            return true;
        }
        let offset_bits = insn & 0xfe00_0f80;
        if insn & 0x7f != 0x63 || offset_bits != 0 {
            return false;
        }
        let (a, b) = (self.x[((insn >> 15) & 31) as usize], self.x[((insn >> 20) & 31) as usize]);
        match (insn >> 12) & 7 {
            0 => a == b,
            1 => a != b,
            4 => (a as i64) < b as i64,
            5 => a as i64 >= b as i64,
            6 => a < b,
            7 => a >= b,
            _ => false,
        }
    }

    /// `c.j 0`, or `c.beqz`/`c.bnez` of offset 0 whose condition holds (spec 16.6).
    fn compressed_self_loop(&self, insn: u16) -> bool {
        let (op, funct3) = (insn & 3, insn >> 13);
        if op != 1 {
            return false;
        }
        match funct3 {
            5 => insn & 0x1ffc == 0,
            6 | 7 if insn & 0x1c7c == 0 => {
                let r = self.x[8 + ((insn >> 7) & 7) as usize];
                (r == 0) == (funct3 == 6)
            }
            _ => false,
        }
    }
}
