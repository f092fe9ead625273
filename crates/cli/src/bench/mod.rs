//! `nanopu bench NAME`: the node microbenchmarks. Each builds one JSON document, printed
//! with `--json`, else as text (`crate::report::text`).
//!
//! - `loopback-latency`: closed-loop echo through `loopback.elf` (`--app stream`:
//!   `stream.elf`, every word incremented); median and p99 latency per
//!   payload size as the prototype's latency module measured it (requests from context
//!   0x1234: first word of a request packet entering the NIC to the last word of the reply
//!   packet leaving it, `nanopu_nic::stamp`), and wire to wire at the host with the
//!   Ethernet MAC and serial I/O latency.
//! - `icenic-loopback-latency`: the same echo (or stream) on an IceNIC node (`bench_ice`,
//!   docs/models/icenic.md): frames through DMA and a polling core, wire to wire.
//! - `nic-throughput`: one core's receive and transmit rates for 64-byte messages and its
//!   loopback request rate per size, on the NIC `--nic` names (`bench_nic`).
//! - `erpc-loopback-latency`, `erpc-request-rate`: the eRPC-like stack on an IceNIC node,
//!   on chip and PCIe-attached (`bench_erpc`, docs/apps/erpc.md).
//! - `loopback-throughput`: one core answering 16-byte requests (see `bench_tput`).
//! - `rx`: time for one core to receive 1 and 64 16-byte messages sent back to back.
//! - `network`: packet-hops simulated per host second on a loaded leaf-spine, and memory;
//!   with the fabric alone beside it (`bench_fabric`).
//! - `context-switch`: the nanokernel's switch, interrupt to target (see `bench_ctx`).
//! - `iss`: simulated instructions per host second on the compute-bound `compute.elf`.
//! - `host-sort`: the host's own sort of the main job's 1M keys, the host-speed yardstick
//!   (`bench/yardstick` states the main job's host time as a multiple of it).

mod common;
mod ctx;
mod erpc;
mod fabric;
mod host_sort;
mod ice;
mod ice_tput;
mod network;
mod nic;
mod node;
mod tput;

pub use common::App;

use clap::Args;
use common::Programs;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, serde::Serialize, serde::Deserialize)]
pub struct BenchArgs {
    /// The benchmark (see `nanopu bench --help` and README.md, "Benchmarks").
    #[arg(value_enum)]
    name: Bench,
    /// Print the figures as one JSON document instead of text.
    #[arg(long)]
    json: bool,
    /// Directory holding the built programs (apps/*.elf).
    #[arg(long, env = "NANOPU_SW_BUILD", default_value = "sw/build")]
    sw_build: PathBuf,
    /// Requests per measurement (the latency, throughput and eRPC benchmarks).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000_000))]
    requests: Option<usize>,
    /// Host threads of `network` (default: NANOPU_THREADS, else every host core).
    #[arg(long, value_parser = crate::run::positive_threads)]
    threads: Option<usize>,
    /// `loopback-latency`, `icenic-loopback-latency`: the echo program [default: loopback].
    #[arg(long, value_enum)]
    app: Option<App>,
    /// `nic-throughput`: the NIC measured [default: nanopu].
    #[arg(long, value_enum)]
    nic: Option<nic::Nic>,
    /// `network`: measure the network alone, without the run whose cores write and check
    /// the messages (`with_cores` is then null); for profiling the fabric and transports.
    #[arg(long)]
    network_only: bool,
    /// `network`: nodes of the all-to-all (32 to 1,024), 16 per leaf, under 8 spines below 512
    /// nodes and 16 from 512 [default: 256: 16 leaves, 8 spines; 512 is issue 40's 32 leaves
    /// under 16]; of the shuffle (`--shuffle`), whole leaves of 64 under 64 spines, up to the
    /// main job's 16,384.
    #[arg(long, value_parser = network::parse_nodes)]
    nodes: Option<u32>,
    /// `network`: instead of the all-to-all, a shuffle: each node sends one 1 KiB message to
    /// each of K nodes spread evenly over the cluster and receives K (with `--network-only`).
    #[arg(long, value_name = "K")]
    shuffle: Option<u32>,
    /// `iss`: the engine that executes the instructions, interp (the reference), fast or jit
    /// (docs/profile.md "Core engines"); all give the same cycles [default: fast].
    #[arg(long, value_parser = nanopu_riscv::Engine::NAMES)]
    engine: Option<String>,
}

/// How this binary was built, for the figures: "pgo" from `scripts/build-pgo` (`make build`),
/// else "plain".
const BUILD: &str = match option_env!("NANOPU_BUILD") {
    Some(b) => b,
    None => "plain",
};

/// Prototype's MAC + serial I/O latency, each way (docs/platform.md section 3).
const MAC_NS: f64 = 26.0;

/// Every benchmark `main` runs, by name.
/// The benchmarks, one variant each: `measure` and `program_names` match on it
/// exhaustively, so a benchmark cannot be listed without both (the module's tour says what
/// each measures).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Bench {
    /// Echo latency per payload size, latency module and wire to wire (--app)
    LoopbackLatency,
    /// One core answering 16-byte requests: requests per second
    LoopbackThroughput,
    /// One core receiving 1 and 64 16-byte messages
    Rx,
    /// Simulated instructions per host second (compute.elf)
    Iss,
    /// Packet-hops per host second on a loaded leaf-spine, and memory
    Network,
    /// The nanokernel's context switch, interrupt to target
    ContextSwitch,
    /// Echo latency on an IceNIC node, wire to wire (--app)
    IcenicLoopbackLatency,
    /// One core's 64-byte RX and TX rates and loopback rate per size (--nic)
    NicThroughput,
    /// The eRPC-like stack's echo latency, on chip and over PCIe
    ErpcLoopbackLatency,
    /// The eRPC-like stack's one-core request rate
    ErpcRequestRate,
    /// The host's native sort of 1M 64-bit keys: the host-speed yardstick
    HostSort,
}

impl Bench {
    /// The flags the benchmark reads besides `--json` and `--sw-build`.
    fn flags(self) -> &'static [&'static str] {
        match self {
            Bench::LoopbackLatency | Bench::IcenicLoopbackLatency => &["--app", "--requests"],
            Bench::NicThroughput => &["--nic", "--requests"],
            Bench::ErpcLoopbackLatency | Bench::ErpcRequestRate | Bench::LoopbackThroughput => {
                &["--requests"]
            }
            Bench::Network => &["--threads", "--network-only", "--nodes", "--shuffle"],
            Bench::Iss => &["--engine"],
            Bench::Rx | Bench::ContextSwitch | Bench::HostSort => &[],
        }
    }

    /// The name on the command line.
    fn label(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value().map_or_else(String::new, |v| v.get_name().to_string())
    }
}

/// A list of flags in words.
fn or_none(flags: &[&str]) -> String {
    match flags {
        [] => "none of --app, --nic, --requests, --threads, --network-only, --nodes, --shuffle".into(),
        _ => flags.join(" and "),
    }
}

pub fn main(a: BenchArgs) -> Result<ExitCode, String> {
    let out = a.run()?;
    match a.json {
        true => println!("{}", serde_json::to_string_pretty(&out).expect("json")),
        false => print!("{}", crate::report::text::text_of(&out)),
    }
    Ok(ExitCode::SUCCESS)
}

impl BenchArgs {
    /// Run the benchmark: the JSON document `nanopu bench` prints.
    pub fn run(&self) -> Result<Value, String> {
        let mut out = self.measure()?;
        out["build"] = json!(BUILD);
        Ok(out)
    }

    fn measure(&self) -> Result<Value, String> {
        self.check_flags()?;
        let (a, sw) = (self, &self.programs());
        Ok(match a.name {
            Bench::LoopbackLatency => node::latency(a, sw)?,
            Bench::IcenicLoopbackLatency => {
                let elf = sw.read(&format!("ice_{}", a.app().name()))?;
                ice::latency(&elf, a.app(), a.requests.unwrap_or(500), MAC_NS)?
            }
            Bench::NicThroughput => nic::throughput(sw, a.nic(), a.requests.unwrap_or(2_000))?,
            Bench::ErpcLoopbackLatency => {
                erpc::latency(&sw.read("erpc_server")?, a.requests.unwrap_or(200), MAC_NS)?
            }
            Bench::ErpcRequestRate => {
                erpc::rate(&sw.read("erpc_server")?, a.requests.unwrap_or(2000), MAC_NS)?
            }
            Bench::LoopbackThroughput => {
                tput::throughput(&sw.read("loopback_tput")?, a.requests.unwrap_or(20_000))?
            }
            Bench::Rx => node::rx(sw)?,
            Bench::Iss => node::iss(sw, nanopu_riscv::Engine::named_or_default(a.engine.as_deref())?)?,
            Bench::Network => network::network(a, sw)?,
            Bench::ContextSwitch => ctx::context_switch(&sw.read("ctxswitch")?)?,
            Bench::HostSort => host_sort::host_sort(),
        })
    }

    /// The echo program, `--app` or loopback.
    fn app(&self) -> App {
        self.app.unwrap_or(App::Loopback)
    }

    /// The NIC `nic-throughput` measures, `--nic` or the nanoPU's.
    fn nic(&self) -> nic::Nic {
        self.nic.unwrap_or(nic::Nic::Nanopu)
    }

    /// A flag the benchmark does not read is an error, never ignored (README.md).
    fn check_flags(&self) -> Result<(), String> {
        let given = [
            ("--app", self.app.is_some()),
            ("--nic", self.nic.is_some()),
            ("--requests", self.requests.is_some()),
            ("--threads", self.threads.is_some()),
            ("--network-only", self.network_only),
            ("--nodes", self.nodes.is_some()),
            ("--shuffle", self.shuffle.is_some()),
            ("--engine", self.engine.is_some()),
        ];
        let takes = self.name.flags();
        match given.iter().find(|(flag, on)| *on && !takes.contains(flag)) {
            Some((flag, _)) => {
                Err(format!("{flag} does not apply to {} (it takes {})", self.name.label(), or_none(takes)))
            }
            None => Ok(()),
        }
    }

    /// The programs the benchmark loads, for `Programs`: what the sweeps' cache hashes
    /// (docs/python.md, "The cache").
    fn program_names(&self) -> Vec<String> {
        use nic::Nic;
        let ice = |app: App| format!("ice_{}", app.name());
        let names: Vec<&str> = match self.name {
            Bench::LoopbackLatency => return vec![self.app().name().into()],
            Bench::IcenicLoopbackLatency => return vec![ice(self.app())],
            Bench::NicThroughput => match self.nic() {
                Nic::Nanopu => vec!["rxcount", "txflood", "loopback", "stream"],
                Nic::Icenic => return vec!["ice_tput".into(), ice(App::Loopback), ice(App::Stream)],
                Nic::Erpc => vec!["erpc_server"],
            },
            Bench::ErpcLoopbackLatency | Bench::ErpcRequestRate => vec!["erpc_server"],
            Bench::LoopbackThroughput => vec!["loopback_tput"],
            Bench::Rx => vec!["rxcount"],
            Bench::Iss => vec!["compute"],
            Bench::Network => vec!["alltoall", "idle"],
            Bench::ContextSwitch => vec!["ctxswitch"],
            Bench::HostSort => vec![],
        };
        names.into_iter().map(String::from).collect()
    }

    /// The programs the benchmark loads, under `--sw-build`.
    pub fn programs(&self) -> Programs {
        Programs { sw_build: self.sw_build.clone(), names: self.program_names() }
    }
}
