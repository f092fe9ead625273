//! `nanopu load CONFIG.toml`: sweep the offered load on a server node and tabulate latency.
//! The sweep and its tables are `nanopu_harness::sweep::load` and `load_table`, shared with
//! the Python package (`nanopu.load`); this is the command line's front end over them.

use clap::Args;
use nanopu_cluster::report::marks::csv_trailer;
use nanopu_harness::sweep::load::{Overrides, Sweep};
use nanopu_harness::sweep::table::{self as table, Gathered, RECORD_COLUMNS};
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
    nanopu_cli::report::outputs::distinct(&[
        ("--out", a.out.as_deref()),
        ("--records", a.records.as_deref()),
        ("--cost", a.cost.as_deref()),
    ])?;
    let out = create(a.out.as_ref())?;
    let mut records = Records { file: create(a.records.as_ref())?.map(|(p, f)| (p, BufWriter::new(f))) };
    records.write(RECORD_COLUMNS)?;
    let mut cost = create(a.cost.as_ref())?;
    let mut g = Gathered::new(false);
    let ran = sweep.run(a.progress, |spec, r| {
        g.add(spec, r);
        records.append(spec, r)
    });
    // The first load whose figures do not stand ends the sweep: what ran is written all
    // the same, every file marked with why (`report::marks`).
    let problems: Vec<String> = ran.err().into_iter().collect();
    records.finish(&problems)?;
    if let Some((p, f)) = &mut cost {
        let text = g.cost_csv.clone() + &csv_trailer(&problems);
        f.write_all(text.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    write_outputs(&a, out, &sweep, &g, &problems)
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

    fn finish(mut self, problems: &[String]) -> Result<(), String> {
        self.write(&csv_trailer(problems))?;
        let Some((p, mut w)) = self.file else { return Ok(()) };
        w.flush().map_err(|e| format!("{}: {e}", p.display()))
    }
}

/// The table to the `--out` file (created before the runs) and to stdout (with `--json`
/// one document: `table::sweep_json`), the sweep's problems on stderr: exit status 0 when
/// every load ran and its figures stand, 2 otherwise.
fn write_outputs(
    a: &LoadArgs,
    out: Option<(&PathBuf, File)>,
    sweep: &Sweep,
    g: &Gathered,
    problems: &[String],
) -> Result<ExitCode, String> {
    if let Some((p, mut f)) = out {
        let text = table::table_csv(&g.rows) + &csv_trailer(problems);
        f.write_all(text.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if a.json {
        let doc = table::sweep_json(&sweep.file.load, &g.rows, &g.points, problems);
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    } else {
        print!("{}", table::table_text(&g.rows));
    }
    problems.iter().for_each(|p| eprintln!("nanopu: error: {p}"));
    Ok(if problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}
