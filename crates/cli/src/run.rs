//! `nanopu run`.

use clap::Args;
use nanopu_cluster::report::{summarize, RunSummary};
use nanopu_cluster::{NodeConfig, Outcome, SimError, Simulation};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct RunArgs {
    /// RISC-V ELF to run on every core (RV64IMAC, lp64).
    program: PathBuf,
    /// Cores in the node.
    #[arg(long, default_value_t = 4)]
    cores: usize,
    /// Stop with an error after this many simulated core cycles (3.2 GHz).
    #[arg(long, default_value_t = 100_000_000)]
    max_cycles: u64,
    /// Ethernet MAC and serial I/O latency at the node's port, each way, in ns.
    #[arg(long, default_value_t = 0.0)]
    mac_ns: f64,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Show progress on stderr.
    #[arg(long)]
    progress: bool,
    /// Arguments for the program (after `--`); they follow `program MAC IP` in argv.
    #[arg(last = true)]
    args: Vec<String>,
}

pub fn main(a: RunArgs) -> Result<ExitCode, String> {
    let elf = std::fs::read(&a.program)
        .map_err(|e| format!("cannot read {}: {e}", a.program.display()))?;
    let mut cfg = NodeConfig::default();
    cfg.nic.cores = a.cores;
    cfg.max_cycles = a.max_cycles;
    cfg.args = a.args;
    cfg.progress = a.progress;
    cfg.port.mac_fs = nanopu_sim::Time::from_ns_f64(a.mac_ns).as_fs();
    cfg.program_name = a
        .program
        .file_name()
        .map_or("program".into(), |n| n.to_string_lossy().into_owned());
    let mut sim =
        Simulation::new(&elf, cfg).map_err(|e| format!("{}: {e}", a.program.display()))?;
    let outcome = sim.run();
    report(&mut sim, outcome, a.json)
}

fn report(
    sim: &mut Simulation,
    outcome: Result<Outcome, SimError>,
    json: bool,
) -> Result<ExitCode, String> {
    let outcome = outcome.map_err(|e| e.to_string())?;
    let summary = summarize(sim, outcome);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("summary serializes")
        );
    } else {
        print!("{}", summary.text());
    }
    Ok(exit_code(&summary, sim))
}

/// 0 if every core exited with 0; the first non-zero code otherwise; 3 if the run went
/// quiescent with cores still waiting (the program never exits).
fn exit_code(s: &RunSummary, sim: &Simulation) -> ExitCode {
    if s.outcome == "quiescent" {
        eprintln!("nanopu: the program did not exit; nothing is left to simulate:");
        sim.waiting_cores().iter().for_each(|c| eprintln!("  {c}"));
        return ExitCode::from(3);
    }
    let bad = s.cores.iter().filter_map(|c| c.exit_code).find(|&c| c != 0);
    bad.map_or(ExitCode::SUCCESS, |c| {
        ExitCode::from((c & 0xff).max(1) as u8)
    })
}
