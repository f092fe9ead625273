//! A device's DMA through the node's memory system: the timing of its reads and writes,
//! which land in the shared L2 (docs/models/icenic.md "DMA": IceNIC's DMA engines are
//! masters on the front bus, behind which the system bus reaches the L2 banks) and pass its
//! one response path (`port.rs`), and the coherence probes that drop the lines it writes
//! from the cores' L1 D-caches.

use crate::core::Core;
use crate::mem::NodeMem;
use crate::params::TimingParams;

impl NodeMem {
    /// Cycles until the last of the lines of `[addr, addr + len)` has been read or
    /// written (`write`) by a device whose transfer starts at cycle `at`, beyond its
    /// streaming time: the wait for the L2's one response path, whose beats it takes in
    /// turn with the other transfers, plus the slowest line's latency (the engine keeps
    /// several line requests in flight, so their latencies overlap). Each line goes through
    /// the L2 (allocated there, as the inclusive L2 does for a bus master; a write leaves it
    /// dirty), and on a miss through the LLC and DRAM.
    pub fn dma_latency(&mut self, addr: u64, len: usize, t: &TimingParams, at: u64, write: bool) -> u64 {
        let wait = match t.l2_one_port {
            true => self.port.dma(at, (len as u64).div_ceil(t.bus_beat_bytes.max(1)), !write),
            false => 0,
        };
        let shift = t.line_bytes.max(1).next_power_of_two().trailing_zeros();
        let lines = addr >> shift..(addr + len.max(1) as u64).div_ceil(1 << shift);
        let slowest = lines.map(|line| self.dma_line(line, shift, t, at + wait, write)).max();
        wait + slowest.unwrap_or(0)
    }

    fn dma_line(&mut self, line: u64, shift: u32, t: &TimingParams, at: u64, write: bool) -> u64 {
        let a = line << shift;
        if self.dram_page(a).is_none() {
            return t.l2_latency;
        }
        let fill = self.l2.access_rw(line - (self.base >> shift), write && t.write_backs);
        if fill.hit() {
            return t.l2_latency;
        }
        let victim = fill.victim(t.write_backs).map(|v| v << shift);
        t.l2_latency + self.beyond_l2(a, at + t.l2_latency, victim, t).0
    }
}

impl Core {
    /// A device wrote `[addr, addr + len)`: the L2's probes drop those lines from this
    /// core's L1 D-cache, so its next reads miss and fetch the new data from the L2.
    pub fn snoop_invalidate(&mut self, addr: u64, len: usize) {
        let shift = self.line_shift;
        for line in addr >> shift..(addr + len.max(1) as u64).div_ceil(1 << shift) {
            self.l1d.invalidate(line);
        }
        self.dline = u64::MAX;
    }
}
