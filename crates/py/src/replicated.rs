//! `nanopu.chain` and `nanopu.raft`: the replicated services' runs (`nanopu chain
//! CONFIG.toml`, `nanopu raft CONFIG.toml`) from a configuration file or from the same keys
//! given as a dict (passed here as JSON, read by the same `ChainFile` and `RaftFile`), with
//! the command line's overrides; run and shaped by `nanopu_harness::sweep::chain` and
//! `nanopu_harness::clients::raft::report`, as the command line's are.

use crate::error;
use crate::interrupt;
use nanopu_harness::clients::raft::config::RaftFile;
use nanopu_harness::clients::raft::report::{self, Overrides};
use nanopu_harness::clients::raft::RaftSpec;
use nanopu_harness::config::chain::ChainFile;
use nanopu_harness::sweep::chain::{self as chain_sweep, timeline};
use pyo3::prelude::*;
use serde_json::json;
use std::path::{Path, PathBuf};

/// A chain sweep's summary (the settings run, the reconfigurations in words) as JSON, and
/// its table, records and reconfigurations as CSV (`--out`, `--records`, `--reconfigs`).
type ChainResults = (String, String, String, String);

#[pyfunction]
#[pyo3(signature = (path, json, rates, requests, seed, progress))]
pub fn chain(
    py: Python<'_>,
    path: Option<String>,
    json: Option<String>,
    rates: Vec<f64>,
    requests: Option<usize>,
    seed: Option<u64>,
    progress: bool,
) -> PyResult<ChainResults> {
    let o = chain_sweep::Overrides { rates_mrps: rates, requests, seed };
    let s = match path {
        Some(p) => chain_sweep::Sweep::load(Path::new(&p), &o),
        None => crate::config_from_json::<ChainFile>(&keys(json))
            .and_then(|f| chain_sweep::Sweep::new(f, PathBuf::from("."), &o)),
    }
    .map_err(error)?;
    let out = interrupt::run(py, || s.run(progress))?.map_err(error)?;
    if let Some(why) = out.failed {
        return Err(error(why));
    }
    let l = &s.file.load;
    let summary = json!({ "seed": l.seed, "rates_mrps": l.rates_mrps, "requests": l.requests,
        "warmup": l.warmup, "timeline": timeline(&out.reconfigs).lines().collect::<Vec<_>>(),
        "complete": out.problems.is_empty(), "problems": out.problems });
    Ok((summary.to_string(), out.table, out.records, out.reconfigs))
}

/// A file's keys given as JSON (the Python API's dict).
fn keys(json: Option<String>) -> String {
    json.unwrap_or_default()
}

/// A Raft run's summary (`nanopu raft --json`) as JSON, its figures as one CSV row
/// (`--out`), its requests and leader timeline as CSV (`--records`, `--timeline`) and its
/// text (what `nanopu raft` prints).
type RaftResults = (String, String, String, String, String);

#[pyfunction]
#[pyo3(signature = (path, json, seed, replicas, rate, requests, progress))]
#[allow(clippy::too_many_arguments)] // the command line's flags, one argument each
pub fn raft(
    py: Python<'_>,
    path: Option<String>,
    json: Option<String>,
    seed: Option<u64>,
    replicas: Option<u32>,
    rate: Option<f64>,
    requests: Option<usize>,
    progress: bool,
) -> PyResult<RaftResults> {
    let o = Overrides { seed, replicas, rate_mrps: rate, requests };
    let s = raft_spec(path, json, &o).map_err(error)?;
    let started = std::time::Instant::now();
    let r = interrupt::run(py, || s.run())?.map_err(error)?;
    if progress {
        eprintln!("raft: simulated {:.1} us in {:.1} s", r.end.as_us_f64(), started.elapsed().as_secs_f64());
    }
    let summary = report::as_json(&s, &r).to_string();
    Ok((summary, report::csv_row(&s, &r), report::records(&r), report::timeline(&r), report::text(&s, &r)))
}

/// The spec: a file (the ELF relative to its directory), or JSON of its keys (relative to
/// the working directory), overridden.
fn raft_spec(path: Option<String>, json: Option<String>, o: &Overrides) -> Result<RaftSpec, String> {
    match path {
        Some(p) => o.load(Path::new(&p)),
        None => {
            let f: RaftFile = crate::config_from_json(&keys(json))?;
            o.apply(f.to_spec(Path::new("."), "config")?, "config")
        }
    }
}
