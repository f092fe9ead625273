//! `nanopu run CLUSTER.toml`: a cluster described by a configuration file.

use nanopu_cluster::cluster_config::ClusterFile;
use nanopu_cluster::cluster_report::summarize_cluster;
use nanopu_cluster::Simulation;
use std::path::Path;
use std::process::ExitCode;

pub fn main(
    path: &Path,
    json: bool,
    progress: bool,
    pcap: Option<&Path>,
    node: u32,
) -> Result<ExitCode, String> {
    let (file, base) = ClusterFile::load(path)?;
    let mut sim = Simulation::cluster(&file, &base).map_err(|e| format!("{}: {e}", path.display()))?;
    sim.set_progress(progress);
    if pcap.is_some() {
        sim.capture_node(node)?;
    }
    let outcome = sim.run().map_err(|e| e.to_string())?;
    if let Some(p) = pcap {
        let f = std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?;
        sim.write_capture(std::io::BufWriter::new(f))?;
    }
    let s = summarize_cluster(&mut sim, outcome);
    if json {
        println!("{}", serde_json::to_string_pretty(&s).expect("summary serializes"));
    } else {
        print!("{}", s.text());
    }
    Ok(if s.failures.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
