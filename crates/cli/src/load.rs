//! `nanopu load CONFIG.toml`: sweep the offered load on a server node and tabulate latency.
//! The sweep and its tables are `nanopu_harness::sweep::load` and `load_table`, shared with
//! the Python package (`nanopu.load`); this is the command line's front end over them.

use clap::Args;
use nanopu_harness::sweep::load::{Overrides, Sweep};
use nanopu_harness::sweep::table::{self as table, Row, COST_COLUMNS, RECORD_COLUMNS};
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
#[command(allow_negative_numbers = true)] // "-1" reaches the flag's check, which names it
pub struct LoadArgs {
    /// Load configuration (.toml): the server node and the load to sweep.
    pub config: PathBuf,
    /// Write the results table (one row per offered load and class) as CSV.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write every request (class, context, service cycles, send and reply time) as CSV.
    #[arg(long)]
    records: Option<PathBuf>,
    /// Write what the server's cores spent per reply at each offered load, from the
    /// simulator's counters after load.start_us (instructions, busy cycles, D-cache and
    /// LLC misses), as CSV.
    #[arg(long)]
    cost: Option<PathBuf>,
    /// Print the table as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Show each offered load's end on stderr as it finishes.
    #[arg(long)]
    progress: bool,
    /// Override the configuration's offered loads, million requests per second (a,b,c).
    #[arg(long, value_delimiter = ',')]
    rates: Vec<f64>,
    /// Override the configuration's number of requests per load.
    #[arg(long)]
    requests: Option<usize>,
    /// Override the configuration's number of unmeasured requests at the start of each load.
    #[arg(long)]
    warmup: Option<usize>,
    /// Override how long after the last send a run waits for the last replies, us.
    #[arg(long)]
    drain_us: Option<f64>,
}

impl LoadArgs {
    fn overrides(&self) -> Overrides {
        let (rates_mrps, requests, warmup, drain_us) =
            (self.rates.clone(), self.requests, self.warmup, self.drain_us);
        Overrides { rates_mrps, requests, warmup, drain_us, seed: None }
    }
}

pub fn main(a: LoadArgs) -> Result<ExitCode, String> {
    let sweep = Sweep::load(&a.config, &a.overrides())?;
    nanopu_cli::outputs::distinct(&[
        ("--out", a.out.as_deref()),
        ("--records", a.records.as_deref()),
        ("--cost", a.cost.as_deref()),
    ])?;
    let out = create(a.out.as_ref())?;
    let mut records = Records { file: create(a.records.as_ref())?.map(|(p, f)| (p, BufWriter::new(f))) };
    records.write(RECORD_COLUMNS)?;
    let mut cost = create(a.cost.as_ref())?;
    let mut cost_csv = String::from(COST_COLUMNS);
    let mut rows = Vec::new();
    let stopped = sweep.run(a.progress, |spec, r| {
        rows.extend(table::rows(spec, r));
        cost_csv += &table::cost_row(spec, r);
        records.append(spec, r)
    })?;
    records.finish()?;
    if let Some((p, f)) = &mut cost {
        f.write_all(cost_csv.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    write_outputs(&a, out, &rows)?;
    Ok(status(stopped, &rows))
}

/// Exit status 2 for a sweep that a stop (Ctrl-C, SIGTERM) ended early, saying where, as
/// every incomplete run does (README); 0 otherwise.
fn status(stopped: Option<nanopu_cluster::Outcome>, rows: &[Row]) -> ExitCode {
    let Some(stop) = stopped else { return ExitCode::SUCCESS };
    let at = rows.last().map_or(String::new(), |r| format!(" at offered load {} Mrps", r.0));
    eprintln!("nanopu: the load sweep is incomplete: {}{at}; no later load was run", stop.name());
    ExitCode::from(2)
}

/// Create an output file before the runs, so that a bad path costs no simulation.
fn create(p: Option<&PathBuf>) -> Result<Option<(&PathBuf, File)>, String> {
    p.map(|p| File::create(p).map(|f| (p, f)).map_err(|e| format!("{}: {e}", p.display()))).transpose()
}

/// The `--records` file, written a load at a time so that no run's requests are kept
/// after it.
struct Records<'a> {
    file: Option<(&'a PathBuf, BufWriter<File>)>,
}

impl Records<'_> {
    fn write(&mut self, text: &str) -> Result<(), String> {
        let Some((p, w)) = &mut self.file else { return Ok(()) };
        w.write_all(text.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))
    }

    fn append(
        &mut self,
        spec: &nanopu_harness::loadgen::LoadSpec,
        r: &nanopu_harness::loadgen::LoadResult,
    ) -> Result<(), String> {
        if self.file.is_some() {
            self.write(&table::records_csv(spec, r))?;
        }
        Ok(())
    }

    fn finish(self) -> Result<(), String> {
        let Some((p, mut w)) = self.file else { return Ok(()) };
        w.flush().map_err(|e| format!("{}: {e}", p.display()))
    }
}

/// The table to the `--out` file (created before the runs) and to stdout.
fn write_outputs(a: &LoadArgs, out: Option<(&PathBuf, File)>, rows: &[Row]) -> Result<(), String> {
    if let Some((p, mut f)) = out {
        f.write_all(table::table_csv(rows).as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&table::table_json(rows)).expect("json"));
    } else {
        print!("{}", table::table_text(rows));
    }
    Ok(())
}
