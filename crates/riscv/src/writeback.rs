//! Below the L2 (docs/models/node.md
//! "Write-backs, the L2's one path and refresh"): an L2 miss's read
//! through FASED's LLC and DDR3 banks, with the dirty lines leaving the L2 and the LLC.
//!
//! The L2 sends a dirty victim's Release before the refill's Acquire (sifive
//! block-inclusivecache d3d95ec `MSHR.scala`: `a.valid := !s_acquire && s_release`), but
//! FASED takes a write only once its last data beat has arrived (l-nic/firesim c2d8e3a4,
//! `TimingModel.scala`: `newWReq` counts `w.bits.last` with the LLC model), so the read,
//! a cycle behind the write's address, reaches the LLC first. The LLC serves one request at
//! a time (`LastLevelCache.scala`'s state machine) and takes a refill's data from DRAM only
//! when idle (`can_refill` in `llc_idle`). Cycles from the read's metadata access at the
//! LLC (cycle 0, one cycle, `llc_r_mdaccess`):
//! - an LLC hit answers then; the write follows and costs the read nothing;
//! - a miss sends the read to DRAM, whose data is back after `1 + dram`; if the miss evicts
//!   a dirty block, the LLC first sends its `block_beats` to DRAM (`llc_r_wb`);
//! - the victim's write starts when its last beat is in (`line_beats`) and the LLC is free,
//!   holds the LLC for its metadata cycle, the beats of a dirty block it evicts
//!   (`llc_w_wb`) and its own beats (`llc_w_daccess`);
//! - the refill's data is taken at the later of its return and the LLC's next idle cycle.
//!
//! A write that misses allocates and reads the rest of its block from DRAM (a
//! write-triggered refill, `need_refill`): its bank's row is left open by that read; the
//! LLC's later cycles taking that data (`llc_refill`) are not modelled. An LLC victim's
//! write to DRAM goes after the read (`dram.rs`).

use crate::cache::Fill;
use crate::mem::NodeMem;
use crate::params::TimingParams;

impl NodeMem {
    /// Cycles of an L2 miss of the line at physical `addr` beyond the L2, reaching the LLC
    /// at cycle `at`, with the dirty L2 victim at DRAM-relative `victim` if any; and
    /// whether it missed in the LLC.
    pub(crate) fn beyond_l2(
        &mut self,
        addr: u64,
        at: u64,
        victim: Option<u64>,
        t: &TimingParams,
    ) -> (u64, bool) {
        let llc = self.llc.access_rw(addr - self.base, false);
        if llc.hit() {
            victim.map(|v| self.write_to_llc(v, at));
            return (t.llc_latency, false);
        }
        let dram = self.dram.read(addr, at);
        let mut busy = 1;
        if let Fill::Dirty(block) = llc {
            self.dram.write(self.base + block, at);
            busy += block_beats(t);
        }
        if let Some(v) = victim {
            let start = busy.max(t.line_bytes / beat(t));
            busy = start + 1 + self.write_to_llc(v, at) * block_beats(t) + t.line_bytes / beat(t);
        }
        (t.llc_latency + dram + busy.saturating_sub(1 + dram), true)
    }

    /// Write the line at DRAM-relative `rel` into the LLC at cycle `at` (it allocates, as
    /// FASED's LLC does a write, reading the rest of its block from DRAM); an evicted dirty
    /// block is written to DRAM. Returns 1 if a dirty block was evicted, else 0.
    pub(crate) fn write_to_llc(&mut self, rel: u64, at: u64) -> u64 {
        let fill = self.llc.access_rw(rel, true);
        if !fill.hit() {
            self.dram.read(self.base + rel, at);
        }
        match fill {
            Fill::Dirty(block) => {
                self.dram.write(self.base + block, at);
                1
            }
            _ => 0,
        }
    }
}

fn beat(t: &TimingParams) -> u64 {
    t.bus_beat_bytes.max(1)
}

/// Beats of an LLC block on the 8-byte memory bus (FASED: `block_beats`).
fn block_beats(t: &TimingParams) -> u64 {
    t.llc_block_bytes / beat(t)
}
