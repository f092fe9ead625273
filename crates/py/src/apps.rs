//! `nanopu.app` and `nanopu.bench`: the paper's applications and the microbenchmarks
//! (`nanopu app NAME FLAGS`, `nanopu bench NAME FLAGS`), their flags parsed by the command
//! line's own parsers and each run built, run and shaped by `nanopu_cli::app` and
//! `nanopu_cli::bench`, as the command line's are; the result is the JSON it prints.

use crate::{error, interrupt, parse};
use clap::Parser;
use nanopu_cli::app::AppArgs;
use nanopu_cli::bench::BenchArgs;
use pyo3::prelude::*;

/// `nanopu app`'s flags.
#[derive(Parser)]
#[command(name = "nanopu app")]
struct AppCmd {
    #[command(flatten)]
    args: AppArgs,
}

/// `nanopu bench`'s flags.
#[derive(Parser)]
#[command(name = "nanopu bench")]
struct BenchCmd {
    #[command(flatten)]
    args: BenchArgs,
}

/// An application's run (`nanopu app NAME FLAGS`): the JSON document `nanopu app` prints
/// (its `ok` false when an answer differs from the host's, where the command exits 1).
#[pyfunction]
pub fn app(py: Python<'_>, argv: Vec<String>, progress: bool) -> PyResult<String> {
    let what = format!("app {}", argv.first().map_or("", String::as_str));
    let cmd: AppCmd = parse(argv)?;
    let (_, doc) = timed(py, progress, &what, || cmd.args.run())?.map_err(error)?;
    Ok(doc.to_string())
}

/// A benchmark's run (`nanopu bench NAME FLAGS`): the JSON document `nanopu bench` prints.
#[pyfunction]
pub fn bench(py: Python<'_>, argv: Vec<String>, progress: bool) -> PyResult<String> {
    let what = format!("bench {}", argv.first().map_or("", String::as_str));
    let cmd: BenchCmd = parse(argv)?;
    let doc = timed(py, progress, &what, || cmd.args.run())?.map_err(error)?;
    Ok(doc.to_string())
}

/// Run `f` interruptibly; with `progress`, say on stderr how long it took (as `nanopu.raft`).
fn timed<T: Send>(py: Python<'_>, progress: bool, what: &str, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let started = std::time::Instant::now();
    let out = interrupt::run(py, f)?;
    if progress {
        eprintln!("{what}: ran in {:.1} s", started.elapsed().as_secs_f64());
    }
    Ok(out)
}

/// The program an application loads, for the sweeps' cache (docs/python.md, "The cache").
#[pyfunction]
pub fn app_programs(argv: Vec<String>) -> PyResult<Vec<String>> {
    let cmd: AppCmd = parse(argv)?;
    Ok(vec![cmd.args.program().to_string_lossy().into_owned()])
}

/// The programs a benchmark loads, for the sweeps' cache.
#[pyfunction]
pub fn bench_programs(argv: Vec<String>) -> PyResult<Vec<String>> {
    let cmd: BenchCmd = parse(argv)?;
    Ok(cmd.args.programs().paths().iter().map(|p| p.to_string_lossy().into_owned()).collect())
}
