//! Every constant of the memory map and the timing model, with unit, default and provenance.
//!
//! Provenance keys used below:
//! - *nanoPU*: Ibanez et al., "The nanoPU: A Nanosecond Network Stack for Datacenters",
//!   OSDI 2021, section 5 (prototype: Rocket cores at 3.2 GHz, 16 KiB L1 I/D, 512 KiB L2).
//! - *rocket-chip*: defaults of the public rocket-chip generator (`RocketCoreParams`,
//!   `ICacheParams`, `DCacheParams`, `BTBParams`, `MulDivParams`) that the prototype's
//!   FireSim configuration builds on.
//! - *FASED*: FireSim's memory timing model as the prototype's FireSim build configured it
//!   (target `DDR3FRFCFSLLC4MB`, runtime arguments in l-nic/chipyard
//!   `software/local_firesim/local_firesim.py`); every value and its source is in the table
//!   of docs/models/node.md "Memory system".
//! - *estimate*: no published number; chosen from the pipeline structure and stated as such.

/// Where DRAM sits and how large it is (docs/abi.md memory map).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemParams {
    /// Physical base of DRAM. Default 0x8000_0000 (docs/abi.md).
    pub dram_base: u64,
    /// DRAM size in bytes. Default 256 MiB (docs/abi.md).
    pub dram_size: u64,
}

impl Default for MemParams {
    fn default() -> Self {
        MemParams { dram_base: 0x8000_0000, dram_size: 256 << 20 }
    }
}

/// Timing constants of the Rocket-like in-order model. All latencies in core cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimingParams {
    /// Core clock in Hz. Default 3.2 GHz (*nanoPU* prototype).
    pub clock_hz: u64,
    /// Core cycles per tick of the CLINT's `mtime` (the real-time clock). Default 3,200:
    /// the prototype's CLINT ticks at the RTC rate, `DTSTimebase` = 1 MHz (rocket-chip
    /// `system/Configs.scala` `BaseConfig`: `WithTimebase(BigInt(1000000))`), divided from
    /// the 3.2 GHz periphery bus (`subsystem/RTC.scala` `HasRTCModuleImp`; l-nic/chipyard
    /// `firechip` `WithFireSimConfigTweaks`: `WithPeripheryBusFrequency(3200000000L)`).
    pub rtc_cycles: u64,
    /// Cache line size in bytes, all levels. Default 64 (*rocket-chip* `blockBytes`).
    pub line_bytes: u64,
    /// L1 I-cache sets. Default 64 (*rocket-chip* `ICacheParams`; 64 x 4 x 64 B = 16 KiB, *nanoPU*).
    pub l1i_sets: usize,
    /// L1 I-cache ways. Default 4 (*rocket-chip*).
    pub l1i_ways: usize,
    /// L1 D-cache sets. Default 64 (*rocket-chip* `DCacheParams`; 16 KiB, *nanoPU*).
    pub l1d_sets: usize,
    /// L1 D-cache ways. Default 4 (*rocket-chip*).
    pub l1d_ways: usize,
    /// Shared L2 sets per node. Default 1024 (1024 x 8 x 64 B = 512 KiB, *nanoPU*).
    pub l2_sets: usize,
    /// Shared L2 ways. Default 8 (SiFive inclusive cache default used with rocket-chip).
    pub l2_ways: usize,
    /// Load-to-use latency of an L1 hit for 32/64-bit loads: a dependent instruction issues
    /// this many cycles after the load. Default 2 (*rocket-chip* `fastLoadWord = true`: one
    /// bubble).
    pub load_latency: u64,
    /// Load-to-use latency for 8/16-bit loads and AMO/LR results. Default 3 (*rocket-chip*
    /// `fastLoadByte = false`: the sub-word aligner adds a cycle).
    pub load_latency_subword: u64,
    /// Extra cycles of an L1 miss that hits in the L2. Default 13: 10 cycles from refill
    /// request to refill completion seen from a Rocket L1 (ucb-bar/chipyard issue 602,
    /// measured by a maintainer) plus 3 (*estimate*: the miss request leaves the cycle after
    /// the miss is seen in stage 2, and the load replays through the cache's two stages
    /// after the refill). docs/models/node.md "Memory system".
    pub l2_latency: u64,
    /// Sets of the node's last-level cache in front of DRAM. Default 4096 (*FASED*:
    /// `+mm_llc_setBits=12`; 4096 x 8 x 128 B = 4 MiB).
    pub llc_sets: usize,
    /// LLC ways. Default 8 (*FASED*: `+mm_llc_wayBits=3`).
    pub llc_ways: usize,
    /// LLC block size in bytes. Default 128 (*FASED*: `+mm_llc_blockBits=7`).
    pub llc_block_bytes: u64,
    /// Extra cycles of an L2 miss that hits in the LLC. Default 12 (*estimate*: a second
    /// bus round trip like the L1-L2 one behind `l2_latency`, 10 cycles, plus FASED's LLC
    /// request queue and one-cycle metadata read, 2; docs/models/node.md "Memory system").
    pub llc_latency: u64,
    /// The DDR3 timing of an LLC miss (*FASED*).
    pub dram: Ddr3Params,
    /// Bytes a beat moves on the system and memory buses and through the L2's data path.
    /// Default 8 (*rocket-chip*: `SystemBusKey` and `MemoryBusKey` beatBytes = XLen / 8,
    /// l-nic/rocket-chip 33813784 `subsystem/Configs.scala`).
    pub bus_beat_bytes: u64,
    /// Dirty lines are written back when evicted: from the L1 D-cache to the L2 ahead of
    /// the refill (`l1_writeback`), from the L2 to the LLC and from the LLC to DRAM, timed
    /// as FASED's LLC serves them (`writeback.rs`).
    /// The prototype's caches are write-back, so true is the hardware and the default
    /// (docs/models/node.md "Write-backs, the L2's one path and refresh");
    /// [`TimingParams::simple_memory`] turns it off with the other two.
    pub write_backs: bool,
    /// Cycles a dirty L1 D-cache victim's write-back holds up the refill that evicted it.
    /// Default 14: the 8 beats of the Release's data (`line_bytes / bus_beat_bytes`), 2 for
    /// the data array's read pipeline ahead of them and 1 for the metadata write
    /// (rocket-chip 33813784 `rocket/DCache.scala`: `s_voluntary_writeback`,
    /// `s1/s2_release_data_valid`, `s_voluntary_write_meta`; with `acquireBeforeRelease =
    /// false` the miss is not sent before the write-back, and `can_acquire_before_release`
    /// waits for its ReleaseAck), plus 3 for the L2's ReleaseAck (*estimate*: the L2 hit's
    /// round trip of `l2_latency`, 10 cycles, less the 7 data beats an ack has not).
    pub l1_writeback: u64,
    /// The node's L2 answers through one data path, one request at a time and one beat a
    /// cycle (sifive block-inclusivecache d3d95ec `SourceD.scala`: `busy`, `s1_counter`;
    /// the prototype's `WithInclusiveCache` has `nBanks = 1`): a device's DMA reads and
    /// writes, the cores' refills and L1 write-backs take turns (docs/models/node.md, as
    /// `write_backs`). True is the hardware and the default, as `write_backs`.
    pub l2_one_port: bool,
    /// Uncached MMIO access (CLINT, boot page). Default 20 (*estimate*, like an L2 round trip).
    pub mmio_latency: u64,
    /// Uncached access to a device register on the periphery bus (IceNIC's register block,
    /// and the ZeroNIC and RDMA NICs, which keep its registers and rules), the cycles after
    /// `exec`'s one until the value is ready. Default 11: the D-cache sends the Get from its
    /// stage 2 (rocket-chip 33813784 `rocket/DCache.scala` `tl_out_a.valid`, no queue behind
    /// a synchronous crossing), four 2-entry buffers each way on the path of the nanoPU
    /// artifact's SoC (the tile's crossing, the control bus's `TLBuffer`, the crossing into
    /// the periphery bus and its `TLBuffer`: `subsystem/BusTopology.scala`,
    /// `PeripheryBus.scala`, `BufferParams.default`, one cycle each), the register router
    /// answers in the cycle (`TLRegisterRouter` with concurrency 0, icenet 512c87e), and the
    /// value reaches the core a cycle after the grant (`doUncachedResp`) and its dependants
    /// by the register file's bypass (docs/models/icenic.md "Register access timing"). A
    /// store is charged the same (*estimate*: Rocket posts it, but with one uncached access
    /// in flight, `nMMIOs = 1`, the next register access waits for its acknowledgement).
    pub device_latency: u64,
    /// Extra cycles of a misaligned load/store (performed, not trapped). Default 8
    /// (*estimate*: two accesses plus a replay; Rocket itself traps).
    pub misaligned_penalty: u64,
    /// Extra cycles of an AMO / LR / SC beyond a load. Default 2 (*estimate*: read-modify-write
    /// in the D-cache's data array).
    pub amo_extra: u64,
    /// The iterative multiply/divide unit every M instruction goes through; its latency
    /// depends on the operands (`muldiv/timing.rs`).
    pub muldiv: MulDivParams,
    /// Cycles lost on a mispredicted branch or jump (redirect from execute). Default 3
    /// (*rocket-chip*: 5-stage pipeline resolving branches in EX).
    pub mispredict_penalty: u64,
    /// Branch history table entries (1-bit counters indexed with 8 bits of global history,
    /// `bpred.rs`). Default 512 (*rocket-chip* `BHTParams`, as the prototype's cores).
    pub bht_entries: usize,
    /// Branch target buffer entries (direct-mapped here). Default 32 (*rocket-chip* has 28,
    /// fully associative).
    pub btb_entries: usize,
    /// Return address stack depth. Default 6 (*rocket-chip* `nRAS`).
    pub ras_entries: usize,
    /// Cycles lost when a CSR write flushes the pipeline: Rocket kills what follows and
    /// refetches it from WB (`id_csr_flush` in `RocketCore.scala`), as for a trap or `mret`.
    /// Writes to mscratch..mtval and to the LNIC CSRs 0x052..0x061 do not flush (the
    /// nanoPU fork's `write_flush` in `CSR.scala`, l-nic/rocket-chip `lnic-dev`), nor does a
    /// read (csrrs/csrrc with rs1 = x0). Default 5 (*estimate*: the WB redirect, two stages
    /// later than a mispredict's 3).
    pub csr_penalty: u64,
    /// Cycles after a CSR instruction issues until a dependent one can: its result comes
    /// from WB (`ex_cannot_bypass`/`mem_cannot_bypass` for CSR instructions in
    /// `RocketCore.scala`; the register file passes a WB write to a same-cycle read).
    /// Default 3 (*rocket-chip*), as a sub-word load's.
    pub csr_latency: u64,
    /// Extra cycles to take a trap or interrupt (flush, redirect to `mtvec`). Default 5
    /// (*estimate*: pipeline depth).
    pub trap_penalty: u64,
    /// Extra cycles of `mret` (flush, redirect to `mepc`). Default 5 (*estimate*).
    pub mret_penalty: u64,
    /// Extra cycles of `fence.i` besides the I-cache flush. Default 5 (*estimate*).
    pub fence_i_penalty: u64,
    /// Single-precision FMA pipeline latency (fadd/fsub/fmul/fmadd... .s). Default 3
    /// (*rocket-chip* `FPUParams(sfmaLatency = 3)`, `tile/FPU.scala`).
    pub fp_sfma_latency: u64,
    /// Double-precision FMA pipeline latency. Default 4 (*rocket-chip* `FPUParams(dfmaLatency
    /// = 4)`).
    pub fp_dfma_latency: u64,
    /// FP-to-FP pipe (sign injection, min/max, fcvt.s.d/fcvt.d.s). Default 2 (*rocket-chip*
    /// `new FPToFP(2)` in `FPU.scala`).
    pub fp_misc_latency: u64,
    /// Int-to-FP pipe (fmv.w.x/fmv.d.x, fcvt.s.w...). Default 2 (*rocket-chip* `new
    /// IntToFP(2)`).
    pub fp_from_int_latency: u64,
    /// FP-to-int results (compares, fclass, fmv.x.w, fcvt.w.s...): `FPToInt` produces them in
    /// the memory stage and `RocketCore` does not bypass FP results from there
    /// (`mem_cannot_bypass`), so a dependent instruction issues 3 cycles later. Default 3
    /// (*estimate* from that structure).
    pub fp_to_int_latency: u64,
    /// Single-precision divide / square root, unpipelined. Default 27 (*estimate*:
    /// hardfloat's `DivSqrtRecFN_small` used by rocket-chip produces one significand bit per
    /// cycle, 24 + 2 guard/round bits, plus a cycle to round).
    pub fp_sdivsqrt_latency: u64,
    /// Double-precision divide / square root, unpipelined. Default 56 (*estimate*, as above
    /// with 53 + 2 bits plus a cycle).
    pub fp_ddivsqrt_latency: u64,
    /// Extra load-to-use cycles of flw/fld over integer loads: Rocket writes FP load data a
    /// cycle after the D-cache response (`load_wb` register in `FPU.scala`). Default 1
    /// (*rocket-chip*).
    pub fp_load_extra: u64,
    /// The byte-swap instructions the nanoPU authors added to their IceNIC baseline's cores
    /// (l-nic/chipyard `tests/icenic.h`: `.insn r 0x33, funct3 0/1/2, 0x2A, rd, rs1, x0` swap
    /// the low 2, 4 or 8 bytes of rs1; docs/models/icenic.md "Frames"). Default off (an
    /// illegal instruction); on for the cores of IceNIC nodes. One cycle (*estimate*: an
    /// ALU operation), the result zero-extended (*estimate*: the artifact's C takes it as
    /// an unsigned 16- or 32-bit value).
    pub bswap_insns: bool,
    /// Extra cycles of a load from a device register (memory-mapped I/O the platform
    /// answers): the round trip over PCIe of a PCIe-attached IceNIC, twice its one-way
    /// `pcie_ns` (docs/models/icenic.md "PCIe-attached variant"). Default 0 (on chip).
    pub device_load_extra: u64,
}

impl Default for TimingParams {
    fn default() -> Self {
        TimingParams {
            clock_hz: 3_200_000_000,
            rtc_cycles: 3_200,
            line_bytes: 64,
            l1i_sets: 64,
            l1i_ways: 4,
            l1d_sets: 64,
            l1d_ways: 4,
            l2_sets: 1024,
            l2_ways: 8,
            load_latency: 2,
            load_latency_subword: 3,
            l2_latency: 13,
            llc_sets: 4096,
            llc_ways: 8,
            llc_block_bytes: 128,
            llc_latency: 12,
            dram: Ddr3Params::default(),
            bus_beat_bytes: 8,
            write_backs: true,
            l1_writeback: 14,
            l2_one_port: true,
            mmio_latency: 20,
            device_latency: 11,
            bswap_insns: false,
            device_load_extra: 0,
            misaligned_penalty: 8,
            amo_extra: 2,
            muldiv: MulDivParams::default(),
            mispredict_penalty: 3,
            bht_entries: 512,
            btb_entries: 32,
            ras_entries: 6,
            csr_penalty: 5,
            csr_latency: 3,
            trap_penalty: 5,
            mret_penalty: 5,
            fence_i_penalty: 5,
            fp_sfma_latency: 3,
            fp_dfma_latency: 4,
            fp_misc_latency: 2,
            fp_from_int_latency: 2,
            fp_to_int_latency: 3,
            fp_sdivsqrt_latency: 27,
            fp_ddivsqrt_latency: 56,
            fp_load_extra: 1,
        }
    }
}

/// Which memory system the nodes' timing follows (`[node] memory`, `--memory`):
/// docs/models/node.md "Write-backs, the L2's one path and refresh".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemorySystem {
    /// The L2, LLC and DRAM see reads only, DMA and refills have paths of their own, no
    /// refresh: the model every experiment was run with until 2026-12-03, kept to compare.
    Simple,
    /// The prototype's hardware in full: dirty write-backs, the L2's one response path and
    /// DDR3 refresh (the default, as `TimingParams::default()`).
    #[default]
    Prototype,
}

impl MemorySystem {
    pub const NAMES: [&'static str; 2] = ["simple", "prototype"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// `t` with this memory system's mechanisms on or off.
    pub fn apply(self, t: TimingParams) -> TimingParams {
        match self {
            MemorySystem::Simple => t.simple_memory(),
            MemorySystem::Prototype => t.prototype_memory(),
        }
    }
}

impl std::str::FromStr for MemorySystem {
    type Err = String;

    fn from_str(s: &str) -> Result<MemorySystem, String> {
        match Self::NAMES.iter().position(|n| *n == s) {
            Some(0) => Ok(MemorySystem::Simple),
            Some(_) => Ok(MemorySystem::Prototype),
            None => Err(format!("memory: '{s}' is not one of {}", Self::NAMES.join(", "))),
        }
    }
}

impl TimingParams {
    /// These timings with the prototype's memory system in full: dirty write-backs, the
    /// L2's one response path and DDR3 refresh (the default's).
    pub fn prototype_memory(self) -> TimingParams {
        self.with_memory_mechanisms(true)
    }

    /// These timings with the three mechanisms off: the L2, LLC and DRAM see reads only.
    pub fn simple_memory(self) -> TimingParams {
        self.with_memory_mechanisms(false)
    }

    fn with_memory_mechanisms(self, on: bool) -> TimingParams {
        let dram = Ddr3Params { refresh: on, ..self.dram };
        TimingParams { write_backs: on, l2_one_port: on, dram, ..self }
    }
}

/// Rocket's multiply/divide unit as the prototype's cores configure it (*rocket-chip*
/// `MulDivParams` in `rocket/Multiplier.scala`; the prototype's `LNICQuadRocketConfig` uses
/// `WithNBigCores`, whose values are these: l-nic/rocket-chip 33813784
/// `src/main/scala/subsystem/Configs.scala` lines 52-55). The divider retires one quotient
/// bit per cycle (`divUnroll` = 1, the default the prototype keeps; `muldiv/timing.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MulDivParams {
    /// Multiplier bits retired per cycle (`mulUnroll`). Default 8: 8 cycles for 64 bits.
    /// A power of two from 1 to 32 (at 64 Rocket builds a pipelined multiplier instead,
    /// not modelled).
    pub mul_unroll: u32,
    /// A multiplication ends once the multiplier's bits not yet retired are zero
    /// (`mulEarlyOut`). Default true.
    pub mul_early_out: bool,
    /// A division skips the quotient bits the operands' leading ones rule out
    /// (`divEarlyOut`). Default true.
    pub div_early_out: bool,
}

impl Default for MulDivParams {
    fn default() -> Self {
        MulDivParams { mul_unroll: 8, mul_early_out: true, div_early_out: true }
    }
}

impl MulDivParams {
    /// `Err` naming the field if the unit cannot be built so.
    pub fn check(&self) -> Result<(), String> {
        let u = self.mul_unroll;
        if !(u.is_power_of_two() && u <= 32) {
            return Err(format!(
                "TimingParams::muldiv.mul_unroll = {u}: must be a power of two from 1 to 32"
            ));
        }
        Ok(())
    }
}

/// FASED's DDR3 model as the prototype ran it (*FASED*, docs/models/node.md "Memory
/// system"). Timings count cycles of the clock FASED runs on, which in the prototype's
/// FireSim (1.10) is the target's own 3.2 GHz clock (`WithDefaultMemModel(clockDivision =
/// 1)`, the only division allowed), not the DDR3-2133 device clock the values come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ddr3Params {
    /// CAS latency, cycles. Default 14 (`+mm_dramTimings_tCAS=14`).
    pub t_cas: u64,
    /// Activate to CAS, cycles. Default 14 (`+mm_dramTimings_tRCD=14`).
    pub t_rcd: u64,
    /// Precharge to activate, cycles. Default 14 (`+mm_dramTimings_tRP=14`).
    pub t_rp: u64,
    /// Additive latency, cycles. Default 0 (`+mm_dramTimings_tAL=0`).
    pub t_al: u64,
    /// Cycles FASED adds to read data after the devices return it. Default 2
    /// (`+mm_backendLatency=2`).
    pub backend_latency: u64,
    /// Rows stay open after an access (open-page policy). Default true
    /// (`+mm_openPagePolicy=1`).
    pub open_page: bool,
    /// Ranks refresh (`t_refi`, `t_rfc`; `dram.rs`). The prototype's FASED did; default
    /// true, as `TimingParams::write_backs`.
    pub refresh: bool,
    /// Refresh interval, cycles: each rank refreshes every `t_refi + 1` cycles from reset
    /// (`DramCommon.scala` `RankStateTracker`). Default 7,800 (`+mm_dramTimings_tREFI=7800`);
    /// 0 turns refresh off, as in FASED.
    pub t_refi: u64,
    /// Refresh cycle time: a refreshing rank takes no activate for this many cycles after
    /// its REF. Default 160 (`+mm_dramTimings_tRFC=160`).
    pub t_rfc: u64,
    /// Bank = (address >> offset) & mask. Default 13 and 7 (`+mm_bankAddr_offset=13`,
    /// `+mm_bankAddr_mask=7`: 8 KiB rows, 8 banks).
    pub bank_offset: u32,
    pub bank_mask: u64,
    /// Rank = (address >> offset) & mask. Default 16 and 3 (`+mm_rankAddr_offset=16`,
    /// `+mm_rankAddr_mask=3`: 4 ranks).
    pub rank_offset: u32,
    pub rank_mask: u64,
    /// Row = (address >> offset) & mask. Default 18 and 65535 (`+mm_rowAddr_offset=18`,
    /// `+mm_rowAddr_mask=65535`).
    pub row_offset: u32,
    pub row_mask: u64,
}

impl Default for Ddr3Params {
    fn default() -> Self {
        Ddr3Params {
            t_cas: 14,
            t_rcd: 14,
            t_rp: 14,
            t_al: 0,
            backend_latency: 2,
            open_page: true,
            refresh: true,
            t_refi: 7_800,
            t_rfc: 160,
            bank_offset: 13,
            bank_mask: 7,
            rank_offset: 16,
            rank_mask: 3,
            row_offset: 18,
            row_mask: 65535,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{MemorySystem, TimingParams};

    #[test]
    fn memory_systems_parse_by_name_and_the_default_is_the_prototypes() {
        for m in [MemorySystem::Simple, MemorySystem::Prototype] {
            assert_eq!(m.name().parse::<MemorySystem>(), Ok(m));
        }
        let d = TimingParams::default();
        assert!(d.write_backs && d.l2_one_port && d.dram.refresh);
        assert_eq!(MemorySystem::default().apply(d.clone()), d);
        let t = MemorySystem::Simple.apply(d);
        assert!(!t.write_backs && !t.l2_one_port && !t.dram.refresh);
        assert_eq!(MemorySystem::Prototype.apply(t.clone()), TimingParams::default());
        let err = "full".parse::<MemorySystem>().unwrap_err();
        assert!(err.contains("'full'") && err.contains("simple, prototype"), "{err}");
    }
}
