//! `nanopu run CLUSTER.toml` (a cluster described by a configuration file) and
//! `nanopu run PROGRAM.elf --nodes N` (N nodes on one switch).

use nanopu_cluster::config::cluster::{ClusterFile, NodeFile, ProgramFile};
use nanopu_cluster::report::gather::gathered_summary;
use nanopu_cluster::report::records::MessageRecord;
use nanopu_cluster::Simulation;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

/// Files a cluster run writes besides its summary, created before the run so that an
/// unwritable path fails at once rather than after the whole run (across MPI ranks by rank
/// 0 alone, which writes them); and its host threads.
pub struct Outputs {
    /// Host threads (None: the default; see `Simulation::set_threads`).
    pub threads: Option<usize>,
    /// The pcap file and where it captures.
    pub pcap: Option<(Out, String)>,
    pub messages: Option<Out>,
    pub port_stats: Option<Out>,
    /// The Perfetto trace, and whether it draws message flows.
    pub trace: Option<(Out, bool)>,
}

/// An output file, open for writing (None on MPI ranks but 0, which do not write it), and
/// its path for messages.
pub struct Out {
    path: String,
    file: Option<BufWriter<File>>,
}

fn create(p: &Path) -> Result<Out, String> {
    let path = p.display().to_string();
    if !crate::ranks::root() {
        return Ok(Out { path, file: None });
    }
    let file = File::create(p).map_err(|e| format!("{}: {e}", p.display()))?;
    Ok(Out { path, file: Some(BufWriter::new(file)) })
}

impl Outputs {
    pub fn create(
        threads: Option<usize>,
        pcap: Option<&Path>,
        pcap_at: Option<&str>,
        messages: Option<&Path>,
        port_stats: Option<&Path>,
        trace: Option<(&Path, bool)>,
    ) -> Result<Outputs, String> {
        let at = pcap_at.unwrap_or("node:0").to_string();
        Ok(Outputs {
            threads,
            pcap: pcap.map(create).transpose()?.map(|o| (o, at)),
            messages: messages.map(create).transpose()?,
            port_stats: port_stats.map(create).transpose()?,
            trace: trace.map(|(p, flows)| create(p).map(|o| (o, flows))).transpose()?,
        })
    }
}

/// How a cluster run reports, and what the test host sends during it.
pub struct RunFlags {
    pub json: bool,
    pub progress: bool,
    pub sends: Vec<(nanopu_sim::Time, nanopu_nic::Message)>,
    /// `--crash` and `--partition`, added to the configuration's `[[faults]]`.
    pub faults: crate::fault_flags::FaultFlags,
}

pub fn main(path: &Path, flags: RunFlags, out: Outputs) -> Result<ExitCode, String> {
    let (file, base) = ClusterFile::load(path)?;
    run(&file, &base, path, flags, "max_us in the configuration file", out)
}

/// N nodes on one switch, every core running one program.
pub struct Star<'a> {
    pub nodes: u32,
    /// Every node's `[node]` section.
    pub node: NodeFile,
    pub max_cycles: u64,
    pub args: &'a [String],
    /// The program's `abi` key, if given.
    pub abi: Option<&'a str>,
    /// The program's `nic` key (every node's NIC), if given.
    pub nic: Option<&'a str>,
    /// The program's `pcie_ns` key, if given.
    pub pcie_ns: Option<f64>,
}

/// `nanopu run PROGRAM.elf --nodes N`: N nodes on one switch, every core running the
/// program, the other parameters at a cluster file's defaults.
pub fn star(elf: &Path, s: &Star, flags: RunFlags, out: Outputs) -> Result<ExitCode, String> {
    let abs = std::fs::canonicalize(elf).map_err(|e| format!("cannot read {}: {e}", elf.display()))?;
    let mut program = ProgramFile::on_all(abs.display().to_string(), s.args.to_vec());
    program.abi = s.abi.map(String::from);
    program.nic = s.nic.map(String::from);
    program.pcie_ns = s.pcie_ns;
    let mut file = ClusterFile::star(s.nodes, program);
    // The limit is the flag's, in its range (up to two hours, as a single node's); max_us,
    // from cycles of the 3.2 GHz core clock (exact in f64), bounds the faults' times.
    file.cycle_limit = Some(s.max_cycles);
    file.max_us = s.max_cycles as f64 / 3200.0;
    file.node = s.node.clone();
    file.validate()?;
    run(&file, Path::new("."), elf, flags, "--max-cycles", out)
}

/// How a cluster simulation is set up besides its configuration.
pub struct Setup<'a> {
    pub progress: bool,
    /// What sets the time limit, for the message of a run that reaches it.
    pub limit: &'a str,
    /// Host threads (None: the default; see `Simulation::set_threads`).
    pub threads: Option<usize>,
    /// Where to capture packets (`--pcap-at`), if anywhere.
    pub pcap_at: Option<&'a str>,
}

/// A cluster's simulation, built, with the test host's messages queued: ready to run (for
/// `nanopu run CLUSTER.toml` and the Python package's `nanopu.run_cluster`).
pub fn cluster_sim(
    file: &ClusterFile,
    base: &Path,
    sends: Vec<(nanopu_sim::Time, nanopu_nic::Message)>,
    setup: &Setup,
) -> Result<Simulation, String> {
    let mut sim = Simulation::cluster(file, base).map_err(|e| e.to_string())?;
    sim.set_progress(setup.progress);
    sends.into_iter().for_each(|(t, m)| sim.host.send_at(t, m));
    sim.set_limit_name(setup.limit);
    if let Some(t) = setup.threads {
        sim.set_threads(t);
    }
    if let Some(at) = setup.pcap_at {
        sim.capture_at(at)?;
    }
    Ok(sim)
}

fn run(
    file: &ClusterFile,
    base: &Path,
    path: &Path,
    RunFlags { json, progress, sends, faults }: RunFlags,
    limit: &str,
    out: Outputs,
) -> Result<ExitCode, String> {
    let mut file = file.clone();
    faults.apply(&mut file)?;
    let file = &file;
    let pcap_at = out.pcap.as_ref().map(|(_, at)| at.as_str());
    let setup = Setup { progress, limit, threads: out.threads, pcap_at };
    let mut sim = cluster_sim(file, base, sends, &setup).map_err(|e| format!("{}: {e}", path.display()))?;
    let outcome = sim.run().map_err(|e| e.to_string())?;
    // Collective across MPI ranks: every rank's part goes to rank 0, which alone reports.
    let gathered = Gathered::of(&mut sim, &out);
    let Some(s) = gathered_summary(&mut sim, outcome) else { return Ok(ExitCode::SUCCESS) };
    write_files(&mut sim, out, gathered, &s.problems)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&s).expect("summary serializes"));
    } else {
        print!("{}", s.text());
    }
    Ok(crate::report::judged::judged(&s.problems, s.exit_status))
}

/// What the output files need of every node and port: across MPI ranks gathered on rank 0
/// (collective: every rank calls it), in one process read from it.
struct Gathered {
    messages: Vec<MessageRecord>,
    ports: Vec<(u32, u64, u64, u32)>,
    /// Nodes of the whole cluster (a rank holds its own only).
    nodes: usize,
}

impl Gathered {
    fn of(sim: &mut Simulation, out: &Outputs) -> Gathered {
        if out.pcap.is_some() {
            sim.gather_capture();
        }
        let need_messages = out.messages.is_some() || out.trace.is_some();
        let messages = if need_messages { sim.gathered_message_records() } else { Vec::new() };
        let ports = if out.port_stats.is_some() { sim.gathered_port_stats() } else { Vec::new() };
        Gathered { messages, ports, nodes: sim.cluster_nodes() }
    }
}

/// Write the requested files (whatever the outcome: an incomplete run's are partial, and
/// marked with its `problems`, `report::marks`), flushing each so that a write error is
/// reported, not lost when the buffer drops. Across MPI ranks rank 0 alone calls it.
fn write_files(sim: &mut Simulation, out: Outputs, g: Gathered, problems: &[String]) -> Result<(), String> {
    use nanopu_cluster::report::marks;
    use nanopu_cluster::report::records::write_message_csv;
    if let Some((o, _)) = out.pcap {
        let format = nanopu_cluster::net::capture::CaptureFormat::of_path(Path::new(&o.path));
        let (file, path) = o.into_parts();
        let file = sim.write_capture_as(file, format).map_err(|e| format!("{path}: {e}"))?;
        finish(file, &path)?;
        marks::capture_sidecar(Path::new(&path), problems).map_err(|e| format!("{path}: {e}"))?;
    }
    if let Some(mut o) = out.messages {
        write_message_csv(&g.messages, o.file_mut()).map_err(|e| format!("{}: {e}", o.path))?;
        o.write_csv_trailer(problems)?;
    }
    if let Some(mut o) = out.port_stats {
        sim.write_port_rows(&g.ports, o.file_mut()).map_err(|e| format!("{}: {e}", o.path))?;
        o.write_csv_trailer(problems)?;
    }
    if let Some((mut o, flows)) = out.trace {
        let text = trace_of(sim, &g, flows, problems);
        o.file_mut().write_all(text.as_bytes()).map_err(|e| format!("{}: {e}", o.path))?;
        let (file, path) = o.into_parts();
        finish(file, &path)?;
    }
    Ok(())
}

impl Out {
    /// End a CSV file with the marks of an incomplete run, and flush it.
    fn write_csv_trailer(mut self, problems: &[String]) -> Result<(), String> {
        let trailer = nanopu_cluster::report::marks::csv_trailer(problems);
        self.file_mut().write_all(trailer.as_bytes()).map_err(|e| format!("{}: {e}", self.path))?;
        let (file, path) = self.into_parts();
        finish(file, &path)
    }

    /// The open file (rank 0's: the other ranks never write) and its path.
    fn into_parts(self) -> (BufWriter<File>, String) {
        (self.file.expect("rank 0 opened the file"), self.path)
    }

    fn file_mut(&mut self) -> &mut BufWriter<File> {
        self.file.as_mut().expect("rank 0 opened the file")
    }
}

/// The run as a Perfetto trace (`nanopu_harness::trace`): no stages outside a sort.
fn trace_of(sim: &Simulation, g: &Gathered, flows: bool, problems: &[String]) -> String {
    use nanopu_harness::trace::{trace_json, TraceInput};
    let (nodes, hz, messages) = (g.nodes, sim.clock().hz(), &g.messages);
    let cores_per_node = sim.nodes.first().map_or(1, |n| n.cores.len());
    trace_json(&TraceInput { nodes, outputs: &[], cores_per_node, hz, messages, flows, problems })
}

fn finish(mut file: BufWriter<File>, path: &str) -> Result<(), String> {
    use std::io::Write;
    file.flush().map_err(|e| format!("{path}: {e}"))
}
