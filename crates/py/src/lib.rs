//! `nanopu._native`: the simulator in-process for the Python package (docs/python.md).
//!
//! Every run is described by the structs the command line fills: the Python keywords of
//! `nanopu.run`, `sort`, `app` and `bench` are put onto `RunArgs`, `SortArgs`, `AppArgs` and
//! `BenchArgs` field by field, each value checked by its flag's own value parser
//! (`nanopu_cli::keywords`), and a cluster configuration is read by `ClusterFile`. Results go back as the JSON, CSV and pcap the
//! command line writes; the Python side turns them into DataFrames and holds no
//! simulation logic.

mod apps;
mod cluster;
mod interrupt;
mod load;
mod replicated;

use clap::Parser;
use nanopu_cli::keywords;
use nanopu_cli::run::{single_sim, RunArgs};
use nanopu_cli::sort::{summary_json, SortArgs};
use nanopu_cluster::report::summarize;
use nanopu_harness::sort::report::stages_csv;
use nanopu_sim::Time;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

create_exception!(
    _native,
    NanopuError,
    PyException,
    "The simulator refused a run or stopped it; the message says why."
);

/// A configuration given as a dict (JSON of its keys), read by its file's struct; an error
/// names the key as a dotted path ("topology.nodes: invalid value ...").
fn config_from_json<T: DeserializeOwned>(json: &str) -> Result<T, String> {
    keywords::named(&mut serde_json::Deserializer::from_str(json))
}

/// A simulator error as the Python exception, with the simulator's message.
fn error(msg: impl std::fmt::Display) -> PyErr {
    NanopuError::new_err(msg.to_string())
}

/// `nanopu run`'s flags.
#[derive(Parser)]
#[command(name = "nanopu run")]
struct RunCmd {
    #[command(flatten)]
    args: RunArgs,
}

/// `nanopu sort`'s flags.
#[derive(Parser)]
#[command(name = "nanopu sort")]
struct SortCmd {
    #[command(flatten)]
    args: SortArgs,
}

/// Command `T`'s struct from Python keywords (a JSON object): its defaults are clap's
/// attributes (the command with only `head`, its name or positional word, given), each
/// keyword put in its field (`nanopu_cli::keywords`); `what` names the call in errors.
fn from_keywords<T: Parser, A: Serialize + DeserializeOwned>(
    head: &[&str],
    keywords: &str,
    what: &str,
    args: impl Fn(T) -> A,
) -> PyResult<A> {
    let defaults = args(defaults::<T>(head)?);
    keywords::apply(&defaults, &T::command(), keywords, what).map_err(error)
}

/// The struct of command `T` with only `head` given: every default filled in.
fn defaults<T: Parser>(head: &[&str]) -> PyResult<T> {
    let mut m = T::command().no_binary_name(true).try_get_matches_from(head).map_err(clap_error)?;
    T::from_arg_matches_mut(&mut m).map_err(clap_error)
}

/// clap's message without its usage lines (the Python API has no command line).
fn clap_error(e: clap::Error) -> PyErr {
    let text = e.render().to_string();
    let first = text.split("\n\nUsage:").next().unwrap_or(&text);
    error(first.trim().trim_start_matches("error: "))
}

/// One node running an ELF program with the test host on its port (`nanopu run
/// PROGRAM.elf FLAGS`), the host also sending `frames` (time in ns, the bytes of an
/// Ethernet frame); returns the run's summary as JSON (`nanopu run --json`).
#[pyfunction]
#[pyo3(signature = (program, keywords, frames = Vec::new()))]
fn run_program(
    py: Python<'_>,
    program: &str,
    keywords: &str,
    frames: Vec<(f64, Vec<u8>)>,
) -> PyResult<String> {
    let args = from_keywords(&[program], keywords, "nanopu.run", |c: RunCmd| c.args)?;
    let mut sim = single_sim(&args).map_err(error)?;
    send_frames(&mut sim, frames)?;
    let outcome = interrupt::run(py, || sim.run())?.map_err(error)?;
    Ok(serde_json::to_string(&summarize(&mut sim, outcome)).expect("summary serializes"))
}

/// The test host sends each frame at its time (ns; an error names the packet).
fn send_frames(sim: &mut nanopu_cluster::Simulation, frames: Vec<(f64, Vec<u8>)>) -> PyResult<()> {
    for (i, (at, frame)) in frames.into_iter().enumerate() {
        let at = Time::checked_from_ns_f64(at, &format!("packets[{i}]'s time")).map_err(error)?;
        sim.host.send_raw_at(at, frame);
    }
    Ok(())
}

/// A validated sort (`nanopu sort FLAGS`): the summary JSON of `nanopu sort --json`, and
/// every core's stages as CSV (`--stages`).
#[pyfunction]
fn sort(py: Python<'_>, keywords: &str, progress: bool) -> PyResult<(String, String)> {
    let a = &sort_args(keywords)?;
    let spec = a.checked_spec().map_err(error)?;
    let deadline = a.deadline().map_err(error)?;
    let started = std::time::Instant::now();
    let mut run = interrupt::run(py, || spec.run_limited(a.apps(), progress, deadline))?.map_err(error)?;
    a.write_files(&mut run).map_err(error)?;
    let doc = summary_json(a, &run, started.elapsed().as_secs_f64());
    let stages = stages_csv(&run.outputs, spec.cores_per_node as usize, run.sim.clock().hz());
    Ok((doc.to_string(), stages))
}

/// A message between the test host (10.0.0.1) and node 0 as the Ethernet frames that would
/// carry it (`capture::frames_of_message`).
#[pyfunction]
fn message_frames(
    src_ip: &str,
    src_context: u16,
    dst_context: u16,
    len: u16,
    words: Vec<u64>,
) -> PyResult<Vec<Vec<u8>>> {
    use nanopu_cluster::host::HOST_IP;
    use nanopu_cluster::net::capture;
    use nanopu_cluster::TestHost;
    let src: std::net::Ipv4Addr = src_ip.parse().map_err(|e| error(format!("{src_ip}: {e}")))?;
    if words.len() != usize::from(len).div_ceil(8) {
        return Err(error(format!("{} words do not hold a {len}-byte payload", words.len())));
    }
    let mut m = TestHost::message_len(src_context, HOST_IP, dst_context, len, &words);
    (m.src_ip, m.dst_ip) = (u32::from(src), HOST_IP);
    capture::frames_of_message(&m).map_err(error)
}

/// The JSON Schema of a configuration file, "cluster", "load", "raft" or "chain" (`nanopu schema KIND`).
#[pyfunction]
fn schema(kind: &str) -> PyResult<String> {
    use nanopu_harness::schema::{self, ConfigKind};
    let (_, k) = ConfigKind::ALL.iter().find(|(n, _)| *n == kind).ok_or_else(|| {
        error(format!(
            "schema: \"{kind}\" is not a kind of configuration file (\"cluster\", \"load\", \"raft\" or \"chain\")"
        ))
    })?;
    Ok(schema::schema(*k).to_string())
}

/// The program a sort loads (`--apps` joined with its algorithm's ELF): with its flags, what
/// its results depend on; the sweeps' cache hashes its bytes (docs/python.md, "The cache").
#[pyfunction]
fn sort_program(keywords: &str) -> PyResult<String> {
    let a = sort_args(keywords)?;
    let spec = a.checked_spec().map_err(error)?;
    Ok(a.apps().join(spec.algorithm.elf()).to_string_lossy().into_owned())
}

/// `nanopu sort`'s flags from `nanopu.sort`'s keywords.
fn sort_args(keywords: &str) -> PyResult<SortArgs> {
    from_keywords(&[], keywords, "nanopu.sort", |c: SortCmd| c.args)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NanopuError", m.py().get_type::<NanopuError>())?;
    m.add_function(wrap_pyfunction!(run_program, m)?)?;
    m.add_function(wrap_pyfunction!(sort, m)?)?;
    m.add_function(wrap_pyfunction!(sort_program, m)?)?;
    m.add_function(wrap_pyfunction!(cluster::run_cluster, m)?)?;
    m.add_function(wrap_pyfunction!(load::load, m)?)?;
    m.add_function(wrap_pyfunction!(replicated::chain, m)?)?;
    m.add_function(wrap_pyfunction!(replicated::raft, m)?)?;
    m.add_function(wrap_pyfunction!(apps::app, m)?)?;
    m.add_function(wrap_pyfunction!(apps::bench, m)?)?;
    m.add_function(wrap_pyfunction!(apps::app_programs, m)?)?;
    m.add_function(wrap_pyfunction!(apps::bench_programs, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(message_frames, m)?)?;
    Ok(())
}
