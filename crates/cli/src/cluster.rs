//! `nanopu run CLUSTER.toml`: a cluster described by a configuration file.

use nanopu_cluster::cluster_config::ClusterFile;
use nanopu_cluster::cluster_report::summarize_cluster;
use nanopu_cluster::Simulation;
use std::path::Path;
use std::process::ExitCode;

/// Files a cluster run writes besides its summary.
pub struct Outputs<'a> {
    pub pcap: Option<&'a Path>,
    pub pcap_at: &'a str,
    pub messages: Option<&'a Path>,
    pub port_stats: Option<&'a Path>,
}

fn create(p: &Path) -> Result<std::io::BufWriter<std::fs::File>, String> {
    std::fs::File::create(p).map(std::io::BufWriter::new).map_err(|e| format!("{}: {e}", p.display()))
}

pub fn main(path: &Path, json: bool, progress: bool, out: Outputs) -> Result<ExitCode, String> {
    let pcap = out.pcap;
    let (file, base) = ClusterFile::load(path)?;
    let mut sim = Simulation::cluster(&file, &base).map_err(|e| format!("{}: {e}", path.display()))?;
    sim.set_progress(progress);
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
