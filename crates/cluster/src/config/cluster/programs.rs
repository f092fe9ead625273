//! `[[program]]`: which program runs on which nodes, with which ABI and NIC. A module of its own because
//! a program's keys are checked one entry at a time, against the node count alone.

use crate::config::bounds::OneOf;
use crate::config::check::TIME_NS;
use crate::config::NicKind;
use nanopu_riscv::AbiChoice;
use schemars::JsonSchema;
use serde::Deserialize;

/// Which register ABI a program uses.
pub const ABIS: OneOf = OneOf(&AbiChoice::NAMES);
/// A node's NIC.
pub const NICS: OneOf = OneOf(&NicKind::NAMES);
/// The NICs the harness's workloads (load, chain and Raft files) have builds for: ZeroNIC
/// runs the TCP programs only (docs/models/zeronic.md), the RDMA NIC programs of its own
/// (sw/apps/rdma_bulk.c).
pub const APP_NICS: OneOf = OneOf(&["nanopu", "icenic"]);

#[derive(Deserialize, JsonSchema, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ProgramFile {
    /// The nodes that run it: "all", "3" or "0-79", within the topology's nodes; no two
    /// entries share a node.
    pub nodes: String,
    /// The RISC-V ELF program, relative to the config file's directory.
    pub elf: String,
    /// Its arguments (argv[1..]). Default none.
    #[serde(default)]
    pub args: Vec<String>,
    /// x30/x31 as network registers: "auto" (default: yes if the program defines `__nanopu_abi`
    /// or uses the LNIC CSRs), "nanopu" or "plain".
    #[schemars(transform = ABIS.schema())]
    pub abi: Option<String>,
    /// The NIC of its nodes: "nanopu" (default; messages through x30/x31), "icenic",
    /// FireSim's DMA NIC of the traditional baseline, whose raw frames share the network,
    /// routed by destination IPv4 (sw/include/icenic.h; docs/models/icenic.md "Clusters"),
    /// "zeronic", payload placed in registered memory and headers to software
    /// (sw/include/zeronic.h; docs/models/zeronic.md), or "rdma", a NIC with the InfiniBand
    /// RC transport, whose RoCEv2 frames share the network likewise (sw/include/rdmanic.h;
    /// docs/models/rdma-nic.md).
    #[schemars(transform = NICS.schema())]
    pub nic: Option<String>,
    /// IceNIC nodes only: the one-way PCIe latency, ns, of the PCIe-attached variant
    /// (docs/models/icenic.md "PCIe-attached variant"). Default 0: IceNIC on chip.
    #[schemars(transform = TIME_NS.schema())]
    pub pcie_ns: Option<f64>,
    /// ZeroNIC nodes only: the IOMMU's translation time per DMA, ns. Default 10 (an
    /// estimate: an IOTLB hit; docs/models/zeronic.md "Parameters").
    #[schemars(transform = TIME_NS.schema())]
    pub zeronic_iommu_ns: Option<f64>,
    /// ZeroNIC nodes only: the rate of its DMA engines to and from memory, Gb/s, more than
    /// 0. Default 252 (PCIe 4.0 x16 per direction before TLP overheads: an estimate).
    pub zeronic_dma_gbps: Option<f64>,
    /// IceNIC nodes only: the depth of its four control queues, 1 to 255. Default 64, the
    /// nanoPU artifact's IceNIC SoC's; icenet's `NICConfig` has 10 (docs/models/icenic.md
    /// "Queue and buffer sizes"; programs built for another depth: `make -C sw
    /// EXTRA_CFLAGS=-DICENIC_QUEUE_DEPTH=N`).
    pub ice_queue_depth: Option<usize>,
    /// IceNIC nodes only: its receive packet buffer in 8-byte flits, from one longest
    /// frame's (190) to 1,048,576. Default 1,800, the nanoPU artifact's IceNIC SoC's; icenet's
    /// `NICConfig` has 379.
    pub ice_buffer_flits: Option<usize>,
    /// RDMA NIC nodes only: the local ACK timeout's exponent, 0 to 31: the timeout is
    /// 4.096 us x 2^exp (InfiniBand's Local ACK Timeout). Default 5 (131 us; drivers use
    /// 14 to 16; docs/models/rdma-nic.md "Parameters").
    pub rdma_ack_timeout_exp: Option<u32>,
    /// RDMA NIC nodes only: the retry count, 0 to 7: local ACK timeouts and NAK-sequence
    /// errors a QP retries without progress before it fails its work request. Default 7
    /// (docs/models/rdma-nic.md "Retry counting").
    pub rdma_retry_cnt: Option<u32>,
}

impl ProgramFile {
    /// `elf` with `args` on every node, every other key at its default.
    pub fn on_all(elf: String, args: Vec<String>) -> ProgramFile {
        ProgramFile {
            nodes: "all".into(),
            elf,
            args,
            abi: None,
            nic: None,
            pcie_ns: None,
            zeronic_iommu_ns: None,
            zeronic_dma_gbps: None,
            ice_queue_depth: None,
            ice_buffer_flits: None,
            rdma_ack_timeout_exp: None,
            rdma_retry_cnt: None,
        }
    }

    /// The `abi` key, checked ("program.abi: ..." when it names no ABI).
    pub fn abi_choice(&self) -> Result<AbiChoice, String> {
        let parse = |s| Ok(AbiChoice::parse(ABIS.check(s, "program.abi")?).expect("listed"));
        self.abi.as_deref().map_or(Ok(AbiChoice::Auto), parse)
    }

    /// The `nic` key, checked ("program.nic: ..." when it names no NIC).
    pub fn nic_kind(&self) -> Result<NicKind, String> {
        let parse = |s| Ok(NICS.check(s, "program.nic")?.parse().expect("listed"));
        self.nic.as_deref().map_or(Ok(Default::default()), parse)
    }

    /// The `pcie_ns` key, checked: a time, and only with `nic = "icenic"`.
    pub fn pcie(&self) -> Result<f64, String> {
        let ns = self.pcie_ns.unwrap_or(0.0);
        crate::config::check::time_ns(ns, "program.pcie_ns")?;
        if ns > 0.0 && !self.nic_kind()?.raw_frames() {
            return Err("program.pcie_ns: only IceNIC and ZeroNIC nodes have a PCIe-attached variant (add nic = \"icenic\"); the nanoPU NIC sits at the core's register file".into());
        }
        Ok(ns)
    }

    /// `base` (IceNIC's parameters of every node) with the `ice_*` keys applied and checked;
    /// the keys only with `nic = "icenic"`.
    pub fn ice_params(
        &self,
        base: &nanopu_nic::icenic::IceParams,
    ) -> Result<nanopu_nic::icenic::IceParams, String> {
        let given = self.ice_queue_depth.is_some() || self.ice_buffer_flits.is_some();
        if given && self.nic_kind()? != crate::config::NicKind::IceNic {
            return Err("program.ice_*: settings of IceNIC nodes (add nic = \"icenic\")".into());
        }
        let names = ["program.ice_queue_depth", "program.ice_buffer_flits"];
        base.with_sizes(self.ice_queue_depth, self.ice_buffer_flits, names)
    }

    /// ZeroNIC's parameters with the `zeronic_*` keys applied (`clock_hz` turns ns into
    /// cycles); the keys only with `nic = "zeronic"`.
    pub fn zero_params(&self, clock_hz: u64) -> Result<nanopu_nic::zeronic::ZeroParams, String> {
        let mut p = nanopu_nic::zeronic::ZeroParams::default();
        let given = self.zeronic_iommu_ns.is_some() || self.zeronic_dma_gbps.is_some();
        if given && self.nic_kind()? != crate::config::NicKind::Zeronic {
            return Err("program.zeronic_*: settings of ZeroNIC nodes (add nic = \"zeronic\")".into());
        }
        if let Some(ns) = self.zeronic_iommu_ns {
            crate::config::check::time_ns(ns, "program.zeronic_iommu_ns")?;
            p.iommu_cycles = (ns * clock_hz as f64 / 1e9).round() as u64;
        }
        if let Some(g) = self.zeronic_dma_gbps {
            if !(g > 0.0 && g.is_finite()) {
                return Err(format!("program.zeronic_dma_gbps: {g} is not a rate above 0 Gb/s"));
            }
            p.dma_bytes_per_cycle = g * 1e9 / 8.0 / clock_hz as f64;
        }
        Ok(p)
    }

    /// `base` (the RDMA NIC's parameters of every node) with the `rdma_*` keys applied and
    /// checked; the keys only with `nic = "rdma"`.
    pub fn rdma_params(
        &self,
        base: &nanopu_nic::rdma::RdmaParams,
    ) -> Result<nanopu_nic::rdma::RdmaParams, String> {
        let given = self.rdma_ack_timeout_exp.is_some() || self.rdma_retry_cnt.is_some();
        if given && self.nic_kind()? != crate::config::NicKind::Rdma {
            return Err("program.rdma_*: settings of RDMA NIC nodes (add nic = \"rdma\")".into());
        }
        let mut p = base.clone();
        p.ack_timeout_exp = self.rdma_ack_timeout_exp.unwrap_or(p.ack_timeout_exp);
        p.retry_cnt = self.rdma_retry_cnt.unwrap_or(p.retry_cnt);
        p.validate().map_err(|e| format!("program.{}", e.replacen("rdma.", "rdma_", 1)))?;
        Ok(p)
    }
}

/// Nodes named by a `[[program]].nodes` value: "all", "N" or "A-B" (inclusive).
pub fn parse_nodes(spec: &str, total: u32) -> Result<std::ops::Range<u32>, String> {
    let bad = || format!("program.nodes: \"{spec}\" is not \"all\", \"N\" or \"A-B\" within 0..{total}");
    let r = match spec.trim() {
        "all" => 0..total,
        s => match s.split_once('-') {
            Some((a, b)) => {
                let num = |x: &str| x.trim().parse::<u32>().map_err(|_| bad());
                let r = ordered_range(num(a)?, num(b)?, s).map_err(|e| format!("program.nodes: {e}"))?;
                *r.start()..r.end().checked_add(1).ok_or_else(bad)?
            }
            None => {
                let n = s.parse::<u32>().map_err(|_| bad())?;
                n..n.checked_add(1).ok_or_else(bad)?
            }
        },
    };
    if r.start >= r.end || r.end > total {
        return Err(bad());
    }
    Ok(r)
}

/// The nodes `a` to `b` of a range written `text` ("A-B", inclusive): `a <= b`, else an error
/// naming `text` (a reversed range names no node, which no one means).
pub fn ordered_range(a: u32, b: u32, text: &str) -> Result<std::ops::RangeInclusive<u32>, String> {
    match a <= b {
        true => Ok(a..=b),
        false => Err(format!("\"{text}\" is a reversed range (A-B needs A <= B)")),
    }
}

/// No two `[[program]]` entries share a node (each node runs exactly one program): the
/// first two that do are named.
pub(super) fn check_disjoint(programs: &[ProgramFile], total: u32) -> Result<(), String> {
    let ranges: Result<Vec<_>, String> =
        programs.iter().map(|p| Ok((parse_nodes(&p.nodes, total)?, p.nodes.as_str()))).collect();
    let mut ranges = ranges?;
    ranges.sort_by_key(|(r, _)| r.start); // a range meets a later one only if it meets the next
    match ranges.windows(2).find(|w| w[1].0.start < w[0].0.end) {
        Some(w) => Err(format!(
            "program.nodes: \"{}\" and \"{}\" overlap; each node runs exactly one program",
            w[0].1, w[1].1
        )),
        None => Ok(()),
    }
}
