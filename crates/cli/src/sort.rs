//! `nanopu sort`: one validated run of a granular-computing program (NanoSort, MilliSort,
//! MergeMin, or a local sort on every core), with its summary, table and trace. The
//! defaults are the NanoSort paper's standard setup (docs/nanosort.md, "Setup").

use clap::Args;
use nanopu_cluster::config::keys::Given;
use nanopu_cluster::report::records::MessageRecord;
use nanopu_harness::sort::harness::max_records_per_core;
use nanopu_harness::sort::report::{stage_table, stages_csv, SeedSummary};
use nanopu_harness::sort::{self, Algorithm, Distribution, SortRun, SortSpec, Start};
use nanopu_harness::trace::{trace_json, TraceInput};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, Clone, serde::Serialize, serde::Deserialize)]
#[command(allow_negative_numbers = true)] // "-1" reaches the flag's check, which names it
pub struct SortArgs {
    /// The algorithm (local: every core sorts its own keys).
    #[arg(long, default_value = "nanosort", value_parser = clap::builder::PossibleValuesParser::new(sort::names(&Algorithm::ALL)))]
    algorithm: String,
    /// Sorters (cores) in total.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    cores: u32,
    /// Cores per node (1..=64; default 4, the nanoPU's, or --cores when fewer).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    cores_per_node: Option<u32>,
    /// Records per core (MergeMin: values per worker).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    keys_per_core: u32,
    /// NanoSort: buckets per level (4, 8 or 16; the last level gets fewer when --cores is
    /// not a power of it) [default: 16].
    #[arg(long)]
    buckets: Option<u32>,
    /// NanoSort: fan-in of the median trees (default: --buckets).
    #[arg(long)]
    fan_in: Option<u32>,
    /// NanoSort: independent (one median tree per pivot, the paper's) or combined (one
    /// tree whose messages carry every pivot's candidates) [default: independent].
    #[arg(long, value_parser = ["independent", "combined"])]
    median_trees: Option<String>,
    /// NanoSort: PivotSelect's rule below 16 buckets: paper (the paper's routine, which it
    /// gives for 16 buckets, every 16/b-th of its candidates kept) or per-b (rules of our own
    /// for each b, sampling b or 2b keys) [default: paper]. Both are the paper's at 16.
    #[arg(long, value_parser = ["paper", "per-b"])]
    pivot_select: Option<String>,
    /// MilliSort: reduction factor [default: 4].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    reduction: Option<u32>,
    /// MergeMin: incast of the merge tree [default: 4].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    incast: Option<u32>,
    /// Key distribution.
    #[arg(long, default_value = "uniform", value_parser = clap::builder::PossibleValuesParser::new(sort::names(&Distribution::ALL)))]
    distribution: String,
    /// Where the inputs start: warm (in the caches, as if each core had written its own
    /// records) or cold (in DRAM, caches empty); docs/sort-harness.md.
    #[arg(long, default_value = "warm", value_parser = clap::builder::PossibleValuesParser::new(sort::names(&Start::ALL)))]
    start: String,
    /// The transport.
    #[arg(long, default_value = "ndp", value_parser = ["ndp", "homa"])]
    transport: String,
    /// Switching latency of every switch, ns.
    #[arg(long, default_value_t = 263.0)]
    switch_latency_ns: f64,
    /// Multicast in the switches (off: programs unicast to each member).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    multicast: bool,
    /// Drop probability of every link.
    #[arg(long, default_value_t = 0.0)]
    drop_prob: f64,
    /// Fraction of messages given extra latency.
    #[arg(long, default_value_t = 0.0)]
    tail_fraction: f64,
    /// The extra latency, us.
    #[arg(long, default_value_t = 0.0)]
    tail_delay_us: f64,
    /// Topology: up to this many nodes on one switch; more form a leaf-spine of such leaves.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=MAX_NODES))]
    nodes_per_leaf: u32,
    /// Spines of the leaf-spine (default: nodes per leaf, full bisection).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_NODES))]
    spines: Option<u32>,
    /// Largest message payload the NICs accept, bytes (8..=65535).
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u32).range(8..=65535))]
    max_msg_bytes: u32,
    /// Seed of the inputs, the programs' choices and the network.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run this many seeds (seed, seed + 1, ...), each validated, then print the mean,
    /// standard deviation and maximum of the sort time (with --json one document:
    /// {"runs": [each run's document], "summary": {...}, null if a seed failed}).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    seeds: u64,
    /// Simulated-time limit, us.
    #[arg(long, default_value_t = 10_000.0)]
    max_us: f64,
    /// Directory of the programs.
    #[arg(long, default_value = "sw/build/apps")]
    apps: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Write a Perfetto trace: a track per core named by node and core, a slice per stage,
    /// a counter of the messages in flight (with --seeds, of the first seed).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// With --trace: also a flow arrow per message delivery, from the sending core to the
    /// receiving one (large: about 240 bytes per message).
    #[arg(long, requires = "trace")]
    trace_messages: bool,
    /// Write every core's stages (start, end, compute and idle time) as CSV.
    #[arg(long)]
    stages: Option<PathBuf>,
    /// Write every packet seen at --pcap-at to this file (pcapng if it ends in .pcapng, else
    /// pcap; with --seeds, of the first seed).
    #[arg(long)]
    pcap: Option<PathBuf>,
    /// Where --pcap captures: "node:N" (what node N sends and receives) or "switch:S:P"
    /// [default: node:0].
    #[arg(long)]
    pcap_at: Option<String>,
    /// Node NODE crashes at US microseconds: its cores, NIC and transport stop, what reaches
    /// it is lost (docs/faults.md; repeatable). The sort is then incomplete.
    #[arg(long = "crash", value_name = "NODE@US")]
    crashes: Vec<String>,
    /// The nodes listed (N, A-B, comma-separated) are cut off from every other node from
    /// FROM to TO microseconds, e.g. 0-15@5-20 (docs/faults.md; repeatable).
    #[arg(long = "partition", value_name = "NODES@FROM-TO")]
    partitions: Vec<String>,
    /// Show progress on stderr.
    #[arg(long)]
    progress: bool,
    /// Stop after this many seconds of host time, counted from the command's start, and
    /// report what was measured (incomplete, exit status 2).
    #[arg(long)]
    max_wall_s: Option<f64>,
    /// Host threads for a leaf-spine run (default: NANOPU_THREADS, else every host core);
    /// the results are the same whatever the number.
    #[arg(long, value_parser = crate::run::positive_threads)]
    threads: Option<usize>,
    /// Which engine executes the cores' instructions: interp (the reference), fast, or jit
    /// (fast, with hot code translated to host code); the results are the same
    /// (docs/profile.md "Core engines") [default: fast].
    #[arg(long, value_parser = nanopu_riscv::Engine::NAMES)]
    engine: Option<String>,
    /// The memory system the cores' timing follows: prototype (its dirty write-backs, the
    /// L2's one response path, DDR3 refresh; docs/models/node.md "Write-backs, the L2's one
    /// path and refresh") or simple (reads only, no refresh: the model before 2026-12-03)
    /// [default: prototype].
    #[arg(long, value_parser = nanopu_riscv::MemorySystem::NAMES)]
    memory: Option<String>,
}

/// Nodes of the cluster a sort builds are numbered in 20 bits (a flag past it is refused
/// naming the flag; the switch, link and transport flags are checked by their sections'
/// own checks, `SortSpec::check_sections`).
const MAX_NODES: i64 = 1 << 20;

impl SortArgs {
    /// Refuse what no run can use, naming the flag, before anything is built or simulated
    /// (clap has checked the integer ranges).
    fn check(&self) -> Result<(), String> {
        self.check_size()?;
        self.check_spines()?;
        self.check_algorithm_flags()?;
        self.check_nanosort()?;
        self.spec()?.check_sections(Given::FlagsOf("switch"), Given::Flags)?;
        if self.max_us <= 0.0 {
            return Err(format!("--max-us: {} is not a time limit (more than 0 us)", self.max_us));
        }
        if self.pcap_at.is_some() && self.pcap.is_none() {
            return Err("--pcap-at says where to capture, but no --pcap file was given".into());
        }
        crate::report::outputs::distinct(&self.output_files())?;
        nanopu_cluster::config::check::time_us(self.max_us, "--max-us")?;
        wall_limit(self.max_wall_s).map(|_| ())
    }

    /// The files the run writes, by flag: checked distinct in `check`, created (so that an
    /// unwritable path fails) before the first run.
    fn output_files(&self) -> [(&'static str, Option<&std::path::Path>); 3] {
        [
            ("--trace", self.trace.as_deref()),
            ("--stages", self.stages.as_deref()),
            ("--pcap", self.pcap.as_deref()),
        ]
    }

    /// Cores per node: as given, else 4 (the nanoPU's, docs/nanosort.md), or all the
    /// cores when there are fewer.
    fn per_node(&self) -> u32 {
        self.cores_per_node.unwrap_or(self.cores.min(4))
    }

    /// `--crash` and `--partition` as `[[faults]]` entries, each checked as `nanopu run`'s.
    /// (checked against `spec`'s topology).
    fn faults(&self, spec: &SortSpec) -> Result<Vec<nanopu_cluster::config::cluster::FaultFile>, String> {
        let flags = crate::fault_flags::FaultFlags {
            crashes: self.crashes.clone(),
            partitions: self.partitions.clone(),
        };
        let mut file = spec.cluster_file("")?;
        flags.apply(&mut file)?;
        Ok(file.faults)
    }

    fn fan_in(&self) -> u32 {
        self.fan_in.unwrap_or(self.buckets())
    }

    fn buckets(&self) -> u32 {
        self.buckets.unwrap_or(16)
    }

    /// A flag of another algorithm than the one run is an error, never ignored (README.md).
    fn check_algorithm_flags(&self) -> Result<(), String> {
        let given = [
            ("--buckets", "nanosort", self.buckets.is_some()),
            ("--fan-in", "nanosort", self.fan_in.is_some()),
            ("--median-trees", "nanosort", self.median_trees.is_some()),
            ("--pivot-select", "nanosort", self.pivot_select.is_some()),
            ("--reduction", "millisort", self.reduction.is_some()),
            ("--incast", "mergemin", self.incast.is_some()),
        ];
        match given.iter().find(|(_, alg, on)| *on && *alg != self.algorithm) {
            Some((flag, alg, _)) => {
                Err(format!("{flag} is {alg}'s and does not apply to --algorithm {}", self.algorithm))
            }
            None => Ok(()),
        }
    }

    /// NanoSort's TREES argument: 1 for independent median trees, 0 for one combined tree.
    fn trees(&self) -> Result<u32, String> {
        match self.median_trees.as_deref().unwrap_or("independent") {
            "independent" => Ok(1),
            "combined" => Ok(0),
            t => Err(format!("--median-trees: {t:?} is not independent or combined")),
        }
    }

    /// NanoSort's PIVOTS argument: 1 for the paper's PivotSelect, 0 for the per-b rules
    /// (clap has checked the name).
    fn pivots(&self) -> u32 {
        (self.pivot_select.as_deref() != Some("per-b")) as u32
    }

    /// Whole nodes, not too many of them, and records that fit a node's sort area.
    fn check_size(&self) -> Result<(), String> {
        let (cores, per) = (self.cores as u64, self.per_node() as u64);
        if cores % per != 0 {
            return Err(format!("--cores: {cores} is not a multiple of --cores-per-node {per}"));
        }
        if cores / per > MAX_NODES as u64 {
            return Err(format!("--cores: {} nodes of {per} cores are more than {MAX_NODES}", cores / per));
        }
        let max = max_records_per_core(per);
        if self.keys_per_core as u64 > max {
            let n = self.keys_per_core;
            return Err(format!("--keys-per-core: {n} records do not fit a node's sort area with {per} cores per node (at most {max})"));
        }
        Ok(())
    }

    /// `--spines` only for a leaf-spine: nodes that fit one switch make a star, which has none.
    fn check_spines(&self) -> Result<(), String> {
        let nodes = self.cores / self.per_node();
        if self.spines.is_some() && nodes <= self.nodes_per_leaf {
            let per = self.nodes_per_leaf;
            return Err(format!(
                "--spines does not apply: {nodes} nodes fit one switch (--nodes-per-leaf {per}), \
                 a star, which has no spines"
            ));
        }
        Ok(())
    }

    /// What `nanosort.c` accepts: 4, 8 or 16 buckets, a power of two as sorters (a power of
    /// the buckets, the last level taking what remains), fan-in 2..=64 (it would stop with
    /// the same complaint once simulated).
    fn check_nanosort(&self) -> Result<(), String> {
        if self.algorithm != "nanosort" {
            return Ok(());
        }
        let b = self.buckets();
        if ![4, 8, 16].contains(&b) {
            return Err(format!("--buckets: {b} is not 4, 8 or 16"));
        }
        if !(2..=64).contains(&self.fan_in()) {
            return Err(format!("--fan-in: {} is not within 2..=64", self.fan_in()));
        }
        self.trees()?;
        if !self.cores.is_power_of_two() {
            return Err(format!("--cores: NanoSort needs a power of two sorters, not {}", self.cores));
        }
        Ok(())
    }
}

/// `--max-wall-s`: a positive, finite number of seconds (`Duration` panics on others).
fn wall_limit(s: Option<f64>) -> Result<Option<std::time::Duration>, String> {
    let Some(s) = s else { return Ok(None) };
    match std::time::Duration::try_from_secs_f64(s) {
        Ok(d) if s > 0.0 => Ok(Some(d)),
        _ => Err(format!("--max-wall-s: {s} is not a number of seconds (more than 0)")),
    }
}

impl SortArgs {
    /// Write the files the flags ask for (--trace, --stages, --pcap) from a finished run,
    /// marked with its judgement's problems if it is incomplete (`report::marks`).
    pub fn write_files(&self, run: &mut SortRun) -> Result<(), String> {
        let messages = self.trace.as_ref().map(|_| run.sim.message_records());
        self.write_gathered(run, messages)
    }

    /// `write_files`, with the trace's message records given (across MPI ranks, gathered:
    /// `Simulation::gathered_message_records`).
    fn write_gathered(&self, run: &mut SortRun, messages: Option<Vec<MessageRecord>>) -> Result<(), String> {
        use nanopu_cluster::report::marks;
        let (per_node, hz) = (run.sim.nodes.first().map_or(1, |n| n.cores.len()), run.sim.clock().hz());
        let write =
            |p: &PathBuf, text: String| std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()));
        let problems = &run.judgement.problems;
        if let (Some(p), Some(messages)) = (&self.trace, messages) {
            // Every sorter's outputs (across MPI ranks gathered on rank 0), so every node.
            let (outputs, flows, nodes) = (&run.outputs, self.trace_messages, run.outputs.len() / per_node);
            let input = TraceInput {
                nodes,
                outputs,
                cores_per_node: per_node,
                hz,
                messages: &messages,
                flows,
                problems,
            };
            write(p, trace_json(&input))?;
        }
        if let Some(p) = &self.stages {
            write(p, stages_csv(&run.outputs, per_node, hz) + &marks::csv_trailer(problems))?;
        }
        let Some(p) = &self.pcap else { return Ok(()) };
        write_pcap(run, p)?;
        marks::capture_sidecar(p, &run.judgement.problems).map_err(|e| format!("{}: {e}", p.display()))
    }

    /// The run these flags describe, every flag checked first (the command line's and the
    /// Python package's `nanopu.sort`, docs/python.md).
    pub fn checked_spec(&self) -> Result<SortSpec, String> {
        self.check()?;
        self.spec()
    }

    /// The directory of the sort programs (`--apps`).
    pub fn apps(&self) -> &std::path::Path {
        &self.apps
    }

    /// When `--max-wall-s` ends the run if it is asked for: that long after now (the
    /// command's start), checked.
    pub fn deadline(&self) -> Result<Option<Instant>, String> {
        Ok(wall_limit(self.max_wall_s)?.and_then(|w| Instant::now().checked_add(w)))
    }

    fn spec(&self) -> Result<SortSpec, String> {
        let algorithm = Algorithm::parse(&self.algorithm)?;
        let args = match algorithm {
            Algorithm::NanoSort => {
                vec![self.buckets(), self.fan_in(), self.multicast as u32, self.trees()?, self.pivots()]
            }
            Algorithm::MilliSort => vec![self.reduction.unwrap_or(4)],
            Algorithm::MergeMin => vec![self.incast.unwrap_or(4)],
            Algorithm::Local => vec![],
        };
        let mut spec = SortSpec {
            algorithm,
            cores: self.cores,
            cores_per_node: self.per_node(),
            keys_per_core: self.keys_per_core,
            args: args.iter().map(u32::to_string).collect(),
            distribution: Distribution::parse(&self.distribution)?,
            start: Start::parse(&self.start)?,
            seed: self.seed,
            transport: self.transport.clone(),
            switch_latency_ns: self.switch_latency_ns,
            multicast: self.multicast,
            drop_prob: self.drop_prob,
            tail_fraction: self.tail_fraction,
            tail_delay_us: self.tail_delay_us,
            max_msg_bytes: self.max_msg_bytes,
            max_us: self.max_us,
            nodes_per_leaf: self.nodes_per_leaf,
            spines: self.spines.unwrap_or(self.nodes_per_leaf),
            threads: self.threads,
            message_log: self.trace.is_some(), // the trace's messages in flight and flows
            capture_at: self.pcap.as_ref().map(|_| self.pcap_at.clone().unwrap_or_else(|| "node:0".into())),
            faults: Vec::new(),
            engine: nanopu_riscv::Engine::named_or_default(self.engine.as_deref())?,
            memory: self.memory.as_deref().unwrap_or("prototype").parse()?,
        };
        spec.faults = self.faults(&spec)?;
        Ok(spec)
    }
}

pub fn main(a: SortArgs) -> Result<ExitCode, String> {
    a.check()?;
    crate::report::outputs::creatable(&a.output_files())?;
    let seeds = nanopu_harness::sort::seeds(a.seed, a.seeds).map_err(|e| format!("--seeds: {e}"))?;
    let deadline = a.deadline()?;
    if a.seeds == 1 {
        let ran = one_run(&a, deadline, Teardown::Exit)?;
        ran.doc.iter().for_each(|d| println!("{}", serde_json::to_string_pretty(d).expect("json")));
        return Ok(ran.status());
    }
    let (mut times, mut docs) = (Vec::new(), Vec::new());
    for seed in seeds {
        // Trace, stage and capture files describe one run: the first seed's.
        let first = seed == a.seed;
        let (trace, stages, pcap) =
            if first { (a.trace.clone(), a.stages.clone(), a.pcap.clone()) } else { (None, None, None) };
        let ran = one_run(
            &SortArgs { seed, seeds: 1, trace, stages, pcap, ..a.clone() },
            deadline,
            Teardown::Free,
        )?;
        docs.extend(ran.doc.clone());
        // Across MPI ranks rank 0 alone validates: its verdict says whether every rank goes on.
        if !crate::ranks::from_root(ran.time.is_some()) {
            print_seeds(&a, docs, None);
            return Ok(ran.status());
        }
        times.extend(ran.time);
    }
    if !crate::ranks::root() {
        return Ok(ExitCode::SUCCESS);
    }
    let summary = SeedSummary::of(&times).ok_or("no seed ran: nothing to summarize")?;
    print_seeds(&a, docs, Some(summary));
    Ok(ExitCode::SUCCESS)
}

/// The end of a run of several seeds: with --json one document, every seed's run and the
/// mean, standard deviation and maximum of the sort time (null if a seed failed the
/// validator, which ends the runs); as text the summary line.
fn print_seeds(a: &SortArgs, runs: Vec<serde_json::Value>, s: Option<SeedSummary>) {
    if !crate::ranks::root() {
        return;
    }
    let summary = s.as_ref().map(|s| {
        json!({ "seeds": s.seeds, "first_seed": a.seed, "mean_ns": s.mean_ns, "sd_ns": s.sd_ns, "max_ns": s.max_ns })
    });
    if a.json {
        let doc = json!({ "runs": runs, "summary": summary });
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    } else if let Some(s) = s {
        let (n, mean, sd, max) = (s.seeds, s.mean_ns, s.sd_ns, s.max_ns);
        println!("{n} seeds from {}: sort time mean {mean:.1} ns, standard deviation {sd:.1} ns, maximum {max:.1} ns; validator PASS for every seed", a.seed);
    }
}

/// What one run gave: its sort time in ns if it passed, its document with --json (printed as
/// text otherwise), its judgement (`report::judge`) and the validator's problems.
struct Ran {
    time: Option<f64>,
    doc: Option<serde_json::Value>,
    judgement: nanopu_cluster::report::judge::Judgement,
    outcome: &'static str,
    problems: Vec<String>,
}

impl Ran {
    /// The exit status README states: 0 passed, 1 failed the validator, else the run's
    /// judgement's (2 incomplete: a limit, Ctrl-C or SIGTERM, or messages never delivered;
    /// 3 cores that never exit or messages never taken), saying why on stderr.
    fn status(&self) -> ExitCode {
        if !crate::ranks::root() {
            return ExitCode::SUCCESS;
        }
        let j = &self.judgement;
        if !j.complete {
            eprintln!("nanopu: the sort is incomplete: {}", self.outcome);
            return crate::report::judged::judged(&j.problems, j.exit_status);
        }
        match self.time {
            Some(_) => ExitCode::SUCCESS,
            None => crate::report::judged::judged(&self.problems, 1),
        }
    }
}

/// What becomes of a run's simulation once it is reported.
#[derive(Clone, Copy, PartialEq)]
enum Teardown {
    /// Freed: another run follows.
    Free,
    /// Left to the operating system, which takes back the whole process at once when the
    /// command exits right after: freeing a 65,536-core cluster allocation by allocation
    /// took about 1 s of CPU, serial, after the summary was printed (docs/profile.md).
    Exit,
}

/// One validated run with its outputs, stopped at `deadline` (`--max-wall-s`) if it comes.
fn one_run(a: &SortArgs, deadline: Option<Instant>, teardown: Teardown) -> Result<Ran, String> {
    let spec = a.spec()?;
    let started = Instant::now();
    let mut run = spec.run_limited(&a.apps, a.progress, deadline).map_err(|e| e.to_string())?;
    let wall = started.elapsed().as_secs_f64();
    // Collective across MPI ranks: every rank takes part, rank 0 gets the whole cluster's.
    if a.pcap.is_some() {
        run.sim.gather_capture();
    }
    let messages = a.trace.as_ref().map(|_| run.sim.gathered_message_records());
    if !crate::ranks::root() {
        // Across MPI ranks rank 0 alone reports; the others' part went to it.
        return Ok(Ran {
            time: None,
            doc: None,
            judgement: Default::default(),
            outcome: "",
            problems: Vec::new(),
        });
    }
    let mut reporting = nanopu_cluster::engine::host_time::Stopwatch::start();
    a.write_gathered(&mut run, messages)?;
    let doc = a.json.then(|| summary_json(a, &run, wall));
    if !a.json {
        print_summary(a, &run, wall);
    }
    if a.progress {
        let report = reporting.lap().describe("report");
        eprintln!("host time: {}, {report}", run.host.describe());
    }
    let (judgement, problems) = (run.judgement.clone(), run.verdict.problems.clone());
    let time = run.verdict.ok().then_some(run.figures.total_ns);
    let outcome = run.outcome.name();
    if teardown == Teardown::Exit {
        std::mem::forget(run);
    }
    Ok(Ran { time, doc, judgement, outcome, problems })
}

/// The packets the run captured, into `path` (pcapng for a `.pcapng` name).
fn write_pcap(run: &mut SortRun, path: &std::path::Path) -> Result<(), String> {
    use std::io::Write;
    let at = |e: String| format!("{}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(|e| at(e.to_string()))?;
    let format = nanopu_cluster::net::capture::CaptureFormat::of_path(path);
    let mut w = run.sim.write_capture_as(std::io::BufWriter::new(file), format).map_err(at)?;
    w.flush().map_err(|e| at(e.to_string()))
}

/// The summary of one run as the command line's `--json` prints it.
pub fn summary_json(a: &SortArgs, r: &SortRun, wall: f64) -> serde_json::Value {
    let result = r.outputs.first().map(|o| o.result);
    json!({ "algorithm": a.algorithm, "cores": a.cores, "keys_per_core": a.keys_per_core, "seed": a.seed, "start": a.start,
        "valid": r.verdict.ok(), "complete": r.judgement.complete, "outcome": r.outcome.name(), "problems": r.verdict.problems, "records": r.verdict.records_out,
        "figures": r.figures, "result": result, "memory": memory_json(&r.totals), "events": r.totals.events, "core_dispatches": r.totals.core_dispatches, "instructions": r.totals.instructions,
        "partitions": r.sim.partitions(), "threads": r.sim.threads(), "wall_seconds": wall })
}

/// Where simulated memory goes (means per node): pages holding private DRAM chunks, and
/// the chunks themselves (what the host stores of the nodes' DRAM).
fn memory_json(t: &nanopu_harness::sort::Totals) -> serde_json::Value {
    use nanopu_riscv::sparse::CHUNK;
    let (pages, chunks) = (t.private_pages, t.private_chunks);
    let n = t.nodes.max(1) as f64;
    json!({ "nodes": t.nodes, "private_pages_per_node": pages as f64 / n,
        "private_chunks_per_node": chunks as f64 / n, "chunk_bytes": CHUNK,
        "private_dram_kib_per_node": (chunks * CHUNK) as f64 / 1024.0 / n })
}

fn print_summary(a: &SortArgs, r: &SortRun, wall: f64) {
    let f = &r.figures;
    let (alg, cores, keys, seed, start) = (&a.algorithm, a.cores, a.keys_per_core, a.seed, &a.start);
    println!("{alg} on {cores} cores, {keys} keys per core, seed {seed}, inputs {start}");
    println!("total time      {:.1} ns (first stage start to last stage end)", f.total_ns);
    println!("end to end      {:.1} ns (benchmark start: records loaded, every core started; timer starts at {:.1} ns)", f.end_to_end_ns, f.timer_start_ns);
    println!("messages sent   {} ({} payload bytes)", f.msgs_sent, f.bytes_sent);
    println!("skew            {:.3} (largest output run over the mean)", f.skew);
    print!("{}", stage_table(f));
    println!("simulated in {wall:.2} s ({} events)", r.totals.events);
    match r.verdict.ok() {
        true if a.algorithm == "mergemin" => {
            println!("validator: PASS (the root holds the minimum of {} values)", r.verdict.records_in)
        }
        true => {
            println!("validator: PASS ({} records in global order, checksum matches)", r.verdict.records_out)
        }
        false => {
            println!("validator: FAIL");
            r.verdict.problems.iter().for_each(|p| println!("  {p}"));
        }
    }
}
