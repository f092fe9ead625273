//! `nanopu raft CONFIG.toml`: Raft replicas under an open-loop client, faults, the safety
//! checks; prints write and read latency, throughput, elections and the leader timeline
//! (docs/apps/raft.md). The results' shapes are `nanopu_harness::clients::raft::report`, shared with
//! the Python package (`nanopu.raft`); this is the command line's front end over them.

use clap::Args;
use nanopu_harness::clients::raft::report::{self, Overrides};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
#[command(allow_negative_numbers = true)] // "-1" reaches the flag's check, which names it
pub struct RaftArgs {
    /// Raft configuration (.toml; keys: docs/config.md, "Raft files").
    pub config: PathBuf,
    /// Override the seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override raft.replicas.
    #[arg(long)]
    replicas: Option<u32>,
    /// Override client.rate_mrps.
    #[arg(long)]
    rate: Option<f64>,
    /// Override client.requests.
    #[arg(long)]
    requests: Option<usize>,
    /// Append the run's figures as one CSV row (a header first if the file is new).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write every request (id, op, key, time, latency, sends, replica, log index) as CSV.
    #[arg(long)]
    records: Option<PathBuf>,
    /// Write the leader timeline (time, term, node) as CSV.
    #[arg(long)]
    timeline: Option<PathBuf>,
    /// Print the figures as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Say on stderr how much was simulated and in how long.
    #[arg(long)]
    progress: bool,
}

pub fn main(a: RaftArgs) -> Result<ExitCode, String> {
    let o = Overrides { seed: a.seed, replicas: a.replicas, rate_mrps: a.rate, requests: a.requests };
    let s = o.load(&a.config)?;
    let started = Instant::now();
    let r = s.run()?;
    if a.progress {
        eprintln!("raft: simulated {:.1} us in {:.1} s", r.end.as_us_f64(), started.elapsed().as_secs_f64());
    }
    write(a.out.as_deref(), &report::csv_row(&s, &r), true)?;
    write(a.records.as_deref(), &report::records(&r), false)?;
    write(a.timeline.as_deref(), &report::timeline(&r), false)?;
    match a.json {
        true => println!("{}", serde_json::to_string_pretty(&report::as_json(&s, &r)).expect("json")),
        false => print!("{}", report::text(&s, &r)),
    }
    Ok(if r.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Write `body` to `path` (if asked); `append`: add to the file, its header once.
fn write(path: Option<&Path>, body: &str, append: bool) -> Result<(), String> {
    let Some(p) = path else { return Ok(()) };
    let err = |e: std::io::Error| format!("{}: {e}", p.display());
    let text = match (append, p.exists()) {
        (true, true) => std::fs::read_to_string(p).map_err(err)? + body.split_once('\n').map_or("", |x| x.1),
        _ => body.to_string(),
    };
    std::fs::write(p, text).map_err(err)
}
