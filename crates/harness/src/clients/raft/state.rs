//! Each replica's Raft state at the end of a run, read from the node's memory through the
//! symbols `raft`, `raft_log` and `raft_kv` of `raft.elf` (layout: docs/apps/raft.md
//! "State read after the run"). Reading memory changes nothing in the run, and works for a
//! replica that crashed or was cut off as for any other.

use nanopu_cluster::Simulation;
use nanopu_riscv::Program;

/// "RAFT", the first word of `struct raft`.
const MAGIC: u64 = 0x5446_4152;
/// Words of one log entry: term, kind, request id, key, value, client address.
pub const ENTRY_WORDS: usize = 6;
/// Most replicas (`MAX_NODES` in raft.c: the size of nextIndex[] and matchIndex[]).
pub const MAX_NODES: usize = 7;
/// Keys of the store (`NKEYS` in raft.c).
pub const NKEYS: usize = 4096;
/// Entry kinds.
pub const E_NOOP: u64 = 0;
pub const E_SET: u64 = 1;
pub const E_GET: u64 = 2;

/// One log entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub term: u64,
    pub kind: u64,
    pub req: u64,
    pub key: u64,
    pub value: u64,
}

/// A replica's state.
#[derive(Clone, Debug)]
pub struct Replica {
    pub node: u32,
    /// False for a replica that crashed before raft.c wrote its state (a crash at 0 us):
    /// it holds Raft's initial state, term 0 and an empty log and store.
    pub booted: bool,
    pub term: u64,
    pub role: u64,
    pub commit: u64,
    pub applied: u64,
    pub elections: u64,
    /// Committed entries this replica was told to overwrite (must be 0).
    pub truncated_committed: u64,
    /// The leader's nextIndex and matchIndex per replica (stale on a follower).
    pub next_index: Vec<u64>,
    pub match_index: Vec<u64>,
    /// `log[i]` is entry i; `log[0]` the empty prefix.
    pub log: Vec<Entry>,
    pub kv: Vec<u64>,
}

/// Where the state lives in the program's memory.
pub struct Symbols {
    raft: u64,
    log: u64,
    kv: u64,
}

impl Symbols {
    pub fn of(elf: &[u8]) -> Result<Symbols, String> {
        let p = Program::load(elf).map_err(|e| format!("raft.elf: {e}"))?;
        let sym = |n: &str| p.symbol(n).ok_or(format!("raft.elf has no symbol {n}: not the Raft program"));
        Ok(Symbols { raft: sym("raft")?, log: sym("raft_log")?, kv: sym("raft_kv")? })
    }
}

fn words(sim: &Simulation, node: u32, addr: u64, n: usize) -> Result<Vec<u64>, String> {
    let mut b = vec![0u8; 8 * n];
    sim.nodes[node as usize].mem.read(addr, &mut b).map_err(|e| format!("node {node}: {e}"))?;
    Ok(b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
}

fn entry(w: &[u64]) -> Entry {
    Entry { term: w[0], kind: w[1], req: w[2], key: w[3], value: w[4] }
}

/// Replica `node`'s state; `crashed`: the node crashed during the run, so untouched state
/// (all zeros: it never booted) is Raft's initial state rather than an error.
pub fn read(sim: &Simulation, s: &Symbols, node: u32, crashed: bool) -> Result<Replica, String> {
    let h = words(sim, node, s.raft, 12 + 2 * MAX_NODES)?;
    if crashed && h.iter().all(|&w| w == 0) {
        return Ok(never_booted(node));
    }
    if h[0] != MAGIC || h[1] != node as u64 {
        return Err(format!("node {node}: no Raft state (magic {:#x}, me {})", h[0], h[1]));
    }
    let last = h[5] as usize;
    let log = words(sim, node, s.log, ENTRY_WORDS * (last + 1))?;
    Ok(Replica {
        node,
        booted: true,
        term: h[3],
        commit: h[6],
        applied: h[7],
        role: h[8],
        elections: h[10],
        truncated_committed: h[11],
        next_index: h[12..12 + MAX_NODES].to_vec(),
        match_index: h[12 + MAX_NODES..].to_vec(),
        log: log.chunks(ENTRY_WORDS).map(entry).collect(),
        kv: words(sim, node, s.kv, NKEYS)?,
    })
}

/// A replica that crashed before it booted: Raft's initial state (term 0, a follower, the
/// empty log, nothing committed or applied, an empty store), which it would have started in.
fn never_booted(node: u32) -> Replica {
    let none = vec![0; MAX_NODES];
    let empty = Entry { term: 0, kind: E_NOOP, req: 0, key: 0, value: 0 };
    Replica {
        node,
        booted: false,
        term: 0,
        role: 0,
        commit: 0,
        applied: 0,
        elections: 0,
        truncated_committed: 0,
        next_index: none.clone(),
        match_index: none,
        log: vec![empty],
        kv: vec![0; NKEYS],
    }
}
