//! One sort run: a cluster sized for the sorters, inputs loaded, the program run, outputs
//! validated and summarised (`nanopu sort`).

use super::gather::{gather, Piece, Totals};
use super::harness::{load, max_records_per_core, read_outputs, SorterOutput, Start};
use super::input::Distribution;
use super::report::{figures, SortFigures};
use super::validate::{validate_digest, validate_min_digest, Verdict};
use nanopu_cluster::config::cluster::{
    ClusterFile, FaultFile, NodeFile, ProgramFile, SwitchFile, TopologyFile, TransportFile,
};
use nanopu_cluster::config::keys::Given;
use nanopu_cluster::engine::host_time::{Lap, Stopwatch};
use nanopu_cluster::Outcome;
use nanopu_cluster::SimError;
use nanopu_cluster::Simulation;
use std::path::Path;
use std::time::Instant;

/// Which program sorts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    NanoSort,
    MilliSort,
    MergeMin,
    /// Every core sorts its own keys; no communication (the local-sort experiment).
    Local,
}

impl Algorithm {
    /// Every algorithm by its name (the one list `parse` and `--help` use).
    pub const ALL: [(&'static str, Algorithm); 4] = [
        ("nanosort", Algorithm::NanoSort),
        ("millisort", Algorithm::MilliSort),
        ("mergemin", Algorithm::MergeMin),
        ("local", Algorithm::Local),
    ];

    pub fn parse(s: &str) -> Result<Algorithm, String> {
        crate::sort::by_name(&Self::ALL, s, "algorithm")
    }
    /// The program under `sw/build/apps`.
    pub fn elf(self) -> &'static str {
        match self {
            Algorithm::NanoSort => "nanosort.elf",
            Algorithm::MilliSort => "millisort.elf",
            Algorithm::MergeMin => "mergemin.elf",
            Algorithm::Local => "localsort.elf",
        }
    }
}

/// Everything a sort run is made of. Times in ns.
#[derive(Clone, Debug)]
pub struct SortSpec {
    pub algorithm: Algorithm,
    /// Sorters (one per core).
    pub cores: u32,
    pub cores_per_node: u32,
    pub keys_per_core: u32,
    /// The program's arguments after `program MAC IP` (buckets, fan-in, ...).
    pub args: Vec<String>,
    pub distribution: Distribution,
    /// Inputs in the caches (warm) or in DRAM only (cold).
    pub start: Start,
    pub seed: u64,
    pub transport: String,
    pub switch_latency_ns: f64,
    pub multicast: bool,
    pub drop_prob: f64,
    pub tail_fraction: f64,
    pub tail_delay_us: f64,
    pub max_msg_bytes: u32,
    pub max_us: f64,
    /// Nodes per leaf switch: up to this many nodes share one switch; more make a
    /// leaf-spine of such leaves (default 64).
    pub nodes_per_leaf: u32,
    /// Spine switches of a leaf-spine (default: as many as nodes per leaf, full bisection).
    pub spines: u32,
    /// Host threads (None: the default, see `Simulation::set_threads`); results do not
    /// depend on it.
    pub threads: Option<usize>,
    /// Keep the per-message log (`Simulation::message_records` of the run); off saves
    /// about 50 bytes of host memory per message.
    pub message_log: bool,
    /// Capture every packet at this point ("node:N" or "switch:S:P"); the run's `sim`
    /// writes them (`Simulation::write_capture_as`).
    pub capture_at: Option<String>,
    /// Faults injected (docs/faults.md): `nanopu sort --crash` and `--partition`.
    pub faults: Vec<FaultFile>,
    /// Which engine executes the cores' instructions (`[node] engine`); the results are
    /// the same.
    pub engine: nanopu_riscv::Engine,
    /// The memory system the cores' timing follows (`[node] memory`).
    pub memory: nanopu_riscv::MemorySystem,
}

/// The seeds of a run of `count` seeds from `first`: `first`, `first + 1`, ... An error
/// for no seeds, or when the last would pass `u64::MAX` (wrapping round to 0 would run
/// other seeds than asked).
pub fn seeds(first: u64, count: u64) -> Result<std::ops::RangeInclusive<u64>, String> {
    let last = count.checked_sub(1).ok_or("at least one seed is needed")?;
    let last = first
        .checked_add(last)
        .ok_or_else(|| format!("{count} seeds from {first} pass the largest seed, {}", u64::MAX))?;
    Ok(first..=last)
}

/// What a sort run gives.
pub struct SortRun {
    /// How the run ended (`Interrupted` or `WallLimit`: the figures are partial).
    pub outcome: Outcome,
    /// The run's judgement (`report::judge`, at most 8 problems): complete, and if not why,
    /// and the exit status; the validator's verdict is apart.
    pub judgement: nanopu_cluster::report::judge::Judgement,
    pub verdict: Verdict,
    pub figures: SortFigures,
    pub outputs: Vec<SorterOutput>,
    /// The whole cluster's counts (across MPI ranks too, where `sim` holds one rank's nodes).
    pub totals: super::gather::Totals,
    /// After a run across MPI ranks: this rank's nodes only (docs/parallel.md).
    pub sim: Simulation,
    /// Where this process's host time went (`--progress` prints it).
    pub host: SortHostTimes,
}

/// Host seconds of a sort run by part: building the cluster, loading the inputs, the run
/// (`Simulation::host_times`), and reading back, judging and validating the results.
#[derive(Clone, Copy, Debug, Default)]
pub struct SortHostTimes {
    pub build: Lap,
    pub load: Lap,
    pub run: nanopu_cluster::engine::host_time::HostTimes,
    pub results: Lap,
}

impl SortHostTimes {
    /// One line: "build 3.10 s (CPU 3.08 s), inputs ..., run ..., results ...".
    pub fn describe(&self) -> String {
        let (b, l, r) =
            (self.build.describe("build"), self.load.describe("inputs"), self.results.describe("results"));
        format!("{b}, {l}, {}, {r}", self.run.describe())
    }
}

impl SortSpec {
    /// Nodes, and the topology: one switch up to `nodes_per_leaf` nodes, else a leaf-spine
    /// of such leaves and `spines` spines.
    fn topology(&self) -> Result<TopologyFile, String> {
        if self.cores_per_node == 0 || self.cores == 0 || !self.cores.is_multiple_of(self.cores_per_node) {
            return Err(format!(
                "cores: {} is not a positive multiple of cores per node {}",
                self.cores, self.cores_per_node
            ));
        }
        let nodes = self.cores / self.cores_per_node;
        let t = |kind: &str| TopologyFile {
            kind: kind.into(),
            nodes: None,
            nodes_per_leaf: None,
            leaves: None,
            spines: None,
        };
        let per = self.nodes_per_leaf;
        if per == 0 || self.spines == 0 {
            return Err("topology: nodes per leaf and spines must be positive".into());
        }
        if nodes <= per {
            return Ok(TopologyFile { nodes: Some(nodes), ..t("star") });
        }
        if !nodes.is_multiple_of(per) {
            return Err(format!("cores: {nodes} nodes do not fill {per}-node leaves"));
        }
        let leaves = Some(nodes / per);
        Ok(TopologyFile { nodes_per_leaf: Some(per), leaves, spines: Some(self.spines), ..t("leaf-spine") })
    }

    /// Every sorter's records must fit its node's sort area (checked before the cluster is
    /// built).
    fn check_records(&self) -> Result<(), String> {
        let max = max_records_per_core(self.cores_per_node as u64);
        if self.keys_per_core as u64 > max {
            let (n, c) = (self.keys_per_core, self.cores_per_node);
            return Err(format!("keys_per_core: {n} records per core do not fit a node's sort area with {c} cores per node (at most {max})"));
        }
        Ok(())
    }

    /// The switch, link and transport sections of this run's cluster, each by its own check
    /// (`SwitchFile::check`, ...), an error naming the setting as `switch` (the switch's
    /// keys) and `others` (the link's and transport's) say: `nanopu sort`'s flags.
    pub fn check_sections(&self, switch: Given, others: Given) -> Result<(), String> {
        let f = self.cluster_file("")?;
        f.switch.check(&f.transport, switch)?;
        f.link.check(others)?;
        f.transport_params.check(others)
    }

    /// The cluster configuration of this run.
    pub fn cluster_file(&self, elf: &str) -> Result<ClusterFile, String> {
        let mut f = ClusterFile::star(1, ProgramFile::on_all(elf.into(), self.args.clone()));
        f.seed = self.seed;
        f.max_us = self.max_us;
        f.transport = self.transport.clone();
        f.topology = self.topology()?;
        f.link.drop_prob = self.drop_prob;
        f.switch = SwitchFile {
            latency_ns: Some(self.switch_latency_ns),
            multicast: Some(self.multicast),
            ..SwitchFile::default()
        };
        f.node = NodeFile {
            cores: Some(self.cores_per_node as usize),
            engine: Some(self.engine.name().into()),
            memory: Some(self.memory.name().into()),
            ..NodeFile::default()
        };
        f.node.nic_settings.max_msg_bytes = Some(self.max_msg_bytes);
        f.transport_params = TransportFile {
            tail_fraction: Some(self.tail_fraction),
            tail_delay_us: Some(self.tail_delay_us),
            ..TransportFile::default()
        };
        for fault in &self.faults {
            f.add_fault(fault.clone())?;
        }
        Ok(f)
    }

    /// Build, load, run, validate. `apps` is the directory holding the programs.
    pub fn run(&self, apps: &Path, progress: bool) -> Result<SortRun, SimError> {
        self.run_limited(apps, progress, None)
    }

    /// Like `run`, ending early once the host's clock passes `deadline` (reported
    /// incomplete; `--max-wall-s` counts from the command's start, the cluster's set-up
    /// included).
    pub fn run_limited(
        &self,
        apps: &Path,
        progress: bool,
        deadline: Option<Instant>,
    ) -> Result<SortRun, SimError> {
        if self.algorithm == Algorithm::Local && self.cores != 1 {
            return Err(SimError::Setup("cores: a local sort runs on exactly one core (--cores 1)".into()));
        }
        self.check_records().map_err(SimError::Setup)?;
        let f = self.cluster_file(self.algorithm.elf()).map_err(SimError::Setup)?;
        let mut clock = Stopwatch::start();
        let mut lap = || clock.lap();
        let mut sim = Simulation::cluster(&f, apps)?;
        sim.set_progress(progress);
        sim.set_phase_probe(super::harness::PROBE);
        sim.set_limit_name("--max-us");
        if let Some(t) = self.threads {
            sim.set_threads(t);
        }
        sim.set_message_log(self.message_log);
        if let Some(at) = &self.capture_at {
            sim.capture_at(at).map_err(SimError::Setup)?;
        }
        if let Some(d) = deadline {
            sim.set_wall_deadline(d);
        }
        let build = lap();
        let inputs = load(
            &mut sim,
            self.seed,
            self.keys_per_core as usize,
            self.distribution,
            self.start,
            self.cores.into(),
        )
        .map_err(SimError::Setup)?;
        let load = lap();
        let outcome = sim.run()?;
        lap();
        let outputs = read_outputs(&sim);
        let piece = Piece {
            unreadable: outputs.as_ref().err().cloned(),
            outputs: outputs.unwrap_or_default(),
            judgement: nanopu_cluster::report::judge::judge(&sim, outcome),
            exits: sorter_exits(&mut sim),
            totals: Totals::of(&sim),
        };
        // Across MPI ranks, rank 0 puts every rank's nodes' together (`gather`).
        let ranks = nanopu_cluster::engine::ranks::current();
        let Piece { unreadable, outputs, mut judgement, exits, totals } = match ranks {
            Some(r) => gather(r, &piece).unwrap_or(piece),
            None => piece,
        };
        if let Some(e) = unreadable {
            return Err(SimError::Setup(e));
        }
        let mut verdict = match self.algorithm {
            Algorithm::MergeMin => validate_min_digest(&inputs, &outputs),
            _ => validate_digest(&inputs, &outputs),
        };
        judgement.problems.truncate(8);
        let mut first = judgement.problems.clone();
        first.extend(exits);
        first.truncate(8);
        first.append(&mut verdict.problems);
        verdict.problems = first;
        let hz = sim.clock().hz();
        let figures = figures(&outputs, hz);
        let host = SortHostTimes { build, load, run: sim.host_times(), results: lap() };
        Ok(SortRun { outcome, judgement, verdict, figures, outputs, totals, sim, host })
    }
}

/// Sorters that exited with an error code, with what they printed (which usually says why):
/// the programs' own verdicts, beside the run's judgement.
fn sorter_exits(sim: &mut Simulation) -> Vec<String> {
    let mut v = Vec::new();
    let per_node = sim.nodes.first().map_or(1, |n| n.cores.len());
    for node in sim.nodes.iter_mut() {
        // The node's cluster index: after a run across MPI ranks `sim` holds some nodes only.
        let n = node.index as usize;
        for (c, core) in node.cores.iter_mut().enumerate() {
            if let Some(code) = core.halted().filter(|&x| x != 0) {
                let console = String::from_utf8_lossy(&core.take_console()).trim().to_string();
                v.push(format!("sorter {} exited with code {code}: {console}", n * per_node + c));
            }
        }
    }
    v
}
