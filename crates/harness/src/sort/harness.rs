//! Loading sort inputs into the nodes' memory and reading back what the sorters left
//! (the layout is `struct sort_dir` / `struct sort_area` of `sw/include/sortbench.h`).

use super::input::{generate, Distribution, InputDigest, Records, VALUE_WORDS};
use nanopu_cluster::engine::progress::{PhaseProbe, Phases};
use nanopu_cluster::Simulation;

/// Per node: the directory of the cores' areas (SORT_DIR_ADDR).
pub const DIR_ADDR: u64 = 0x8800_0000;
/// The areas follow the directory page; all must end below this address.
const AREAS_END: u64 = 0x9000_0000;
const DIR_MAGIC: u64 = u64::from_le_bytes(*b"PNSRTDIR");
const AREA_MAGIC: u64 = u64::from_le_bytes(*b"SORTAREA");
const MAX_STAGES: usize = 32;
/// Words of `struct sort_area` before its stages.
const HEADER_WORDS: usize = 16;
const AREA_WORDS: usize = HEADER_WORDS + 4 * MAX_STAGES;

/// Where the inputs are when the programs start (docs/sort-harness.md "Warm and cold
/// starts").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// In the caches, as if each sorter's core had written its own records: the
    /// prototype's programs generate or receive their data while running.
    Warm,
    /// In DRAM only, every cache empty (the paper's local-sort figure cleared them).
    Cold,
}

impl Start {
    /// Both starts by name (the one list `parse` and `--help` use).
    pub const ALL: [(&'static str, Start); 2] = [("warm", Start::Warm), ("cold", Start::Cold)];

    pub fn parse(s: &str) -> Result<Start, String> {
        crate::sort::by_name(&Self::ALL, s, "start")
    }
}

/// One logged stage of one sorter, in cycles of its core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage {
    pub id: u64,
    pub start: u64,
    pub end: u64,
    pub idle: u64,
}

/// What one sorter left behind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SorterOutput {
    pub done: bool,
    pub records: Records,
    pub stages: Vec<Stage>,
    /// Messages (a multicast is one) and payload bytes its core's NIC sent: the simulator's
    /// count, not the program's (`read_outputs`).
    pub msgs_sent: u64,
    pub bytes_sent: u64,
    pub result: u64,
    /// Why the output could not be read (overflowing counts), if so.
    pub error: Option<String>,
}

/// Where one core's area and arrays sit.
#[derive(Clone, Copy, Debug)]
struct Layout {
    area: u64,
    in_keys: u64,
    in_values: u64,
    out_cap: u64,
    out_keys: u64,
    out_values: u64,
    end: u64,
}

fn align(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

impl Layout {
    fn new(area: u64, n_in: u64, out_cap: u64) -> Layout {
        let in_keys = align(area + 8 * AREA_WORDS as u64, 64);
        let in_values = align(in_keys + 8 * n_in, 64);
        let out_keys = align(in_values + 8 * VALUE_WORDS as u64 * n_in, 64);
        let out_values = align(out_keys + 8 * out_cap, 64);
        let end = align(out_values + 8 * VALUE_WORDS as u64 * out_cap, 4096);
        Layout { area, in_keys, in_values, out_cap, out_keys, out_values, end }
    }
}

/// Output room per sorter: ample for any bucket skew the validator would still accept.
pub fn out_capacity(n_in: u64) -> u64 {
    16 * n_in + 256
}

/// Do `cores` areas of `n_in` records each fit between the directory page and `AREAS_END`?
fn areas_fit(n_in: u64, cores: u64) -> bool {
    let mut at = DIR_ADDR + 4096;
    for _ in 0..cores {
        at = Layout::new(at, n_in, out_capacity(n_in)).end;
        if at > AREAS_END {
            return false;
        }
    }
    true
}

/// Most records per core whose areas fit a node of `cores` cores (0 if not even one does):
/// checked before a run, so that a size that cannot fit costs no cluster.
pub fn max_records_per_core(cores: u64) -> u64 {
    let (mut lo, mut hi) = (0, AREAS_END - DIR_ADDR); // areas_fit(lo), !areas_fit(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if areas_fit(mid, cores) {
            lo = mid
        } else {
            hi = mid
        }
    }
    lo
}

/// The progress line's view of a sort: each sorter by the stage it is in, read from the
/// stage log of its area (a core between two stages counts in the one it ended).
pub const PROBE: PhaseProbe = PhaseProbe { count: count_stages, name: phase_name };
/// Phase ids: stage ids shifted by one, so that a sorter with no stage yet comes first.
const STARTING: u64 = 0;
const DONE: u64 = u64::MAX;

fn count_stages(sim: &Simulation, counts: &mut Phases) {
    for node in 0..sim.nodes.len() {
        let Ok(dir) = read_words(sim, node, DIR_ADDR, 2 + sim.nodes[node].cores.len()) else { continue };
        if dir[0] == DIR_MAGIC {
            let phases = dir[2..].iter().map(|&area| current_phase(sim, node, area));
            phases.for_each(|p| *counts.entry(p).or_default() += 1);
        }
    }
}

/// Where one sorter is: done, in the stage its log has open or last closed, or starting.
/// Reads the words it needs, two at a time, not the whole area: the progress line asks for
/// every sorter twice a second, on the coordinating thread while the others wait.
fn current_phase(sim: &Simulation, node: usize, area: u64) -> u64 {
    let Ok([done, stages]) = read_pair(sim, node, area + 8 * 10) else { return STARTING };
    if done == 1 {
        return DONE;
    }
    let n = stages.min(MAX_STAGES as u64 - 1) as usize;
    // A stage's first two words: its id and its start.
    let stage = |i: usize| read_pair(sim, node, area + 8 * (HEADER_WORDS + 4 * i) as u64);
    match (stage(n), n) {
        (Ok([id, start]), _) if start != 0 => id + 1,
        (_, 1..) => stage(n - 1).map_or(STARTING, |[id, _]| id + 1),
        (_, 0) => STARTING,
    }
}

/// The two words at `addr`.
fn read_pair(sim: &Simulation, node: usize, addr: u64) -> Result<[u64; 2], String> {
    let mut b = [0u8; 16];
    sim.nodes[node].mem.read(addr, &mut b)?;
    let word = |i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes"));
    Ok([word(0), word(1)])
}

fn phase_name(id: u64) -> String {
    match id {
        STARTING => "starting".into(),
        DONE => "done".into(),
        _ => stage_name(id - 1),
    }
}

/// The words' bytes, little-endian. Word by word into a buffer of the right size: a
/// `flat_map` over the bytes was collected a byte at a time (about 50 host instructions a
/// byte, a third of loading a 65,536-core sort's inputs).
fn words_le(words: &[u64]) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 * words.len());
    words.iter().for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
    b
}

fn read_words(sim: &Simulation, node: usize, addr: u64, n: usize) -> Result<Vec<u64>, String> {
    let mut b = vec![0u8; 8 * n];
    sim.nodes[node].mem.read(addr, &mut b)?;
    Ok(b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
}

/// Write every sorter's input records (sorter = node * cores + core) and the directories,
/// warming the caches with them for `Start::Warm`. Returns what the validator needs of
/// them: of all `sorters`, also those whose nodes another MPI rank holds (`sim` then holds
/// this rank's nodes only; every node of a sort has the same cores).
pub fn load(
    sim: &mut Simulation,
    seed: u64,
    n_in: usize,
    dist: Distribution,
    start: Start,
    sorters: u64,
) -> Result<InputDigest, String> {
    let mut all = InputDigest::default();
    let per_node = sim.nodes.first().map_or(0, |n| n.cores.len() as u64);
    let mut sorter = sim.nodes.first().map_or(0, |n| u64::from(n.index)) * per_node;
    let mine = sorter..sorter + sim.nodes.iter().map(|n| n.cores.len() as u64).sum::<u64>();
    for other in (0..sorters).filter(|s| !mine.contains(s)) {
        all.add(&generate(seed, other, n_in, dist));
    }
    for node in 0..sim.nodes.len() {
        let cores = sim.nodes[node].cores.len();
        let mut dir = vec![DIR_MAGIC, cores as u64];
        let mut at = DIR_ADDR + 4096;
        for core in 0..cores {
            let l = Layout::new(at, n_in as u64, out_capacity(n_in as u64));
            if l.end > AREAS_END {
                return Err(format!("sort input: {n_in} records per core do not fit in a node's sort area"));
            }
            let r = generate(seed, sorter, n_in, dist);
            write_area(sim, node, &l, sorter, sorters, &r)?;
            if start == Start::Warm {
                let n = &mut sim.nodes[node];
                n.cores[core].warm(&mut n.mem, l.area, l.out_keys - l.area);
            }
            dir.push(l.area);
            all.add(&r);
            sorter += 1;
            at = l.end;
        }
        sim.nodes[node].mem.write(DIR_ADDR, &words_le(&dir))?;
    }
    Ok(all)
}

fn write_area(
    sim: &mut Simulation,
    node: usize,
    l: &Layout,
    sorter: u64,
    sorters: u64,
    r: &Records,
) -> Result<(), String> {
    let n = r.keys.len() as u64;
    let header =
        [AREA_MAGIC, sorter, sorters, n, l.in_keys, l.in_values, l.out_cap, l.out_keys, l.out_values];
    let mem = &mut sim.nodes[node].mem;
    mem.write(l.area, &words_le(&header))?;
    mem.write(l.in_keys, &words_le(&r.keys))?;
    mem.write(l.in_values, &words_le(&r.values))
}

/// Read back every sorter's output, in sorter order.
pub fn read_outputs(sim: &Simulation) -> Result<Vec<SorterOutput>, String> {
    let mut out = Vec::new();
    for node in 0..sim.nodes.len() {
        let dir = read_words(sim, node, DIR_ADDR, 2 + sim.nodes[node].cores.len())?;
        for (core, &area) in dir[2..].iter().enumerate() {
            let mut o = read_area(sim, node, area)?;
            (o.msgs_sent, o.bytes_sent) = sent(sim, node, core);
            out.push(o);
        }
    }
    Ok(out)
}

/// Messages and payload bytes the sorter on `core` of `node` sent: the NIC's own counts,
/// read from outside as FireSim's out-of-band counters are, so that the programs spend no
/// instruction on them (docs/sort-harness.md, "Figures").
fn sent(sim: &Simulation, node: usize, core: usize) -> (u64, u64) {
    let nic = sim.nodes[node].nic.nanopu();
    nic.map_or((0, 0), |n| (n.core(core).sent.msgs, n.core(core).sent.bytes))
}

fn read_area(sim: &Simulation, node: usize, area: u64) -> Result<SorterOutput, String> {
    let h = read_words(sim, node, area, AREA_WORDS)?;
    let (cap, n_out, n_stages) = (h[6], h[9], h[11].min(MAX_STAGES as u64) as usize);
    let stages = (0..n_stages)
        .map(|i| &h[HEADER_WORDS + 4 * i..HEADER_WORDS + 4 * i + 4])
        .map(|s| Stage { id: s[0], start: s[1], end: s[2], idle: s[3] })
        .collect();
    let mut o = SorterOutput { done: h[10] == 1, stages, result: h[12], ..Default::default() };
    if n_out > cap {
        o.error = Some(format!("n_out = {n_out} exceeds the output capacity of {cap} records"));
        return Ok(o);
    }
    let keys = read_words(sim, node, h[7], n_out as usize)?;
    let values = read_words(sim, node, h[8], n_out as usize * VALUE_WORDS)?;
    o.records = Records { keys, values };
    Ok(o)
}

/// Name of a stage id (`enum sort_stage_id` in `sw/include/sortbench.h`).
pub fn stage_name(id: u64) -> String {
    match id {
        0 => "local sort".into(),
        1 => "shuffle".into(),
        2..=31 => format!("level {}", id - 1),
        32 => "fetch values".into(),
        33 => "pivots".into(),
        34 => "splitters".into(),
        35 => "record shuffle".into(),
        36 => "merge".into(),
        37 => "local min".into(),
        38 => "merge tree".into(),
        _ => format!("stage {id}"),
    }
}
