//! Run configuration of a single node with a test host on its port, and the range checks
//! every configuration key goes through ([`check`]).

pub mod bounds;
pub mod cluster;
pub mod keys;
pub mod nic;

use nanopu_nic::NicParams;
use nanopu_riscv::{AbiChoice, Engine, MemParams, TimingParams};

/// The link between the node's port and the test host.
#[derive(Clone, Debug, PartialEq)]
pub struct PortParams {
    /// Link rate, bits per second. Default 200 Gb/s (docs/platform.md section 4).
    pub rate_bps: u64,
    /// Propagation delay, femtoseconds. Default 0: the test host is attached directly,
    /// as in the prototype's loopback measurements.
    pub propagation_fs: u64,
    /// Ethernet MAC and serial I/O latency added in each direction at the node, femtoseconds.
    /// Default 0 ("without MAC"); the prototype measured about 26 ns each way (docs/platform.md section 3).
    pub mac_fs: u64,
    /// Payload bytes per packet. Default 1,024 (docs/platform.md section 3).
    pub segment_bytes: u32,
    /// Header bytes per packet: Ethernet 14 + IPv4 20 + transport 30 (docs/platform.md section 3).
    pub header_bytes: u32,
}

impl Default for PortParams {
    fn default() -> Self {
        PortParams {
            rate_bps: 200_000_000_000,
            propagation_fs: 0,
            mac_fs: 0,
            segment_bytes: 1024,
            header_bytes: 64,
        }
    }
}

impl PortParams {
    /// Serialization of a message of `len` bytes on this link: `ceil(len / segment)`
    /// packets of header + segment.
    pub fn wire_time(&self, len: u32) -> nanopu_sim::Time {
        let packets = u64::from(len).div_ceil(u64::from(self.segment_bytes)).max(1);
        nanopu_sim::time::serialization(
            packets * u64::from(self.header_bytes) + u64::from(len),
            self.rate_bps,
        )
    }
}

/// What a core's exit ends. Ours: each hart exits on its own, and a node is done when all
/// have (our runtime's programs exit from every core). The nanoPU prototype's: the first
/// exit ends the node, as its host (FireSim's fesvr) ended the simulation at the first exit
/// written to `tohost`; its runtime parks cores 1.. in an endless loop and exits from core 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExitMode {
    /// `Node` for programs not built with our runtime (the prototype's and other plain
    /// RISC-V programs, whose other harts park), `Hart` for ours (`__nanopu_runtime`).
    #[default]
    Auto,
    Hart,
    Node,
}

impl ExitMode {
    /// Its names, as `--exit` and `[node] exit` write them, in `ALL`'s order.
    pub const NAMES: [&'static str; 3] = ["auto", "hart", "node"];
    const ALL: [ExitMode; 3] = [ExitMode::Auto, ExitMode::Hart, ExitMode::Node];

    pub fn parse(s: &str) -> Result<ExitMode, String> {
        let i = bounds::OneOf(&Self::NAMES).position(s, "exit")?;
        Ok(Self::ALL[i])
    }

    /// Does the first exit end the node, for a node running `p`?
    pub fn first_exit_ends_node(self, p: &nanopu_riscv::Program) -> bool {
        match self {
            ExitMode::Auto => !p.built_with_our_runtime(),
            ExitMode::Hart => false,
            ExitMode::Node => true,
        }
    }
}

/// Everything needed to simulate one node running one program.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    pub nic: NicParams,
    /// Which NIC the node has: the nanoPU's (default) or IceNIC, the DMA NIC of the
    /// traditional baseline (`--nic`, `[node] nic`; docs/models/icenic.md).
    pub nic_kind: NicKind,
    /// IceNIC's parameters (used when `nic_kind` is IceNIC, and for ZeroNIC's control queue).
    pub ice: nanopu_nic::icenic::IceParams,
    /// ZeroNIC's parameters (used when `nic_kind` is ZeroNIC; docs/models/zeronic.md).
    pub zero: nanopu_nic::zeronic::ZeroParams,
    /// The RDMA NIC's parameters (used when `nic_kind` is Rdma; a cluster sets its link
    /// rate from `[link] rate_gbps`).
    pub rdma: nanopu_nic::rdma::RdmaParams,
    /// One-way PCIe latency of an IceNIC node's NIC, ns: 0 (default) is the on-chip IceNIC,
    /// more the PCIe-attached variant (`--pcie-ns`; docs/models/icenic.md "PCIe-attached
    /// variant"). Refused on a nanoPU NIC.
    pub pcie_ns: f64,
    pub timing: TimingParams,
    pub mem: MemParams,
    pub port: PortParams,
    /// User arguments appended to the prototype's `program MAC IP` argv.
    pub args: Vec<String>,
    /// Name passed as `argv[0]`.
    pub program_name: String,
    /// Whether x30/x31 are the network registers: decided from the program unless set
    /// (`nanopu_riscv::abi`; `--abi`).
    pub abi: AbiChoice,
    /// Which exit ends what (`ExitMode`; `--exit`, `[node] exit`).
    pub exit: ExitMode,
    /// Stop with an error once simulated time passes this many core cycles; at most
    /// [`check::max_cycles`] (two hours of simulated time).
    pub max_cycles: u64,
    /// Print progress to stderr on long runs.
    pub progress: bool,
    /// Which engine executes the cores' instructions: `fast` (default), `interp` (the
    /// reference) or `jit`; the simulated results are the same (`--engine`, `[node] engine`;
    /// docs/profile.md "Core engines").
    pub engine: Engine,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            nic: NicParams::default(),
            nic_kind: NicKind::Nanopu,
            ice: Default::default(),
            zero: Default::default(),
            rdma: Default::default(),
            pcie_ns: 0.0,
            timing: TimingParams::default(),
            mem: MemParams::default(),
            port: PortParams::default(),
            args: Vec::new(),
            program_name: "program".into(),
            abi: AbiChoice::Auto,
            exit: ExitMode::Auto,
            max_cycles: 100_000_000,
            progress: false,
            engine: Engine::default(),
        }
    }
}

/// The NIC of a node; its names are "nanopu", "icenic" and "rdma" wherever it is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NicKind {
    /// The nanoPU NIC: messages through x30/x31 (docs/platform.md).
    #[default]
    Nanopu,
    /// FireSim's IceNIC: DMA through memory, memory-mapped registers
    /// (docs/models/icenic.md).
    IceNic,
    /// ZeroNIC: payload placed zero-copy into registered memory, headers to software
    /// through an IceNIC-like control queue (docs/models/zeronic.md).
    Zeronic,
    /// An RDMA NIC: the InfiniBand reliable-connection transport in hardware, queue pairs
    /// and work requests through memory-mapped registers, zero-copy DMA
    /// (docs/models/rdma-nic.md).
    Rdma,
}

impl std::str::FromStr for NicKind {
    type Err = String;
    fn from_str(s: &str) -> Result<NicKind, String> {
        match NicKind::NAMES.iter().position(|n| *n == s) {
            Some(i) => Ok(NicKind::ALL[i]),
            None => Err(format!("\"{s}\" is not {}", bounds::OneOf(&NicKind::NAMES).listed())),
        }
    }
}

impl NicKind {
    /// Its names, as files, flags and keywords write them, in `ALL`'s order.
    pub const NAMES: [&'static str; 4] = ["nanopu", "icenic", "zeronic", "rdma"];
    const ALL: [NicKind; 4] = [NicKind::Nanopu, NicKind::IceNic, NicKind::Zeronic, NicKind::Rdma];

    pub fn name(self) -> &'static str {
        NicKind::NAMES[NicKind::ALL.iter().position(|k| *k == self).expect("listed")]
    }

    /// Does the node take raw frames through IceNIC's registers (IceNIC, or ZeroNIC's
    /// control queue)?
    pub fn raw_frames(self) -> bool {
        matches!(self, NicKind::IceNic | NicKind::Zeronic)
    }
}

impl NodeConfig {
    /// `pcie_ns` in node clock cycles, rounded to the nearest.
    pub fn pcie_cycles(&self) -> u64 {
        (self.pcie_ns * self.timing.clock_hz as f64 / 1e9).round() as u64
    }

    /// Check every field; the error names the one at fault.
    pub fn validate(&self) -> Result<(), String> {
        self.nic.validate()?;
        self.nic.check_message_fits("nic.max_msg_bytes", "nic.tx_queue_bytes")?;
        check::time_ns(self.pcie_ns, "pcie_ns")?;
        if self.pcie_ns > 0.0 && !self.nic_kind.raw_frames() {
            return Err("pcie_ns: only an IceNIC node has a PCIe-attached variant (--nic icenic); the nanoPU NIC sits at the core's register file".into());
        }
        if self.port.rate_bps == 0 {
            return Err("port.rate_bps: must be positive".into());
        }
        if self.port.segment_bytes == 0 {
            return Err("port.segment_bytes: must be positive".into());
        }
        check::cycle_limit(self.max_cycles, "max_cycles", self.timing.clock_hz).map(|_| ())
    }
}

/// Range checks of configuration values; each error names the key, the value and the limit.
pub mod check {
    use super::bounds::Bounds;
    use nanopu_sim::time::show;
    use nanopu_sim::{Clock, Time};
    use schemars::transform::Transform;
    use schemars::Schema;

    /// Longest simulated time one time-valued key may give: 1 hour. `Time` holds about
    /// 5.1 h (u64 femtoseconds, crates/sim/src/time.rs); the simulator schedules things at
    /// most one configured delay past the time limit (itself a key), so with every key at
    /// most 1 h no sum of times leaves the range.
    pub const MAX_KEY_US: f64 = 3.6e9;

    /// A time key in microseconds: 0 to one hour.
    pub const TIME_US: Bounds<f64> = Bounds::closed(0.0, MAX_KEY_US);
    /// A time key in nanoseconds: 0 to one hour.
    pub const TIME_NS: Bounds<f64> = Bounds::closed(0.0, MAX_KEY_US * 1e3);
    /// A time limit in microseconds (`max_us`): more than 0, at most one hour.
    pub const LIMIT_US: Bounds<f64> = Bounds::above(0.0, MAX_KEY_US);
    /// A loss probability: a link that loses everything is a link fault (`down_at_us`).
    pub const LOSS: Bounds<f64> = Bounds::below(0.0, 1.0);
    /// A fraction, a share or a probability that may be 1.
    pub const FRACTION: Bounds<f64> = Bounds::closed(0.0, 1.0);

    /// A time key in microseconds: not NaN, negative, infinite or above an hour ([`TIME_US`]).
    pub fn time_us(v: f64, key: &str) -> Result<Time, String> {
        at_most_an_hour(v, TIME_US.max, "us", key)?;
        Time::checked_from_us_f64(v, key)
    }

    /// A time key in nanoseconds, as [`time_us`] ([`TIME_NS`]).
    pub fn time_ns(v: f64, key: &str) -> Result<Time, String> {
        at_most_an_hour(v, TIME_NS.max, "ns", key)?;
        Time::checked_from_ns_f64(v, key)
    }

    /// `v` is at most `hour` (an hour in its unit); NaN and negative values are left to
    /// `Time`'s checked conversions, which refuse them.
    fn at_most_an_hour(v: f64, hour: f64, unit: &str, key: &str) -> Result<(), String> {
        if v > hour {
            return Err(format!(
                "{key}: {} {unit} is more than the limit of one hour ({hour:e} {unit})",
                show(v)
            ));
        }
        Ok(())
    }

    /// Core cycles in one hour at `clock_hz`: the most a cycle-count key may give.
    pub fn max_key_cycles(clock_hz: u64) -> u64 {
        (MAX_KEY_US as u64) * (clock_hz / 1_000_000)
    }

    /// The clock of the nodes that files describe (3.2 GHz: files cannot set it), Hz.
    pub fn files_clock_hz() -> u64 {
        nanopu_riscv::TimingParams::default().clock_hz
    }

    /// A cycle-count key's range at `clock_hz`: 0 to one hour of cycles.
    pub fn cycle_key(clock_hz: u64) -> Bounds<u64> {
        Bounds::closed(0, max_key_cycles(clock_hz))
    }

    /// A cycle-count key's schema: [`cycle_key`] at the files' clock.
    pub fn cycle_key_schema(s: &mut Schema) {
        cycle_key(files_clock_hz()).transform(s)
    }

    /// The most cycles a run's limit may be: two hours, the time limit (one hour at most
    /// from a file) plus one delay key, still well inside `Time`.
    pub fn max_cycles(clock_hz: u64) -> u64 {
        2 * max_key_cycles(clock_hz)
    }

    /// A run's cycle limit (`--max-cycles`, a node's `max_cycles`): 1 to [`max_cycles`].
    pub fn cycle_limit(v: u64, key: &str, clock_hz: u64) -> Result<u64, String> {
        let max = max_cycles(clock_hz);
        if v == 0 || v > max {
            return Err(format!("{key}: {v} is not within 1..={max} (two hours of cycles)"));
        }
        Ok(v)
    }

    /// A cycle-count key: at most one hour of cycles ([`cycle_key`]).
    pub fn cycles(v: u64, key: &str, clock_hz: u64) -> Result<u64, String> {
        let max = cycle_key(clock_hz).max;
        if v > max {
            return Err(format!("{key}: {v} cycles is more than the limit of {max} (one hour)"));
        }
        Ok(v)
    }

    /// Shortest period of the timer-driven scheduler baseline, cycles: the 160-cycle context
    /// switch (docs/models/node.md); a shorter period would leave the cores only switching.
    pub const MIN_TIMER_CYCLES: u64 = 160;

    /// [`MIN_TIMER_CYCLES`] at `clock_hz`, us: the shortest period but 0.
    pub fn min_timer_us(clock_hz: u64) -> f64 {
        MIN_TIMER_CYCLES as f64 / (clock_hz as f64 / 1e6)
    }

    /// The scheduler period's schema: 0, or [`min_timer_us`] at the files' clock to an hour.
    pub fn sched_timer_schema(s: &mut Schema) {
        TIME_US.schema().transform(s);
        let gap =
            serde_json::json!({"exclusiveMinimum": 0.0, "exclusiveMaximum": min_timer_us(files_clock_hz())});
        s.insert("not".into(), gap);
    }

    /// The timer-driven scheduler's period from `us` (0: the NIC-driven scheduler), cycles
    /// of `clock_hz`, rounded to the nearest; at least [`min_timer_us`] unless 0.
    pub fn sched_timer_cycles(us: f64, key: &str, clock_hz: u64) -> Result<u64, String> {
        let t = time_us(us, key)?;
        let period = Clock::from_hz(clock_hz)?.period().as_fs();
        let cycles = (t.as_fs() + period / 2) / period;
        if us == 0.0 || (us >= min_timer_us(clock_hz) && cycles >= MIN_TIMER_CYCLES) {
            return Ok(cycles);
        }
        Err(format!(
            "{key}: {} us is shorter than a context switch ({MIN_TIMER_CYCLES} cycles, \
             docs/models/node.md), so the cores would only ever switch; 0 selects the \
             NIC-driven scheduler",
            show(us)
        ))
    }

    /// A run's cycle limit from `us` (rounded up): at least one cycle, at most one hour.
    pub fn limit_cycles(us: f64, key: &str, clock_hz: u64) -> Result<u64, String> {
        let cycles = Clock::from_hz(clock_hz)?.cycle_ceil(time_us(us, key)?);
        if cycles == 0 {
            return Err(format!("{key}: must be positive (it is {} us)", show(us)));
        }
        Ok(cycles)
    }

    /// A loss probability: `0 <= p < 1` ([`LOSS`]). NaN is refused.
    pub fn loss(p: f64, key: &str) -> Result<f64, String> {
        if !LOSS.contains(p) {
            return Err(format!("{key}: {p} is not a loss probability in [0, 1)"));
        }
        Ok(p)
    }

    /// A fraction: `0 <= f <= 1` ([`FRACTION`]). NaN is refused.
    pub fn fraction(f: f64, key: &str) -> Result<f64, String> {
        if !FRACTION.contains(f) {
            return Err(format!("{key}: {f} is not a fraction in [0, 1]"));
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::check::*;
    use super::*;
    use nanopu_sim::Time;

    #[test]
    fn time_keys_are_checked_and_named() {
        assert_eq!(time_us(20.0, "k"), Ok(Time::from_us(20)));
        assert_eq!(time_us(3.6e9, "k"), Ok(Time::from_us(3_600_000_000)));
        for v in [-5.0, f64::NAN, f64::INFINITY, 3.7e9, 1e30] {
            let e = time_us(v, "faults.down_at_us").unwrap_err();
            assert!(e.starts_with("faults.down_at_us: "), "{e}");
        }
        assert!(time_ns(3.7e12, "link.propagation_ns").unwrap_err().contains("one hour"));
    }

    #[test]
    fn cycles_and_probabilities() {
        assert_eq!(max_key_cycles(3_200_000_000), 11_520_000_000_000);
        assert!(cycles(u64::MAX, "node.msg_cycles", 3_200_000_000).unwrap_err().contains("node.msg_cycles"));
        assert!(loss(1.0, "link.drop_prob").is_err() && loss(f64::NAN, "x").is_err());
        assert!(fraction(1.0, "f").is_ok() && fraction(-0.1, "f").is_err());
        assert!(crate::config::cluster::CORES.check(0, "node.cores", "").unwrap_err().contains("1..=64"));
    }

    #[test]
    fn timer_and_limit_cycles() {
        let hz = 3_200_000_000;
        assert_eq!(sched_timer_cycles(5.0, "t", hz), Ok(16_000));
        assert_eq!(sched_timer_cycles(0.0, "t", hz), Ok(0));
        assert_eq!(sched_timer_cycles(0.05, "t", hz), Ok(160));
        assert!(sched_timer_cycles(1e-9, "node.sched_timer_us", hz).unwrap_err().contains("context switch"));
        assert!(sched_timer_cycles(1e-12, "t", hz).is_err(), "rounds to 0 fs, not to the NIC-driven 0");
        assert_eq!(limit_cycles(1000.0, "max_us", hz), Ok(3_200_000));
        assert!(limit_cycles(0.0, "max_us", hz).unwrap_err().starts_with("max_us: must be positive"));
        assert!(limit_cycles(-1.0, "max_us", hz).unwrap_err().starts_with("max_us: "));
    }

    #[test]
    fn node_config_limits() {
        let mut c = NodeConfig::default();
        assert!(c.validate().is_ok());
        c.max_cycles = u64::MAX / 2; // the load generator's old limit overflowed `Time`
        assert!(c.validate().unwrap_err().starts_with("max_cycles: "));
        c.max_cycles = 1000;
        c.nic.max_msg_bytes = 16_384;
        let e = c.validate().unwrap_err();
        assert!(e.contains("nic.max_msg_bytes") && e.contains("nic.tx_queue_bytes"), "{e}");
        c.nic.tx_queue_bytes = NicParams::tx_queue_bytes_for(16_384);
        assert!(c.validate().is_ok());
    }
}
