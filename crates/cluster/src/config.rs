//! Run configuration of a single node with a test host on its port.

use nanopu_nic::NicParams;
use nanopu_riscv::{MemParams, TimingParams};

/// The link between the node's port and the test host.
#[derive(Clone, Debug, PartialEq)]
pub struct PortParams {
    /// Link rate, bits per second. Default 200 Gb/s (SPEC section 4).
    pub rate_bps: u64,
    /// Propagation delay, femtoseconds. Default 0: the test host is attached directly,
    /// as in the prototype's loopback measurements.
    pub propagation_fs: u64,
    /// Ethernet MAC and serial I/O latency added in each direction at the node, femtoseconds.
    /// Default 0 ("without MAC"); the prototype measured about 26 ns each way (SPEC 3).
    pub mac_fs: u64,
    /// Payload bytes per packet. Default 1,024 (SPEC section 3).
    pub segment_bytes: u32,
    /// Header bytes per packet: Ethernet 14 + IPv4 20 + transport 30 (SPEC section 3).
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

/// Everything needed to simulate one node running one program.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    pub nic: NicParams,
    pub timing: TimingParams,
    pub mem: MemParams,
    pub port: PortParams,
    /// User arguments appended to the prototype's `program MAC IP` argv.
    pub args: Vec<String>,
    /// Name passed as argv[0].
    pub program_name: String,
    /// Stop with an error once simulated time passes this many core cycles.
    pub max_cycles: u64,
    /// Print progress to stderr on long runs.
    pub progress: bool,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            nic: NicParams::default(),
            timing: TimingParams::default(),
            mem: MemParams::default(),
            port: PortParams::default(),
            args: Vec::new(),
            program_name: "program".into(),
            max_cycles: 100_000_000,
            progress: false,
        }
    }
}

impl NodeConfig {
    /// Check every field; the error names the one at fault.
    pub fn validate(&self) -> Result<(), String> {
        self.nic.validate()?;
        if self.port.rate_bps == 0 {
            return Err("port.rate_bps: must be positive".into());
        }
        if self.port.segment_bytes == 0 {
            return Err("port.segment_bytes: must be positive".into());
        }
        if self.max_cycles == 0 {
            return Err("max_cycles: must be positive".into());
        }
        Ok(())
    }
}
