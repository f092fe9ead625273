//! `nanopu run`: one node with the test host on its port, N nodes on one switch
//! (`--nodes`), or a cluster configuration file. A flag that does not apply to the kind of
//! run asked for is an error that says why, never silently ignored.

use clap::Args;
use nanopu_cluster::config::check;
use nanopu_cluster::config::cluster::NodeFile;
use nanopu_cluster::config::keys::Given;
use nanopu_cluster::config::nic::NicSection;
use nanopu_cluster::config::ExitMode;
use nanopu_cluster::report::summarize;
use nanopu_cluster::NodeConfig;
use nanopu_cluster::Outcome;
use nanopu_cluster::SimError;
use nanopu_cluster::Simulation;
use nanopu_riscv::AbiChoice;
use nanopu_riscv::MemorySystem;
use nanopu_sim::Time;
use std::path::PathBuf;
use std::process::ExitCode;

/// Defaults of the node flags, shown in `--help` and used when a flag is absent.
const DEFAULT_CORES: usize = 4;
const DEFAULT_MAX_CYCLES: u64 = 100_000_000;

#[derive(Args, serde::Serialize, serde::Deserialize)]
#[command(allow_negative_numbers = true)] // "-1" reaches the flag's check, which names it
pub struct RunArgs {
    /// RISC-V ELF to run on every core of one node (RV64IMAC, lp64), or a cluster
    /// configuration (.toml) naming topology, programs and parameters.
    pub program: PathBuf,
    /// Nodes: more than one puts them on one switch, every core running the program, the
    /// other parameters at a cluster configuration's defaults [default: 1].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    nodes: Option<u32>,
    /// Cores per node [default: 4].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=64))]
    cores: Option<u64>,
    /// Stop after this many simulated core cycles (3.2 GHz), reporting what was measured,
    /// marked incomplete, with exit status 2; 1 to 23,040,000,000,000 (two hours)
    /// [default: 100000000].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    max_cycles: Option<u64>,
    /// Ethernet MAC and serial I/O latency at the node's port, each way, in ns (single node:
    /// the test host's link) [default: 0].
    #[arg(long)]
    mac_ns: Option<f64>,
    /// Whether x30/x31 are the network registers: auto (yes if the program defines
    /// __nanopu_abi or accesses the LNIC CSRs, as the prototype's programs do), nanopu, plain
    /// [default: auto].
    #[arg(long, value_parser = ["auto", "nanopu", "plain"])]
    abi: Option<String>,
    /// Single node: end the run at this simulated time, us, as planned (outcome
    /// "deadline", complete): for servers that never exit. Exit status 0 unless a core
    /// exited with an error code.
    #[arg(long)]
    until_us: Option<f64>,
    /// Single node: the test host takes every message the node sends, whatever its
    /// destination address, as the prototype's tester sniffs the node's port
    /// (docs/compat.md); without it, a message addressed to neither the node nor 10.0.0.1 is
    /// dropped and reported.
    #[arg(long)]
    host_sniffs: bool,
    /// What a core's exit ends: hart (each core exits on its own), node (the first exit ends
    /// the node, as on the prototype), auto (node unless the program was built with our
    /// runtime, which defines __nanopu_abi) [default: auto].
    #[arg(long, value_parser = ["auto", "hart", "node"])]
    exit: Option<String>,
    /// The NIC's settings (docs/config.md's `[node]` keys of the same names).
    #[command(flatten)]
    #[serde(flatten)]
    nic_settings: NicSection,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Cluster runs: write every packet seen at `--pcap-at` to this file: pcapng if its
    /// name ends in .pcapng (the capture point as a named interface, each packet inbound or
    /// outbound), else the classic pcap.
    #[arg(long)]
    pcap: Option<PathBuf>,
    /// Cluster runs: write one CSV line per message delivery (source, destination, size,
    /// send and delivery time) to this file.
    #[arg(long)]
    messages: Option<PathBuf>,
    /// Cluster runs: write per-port statistics (packets, bytes, largest queue) as CSV.
    #[arg(long)]
    port_stats: Option<PathBuf>,
    /// Cluster runs: write a Perfetto trace: a track per core named by node and core, and a
    /// counter of the messages in flight (docs/sort-harness.md describes the format).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// With --trace: also a flow arrow per message delivery, from the source context's
    /// core to the destination context's (about 240 bytes per message).
    #[arg(long, requires = "trace")]
    trace_messages: bool,
    /// Cluster runs: where `--pcap` captures: a node ("node:N", what it sends and receives)
    /// or a switch port ("switch:S:P", what leaves and enters it) [default: node:0].
    #[arg(long)]
    pcap_at: Option<String>,
    /// Show progress on stderr.
    #[arg(long)]
    progress: bool,
    /// Which engine executes the cores' instructions: interp (the reference interpreter),
    /// fast (runs through a code page's lines, the integer ALU in host registers) or jit
    /// (fast, with hot code translated to host code by Cranelift); the simulated results
    /// are the same, only the host time differs (docs/profile.md "Core engines") [default:
    /// fast].
    #[arg(long, value_parser = nanopu_riscv::Engine::NAMES)]
    engine: Option<String>,
    /// The memory system the cores' timing follows: prototype (its dirty write-backs, the
    /// L2's one response path, DDR3 refresh; docs/models/node.md "Write-backs, the L2's one
    /// path and refresh") or simple (reads only, no refresh: the model before 2026-12-03)
    /// [default: prototype].
    #[arg(long, value_parser = nanopu_riscv::MemorySystem::NAMES)]
    memory: Option<String>,
    /// Host threads of a leaf-spine cluster run (default: NANOPU_THREADS, else every host
    /// core); the results are the same whatever the number.
    #[arg(long, value_parser = positive_threads)]
    threads: Option<usize>,
    /// Have the test host (10.0.0.1) send a message:
    /// `AT_NS:CONTEXT[/SRC_CONTEXT]:WORD[,WORD...][@NODE]` (words in decimal or 0x-hex; the
    /// message comes from the host's context SRC_CONTEXT, 0 if not given, and goes to node
    /// NODE, 0 if not given; repeatable). On one node the host sits on the node's port, in
    /// a cluster on switch 0. What reaches the host is listed in the summary.
    #[arg(
        long = "send",
        value_name = "AT_NS:CONTEXT[/SRC_CONTEXT]:WORDS[@NODE]",
        allow_hyphen_values = true
    )]
    sends: Vec<String>,
    /// Cluster runs: node NODE crashes at US microseconds: its cores, NIC and transport stop,
    /// what reaches it is lost (docs/faults.md; repeatable).
    #[arg(long = "crash", value_name = "NODE@US")]
    crashes: Vec<String>,
    /// Cluster runs: the nodes listed (N, A-B, and "host" for the test host, comma-separated)
    /// are cut off from every other node from FROM to TO microseconds, e.g. 0,1@20-80
    /// (docs/faults.md; repeatable).
    #[arg(long = "partition", value_name = "NODES@FROM-TO")]
    partitions: Vec<String>,
    /// The node's NIC: nanopu (messages through x30/x31), or icenic, FireSim's DMA NIC of
    /// the traditional baseline (memory-mapped registers, sw/include/icenic.h;
    /// docs/models/icenic.md), or zeronic, payload placed in registered memory and headers
    /// to a control queue (sw/include/zeronic.h; docs/models/zeronic.md) [default: nanopu].
    #[arg(long, value_parser = ["nanopu", "icenic", "zeronic"])]
    nic: Option<String>,
    /// One-way PCIe latency of the IceNIC, ns: the PCIe-attached variant of the DMA NIC
    /// (a commodity NIC), added to each DMA transaction and register access; with --nic
    /// icenic only (docs/models/icenic.md "PCIe-attached variant") [default: 0, on chip].
    #[arg(long)]
    pcie_ns: Option<f64>,
    /// IceNIC node: depth of its four control queues, 1 to 255 (`ctrlQueueDepth`)
    /// [default: 64, the nanoPU artifact's IceNIC SoC; icenet's NICConfig has 10,
    /// docs/models/icenic.md "Queue and buffer sizes"]. Programs built for another depth:
    /// `make -C sw EXTRA_CFLAGS=-DICENIC_QUEUE_DEPTH=N`.
    #[arg(long)]
    ice_queue_depth: Option<usize>,
    /// IceNIC node: its receive packet buffer in 8-byte flits, from one longest frame's
    /// (190) to 1,048,576 (`inBufFlits`) [default: 1,800, the nanoPU artifact's IceNIC
    /// SoC; icenet's NICConfig has 379].
    #[arg(long)]
    ice_buffer_flits: Option<usize>,
    /// IceNIC node: its send path's rate limiter as INC/PERIOD/SIZE, INC tokens every
    /// PERIOD + 1 cycles, at most SIZE held, a flit per token (icenet `RateLimiter`)
    /// [default: 1/0/1, a flit every cycle]. The nanoPU artifact's Verilator harness sets
    /// 1/1/8, half that (docs/models/icenic.md "Send path").
    #[arg(long, value_name = "INC/PERIOD/SIZE")]
    ice_rate_limit: Option<String>,
    /// IceNIC node: have the test host send it a UDP frame of BYTES bytes in all (42 to
    /// 1,516; payload bytes 0, 1, 2...) at AT_NS, from 10.0.0.1 port 7000 to port 9000;
    /// or, as `AT_NS:0xHEX`, the frame whose bytes HEX spells (Ethernet header first, as the
    /// summary's `host_frames` print them; routed by its IPv4 destination); repeatable. The
    /// frames that come back are listed in the summary.
    #[arg(long = "send-frame", value_name = "AT_NS:BYTES|AT_NS:0xHEX", allow_hyphen_values = true)]
    send_frames: Vec<String>,
    /// Arguments for the program (after `--`); they follow `program MAC IP` in argv.
    #[arg(last = true)]
    args: Vec<String>,
}

pub fn main(a: RunArgs) -> Result<ExitCode, String> {
    if a.program.extension().is_some_and(|e| e == "toml") {
        refuse(&a.node_flags(), "a cluster configuration file")?;
        refuse(&a.single_flags(), "a cluster configuration file")?;
        let run = a.run_flags()?;
        return crate::cluster::main(&a.program, run, a.outputs()?);
    }
    if a.nodes.unwrap_or(1) > 1 {
        refuse(
            &[("--mac-ns", a.mac_ns.is_some())],
            "--nodes: a cluster's links are set by the defaults of [link]",
        )?;
        refuse(&a.single_flags(), "--nodes")?;
        a.check_nic()?;
        let hz = NodeConfig::default().timing.clock_hz;
        check::cycle_limit(a.max_cycles(), "--max-cycles", hz)?;
        a.nic_settings.check(Given::Flags, hz)?;
        let star = crate::cluster::Star {
            nodes: a.nodes.unwrap_or(1),
            node: a.node_file(),
            max_cycles: a.max_cycles(),
            args: &a.args,
            abi: a.abi.as_deref(),
            nic: a.nic.as_deref(),
            pcie_ns: a.pcie_ns,
        };
        let run = a.run_flags()?;
        return crate::cluster::star(&a.program, &star, run, a.outputs()?);
    }
    refuse(&a.fault_flags(), "a single node: a fault is a cluster's, a node that crashes while others go on, a network that splits (use --nodes N or a .toml file)")?;
    refuse(&a.cluster_flags(), "a single node: it has no network (use --nodes N or a .toml file)")?;
    single(&a)
}

/// The first flag given that does not apply, as an error saying why.
fn refuse<S: AsRef<str>>(flags: &[(S, bool)], why: &str) -> Result<(), String> {
    match flags.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(format!("{} does not apply to {why}", flag.as_ref())),
        None => Ok(()),
    }
}

impl RunArgs {
    /// Flags that describe the node or the program's run; a cluster file sets these itself,
    /// with the key that does (as the second half of each name).
    fn node_flags(&self) -> Vec<(String, bool)> {
        let nic = self
            .nic_settings
            .given()
            .into_iter()
            .map(|k| (format!("{} (the file's [node] {k} sets it)", Given::Flags.name(k)), true));
        let flags: Vec<(&str, bool)> = vec![
            ("--nodes (the file's [topology] sets it)", self.nodes.is_some()),
            ("--cores (the file's [node] cores sets it)", self.cores.is_some()),
            ("--max-cycles (the file's max_us sets the limit)", self.max_cycles.is_some()),
            ("--mac-ns (a cluster's links are set in [link])", self.mac_ns.is_some()),
            ("program arguments after -- (the file's [[program]] args set them)", !self.args.is_empty()),
            ("--abi (the file's [[program]] abi sets it)", self.abi.is_some()),
            ("--exit (the file's [node] exit sets it)", self.exit.is_some()),
            ("--engine (the file's [node] engine sets it)", self.engine.is_some()),
            ("--memory (the file's [node] memory sets it)", self.memory.is_some()),
            ("--nic (the file's [[program]] nic sets it)", self.nic.is_some()),
            ("--pcie-ns (the file's [[program]] pcie_ns sets it)", self.pcie_ns.is_some()),
        ];
        flags.into_iter().map(|(f, given)| (f.to_string(), given)).chain(nic).collect()
    }

    /// `--pcie-ns` only with `--nic icenic`, and none of the nanoPU NIC's settings with it.
    fn check_nic(&self) -> Result<(), String> {
        let ice = matches!(self.nic.as_deref(), Some("icenic" | "zeronic"));
        if self.pcie_ns.is_some_and(|ns| ns != 0.0) && !ice {
            return Err("--pcie-ns: only an IceNIC node has a PCIe-attached variant (add --nic icenic); the nanoPU NIC sits at the core's register file".into());
        }
        let sizes = self.ice_queue_depth.is_some() || self.ice_buffer_flits.is_some();
        if !ice && (sizes || self.ice_rate_limit.is_some()) {
            return Err("--ice-queue-depth, --ice-buffer-flits, --ice-rate-limit: an IceNIC node's settings (add --nic icenic)".into());
        }
        match ice {
            true => self.nic_settings.none_on_icenic(Given::Flags),
            false => Ok(()),
        }
    }

    /// The `--send` messages of a cluster run (their length is checked against the file's
    /// max_msg_bytes, and their node against its nodes, when the run starts).
    fn host_sends(&self) -> Result<Vec<(Time, nanopu_nic::Message)>, String> {
        self.sends.iter().map(|s| parse_send(s, u32::MAX)).collect()
    }

    /// How a cluster run reports, what the test host sends and which faults it has.
    fn run_flags(&self) -> Result<crate::cluster::RunFlags, String> {
        let faults = crate::fault_flags::FaultFlags {
            crashes: self.crashes.clone(),
            partitions: self.partitions.clone(),
        };
        Ok(crate::cluster::RunFlags {
            json: self.json,
            progress: self.progress,
            sends: self.host_sends()?,
            faults,
        })
    }

    /// Fault injection flags (cluster runs only).
    fn fault_flags(&self) -> Vec<(&'static str, bool)> {
        vec![("--crash", !self.crashes.is_empty()), ("--partition", !self.partitions.is_empty())]
    }

    /// Flags only a single node uses.
    fn single_flags(&self) -> Vec<(&'static str, bool)> {
        vec![
            (
                "--until-us (a cluster ends at its time limit, max_us or --max-cycles)",
                self.until_us.is_some(),
            ),
            ("--send-frame (a single IceNIC node's test host sends frames)", !self.send_frames.is_empty()),
            (
                "--ice-queue-depth (the file's [[program]] ice_queue_depth sets it)",
                self.ice_queue_depth.is_some(),
            ),
            (
                "--ice-buffer-flits (the file's [[program]] ice_buffer_flits sets it)",
                self.ice_buffer_flits.is_some(),
            ),
            (
                "--ice-rate-limit (a single IceNIC node's, as the artifact's harness)",
                self.ice_rate_limit.is_some(),
            ),
            ("--host-sniffs (a cluster's test host is a node of its fabric)", self.host_sniffs),
        ]
    }

    /// Flags only a run with a network uses.
    fn cluster_flags(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("--pcap", self.pcap.is_some()),
            ("--pcap-at", self.pcap_at.is_some()),
            ("--messages", self.messages.is_some()),
            ("--port-stats", self.port_stats.is_some()),
            ("--trace", self.trace.is_some()),
            ("--threads", self.threads.is_some()),
        ]
    }

    fn max_cycles(&self) -> u64 {
        self.max_cycles.unwrap_or(DEFAULT_MAX_CYCLES)
    }

    /// The output files, created now so that an unwritable path fails before the run.
    fn outputs(&self) -> Result<crate::cluster::Outputs, String> {
        if self.pcap_at.is_some() && self.pcap.is_none() {
            return Err("--pcap-at says where to capture, but no --pcap file was given".into());
        }
        crate::report::outputs::distinct(&[
            ("--pcap", self.pcap.as_deref()),
            ("--messages", self.messages.as_deref()),
            ("--port-stats", self.port_stats.as_deref()),
            ("--trace", self.trace.as_deref()),
        ])?;
        crate::cluster::Outputs::create(
            self.threads,
            self.pcap.as_deref(),
            self.pcap_at.as_deref(),
            self.messages.as_deref(),
            self.port_stats.as_deref(),
            self.trace.as_deref().map(|p| (p, self.trace_messages)),
        )
    }

    /// The `[node]` section of a cluster run from the node flags given.
    fn node_file(&self) -> NodeFile {
        NodeFile {
            cores: Some(self.cores.unwrap_or(DEFAULT_CORES as u64) as usize),
            exit: self.exit.clone(),
            engine: self.engine.clone(),
            memory: self.memory.clone(),
            nic_settings: self.nic_settings.clone(),
            ..NodeFile::default()
        }
    }

    /// The configuration of a single-node run.
    fn node_config(&self) -> Result<NodeConfig, String> {
        let mut cfg = NodeConfig::default();
        cfg.nic.cores = self.cores.unwrap_or(DEFAULT_CORES as u64) as usize;
        self.nic_settings.apply(&mut cfg.nic, Given::Flags, cfg.timing.clock_hz)?;
        cfg.max_cycles = check::cycle_limit(self.max_cycles(), "--max-cycles", cfg.timing.clock_hz)?;
        cfg.args = self.args.clone();
        cfg.abi = AbiChoice::parse(self.abi.as_deref().unwrap_or("auto")).map_err(|e| format!("--{e}"))?;
        cfg.exit = ExitMode::parse(self.exit.as_deref().unwrap_or("auto")).map_err(|e| format!("--{e}"))?;
        cfg.progress = self.progress;
        cfg.engine = nanopu_riscv::Engine::named_or_default(self.engine.as_deref())?;
        cfg.timing = self.memory.as_deref().unwrap_or("prototype").parse::<MemorySystem>()?.apply(cfg.timing);
        cfg.port.mac_fs = check::time_ns(self.mac_ns.unwrap_or(0.0), "--mac-ns")?.as_fs();
        cfg.nic_kind = self.nic.as_deref().unwrap_or("nanopu").parse().map_err(|e| format!("--nic: {e}"))?;
        cfg.pcie_ns = self.pcie_ns.unwrap_or(0.0);
        self.check_nic()?;
        self.ice_sizes(&mut cfg.ice)?;
        cfg.program_name =
            self.program.file_name().map_or("program".into(), |n| n.to_string_lossy().into_owned());
        Ok(cfg)
    }
}

impl RunArgs {
    /// `--ice-queue-depth` and `--ice-buffer-flits`, checked against what the NIC needs:
    /// counts of one byte each (the COUNTS register), room for one longest frame; and
    /// `--ice-rate-limit`.
    fn ice_sizes(&self, ice: &mut nanopu_nic::icenic::IceParams) -> Result<(), String> {
        let names = ["--ice-queue-depth", "--ice-buffer-flits"];
        *ice = ice.with_sizes(self.ice_queue_depth, self.ice_buffer_flits, names)?;
        if let Some(s) = &self.ice_rate_limit {
            ice.rate_limit =
                nanopu_nic::icenic::RateLimit::parse(s).map_err(|e| format!("--ice-rate-limit {e}"))?;
        }
        Ok(())
    }
}

/// `--threads N`: a whole number of host threads, at least 1.
pub fn positive_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{s}' is not a number of host threads (1 or more)")),
    }
}

fn single(a: &RunArgs) -> Result<ExitCode, String> {
    let mut sim = single_sim(a)?;
    let outcome = sim.run();
    report(&mut sim, outcome, a.json)
}

/// A single node's simulation, loaded, with the test host's `--send` messages queued and
/// the `--until-us` deadline set: what `nanopu run PROGRAM.elf` runs, and the Python
/// package's `nanopu.run` (docs/python.md). Flags of cluster runs are refused.
pub fn single_sim(a: &RunArgs) -> Result<Simulation, String> {
    if a.program.extension().is_some_and(|e| e == "toml") || a.nodes.unwrap_or(1) > 1 {
        return Err("a single node runs one ELF program (a cluster is run from its configuration)".into());
    }
    refuse(&a.fault_flags(), "a single node: a fault is a cluster's (use --nodes N or a .toml file)")?;
    refuse(&a.cluster_flags(), "a single node: it has no network (use --nodes N or a .toml file)")?;
    let elf = std::fs::read(&a.program).map_err(|e| format!("cannot read {}: {e}", a.program.display()))?;
    let cfg = a.node_config()?;
    let max_bytes = cfg.nic.max_msg_bytes;
    let mut sim = Simulation::new(&elf, cfg).map_err(|e| format!("{}: {e}", a.program.display()))?;
    sim.set_limit_name("--max-cycles");
    sim.host.sniffs = a.host_sniffs;
    if let Some(us) = a.until_us {
        sim.set_deadline(check::time_us(us, "--until-us")?);
    }
    queue_frames(a, &mut sim)?;
    for spec in &a.sends {
        let (at, msg) = parse_send(spec, max_bytes)?;
        if msg.dst_ip != nanopu_cluster::node::boot::node_ip(0) {
            return Err(format!("--send {}: a single node is node 0", shortened(spec)));
        }
        sim.host.send_at(at, msg);
    }
    Ok(sim)
}

/// The `--send-frame` frames, for an IceNIC node only (and `--send` for a nanoPU node only).
fn queue_frames(a: &RunArgs, sim: &mut Simulation) -> Result<(), String> {
    let ice = sim.nodes[0].nic.is_ice();
    if ice && !a.sends.is_empty() {
        return Err("--send: an IceNIC node takes raw frames (--send-frame), not nanoPU messages".into());
    }
    if !ice && !a.send_frames.is_empty() {
        return Err("--send-frame: frames go to an IceNIC node (--nic icenic)".into());
    }
    for spec in &a.send_frames {
        let (at, frame) = parse_frame(spec)?;
        sim.host.send_frame_at(at, frame);
    }
    Ok(())
}

/// `AT_NS:BYTES`: a UDP frame from the test host to node 0 (nanopu_cluster::net::frame);
/// `AT_NS:0xHEX`: the frame HEX spells.
fn parse_frame(spec: &str) -> Result<(Time, Vec<u8>), String> {
    use nanopu_cluster::net::frame::{udp_frame, Ends, PAYLOAD};
    let bad =
        || format!("--send-frame {spec}: expected AT_NS:BYTES (BYTES from {PAYLOAD} to 1516) or AT_NS:0xHEX");
    let (at, bytes) = spec.split_once(':').ok_or_else(bad)?;
    let at = check::time_ns(at.parse().map_err(|_| bad())?, "--send-frame")?;
    if let Some(hex) = bytes.strip_prefix("0x") {
        return Ok((at, hex_frame(hex, PAYLOAD).ok_or_else(bad)?));
    }
    let len: usize = bytes.parse().map_err(|_| bad())?;
    if !(PAYLOAD..=1516).contains(&len) {
        return Err(bad());
    }
    let host = Ends {
        mac: nanopu_cluster::node::boot::node_mac(0) - 1,
        ip: nanopu_sim::packet::HOST_IP,
        port: 7000,
    };
    let node = Ends {
        mac: nanopu_cluster::node::boot::node_mac(0),
        ip: nanopu_cluster::node::boot::node_ip(0),
        port: 9000,
    };
    let payload: Vec<u8> = (0..len - PAYLOAD).map(|i| i as u8).collect();
    Ok((at, udp_frame(host, node, &payload)))
}

/// The bytes of an even-length hex string, if it spells a frame of `min` to 1,516 bytes.
fn hex_frame(hex: &str, min: usize) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) || !(min..=1516).contains(&(hex.len() / 2)) {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
}

fn report(sim: &mut Simulation, outcome: Result<Outcome, SimError>, json: bool) -> Result<ExitCode, String> {
    let outcome = outcome.map_err(|e| e.to_string())?;
    let summary = summarize(sim, outcome);
    if json {
        println!("{}", serde_json::to_string_pretty(&summary).expect("summary serializes"));
    } else {
        print!("{}", summary.text());
    }
    Ok(crate::report::judged::judged(&summary.problems, summary.exit_status))
}

/// `s`, or its first 60 characters and how long it is: an error repeats what it names, not
/// a payload of thousands of words.
fn shortened(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((cut, _)) => format!("{}... ({} characters)", &s[..cut], s.chars().count()),
        None => s.to_string(),
    }
}

/// `AT_NS:CONTEXT[/SRC_CONTEXT]:WORD[,WORD...][@NODE]` into a host message to node NODE (0
/// if not given), at most `max_bytes` long (the NIC's `max_msg_bytes`).
pub fn parse_send(spec: &str, max_bytes: u32) -> Result<(Time, nanopu_nic::Message), String> {
    let bad = |why: &str| {
        format!(
            "--send {}: {why} (expected AT_NS:CONTEXT[/SRC_CONTEXT]:WORD[,WORD...][@NODE])",
            shortened(spec)
        )
    };
    let mut parts = spec.splitn(3, ':');
    let (Some(at), Some(ctx), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad("missing field"));
    };
    let (words, node) = rest.split_once('@').unwrap_or((rest, "0"));
    let node: u32 = node.trim().parse().map_err(|_| bad("NODE is not a node number"))?;
    let at: f64 = at.parse().map_err(|_| bad("AT_NS is not a number"))?;
    let at = check::time_ns(at, "AT_NS").map_err(|e| bad(&e))?;
    let (dst, src) = contexts(ctx).map_err(|e| bad(&e))?;
    let words: Result<Vec<u64>, _> = words.split(',').map(parse_word).collect();
    let words = words.map_err(|w| bad(&format!("word '{w}' is not a u64")))?;
    if words.len() * 8 > max_bytes as usize {
        return Err(bad(&format!(
            "{} bytes is longer than a message may be (max_msg_bytes = {max_bytes}: --max-msg-bytes, or a cluster file's [node])",
            words.len() * 8
        )));
    }
    let ip = nanopu_cluster::node::boot::node_ip(node.min(nanopu_net::fabric::Topology::MAX_NODES as u32));
    Ok((at, nanopu_cluster::TestHost::message(src, ip, dst, &words)))
}

/// `CONTEXT[/SRC_CONTEXT]`: the destination context and the host's source context (0
/// unless given: the prototype's testers chose it, e.g. 0x1234 for latency stamps).
fn contexts(s: &str) -> Result<(u16, u16), String> {
    let (dst, src) = s.split_once('/').unwrap_or((s, "0"));
    let dst = parse_context(dst).map_err(|_| "CONTEXT is not 0..=65535".to_string())?;
    let src = parse_context(src).map_err(|_| "SRC_CONTEXT is not 0..=65535".to_string())?;
    Ok((dst, src))
}

/// A context id in decimal or 0x-hex.
fn parse_context(s: &str) -> Result<u16, String> {
    let w = parse_word(s)?;
    u16::try_from(w).map_err(|_| s.to_string())
}

fn parse_word(w: &str) -> Result<u64, String> {
    let w = w.trim();
    let r = match w.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => w.parse(),
    };
    r.map_err(|_| w.to_string())
}
