//! `nanopu.run_cluster`: a cluster from a configuration file or from the same keys given
//! as a dict (passed here as JSON, read by the same `ClusterFile` and checked by its
//! `validate`), with the test host's sends, and every output the command line writes.

use crate::error;
use crate::interrupt;
use nanopu_cli::cluster::{cluster_sim, Setup};
use nanopu_cli::run::{parse_send, positive_threads};
use nanopu_cluster::config::cluster::ClusterFile;
use nanopu_cluster::report::cluster::summarize_cluster;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::{Path, PathBuf};

/// The configuration: a file (ELF paths relative to its directory), or JSON of its keys
/// (ELF paths relative to the working directory).
fn config(path: Option<String>, json: Option<String>) -> Result<(ClusterFile, PathBuf), String> {
    if let Some(p) = path {
        return ClusterFile::load(Path::new(&p));
    }
    let f: ClusterFile = crate::config_from_json(&json.unwrap_or_default())?;
    f.validate()?;
    Ok((f, PathBuf::from(".")))
}

/// What a cluster run gives: its summary (`nanopu run X.toml --json`), the message
/// records and port statistics as CSV (`--messages`, `--port-stats`), and the capture
/// (`--pcap`) if one was asked for.
type Results<'py> = (String, String, String, Option<Bound<'py, PyBytes>>);

/// `frames`: raw frames the test host sends (time in ns, an Ethernet frame's bytes), each
/// to the node its addresses name (`TestHost::send_raw_at`).
#[pyfunction]
#[pyo3(signature = (path, json, sends, pcap_at, threads, progress, frames = Vec::new()))]
#[allow(clippy::too_many_arguments)] // the call's keywords, one argument each
pub fn run_cluster<'py>(
    py: Python<'py>,
    path: Option<String>,
    json: Option<String>,
    sends: Vec<String>,
    pcap_at: Option<String>,
    threads: Option<usize>,
    progress: bool,
    frames: Vec<(f64, Vec<u8>)>,
) -> PyResult<Results<'py>> {
    let (file, base) = config(path, json).map_err(error)?;
    let threads =
        threads.map(|t| positive_threads(&t.to_string()).map_err(|e| error(format!("threads: {e}"))));
    let threads = threads.transpose()?;
    let sends: Result<Vec<_>, String> = sends.iter().map(|s| parse_send(s, u32::MAX)).collect();
    let setup = Setup { progress, limit: "max_us", threads, pcap_at: pcap_at.as_deref() };
    let mut sim = cluster_sim(&file, &base, sends.map_err(error)?, &setup).map_err(error)?;
    crate::send_frames(&mut sim, frames)?;
    let outcome = interrupt::run(py, || sim.run())?.map_err(error)?;
    let pcap = match pcap_at {
        Some(_) => Some(PyBytes::new(py, &sim.write_capture(Vec::new()).map_err(error)?)),
        None => None,
    };
    let (mut messages, mut ports) = (Vec::new(), Vec::new());
    sim.write_message_records(&mut messages).map_err(error)?;
    sim.write_port_stats(&mut ports).map_err(error)?;
    let summary = serde_json::to_string(&summarize_cluster(&mut sim, outcome)).expect("summary serializes");
    Ok((summary, utf8(messages), utf8(ports), pcap))
}

fn utf8(v: Vec<u8>) -> String {
    String::from_utf8(v).expect("the CSV writers write text")
}
