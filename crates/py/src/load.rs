//! `nanopu.load`: a load sweep (`nanopu load CONFIG.toml`) from a configuration file or
//! from the same keys given as a dict (passed here as JSON, read by the same `LoadFile`),
//! with the command line's overrides and the seed; run by `nanopu_harness::sweep::load`,
//! its results shaped by `nanopu_harness::sweep::table`, as the command line's are.

use crate::error;
use crate::interrupt;
use nanopu_harness::config::load::LoadFile;
use nanopu_harness::sweep::load::{Overrides, Sweep};
use nanopu_harness::sweep::table::{sweep_json, table_csv, Gathered};
use pyo3::prelude::*;
use std::path::Path;

/// The sweep: a file (the server's ELF relative to its directory), or JSON of its keys
/// (the ELF relative to the working directory).
fn sweep(path: Option<String>, json: Option<String>, o: &Overrides) -> Result<Sweep, String> {
    if let Some(p) = path {
        return Sweep::load(Path::new(&p), o);
    }
    let f: LoadFile = crate::config_from_json(&json.unwrap_or_default())?;
    f.validate()?;
    Sweep::new(f, Path::new("."), o)
}

/// What a load sweep gives: its summary (the settings run, `nanopu load --json`'s rows and
/// each run's end and check) as JSON, the table (`--out`) and the cost (`--cost`) as CSV,
/// and every request (`--records`) if asked.
type Results = (String, String, String, Option<String>);

#[pyfunction]
#[pyo3(signature = (path, json, rates, requests, warmup, drain_us, seed, records, progress))]
#[allow(clippy::too_many_arguments)] // the command line's flags, one argument each
pub fn load(
    py: Python<'_>,
    path: Option<String>,
    json: Option<String>,
    rates: Vec<f64>,
    requests: Option<usize>,
    warmup: Option<usize>,
    drain_us: Option<f64>,
    seed: Option<u64>,
    records: bool,
    progress: bool,
) -> PyResult<Results> {
    let o = Overrides { rates_mrps: rates, requests, warmup, drain_us, seed };
    let s = sweep(path, json, &o).map_err(error)?;
    let (g, failed) = interrupt::run(py, || {
        let mut g = Gathered::new(records);
        let ran = s.run(progress, |spec, r| {
            g.add(spec, r);
            Ok(())
        });
        (g, ran.err())
    })?;
    if let Some(e) = failed {
        return Err(error(e));
    }
    let summary = sweep_json(&s.file.load, &g.rows, &g.points, &[]);
    Ok((summary.to_string(), table_csv(&g.rows), g.cost_csv, g.records_csv))
}
