//! A device's DMA through the node's memory system: the timing of its reads and writes,
//! which land in the shared L2 (docs/models/icenic.md "DMA": IceNIC's DMA engines are
//! masters on the front bus, behind which the system bus reaches the L2 banks) and pass its
//! one response path (`port.rs`), and the L2's coherence probes of the cores' L1 D-caches
//! that hold its lines (docs/models/icenic.md "The cost of size").

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

/// The cycles Rocket's L1 D-cache spends answering a probe without data (rocket-chip
/// 33813784 `DCache.scala`): the probe's tag read (`s1_probe`), its decision (`s2_probe`),
/// the ProbeAck's one beat (`s_probe_rep_clean`) and the metadata write
/// (`s_probe_write_meta`). The core's requests wait meanwhile (`io.cpu.req.ready` needs
/// `release_state === s_ready`). A dirty line's answer, ProbeAckData, moves the line's
/// beats instead of one, read from the data array a cycle ahead (`s_probe_rep_dirty`).
const PROBE_ACK_CYCLES: u64 = 4;

/// A device's read or write (`write`) of `[addr, addr + len)` starting at cycle `at` on a
/// node whose cores are `cores`: the L2 first probes the L1 D-caches holding the lines
/// (`Core::answer_probes`), then moves them (`NodeMem::dma_latency`). Cycles beyond the
/// streaming time. The probes are part of the prototype's memory system, as the L1's
/// write-backs (`write_backs`: with `memory = "simple"` the L2 sees reads only).
pub fn device_dma(mem: &mut NodeMem, cores: &mut [Core], addr: u64, len: usize, at: u64, write: bool) -> u64 {
    let Some(probed) = cores.first().map(|c| c.timing().write_backs) else { return 0 };
    let probes = match probed {
        true => cores.iter_mut().map(|c| c.answer_probes(mem, addr, len, write)).max().unwrap_or(0),
        false => 0,
    };
    mem.dma_latency(addr, len, cores[0].timing(), at, write) + probes
}

impl Core {
    /// The L2's probes of this core's L1 D-cache for a device's read (Get) or write (Put)
    /// of `[addr, addr + len)` (block-inclusivecache d3d95ec `MSHR.scala`, "Do we need a
    /// probe?": a Get probes a line a client holds with write permission, to Branch; a Put
    /// probes any client holding it, to N, and `snoop_invalidate` drops it once written).
    /// The L1 answers one probe at a time while the core waits (`PROBE_ACK_CYCLES`), and a
    /// line's request waits in the L2 for the answer's first beat (`MSHR.scala`:
    /// `w_pprobeack` is set on it for a request at offset 0): for probed line `i` of the
    /// transfer, a round trip (`l2_latency`, *estimate*: the L1-L2 round trip of a refill)
    /// after the answers before it. A read's lines are served in order, one line's beats
    /// apart, so line `i` was due `i` lines in; a write is done when its last line is
    /// (`StreamWriter`: `!xactBusy.orR`), due the last line's beats in. Returns how much
    /// later than due the latest probed line is served.
    pub fn answer_probes(&mut self, mem: &mut NodeMem, addr: u64, len: usize, write: bool) -> u64 {
        let beats = (self.t.line_bytes / self.t.bus_beat_bytes.max(1)).max(1);
        let (first, end) =
            (addr >> self.line_shift, (addr + len.max(1) as u64).div_ceil(1 << self.line_shift));
        let (mut busy, mut late) = (0, 0);
        for line in first..end {
            let due = match write {
                true => end - 1 - first,
                false => line - first,
            } * beats;
            let dirty = match write {
                true => self.l1d.holds(line),
                false => self.l1d.probe_to_b(line),
            };
            let Some(dirty) = dirty else { continue };
            if dirty && !write {
                self.probe_data(mem, line);
            }
            late = late.max((self.t.l2_latency + busy).saturating_sub(due));
            busy += PROBE_ACK_CYCLES + if dirty { beats } else { 0 };
        }
        if busy > 0 {
            self.cycle += busy;
            self.stats.stall_mem += busy;
            self.dline = u64::MAX;
        }
        late
    }

    /// A probe's answer carried line `line`'s data to the L2, which holds it dirty (as an
    /// L1 write-back leaves it: `Core::write_back`).
    fn probe_data(&self, mem: &mut NodeMem, line: u64) {
        if mem.dram_page(line << self.line_shift).is_none() {
            return;
        }
        let rel = line - (mem.base >> self.line_shift);
        if !mem.l2.write_back(rel) {
            mem.write_to_llc(rel << self.line_shift, self.cycle);
        }
    }

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

#[cfg(test)]
mod tests {
    use super::device_dma;
    use crate::testing::Bench;
    use crate::TimingParams;

    /// A device's reads of 4 lines at `a`, 1,000 cycles apart: one to fill the L2, one of
    /// lines no L1 holds, then two after the core wrote the first and read the last (a
    /// received frame whose header a program rewrote): each one's (cycles, the core's
    /// stall).
    fn reads(t: &TimingParams) -> [(u64, u64); 4] {
        let mut b = Bench::with_timing(&[0], false, t);
        let a = 0x8010_0000;
        let mut at = 0;
        [0, 1, 2, 3].map(|k| {
            if k == 2 {
                b.core.l1d.access_rw(a >> 6, true);
                b.core.l1d.access_rw((a >> 6) + 3, false);
            }
            at += 1_000;
            let c = b.core.cycle;
            let lat = device_dma(&mut b.mem, std::slice::from_mut(&mut b.core), a, 256, at, false);
            (lat, b.core.cycle - c)
        })
    }

    #[test]
    fn a_device_read_of_lines_an_l1_holds_waits_for_its_answers_and_stalls_the_core() {
        let t = TimingParams::default().prototype_memory();
        let [_, unheld, probed, shared] = reads(&t);
        // The dirty line's answer carries 8 beats, the clean one's one.
        assert_eq!(probed.1, 2 * super::PROBE_ACK_CYCLES + 8, "the core waits for both answers");
        // Line 0 is served a round trip late; line 3 (due 24 beats in) a round trip after
        // line 0's answer, which is sooner.
        assert_eq!(probed.0, unheld.0 + t.l2_latency);
        assert_eq!(shared, unheld, "the lines are shared now: no probe");
        let [_, _, simple, _] = reads(&TimingParams { write_backs: false, ..t.clone() });
        assert_eq!(simple.1, 0, "the simple memory has no probes");
    }
}
