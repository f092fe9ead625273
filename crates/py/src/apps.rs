//! `nanopu.app` and `nanopu.bench`: the paper's applications and the microbenchmarks
//! (`nanopu app NAME FLAGS`, `nanopu bench NAME FLAGS`), their keywords put onto the
//! command line's `AppArgs` and `BenchArgs` and each run built, run and shaped by
//! `nanopu_cli::app` and `nanopu_cli::bench`, as the command line's are; the result is the
//! JSON it prints.

use crate::{error, from_keywords, interrupt};
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
pub fn app(py: Python<'_>, name: &str, keywords: &str, progress: bool) -> PyResult<String> {
    let args = app_args(name, keywords)?;
    let (_, doc) = timed(py, progress, &format!("app {name}"), || args.run())?.map_err(error)?;
    Ok(doc.to_string())
}

/// A benchmark's run (`nanopu bench NAME FLAGS`): the JSON document `nanopu bench` prints.
#[pyfunction]
pub fn bench(py: Python<'_>, name: &str, keywords: &str, progress: bool) -> PyResult<String> {
    let args = bench_args(name, keywords)?;
    let doc = timed(py, progress, &format!("bench {name}"), || args.run())?.map_err(error)?;
    Ok(doc.to_string())
}

/// `nanopu app NAME`'s flags from `nanopu.app`'s keywords.
fn app_args(name: &str, keywords: &str) -> PyResult<AppArgs> {
    from_keywords(&[name], keywords, &format!("nanopu.app(\"{name}\")"), |c: AppCmd| c.args)
}

/// `nanopu bench NAME`'s flags from `nanopu.bench`'s keywords.
fn bench_args(name: &str, keywords: &str) -> PyResult<BenchArgs> {
    from_keywords(&[name], keywords, &format!("nanopu.bench(\"{name}\")"), |c: BenchCmd| c.args)
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
pub fn app_programs(name: &str, keywords: &str) -> PyResult<Vec<String>> {
    Ok(vec![app_args(name, keywords)?.program().to_string_lossy().into_owned()])
}

/// The programs a benchmark loads, for the sweeps' cache.
#[pyfunction]
pub fn bench_programs(name: &str, keywords: &str) -> PyResult<Vec<String>> {
    let args = bench_args(name, keywords)?;
    Ok(args.programs().paths().iter().map(|p| p.to_string_lossy().into_owned()).collect())
}
