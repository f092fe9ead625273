//! `nanopu app NAME`: the nanoPU paper's applications (docs/apps/paper-apps.md), each run on
//! simulated nanoPU cores, checked against the host's computation, its latencies printed as
//! text, or with `--json` as one JSON document. Exit status 1 if an answer differs from the
//! host's.

use clap::{Args, Subcommand};
use nanopu_cluster::config::NicKind;
use nanopu_harness::apps::dotprod::run_dot;
use nanopu_harness::apps::elf_name;
use nanopu_harness::apps::nbody::{run_forces, run_root, TreeNode};
use nanopu_harness::apps::nn::{run_edges, run_net, NetSpec};
use nanopu_harness::apps::othello::{run_search, Board, SearchSpec};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, serde::Serialize, serde::Deserialize)]
pub struct AppArgs {
    #[command(subcommand)]
    app: App,
    /// Directory holding the built programs (apps/*.elf).
    #[arg(long, env = "NANOPU_SW_BUILD", default_value = "sw/build", global = true)]
    sw_build: PathBuf,
    /// The nodes' NIC: nanopu, or icenic (the program's _ice.elf build, messages as UDP
    /// frames through DMA, one core per node; docs/apps/paper-apps.md "On IceNIC").
    #[arg(long, default_value = "nanopu", global = true)]
    nic: NicKind,
    /// Print the figures as one JSON document instead of text.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Subcommand, Clone, serde::Serialize, serde::Deserialize)]
enum App {
    /// One neuron on one core accumulating weight x data messages over N edges.
    NnEdges {
        #[arg(long, default_value_t = 16)]
        edges: u64,
        /// Rounds of N data messages, each sent when the previous result arrived.
        #[arg(long, default_value_t = 10)]
        rounds: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// A multi-layer network, one neuron per core, driven by the host's input messages.
    Nn {
        /// Layer sizes, the inputs first.
        #[arg(long, value_delimiter = ',', default_value = "8,16,16,4")]
        layers: Vec<u64>,
        #[arg(long, default_value_t = 10)]
        inferences: u64,
        /// Cores per node [default: 4; on IceNIC 1, its nodes' only].
        #[arg(long)]
        cores: Option<usize>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Distributed minimax over Othello bitboards with map and reduce messages.
    Othello {
        /// Plies searched.
        #[arg(long, default_value_t = 4)]
        depth: u64,
        /// Plies a worker searches on its own (deeper boards are mapped to other workers).
        #[arg(long, default_value_t = 1)]
        local_depth: u64,
        /// The position: this many seeded moves from the opening.
        #[arg(long, default_value_t = 10)]
        plies: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value_t = 4)]
        nodes: u32,
        /// Cores per node [default: 4; on IceNIC 1, its nodes' only].
        #[arg(long)]
        cores: Option<usize>,
    },
    /// A dot product of each request's words with in-memory weights, one request at a time.
    Dotprod {
        /// Words per request.
        #[arg(long, default_value_t = 16)]
        words: usize,
        #[arg(long, default_value_t = 100)]
        requests: u64,
        /// Copy the request to memory first (dotprod_mem) instead of computing as the words
        /// are read (dotprod_reg).
        #[arg(long)]
        copy: bool,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// A Barnes-Hut tree node answering force requests in double precision.
    Nbody {
        #[arg(long, default_value_t = 100)]
        bodies: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// The root of a Barnes-Hut tree receiving one request per body from many senders (by
    /// default the 80,000-body root of experiments/paper-apps, 800 x 100: about 20 s).
    NbodyRoot {
        /// Sender nodes.
        #[arg(long, default_value_t = 800)]
        senders: u32,
        /// Bodies per sender (hundreds per sender make an incast whose recovery takes the
        /// simulator minutes: 80 x 1,000 took more than 20).
        #[arg(long, default_value_t = 100)]
        per_sender: u64,
        /// Cores of every node (the root's serve; each sender's core 0 sends).
        #[arg(long, default_value_t = 4)]
        cores: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// Why nbody-root does not run on IceNIC.
const ROOT_ON_ICENIC: &str = "--nic icenic: nbody-root is an incast IceNIC cannot take without a \
    transport, and its times come from the transport's records; it runs on the nanoPU only";

pub fn main(a: AppArgs) -> Result<ExitCode, String> {
    let (ok, doc) = a.run()?;
    match a.json {
        true => println!("{}", serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?),
        false => print!("{}", crate::report::text::text_of(&doc)),
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

impl AppArgs {
    /// Run the application: whether its answers are the host's, and the JSON document
    /// `nanopu app` prints.
    pub fn run(&self) -> Result<(bool, Value), String> {
        let (nic, elf) = (self.nic, self.program());
        let app = self.app.clone().with_cores(nic);
        app.check()?;
        app.check_icenic_cores(nic)?;
        if nic != NicKind::Nanopu && matches!(app, App::NbodyRoot { .. }) {
            return Err(ROOT_ON_ICENIC.into());
        }
        let (ok, mut doc) = match app {
            App::NnEdges { edges, rounds, seed } => nn_edges(&elf, nic, edges, rounds, seed)?,
            App::Nn { layers, inferences, cores, seed } => {
                nn(&elf, nic, NetSpec { seed, inferences, layers, cores: cores.unwrap_or(0) })?
            }
            App::Othello { depth, local_depth, plies, seed, nodes, cores } => {
                let board = Board::opening(seed, plies);
                othello(
                    &elf,
                    nic,
                    SearchSpec { nodes, cores: cores.unwrap_or(0), board, depth, local_depth },
                )?
            }
            App::Nbody { bodies, seed } => nbody(&elf, nic, bodies, seed)?,
            App::Dotprod { words, requests, copy, seed } => dotprod(&elf, nic, words, requests, copy, seed)?,
            App::NbodyRoot { senders, per_sender, cores, seed } => {
                nbody_root(&elf, senders, per_sender, cores, seed)?
            }
        };
        doc["nic"] = json!(nic.name());
        Ok((ok, doc))
    }

    /// The program the application loads (its IceNIC build on `--nic icenic`): what the
    /// sweeps' cache hashes (docs/python.md, "The cache").
    pub fn program(&self) -> PathBuf {
        let nic = self.nic;
        let name = match &self.app {
            App::NnEdges { .. } => elf_name("nn_edges", nic),
            App::Nn { .. } => elf_name("nn_net", nic),
            App::Othello { .. } => elf_name("othello", nic),
            App::Dotprod { copy, .. } => elf_name(dotprod_program(*copy), nic),
            App::Nbody { .. } => elf_name("nbody", nic),
            App::NbodyRoot { .. } => "nbody_root.elf".into(),
        };
        self.sw_build.join("apps").join(name)
    }
}

/// Neurons' inputs and layers at most (sw/apps/nn.h NN_MAX_INPUTS, nn_net.c NN_MAX_LAYERS),
/// a dot product's words (sw/apps/dotprod.h DOTPROD_MAX: the prototype's 2 KiB message),
/// othello.c's workers per node (its `workers[16]`).
const MAX_INPUTS: u64 = 256;
const MAX_LAYERS: usize = 8;
const MAX_WORDS: usize = 256;
const OTHELLO_CORES: usize = 16;

/// `value` within `lo..=hi`, else an error naming the flag.
fn within<T: PartialOrd + std::fmt::Display>(flag: &str, value: T, lo: T, hi: T) -> Result<(), String> {
    match value >= lo && value <= hi {
        true => Ok(()),
        false => Err(format!("--{flag}: {value} is not within {lo}..={hi}")),
    }
}

/// At least 1, else an error naming the flag (a run of nothing measures nothing).
fn positive<T: PartialOrd + From<u8> + std::fmt::Display>(flag: &str, value: T) -> Result<(), String> {
    match value >= T::from(1) {
        true => Ok(()),
        false => Err(format!("--{flag}: {value} is not at least 1")),
    }
}

impl App {
    /// `--cores` as given, else a nanoPU node's 4 or an IceNIC node's one core (its hart 0
    /// drives the NIC: docs/models/icenic.md).
    fn with_cores(mut self, nic: NicKind) -> App {
        let default = if nic == NicKind::Nanopu { 4 } else { 1 };
        if let App::Nn { cores, .. } | App::Othello { cores, .. } = &mut self {
            cores.get_or_insert(default);
        }
        self
    }

    /// An IceNIC node has one core: `--cores` other than 1 is refused naming the flag.
    fn check_icenic_cores(&self, nic: NicKind) -> Result<(), String> {
        match self {
            App::Nn { cores: Some(n), .. } | App::Othello { cores: Some(n), .. }
                if nic != NicKind::Nanopu && *n != 1 =>
            {
                Err(format!("--cores: IceNIC nodes run one core each (hart 0 drives the NIC), not {n}"))
            }
            _ => Ok(()),
        }
    }

    /// Every flag within what the program and the host's check take, before anything runs.
    fn check(&self) -> Result<(), String> {
        match self {
            App::NnEdges { edges, rounds, .. } => {
                within("edges", *edges, 1, MAX_INPUTS).and(positive("rounds", *rounds))
            }
            App::Nn { layers, inferences, cores, .. } => check_layers(layers)
                .and(positive("inferences", *inferences))
                .and(positive("cores", cores.unwrap_or(0))),
            App::Othello { depth, local_depth, nodes, cores, .. } => check_othello(*depth, *local_depth)
                .and(positive("nodes", *nodes))
                .and(within("cores", cores.unwrap_or(0), 1, OTHELLO_CORES)),
            App::Dotprod { words, requests, .. } => {
                within("words", *words, 1, MAX_WORDS).and(positive("requests", *requests))
            }
            App::Nbody { bodies, .. } => positive("bodies", *bodies),
            App::NbodyRoot { senders, per_sender, cores, .. } => positive("senders", *senders)
                .and(positive("per-sender", *per_sender))
                .and(positive("cores", *cores)),
        }
    }
}

/// nn_net.c's network: 2 to 8 layers of 1 to 256 neurons.
fn check_layers(layers: &[u64]) -> Result<(), String> {
    within("layers", layers.len(), 2, MAX_LAYERS).map_err(|_| {
        format!(
            "--layers: {} layers, not 2..={MAX_LAYERS} (the inputs and at least one layer of neurons)",
            layers.len()
        )
    })?;
    layers.iter().try_for_each(|&n| within("layers", n, 1, MAX_INPUTS))
}

/// The root board must be mapped (a board no deeper than `--local-depth` is searched where
/// it lands and reduced without its best move).
fn check_othello(depth: u64, local_depth: u64) -> Result<(), String> {
    match local_depth < depth {
        true => Ok(()),
        false => Err(format!(
            "--local-depth: {local_depth} is not below --depth {depth} (the root must be mapped)"
        )),
    }
}

/// The dot product's program: copying the request to memory first, or computing as the
/// words are read.
fn dotprod_program(copy: bool) -> &'static str {
    if copy {
        "dotprod_mem"
    } else {
        "dotprod_reg"
    }
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("{}: {e}; build the programs with `make -C sw`", p.display()))
}

/// Median, mean, min and max of latencies in ns.
fn stats(v: &[f64]) -> Value {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mean = s.iter().sum::<f64>() / s.len().max(1) as f64;
    json!({"n": s.len(), "median": s.get(s.len() / 2), "mean": mean, "min": s.first(), "max": s.last()})
}

fn nn_edges(elf: &Path, nic: NicKind, edges: u64, rounds: u64, seed: u64) -> Result<(bool, Value), String> {
    let r = run_edges(&read(elf)?, nic, seed, edges, rounds)?;
    let ok = r.results == r.expected;
    Ok((
        ok,
        json!({"app": "nn-edges", "edges": edges, "rounds": rounds, "ok": ok, "latency_ns": stats(&r.latency_ns)}),
    ))
}

fn nn(elf: &Path, nic: NicKind, spec: NetSpec) -> Result<(bool, Value), String> {
    let r = run_net(&spec, elf, nic)?;
    let ok = (0..spec.inferences).all(|k| r.outputs[k as usize] == spec.reference(k));
    let doc = json!({"app": "nn", "layers": spec.layers, "neurons": spec.neurons(), "inferences": spec.inferences,
        "ok": ok, "latency_ns": stats(&r.latency_ns), "outputs": r.outputs.last()});
    Ok((ok, doc))
}

fn othello(elf: &Path, nic: NicKind, spec: SearchSpec) -> Result<(bool, Value), String> {
    let r = run_search(&spec, elf, nic)?;
    let (value, best) = spec.board.search(spec.depth);
    let ok = (r.value, r.best) == (value, best);
    let doc = json!({"app": "othello", "depth": spec.depth, "local_depth": spec.local_depth,
        "workers": spec.nodes as usize * spec.cores, "boards": spec.board.tree_size(spec.depth),
        "ok": ok, "value": r.value, "best_move": r.best, "host_value": value, "host_best_move": best,
        "messages": r.messages, "latency_ns": r.latency_ns});
    Ok((ok, doc))
}

fn dotprod(
    elf: &Path,
    nic: NicKind,
    words: usize,
    requests: u64,
    copy: bool,
    seed: u64,
) -> Result<(bool, Value), String> {
    let name = dotprod_program(copy);
    let r = run_dot(&read(elf)?, nic, words, requests, seed)?;
    let ok = r.answers == r.expected;
    let doc = json!({"app": "dotprod", "program": name, "words": words, "requests": requests, "ok": ok,
        "latency_ns": stats(&r.latency_ns)});
    Ok((ok, doc))
}

/// A tree node at the centre of the bodies' 1,000 m square, 5,000 t over a 100 m side.
const NODE: TreeNode = TreeNode { x: 500.0, y: 500.0, m: 5.0e6, s: 100.0 };

fn nbody(elf: &Path, nic: NicKind, bodies: u64, seed: u64) -> Result<(bool, Value), String> {
    let r = run_forces(&read(elf)?, nic, NODE, seed, bodies)?;
    let bits = |v: &[Option<(f64, f64)>]| -> Vec<_> {
        v.iter().map(|f| f.map(|(x, y)| (x.to_bits(), y.to_bits()))).collect()
    };
    let ok = bits(&r.answers) == bits(&r.expected);
    let opened = r.expected.iter().filter(|f| f.is_none()).count();
    let doc = json!({"app": "nbody", "bodies": bodies, "opened": opened, "ok": ok, "latency_ns": stats(&r.latency_ns)});
    Ok((ok, doc))
}

fn nbody_root(elf: &Path, senders: u32, per: u64, cores: usize, seed: u64) -> Result<(bool, Value), String> {
    let r = run_root(elf, senders, per, cores, seed)?;
    let doc = json!({"app": "nbody-root", "senders": senders, "per_sender": per, "cores": cores,
        "requests": r.requests, "ok": true, "total_ns": r.total_ns, "root_busy_ns": r.root_busy_ns,
        "per_request_ns": r.root_busy_ns / r.requests as f64, "request_latency_ns": stats(&r.request_ns)});
    Ok((true, doc))
}
