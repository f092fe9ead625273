//! `nanopu chain CONFIG.toml`: chain replication under an open-loop key-value load, swept
//! over offered loads; per request type (GET = read, SET = write) the offered load, achieved
//! throughput and latency, the check's errors, and each reconfiguration after a crash. The
//! sweep and its tables are `nanopu_harness::sweep::chain`, shared with the Python package
//! (`nanopu.chain`); this is the command line's front end over it.

use clap::Args;
use nanopu_harness::sweep::chain::{timeline, Output, Overrides, Sweep};
use serde_json::{json, Value};
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
    /// Override the configuration's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Print the results as one JSON document instead of text.
    #[arg(long)]
    json: bool,
    /// Show each offered load's end and check on stderr as it finishes.
    #[arg(long)]
    progress: bool,
}

pub fn main(a: ChainArgs) -> Result<ExitCode, String> {
    let o = Overrides { rates_mrps: a.rates.clone(), requests: a.requests, seed: a.seed };
    let sweep = Sweep::load(&a.config, &o)?;
    nanopu_cli::report::outputs::distinct(&[
        ("--out", a.out.as_deref()),
        ("--records", a.records.as_deref()),
        ("--reconfigs", a.reconfigs.as_deref()),
    ])?;
    for p in [&a.out, &a.records, &a.reconfigs] {
        write(p.as_deref(), "")?; // a bad path costs no simulation
    }
    let out = sweep.run(a.progress)?;
    match a.json {
        true => println!("{}", serde_json::to_string_pretty(&document(&sweep, &out)).expect("json")),
        false => {
            print!("{}", out.table.replace(',', "\t"));
            print!("{}", timeline(&out.reconfigs));
        }
    }
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

/// `--json`'s document: the settings run, a row per offered load and request type, the
/// reconfigurations, the timeline in words, why the sweep failed (null if it did not), and
/// the run's judgement as every subcommand's `--json` gives it (`complete`, `problems`).
fn document(sweep: &Sweep, out: &Output) -> Value {
    let l = &sweep.file.load;
    json!({ "seed": l.seed, "rates_mrps": l.rates_mrps, "requests": l.requests, "warmup": l.warmup,
        "rows": csv_objects(&out.table), "reconfigurations": csv_objects(&out.reconfigs),
        "timeline": timeline(&out.reconfigs).lines().collect::<Vec<_>>(), "failed": out.failed,
        "complete": out.failed.is_none() && out.problems.is_empty(), "problems": out.problems })
}

/// A CSV table (a header, then rows) as one object per row: numbers as numbers, an empty
/// cell as null, anything else (a class name, "inf") as a string.
fn csv_objects(csv: &str) -> Value {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let number = |c: &str| {
        let whole = c.parse::<u64>().ok().map(serde_json::Number::from);
        whole.or_else(|| c.parse::<f64>().ok().and_then(serde_json::Number::from_f64))
    };
    let cell = |c: &str| match number(c) {
        Some(n) => Value::Number(n),
        None if c.is_empty() => Value::Null,
        None => Value::String(c.into()),
    };
    let row =
        |l: &str| Value::Object(header.iter().map(|h| h.to_string()).zip(l.split(',').map(cell)).collect());
    Value::Array(lines.map(row).collect())
}

fn write(path: Option<&Path>, text: &str) -> Result<(), String> {
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display())),
        None => Ok(()),
    }
}
