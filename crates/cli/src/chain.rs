//! `nanopu chain CONFIG.toml`: chain replication under an open-loop key-value load, swept
//! over offered loads; per request type (GET = read, SET = write) the offered load, achieved
//! throughput and latency, the check's errors, and each reconfiguration after a crash. The
//! sweep and its tables are `nanopu_harness::sweep::chain`, shared with the Python package
//! (`nanopu.chain`); this is the command line's front end over it.

use clap::Args;
use nanopu_harness::sweep::chain::{timeline, Overrides, Sweep};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
#[command(allow_negative_numbers = true)] // "-1" reaches the flag's check, which names it
pub struct ChainArgs {
    /// Chain configuration (.toml): the chain, the load to sweep, the faults.
    pub config: PathBuf,
    /// Write the results table (one row per offered load and request type) as CSV.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write every request (type, node it went to, send and reply time) as CSV.
    #[arg(long)]
    records: Option<PathBuf>,
    /// Write each reconfiguration (crash, detection, new chain, client told) as CSV.
    #[arg(long)]
    reconfigs: Option<PathBuf>,
    /// Override the configuration's offered loads, million requests per second (a,b,c).
    #[arg(long, value_delimiter = ',')]
    rates: Vec<f64>,
    /// Override the configuration's number of requests per load.
    #[arg(long)]
    requests: Option<usize>,
}

pub fn main(a: ChainArgs) -> Result<ExitCode, String> {
    let o = Overrides { rates_mrps: a.rates.clone(), requests: a.requests, seed: None };
    let sweep = Sweep::load(&a.config, &o)?;
    for p in [&a.out, &a.records, &a.reconfigs] {
        write(p.as_deref(), "")?; // a bad path costs no simulation
    }
    let out = sweep.run(true)?;
    print!("{}", out.table.replace(',', "\t"));
    print!("{}", timeline(&out.reconfigs));
    // Written even when a run failed: its records show what went wrong.
    write(a.out.as_deref(), &out.table)?;
    write(a.records.as_deref(), &out.records)?;
    write(a.reconfigs.as_deref(), &out.reconfigs)?;
    if let Some(why) = out.failed {
        return Err(why);
    }
    // As `nanopu run` reports an incomplete run: each problem on stderr, exit status 2.
    out.problems.iter().for_each(|p| eprintln!("nanopu: {p}"));
    Ok(if out.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

fn write(path: Option<&Path>, text: &str) -> Result<(), String> {
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display())),
        None => Ok(()),
    }
}
