//! `nanopu bench NAME`: the node microbenchmarks. Each prints one JSON document.
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

use clap::Args;
use nanopu_cluster::host::HOST_IP;
use nanopu_cluster::{NodeConfig, Outcome, Simulation, TestHost};
use nanopu_nic::Message;
use nanopu_sim::stats::summarize;
use nanopu_sim::{Rng, Time};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct BenchArgs {
    /// The benchmark (see `nanopu bench --help` and README.md, "Benchmarks").
    #[arg(value_enum)]
    name: Bench,
    /// Print JSON (the only format; accepted for symmetry with `run`).
    #[arg(long)]
    json: bool,
    /// Directory holding the built programs (apps/*.elf).
    #[arg(long, env = "NANOPU_SW_BUILD", default_value = "sw/build")]
    sw_build: PathBuf,
    /// Requests per measurement (the latency, throughput and eRPC benchmarks).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000_000))]
    requests: Option<usize>,
    /// Host threads of `network` (default: NANOPU_THREADS, else every host core).
    #[arg(long)]
    threads: Option<usize>,
    /// `loopback-latency`, `icenic-loopback-latency`: the echo program [default: loopback].
    #[arg(long, value_enum)]
    app: Option<App>,
    /// `nic-throughput`: the NIC measured [default: nanopu].
    #[arg(long, value_enum)]
    nic: Option<crate::bench_nic::Nic>,
    /// `network`: measure the network alone, without the run whose cores write and check
    /// the messages (`with_cores` is then null); for profiling the fabric and transports.
    #[arg(long)]
    network_only: bool,
}

/// The echo programs of the latency and request-rate benchmarks, by what they do to a
/// request's payload words (docs/platform.md section 5: loopback and stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum App {
    /// Every word back as it came.
    Loopback,
    /// Every word back incremented by one.
    Stream,
}

impl App {
    pub fn name(self) -> &'static str {
        match self {
            App::Loopback => "loopback",
            App::Stream => "stream",
        }
    }

    /// The reply's payload word for a request's word.
    pub fn reply_word(self, w: u64) -> u64 {
        match self {
            App::Loopback => w,
            App::Stream => w.wrapping_add(1),
        }
    }
}

/// Payload sizes of the loopback-latency benchmarks, bytes (issue: 8 to 1,024).
pub const SIZES: [u16; 6] = [8, 16, 64, 256, 512, 1024];
/// Requests excluded from latency statistics while caches warm up.
const WARMUP: usize = 16;
/// When the host starts sending: after every core has registered its context.
pub const START: Time = Time::from_us(2);
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
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
            Bench::Network => &["--threads", "--network-only"],
            Bench::Rx | Bench::Iss | Bench::ContextSwitch => &[],
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
        [] => "none of --app, --nic, --requests, --threads, --network-only".into(),
        _ => flags.join(" and "),
    }
}

pub fn main(a: BenchArgs) -> Result<ExitCode, String> {
    let out = a.run()?;
    println!("{}", serde_json::to_string_pretty(&out).expect("json"));
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
            Bench::LoopbackLatency => latency(a, sw)?,
            Bench::IcenicLoopbackLatency => {
                let elf = sw.read(&format!("ice_{}", a.app().name()))?;
                crate::bench_ice::latency(&elf, a.app(), a.requests.unwrap_or(500), MAC_NS)?
            }
            Bench::NicThroughput => crate::bench_nic::throughput(sw, a.nic(), a.requests.unwrap_or(2_000))?,
            Bench::ErpcLoopbackLatency => {
                crate::bench_erpc::latency(&sw.read("erpc_server")?, a.requests.unwrap_or(200), MAC_NS)?
            }
            Bench::ErpcRequestRate => {
                crate::bench_erpc::rate(&sw.read("erpc_server")?, a.requests.unwrap_or(2000), MAC_NS)?
            }
            Bench::LoopbackThroughput => {
                crate::bench_tput::throughput(&sw.read("loopback_tput")?, a.requests.unwrap_or(20_000))?
            }
            Bench::Rx => rx(sw)?,
            Bench::Iss => iss(sw)?,
            Bench::Network => network(a, sw)?,
            Bench::ContextSwitch => crate::bench_ctx::context_switch(&sw.read("ctxswitch")?)?,
        })
    }

    /// The echo program, `--app` or loopback.
    fn app(&self) -> App {
        self.app.unwrap_or(App::Loopback)
    }

    /// The NIC `nic-throughput` measures, `--nic` or the nanoPU's.
    fn nic(&self) -> crate::bench_nic::Nic {
        self.nic.unwrap_or(crate::bench_nic::Nic::Nanopu)
    }

    /// A flag the benchmark does not read is an error, never ignored (README.md).
    fn check_flags(&self) -> Result<(), String> {
        let given = [
            ("--app", self.app.is_some()),
            ("--nic", self.nic.is_some()),
            ("--requests", self.requests.is_some()),
            ("--threads", self.threads.is_some()),
            ("--network-only", self.network_only),
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
        use crate::bench_nic::Nic;
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
        };
        names.into_iter().map(String::from).collect()
    }

    /// The programs the benchmark loads, under `--sw-build`.
    pub fn programs(&self) -> Programs {
        Programs { sw_build: self.sw_build.clone(), names: self.program_names() }
    }
}

/// The built programs a benchmark loads, `apps/NAME.elf` under `--sw-build`: listed once
/// per benchmark (`BenchArgs::program_names`) and read only through here, so that the list
/// the sweeps' cache hashes is the list the benchmark reads (one it does not list is an
/// error, a bug to fix in the list).
pub struct Programs {
    sw_build: PathBuf,
    names: Vec<String>,
}

impl Programs {
    /// Where program `name` is.
    pub fn path(&self, name: &str) -> Result<PathBuf, String> {
        if !self.names.iter().any(|n| n == name) {
            return Err(format!(
                "the benchmark reads apps/{name}.elf, which its list of programs lacks (a bug)"
            ));
        }
        Ok(self.sw_build.join("apps").join(format!("{name}.elf")))
    }

    /// Every program listed, in order.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.names.iter().map(|n| self.sw_build.join("apps").join(format!("{n}.elf"))).collect()
    }

    /// Program `name`'s bytes.
    pub fn read(&self, name: &str) -> Result<Vec<u8>, String> {
        let p = self.path(name)?;
        std::fs::read(&p)
            .map_err(|e| format!("cannot read {} ({e}); build the programs with `make -C sw`", p.display()))
    }
}

pub fn node_cfg(cores: usize, mac_ns: f64) -> NodeConfig {
    let mut cfg = NodeConfig::default();
    cfg.nic.cores = cores;
    cfg.port.mac_fs = Time::from_ns_f64(mac_ns).as_fs();
    cfg
}

pub fn request(rng: &mut Rng, len: u16) -> Message {
    let words: Vec<u64> = (0..len.div_ceil(8)).map(|_| rng.next_u64()).collect();
    TestHost::message_len(0, nanopu_cluster::boot::node_ip(0), 0, len, &words)
}

// ---- loopback latency -----------------------------------------------------------------------

fn latency(a: &BenchArgs, sw: &Programs) -> Result<Value, String> {
    let elf = sw.read(a.app().name())?;
    let n = a.requests.unwrap_or(500) + WARMUP;
    let rows: Result<Vec<Value>, String> =
        SIZES.iter().map(|&len| latency_row(&elf, a.app(), len, n)).collect();
    Ok(json!({ "benchmark": "loopback-latency", "app": a.app().name(), "unit": "ns", "requests": n - WARMUP,
        "nic_definition": "the prototype's latency module: requests from context 0x1234; first word of the request's last packet entering the NIC to the last word of the reply's last packet leaving it, read from the reply's stamp (MAC excluded)",
        "wire_definition": "wire to wire at the host: the request's first byte leaving to the reply's last byte arriving, with 26 ns of MAC and serial I/O each way; 200 Gb/s, no propagation",
        "warmup": WARMUP,
        "prototype_reference_16B": { "nic_ns": 17, "wire_ns": 69 },
        "sizes": rows? }))
}

fn latency_row(elf: &[u8], app: App, len: u16, n: usize) -> Result<Value, String> {
    let mut sim = Simulation::new(elf, node_cfg(4, MAC_NS)).map_err(|e| e.to_string())?;
    let mut rng = Rng::stream(1, len as u64);
    sim.host.send_at(START, stamped_request(&mut rng, len));
    let mut sent = 1usize;
    sim.host.on_receive(move |now, _| {
        if sent >= n {
            return vec![];
        }
        sent += 1;
        vec![(now + Time::from_ns(100), stamped_request(&mut rng, len))]
    });
    finish(&mut sim)?;
    let (nic, wire) = paired_latencies(&sim, app, n)?;
    let (nic, wire) = (summarize(&nic[WARMUP..]), summarize(&wire[WARMUP..]));
    Ok(json!({ "payload_bytes": len, "nic_median_ns": nic.median, "nic_p99_ns": nic.p99,
        "wire_median_ns": wire.median, "wire_p99_ns": wire.p99 }))
}

/// A request from the testers' context 0x1234, so that the port stamps it. Its last word,
/// where the stamps go, is 0: `stream.elf` adds one to it before the port writes the
/// stamps over it, and no carry may reach the stamp.
fn stamped_request(rng: &mut Rng, len: u16) -> Message {
    let mut m = Message { src_context: nanopu_nic::stamp::TEST_CONTEXT, ..request(rng, len) };
    m.words.last_mut().into_iter().for_each(|w| *w = 0);
    m
}

fn finish(sim: &mut Simulation) -> Result<(), String> {
    match sim.run().map_err(|e| e.to_string())? {
        Outcome::Quiescent => Ok(()),
        Outcome::AllExited => Err("the loopback program exited; it should serve forever".into()),
        other => Err(format!("unexpected end of the loopback run: {}", other.name())),
    }
}

/// The latency of each request, the NIC's (from the reply's stamp) and wire to wire at the
/// host, pairing the i-th reply with the i-th request (one outstanding).
fn paired_latencies(sim: &Simulation, app: App, n: usize) -> Result<(Vec<f64>, Vec<f64>), String> {
    let (sent, got) = (&sim.host.sent, &sim.host.received);
    if got.len() != n || sent.len() != n {
        return Err(format!("sent {} requests, received {} replies, expected {n}", sent.len(), got.len()));
    }
    let (port, ns_per_cycle) = (sim.port(), 1e9 / NodeConfig::default().timing.clock_hz as f64);
    let first_byte = |m: &Message| {
        let packets = (m.len as u64).div_ceil(port.segment_bytes as u64).max(1);
        nanopu_sim::time::serialization(packets * port.header_bytes as u64 + m.len as u64, port.rate_bps)
    };
    let mut out = (Vec::new(), Vec::new());
    for (s, r) in sent.iter().zip(got) {
        check_stamped_reply(app, &s.msg, &r.msg)?;
        out.0.push(crate::bench_tput::stamp_latency_cycles(&r.msg) as f64 * ns_per_cycle);
        out.1.push((r.time - s.time + first_byte(&s.msg)).as_ns_f64());
    }
    Ok(out)
}

/// The reply `app` owes a stamped request: its words through `App::reply_word`, but the
/// last (where the port writes the stamps).
fn check_stamped_reply(app: App, req: &Message, rep: &Message) -> Result<(), String> {
    let unstamped = |m: &Message| m.words[..m.words.len().saturating_sub(1)].to_vec();
    let want: Vec<u64> = unstamped(req).into_iter().map(|w| app.reply_word(w)).collect();
    if rep.dst_ip != HOST_IP || rep.len != req.len || unstamped(rep) != want || req.len < 8 {
        return Err(format!("{} reply does not answer the request: sent {req:?}, got {rep:?}", app.name()));
    }
    Ok(())
}

// ---- receive path ---------------------------------------------------------------------------

fn rx(sw: &Programs) -> Result<Value, String> {
    let elf = sw.read("rxcount")?;
    let rows: Result<Vec<Value>, String> = [1usize, 64].iter().map(|&k| rx_row(&elf, k)).collect();
    Ok(json!({ "benchmark": "rx", "payload_bytes": 16, "rows": rows?,
        "definition": "after one warm-up message, from the first timed message's last byte reaching the NIC to the core having read and marked done the last one (mcycle printed by rxcount.elf); messages sent back to back at 200 Gb/s",
        "prototype_reference": { "1_message_ns": 8, "64_messages_ns": 400 } }))
}

fn rx_row(elf: &[u8], k: usize) -> Result<Value, String> {
    let mut cfg = node_cfg(4, 0.0);
    cfg.args = vec![k.to_string()];
    let mut sim = Simulation::new(elf, cfg).map_err(|e| e.to_string())?;
    let mut rng = Rng::stream(3, k as u64);
    sim.host.send_at(START, request(&mut rng, 16));
    let timed = START + Time::from_us(1);
    (0..k).for_each(|_| sim.host.send_at(timed, request(&mut rng, 16)));
    if sim.run().map_err(|e| e.to_string())? != Outcome::AllExited {
        return Err("rxcount.elf did not exit".into());
    }
    let console = String::from_utf8_lossy(&sim.nodes[0].cores[0].take_console()).into_owned();
    let end: u64 = console
        .trim()
        .strip_prefix("end_cycle=")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("rxcount.elf printed {console:?}, expected end_cycle=N"))?;
    let arrival = sim.host.sent[1].time;
    let ns = (sim.clock().time_of(end) - arrival).as_ns_f64();
    Ok(json!({ "messages": k, "ns": ns, "ns_per_message": ns / k as f64 }))
}

// ---- ISS speed ------------------------------------------------------------------------------

fn iss(sw: &Programs) -> Result<Value, String> {
    let elf = sw.read("compute")?;
    let mut cfg = node_cfg(1, 0.0);
    cfg.max_cycles = 20_000_000_000;
    let mut sim = Simulation::new(&elf, cfg).map_err(|e| e.to_string())?;
    let start = std::time::Instant::now();
    let outcome = sim.run().map_err(|e| e.to_string())?;
    let wall = start.elapsed().as_secs_f64();
    let core = &sim.nodes[0].cores[0];
    if outcome != Outcome::AllExited || core.halted() != Some(0) {
        return Err(format!("compute.elf did not exit cleanly: {outcome:?}, {:?}", core.halted()));
    }
    let instret = core.stats().instret;
    Ok(json!({ "benchmark": "iss", "program": "compute.elf", "instructions": instret,
        "cycles": core.cycle(), "host_seconds": wall,
        "million_instructions_per_host_second": instret as f64 / wall / 1e6,
        "target_mips": 100 }))
}

// ---- network speed --------------------------------------------------------------------------

/// A 256-node leaf-spine (16 leaves x 16 nodes, 8 spines), NDP, every node running `elf`.
fn network_config(elf: &std::path::Path) -> String {
    format!(
        "seed = 1\nmax_us = 100000.0\n[topology]\nkind = \"leaf-spine\"\nnodes_per_leaf = 16\nleaves = 16\nspines = 8\n\
         [node]\ncores = 4\n[[program]]\nnodes = \"all\"\nelf = \"{}\"\nargs = [\"256\", \"1024\"]\n",
        elf.display()
    )
}

/// Peak resident memory of this process, bytes (Linux `VmHWM`).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

fn network(a: &BenchArgs, sw: &Programs) -> Result<Value, String> {
    let with_cores = if a.network_only { Value::Null } else { network_run(a, sw, "alltoall", false)? };
    let network_only = network_run(a, sw, "idle", true)?;
    let rss = peak_rss().unwrap_or(0);
    let fabric_alone = crate::bench_fabric::fabric_alone()?;
    Ok(json!({ "benchmark": "network",
        "workload": "all-to-all of 1 KiB messages among 256 nodes, leaf-spine 16 leaves x 16 nodes, 8 spines, 200 Gb/s, NDP",
        "with_cores": with_cores, "network_only": network_only, "fabric_alone": fabric_alone,
        "peak_rss_bytes": rss, "peak_rss_per_node_bytes": rss / 256, "target_million_packet_hops_per_host_core": 10 }))
}

/// One all-to-all: written and checked by the cores (`alltoall.elf`), or injected straight
/// into idle nodes' transports so that only the network is simulated.
fn network_run(a: &BenchArgs, sw: &Programs, app: &str, inject: bool) -> Result<Value, String> {
    use nanopu_cluster::cluster_config::ClusterFile;
    use nanopu_cluster::cluster_report::summarize_cluster;
    sw.read(app)?;
    let file = ClusterFile::parse(&network_config(&sw.path(app)?))?;
    let start = std::time::Instant::now();
    let mut sim = Simulation::cluster(&file, std::path::Path::new(".")).map_err(|e| e.to_string())?;
    if let Some(t) = a.threads {
        sim.set_threads(t);
    }
    if inject {
        inject_all_to_all(&mut sim, 256)?;
    }
    let setup = start.elapsed().as_secs_f64();
    let outcome = sim.run().map_err(|e| e.to_string())?;
    let wall = start.elapsed().as_secs_f64();
    let s = summarize_cluster(&mut sim, outcome);
    if !s.failures.is_empty() || s.messages_received != 256 * 255 {
        return Err(format!("the all-to-all failed:\n{}", s.text()));
    }
    let chunks: usize = sim.nodes.iter().map(|n| n.mem.resident().chunks).sum();
    let dram_per_node = chunks as u64 * nanopu_riscv::sparse::CHUNK / sim.nodes.len() as u64;
    let (rate, threads) = (s.fabric.packet_hops as f64 / wall / 1e6, sim.threads().min(sim.partitions()));
    Ok(json!({ "packet_hops": s.fabric.packet_hops, "messages": s.messages_received, "events": sim.events(),
        "simulated_dram_per_node_bytes": dram_per_node, "threads": threads,
        "host_seconds": wall, "setup_host_seconds": setup, "simulated_us": s.simulated_ns / 1e3,
        "million_packet_hops_per_host_second": rate, "million_packet_hops_per_host_core_second": rate / threads as f64 }))
}

fn inject_all_to_all(sim: &mut Simulation, n: u32) -> Result<(), String> {
    use nanopu_cluster::boot::node_ip;
    for (src, dst) in (0..n).flat_map(|s| (0..n).filter(move |&d| d != s).map(move |d| (s, d))) {
        let words: Vec<u64> = (0..128).map(|i| ((src as u64) << 40) | ((dst as u64) << 20) | i).collect();
        let mut msg = TestHost::message(0, node_ip(dst), 0, &words);
        msg.src_ip = node_ip(src);
        sim.inject(Time::from_us(1), src as usize, msg)?;
    }
    Ok(())
}
