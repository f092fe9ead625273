//! `nanopu run`.

use clap::Args;
use nanopu_cluster::report::{summarize, RunSummary};
use nanopu_cluster::{NodeConfig, Outcome, SimError, Simulation};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct RunArgs {
    /// RISC-V ELF to run on every core of one node (RV64IMAC, lp64), or a cluster
    /// configuration (.toml) naming topology, programs and parameters.
    pub program: PathBuf,
    /// Nodes: more than one puts them on one switch (defaults of a cluster configuration;
    /// a .toml file sets everything else).
    #[arg(long, default_value_t = 1)]
    nodes: u32,
    /// Cores per node.
    #[arg(long, default_value_t = 4)]
    cores: usize,
    /// Stop with an error after this many simulated core cycles (3.2 GHz).
    #[arg(long, default_value_t = 100_000_000)]
    max_cycles: u64,
    /// Ethernet MAC and serial I/O latency at the node's port, each way, in ns.
    #[arg(long, default_value_t = 0.0)]
    mac_ns: f64,
    /// Core selection in the NIC: jbsq or rss.
    #[arg(long, default_value = "jbsq")]
    core_selection: String,
    /// JBSQ bound n: outstanding messages per core and context.
    #[arg(long, default_value_t = 2)]
    jbsq_n: u32,
    /// Reset value of lmsgcycles (bounded processing time; 0 turns it off), cycles.
    #[arg(long, default_value_t = 3000)]
    msg_cycles: u64,
    /// Reset value of lidlecycles, cycles.
    #[arg(long, default_value_t = 3000)]
    idle_cycles: u64,
    /// Timer-driven scheduler baseline: the nanokernel's timer period, us (0: NIC-driven).
    #[arg(long, default_value_t = 0.0)]
    sched_timer_us: f64,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Cluster runs: write every packet seen at `--pcap-at` to this pcap file.
    #[arg(long)]
    pcap: Option<PathBuf>,
    /// Cluster runs: write one CSV line per message delivery (source, destination, size,
    /// send and delivery time) to this file.
    #[arg(long)]
    messages: Option<PathBuf>,
    /// Cluster runs: write per-port statistics (packets, bytes, largest queue) as CSV.
    #[arg(long)]
    port_stats: Option<PathBuf>,
    /// Where `--pcap` captures: a node ("node:N", what it sends and receives) or a switch
    /// port ("switch:S:P", what leaves and enters it).
    #[arg(long, default_value = "node:0")]
    pcap_at: String,
    /// Show progress on stderr.
    #[arg(long)]
    progress: bool,
    /// Host threads of a leaf-spine cluster run (default: NANOPU_THREADS, else every host
    /// core); the results are the same whatever the number.
    #[arg(long)]
    threads: Option<usize>,
    /// Have the test host send a message to the node: `AT_NS:CONTEXT:WORD[,WORD...]`
    /// (words in decimal or 0x-hex; repeatable). Replies are listed in the summary.
    #[arg(long = "send", value_name = "AT_NS:CONTEXT:WORDS")]
    sends: Vec<String>,
    /// Arguments for the program (after `--`); they follow `program MAC IP` in argv.
    #[arg(last = true)]
    args: Vec<String>,
}

pub fn main(a: RunArgs) -> Result<ExitCode, String> {
    if a.program.extension().is_some_and(|e| e == "toml") {
        let out = crate::cluster::Outputs {
            threads: a.threads,
            pcap: a.pcap.as_deref(),
            pcap_at: &a.pcap_at,
            messages: a.messages.as_deref(),
            port_stats: a.port_stats.as_deref(),
        };
        return crate::cluster::main(&a.program, a.json, a.progress, out);
    }
    if a.nodes > 1 {
        return crate::cluster::star(&a.program, a.nodes, a.cores, a.max_cycles, &a.args, a.json);
    }
    let elf = std::fs::read(&a.program).map_err(|e| format!("cannot read {}: {e}", a.program.display()))?;
    let mut cfg = NodeConfig::default();
    cfg.nic.cores = a.cores;
    cfg.nic.core_selection =
        nanopu_nic::params::CoreSelection::parse(&a.core_selection).map_err(|e| format!("--{e}"))?;
    cfg.nic.jbsq_n = a.jbsq_n;
    cfg.nic.msg_cycles = a.msg_cycles;
    cfg.nic.idle_cycles = a.idle_cycles;
    cfg.nic.sched_timer_cycles = (a.sched_timer_us * cfg.timing.clock_hz as f64 / 1e6).round() as u64;
    cfg.max_cycles = a.max_cycles;
    cfg.args = a.args;
    cfg.progress = a.progress;
    cfg.port.mac_fs = nanopu_sim::Time::from_ns_f64(a.mac_ns).as_fs();
    cfg.program_name = a.program.file_name().map_or("program".into(), |n| n.to_string_lossy().into_owned());
    let mut sim = Simulation::new(&elf, cfg).map_err(|e| format!("{}: {e}", a.program.display()))?;
    for spec in &a.sends {
        let (at, msg) = parse_send(spec)?;
        sim.host.send_at(at, msg);
    }
    let outcome = sim.run();
    report(&mut sim, outcome, a.json, !a.sends.is_empty())
}

fn report(
    sim: &mut Simulation,
    outcome: Result<Outcome, SimError>,
    json: bool,
    served: bool,
) -> Result<ExitCode, String> {
    let outcome = outcome.map_err(|e| e.to_string())?;
    let summary = summarize(sim, outcome);
    if json {
        println!("{}", serde_json::to_string_pretty(&summary).expect("summary serializes"));
    } else {
        print!("{}", summary.text());
    }
    Ok(exit_code(&summary, sim, served))
}

/// 0 if every core exited with 0; the first non-zero code otherwise; 3 if the run went
/// quiescent with cores still waiting (the program never exits) and no requests were sent
/// (a server that answered `--send` requests and waits for more ends normally).
fn exit_code(s: &RunSummary, sim: &Simulation, served: bool) -> ExitCode {
    if s.outcome == "quiescent" && served {
        return ExitCode::SUCCESS;
    }
    if s.outcome == "quiescent" {
        eprintln!("nanopu: the program did not exit; nothing is left to simulate:");
        sim.waiting_cores().iter().for_each(|c| eprintln!("  {c}"));
        return ExitCode::from(3);
    }
    let bad = s.cores.iter().filter_map(|c| c.exit_code).find(|&c| c != 0);
    bad.map_or(ExitCode::SUCCESS, |c| ExitCode::from((c & 0xff).max(1) as u8))
}

/// `AT_NS:CONTEXT:WORD[,WORD...]` into a host message to node 0.
fn parse_send(spec: &str) -> Result<(nanopu_sim::Time, nanopu_nic::Message), String> {
    let bad = |why: &str| format!("--send {spec}: {why} (expected AT_NS:CONTEXT:WORD[,WORD...])");
    let mut parts = spec.splitn(3, ':');
    let (Some(at), Some(ctx), Some(words)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad("missing field"));
    };
    let at: f64 = at.parse().map_err(|_| bad("AT_NS is not a number"))?;
    let ctx: u16 = ctx.parse().map_err(|_| bad("CONTEXT is not 0..=65535"))?;
    let words: Result<Vec<u64>, _> = words.split(',').map(parse_word).collect();
    let words = words.map_err(|w| bad(&format!("word '{w}' is not a u64")))?;
    let dst = nanopu_cluster::boot::node_ip(0);
    Ok((nanopu_sim::Time::from_ns_f64(at), nanopu_cluster::TestHost::message(0, dst, ctx, &words)))
}

fn parse_word(w: &str) -> Result<u64, String> {
    let w = w.trim();
    let r = match w.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => w.parse(),
    };
    r.map_err(|_| w.to_string())
}
