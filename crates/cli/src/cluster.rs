//! `nanopu run CLUSTER.toml`: a cluster described by a configuration file.

use nanopu_cluster::cluster_config::ClusterFile;
use nanopu_cluster::cluster_report::summarize_cluster;
use nanopu_cluster::Simulation;
use std::path::Path;
use std::process::ExitCode;

/// Files a cluster run writes besides its summary, and its host threads.
pub struct Outputs<'a> {
    /// Host threads (None: the default; see `Simulation::set_threads`).
    pub threads: Option<usize>,
    pub pcap: Option<&'a Path>,
    pub pcap_at: &'a str,
    pub messages: Option<&'a Path>,
    pub port_stats: Option<&'a Path>,
}

fn create(p: &Path) -> Result<std::io::BufWriter<std::fs::File>, String> {
    std::fs::File::create(p).map(std::io::BufWriter::new).map_err(|e| format!("{}: {e}", p.display()))
}

pub fn main(path: &Path, json: bool, progress: bool, out: Outputs) -> Result<ExitCode, String> {
    let (file, base) = ClusterFile::load(path)?;
    run(&file, &base, path, json, progress, out)
}

/// `nanopu run PROGRAM.elf --nodes N`: N nodes on one switch, every core running the
/// program, the other parameters at their defaults.
pub fn star(
    elf: &Path,
    nodes: u32,
    cores: usize,
    max_cycles: u64,
    args: &[String],
    json: bool,
) -> Result<ExitCode, String> {
    let abs = std::fs::canonicalize(elf).map_err(|e| format!("cannot read {}: {e}", elf.display()))?;
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    let text = format!(
        "max_us = {}\n[topology]\nkind = \"star\"\nnodes = {nodes}\n[node]\ncores = {cores}\n[[program]]\nnodes = \"all\"\nelf = {:?}\nargs = [{}]\n",
        max_cycles as f64 / 3200.0,
        abs.display().to_string(),
        args.join(", ")
    );
    let file = ClusterFile::parse(&text)?;
    let none = Outputs { threads: None, pcap: None, pcap_at: "node:0", messages: None, port_stats: None };
    run(&file, Path::new("."), elf, json, false, none)
}

fn run(
    file: &ClusterFile,
    base: &Path,
    path: &Path,
    json: bool,
    progress: bool,
    out: Outputs,
) -> Result<ExitCode, String> {
    let pcap = out.pcap;
    let mut sim = Simulation::cluster(file, base).map_err(|e| format!("{}: {e}", path.display()))?;
    sim.set_progress(progress);
    if let Some(t) = out.threads {
        sim.set_threads(t);
    }
    if pcap.is_some() {
        sim.capture_at(out.pcap_at)?;
    }
    let outcome = sim.run().map_err(|e| e.to_string())?;
    if let Some(p) = pcap {
        sim.write_capture(create(p)?)?;
    }
    if let Some(p) = out.messages {
        sim.write_message_records(create(p)?).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if let Some(p) = out.port_stats {
        sim.write_port_stats(create(p)?).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let s = summarize_cluster(&mut sim, outcome);
    if json {
        println!("{}", serde_json::to_string_pretty(&s).expect("summary serializes"));
    } else {
        print!("{}", s.text());
    }
    Ok(if s.failures.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
