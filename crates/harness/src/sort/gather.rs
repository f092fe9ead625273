//! A sort run across MPI ranks: what each rank's nodes left, gathered on rank 0 (docs/
//! parallel.md, "Across MPI ranks", "Outputs").
//!
//! After the run a rank holds its own nodes only. Each reads its sorters' outputs, judges
//! its nodes and counts their totals, and sends these to rank 0 as words; rank 0 puts them
//! together in rank order, which is node order, so the outputs, figures, verdict and totals
//! are those of the whole cluster, bit for bit. A judgement is put together from each
//! rank's: complete if every rank's is, with their problems in rank order (an incomplete
//! run's problems are then per rank, see the doc).

use super::harness::{SorterOutput, Stage};
use super::input::Records;
use nanopu_cluster::engine::ranks::{text_words, words_text, Ranks};
use nanopu_cluster::report::judge::Judgement;
use nanopu_cluster::Simulation;

/// Whole-cluster counts a summary reports (`nanopu sort --json`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub nodes: u64,
    pub events: u64,
    pub core_dispatches: u64,
    /// Instructions retired by every core.
    pub instructions: u64,
    /// Pages holding private DRAM chunks, and the chunks (what the host stores of DRAM).
    pub private_pages: u64,
    pub private_chunks: u64,
}

impl Totals {
    /// The counts of the nodes `sim` holds.
    pub fn of(sim: &Simulation) -> Totals {
        let cores = sim.nodes.iter().flat_map(|n| &n.cores);
        let mem = sim.nodes.iter().map(|n| n.mem.resident());
        let (pages, chunks) = mem.fold((0, 0), |a, b| (a.0 + b.pages as u64, a.1 + b.chunks as u64));
        Totals {
            nodes: sim.nodes.len() as u64,
            events: sim.events(),
            core_dispatches: sim.core_dispatches(),
            instructions: cores.map(|c| c.stats().instret).sum(),
            private_pages: pages,
            private_chunks: chunks,
        }
    }

    fn words(&self) -> [u64; 6] {
        [
            self.nodes,
            self.events,
            self.core_dispatches,
            self.instructions,
            self.private_pages,
            self.private_chunks,
        ]
    }

    fn add(&mut self, w: &[u64]) {
        let [a, b, c, d, e, f] = self.words();
        *self = Totals {
            nodes: a + w[0],
            events: b + w[1],
            core_dispatches: c + w[2],
            instructions: d + w[3],
            private_pages: e + w[4],
            private_chunks: f + w[5],
        };
    }
}

/// What a rank's nodes left: their outputs, judgement, sorters' exit lines and totals, or
/// why their outputs could not be read (a rank that failed still takes part in the gather:
/// the others wait for it).
pub(crate) struct Piece {
    pub unreadable: Option<String>,
    pub outputs: Vec<SorterOutput>,
    pub judgement: Judgement,
    pub exits: Vec<String>,
    pub totals: Totals,
}

/// Every rank's piece, put together on rank 0 (None on the others).
pub(crate) fn gather(ranks: &dyn Ranks, mine: &Piece) -> Option<Piece> {
    let got = nanopu_cluster::engine::ranks::to_root(ranks, encode(mine));
    (ranks.rank() == 0).then(|| merge(got.iter().map(|w| decode(w)).collect()))
}

fn merge(pieces: Vec<Piece>) -> Piece {
    let judgements: Vec<&Judgement> = pieces.iter().map(|p| &p.judgement).collect();
    let judgement = Judgement::merged(&judgements);
    let unreadable =
        pieces.iter().enumerate().find_map(|(r, p)| Some(format!("rank {r}: {}", p.unreadable.as_ref()?)));
    let (exits, totals) = (Vec::new(), Totals::default());
    let mut all = Piece { unreadable, outputs: Vec::new(), judgement, exits, totals };
    for p in pieces {
        all.outputs.extend(p.outputs);
        all.exits.extend(p.exits);
        all.totals.add(&p.totals.words());
    }
    all
}

/// Appends words to a vector: counts first, then the items.
struct Writer(Vec<u64>);

impl Writer {
    fn list(&mut self, w: &[u64]) {
        self.0.push(w.len() as u64);
        self.0.extend_from_slice(w);
    }

    fn texts(&mut self, t: &[String]) {
        self.0.push(t.len() as u64);
        t.iter().for_each(|s| self.list(&text_words(s)));
    }
}

fn encode(p: &Piece) -> Vec<u64> {
    let mut w = Writer(p.totals.words().to_vec());
    let j = &p.judgement;
    w.0.extend([u64::from(j.complete), u64::from(j.exit_status), p.outputs.len() as u64]);
    w.texts(&j.problems);
    w.texts(&p.exits);
    w.texts(p.unreadable.as_slice());
    for o in &p.outputs {
        w.0.extend([u64::from(o.done), o.msgs_sent, o.bytes_sent, o.result]);
        w.list(&o.records.keys);
        w.list(&o.records.values);
        w.list(&o.stages.iter().flat_map(|s| [s.id, s.start, s.end, s.idle]).collect::<Vec<_>>());
        w.texts(o.error.as_slice());
    }
    w.0
}

/// Reads what `Writer` wrote, in order.
struct Reader<'a>(&'a [u64]);

impl Reader<'_> {
    fn word(&mut self) -> u64 {
        let (w, rest) = self.0.split_first().expect("a rank's piece is whole");
        self.0 = rest;
        *w
    }

    fn list(&mut self) -> Vec<u64> {
        let n = self.word() as usize;
        let (v, rest) = self.0.split_at(n);
        self.0 = rest;
        v.to_vec()
    }

    fn texts(&mut self) -> Vec<String> {
        (0..self.word()).map(|_| words_text(&self.list())).collect()
    }
}

fn decode(words: &[u64]) -> Piece {
    let mut r = Reader(words);
    let mut totals = Totals::default();
    totals.add(&(0..6).map(|_| r.word()).collect::<Vec<_>>());
    let (complete, exit_status, n) = (r.word() == 1, r.word() as u8, r.word());
    let judgement = Judgement { complete, exit_status, problems: r.texts() };
    let (exits, unreadable) = (r.texts(), r.texts().pop());
    let outputs = (0..n).map(|_| output(&mut r)).collect();
    Piece { unreadable, outputs, judgement, exits, totals }
}

fn output(r: &mut Reader) -> SorterOutput {
    let (done, msgs_sent, bytes_sent, result) = (r.word() == 1, r.word(), r.word(), r.word());
    let records = Records { keys: r.list(), values: r.list() };
    let stages = r.list().chunks(4).map(|s| Stage { id: s[0], start: s[1], end: s[2], idle: s[3] }).collect();
    let error = r.texts().pop();
    SorterOutput { done, records, stages, msgs_sent, bytes_sent, result, error }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(first: u64, problems: &[&str], status: u8) -> Piece {
        let out = SorterOutput {
            done: true,
            records: Records { keys: vec![first, first + 1], values: vec![7; 6] },
            stages: vec![Stage { id: 1, start: 2, end: 3, idle: 4 }],
            msgs_sent: 5,
            bytes_sent: 6,
            result: first,
            error: (first == 9).then(|| "n_out = 3 exceeds".into()),
        };
        let problems: Vec<String> = problems.iter().map(|s| s.to_string()).collect();
        let judgement = Judgement { complete: problems.is_empty(), problems, exit_status: status };
        let totals = Totals { nodes: 2, events: first, ..Totals::default() };
        let unreadable = (first == 9).then(|| "address 0x10 is outside DRAM".into());
        Piece { unreadable, outputs: vec![out], judgement, exits: vec!["sorter 3 exited".into()], totals }
    }

    #[test]
    fn a_piece_survives_the_words() {
        let p = piece(9, &["node 1: 2 message(s)"], 3);
        let q = decode(&encode(&p));
        assert_eq!((q.outputs, q.judgement, q.exits, q.totals), (p.outputs, p.judgement, p.exits, p.totals));
        assert_eq!(q.unreadable, p.unreadable);
    }

    #[test]
    fn pieces_merge_in_rank_order_with_the_worst_status() {
        let m = merge(vec![piece(1, &[], 5), piece(3, &["a"], 3), piece(5, &["b", "a"], 2)]);
        let keys: Vec<u64> = m.outputs.iter().flat_map(|o| o.records.keys.clone()).collect();
        assert_eq!(keys, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(
            (m.judgement.problems.clone(), m.judgement.exit_status),
            (vec!["a".into(), "b".into()], 2)
        );
        assert_eq!((m.totals.nodes, m.totals.events), (6, 9));
        let clean = merge(vec![piece(1, &[], 0), piece(3, &[], 4)]);
        assert!(clean.judgement.complete && clean.judgement.exit_status == 4 && clean.unreadable.is_none());
        let bad = merge(vec![piece(1, &[], 0), piece(9, &[], 0)]);
        assert_eq!(bad.unreadable.as_deref(), Some("rank 1: address 0x10 is outside DRAM"));
    }
}
