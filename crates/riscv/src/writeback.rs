//! Dirty lines leaving the L2 and the LLC (docs/models/node.md "Write-backs"): an L2
//! victim is written to FASED's LLC ahead of the refill that evicted it, and an LLC victim
//! to DRAM.

use crate::cache::Fill;
use crate::mem::NodeMem;
use crate::params::TimingParams;

impl NodeMem {
    /// Cycles the dirty L2 victim at DRAM-relative byte address `rel` holds up, at cycle
    /// `at`, the L2 miss that evicted it: its write through the LLC (`l2_writeback`), and
    /// before it the LLC's own dirty victim's beats to DRAM if the write evicts one.
    pub(crate) fn l2_victim(&mut self, rel: u64, at: u64, t: &TimingParams) -> u64 {
        t.l2_writeback + self.write_to_llc(rel, at) * t.llc_block_bytes / t.bus_beat_bytes.max(1)
    }

    /// Write the line at DRAM-relative `rel` into the LLC at cycle `at` (it allocates, as
    /// FASED's LLC does a write); an evicted dirty block is written to DRAM. Returns 1 if a
    /// dirty block was evicted, else 0.
    pub(crate) fn write_to_llc(&mut self, rel: u64, at: u64) -> u64 {
        match self.llc.access_rw(rel, true) {
            Fill::Dirty(block) => {
                self.dram.write(self.base + block, at);
                1
            }
            _ => 0,
        }
    }
}
