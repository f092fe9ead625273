//! The one-sided RDMA workload of the load generator, against `sw/apps/rdma.c`: READ,
//! WRITE, compare-and-swap, fetch-and-add and indirect READ at uniform word-aligned
//! addresses of a 4 MiB region. The generator keeps a model of the region, serialized in
//! send order, and computes each request's expected reply when it draws the request; every
//! reply is checked against it, except the data of a reply that a request in flight at the
//! same time may have changed ([`check`]). Wire format and initial contents:
//! docs/apps/rdma.md.

use crate::workload::kv::{mix, KvErrors};
use nanopu_cluster::config::bounds::Bounds;
use nanopu_cluster::config::check::FRACTION;
use nanopu_sim::{Rng, Time};
use std::collections::HashMap;

/// The region's size (the 4 MiB), and in words.
pub const REGION_BYTES: u64 = 4 << 20;
const REGION_WORDS: u64 = REGION_BYTES / 8;
/// Most words one READ, WRITE or indirect READ moves (`rdma.c`'s MAX_WORDS).
pub const MAX_WORDS: u64 = 64;
/// Words one operation moves.
pub const WORDS: Bounds<u64> = Bounds::closed(1, MAX_WORDS);

/// The operations, in the order of [`RdmaSpec::mix`] and of the load's classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdmaKind {
    Read,
    Write,
    Cas,
    Faa,
    IndirectRead,
}

pub const KINDS: [RdmaKind; 5] =
    [RdmaKind::Read, RdmaKind::Write, RdmaKind::Cas, RdmaKind::Faa, RdmaKind::IndirectRead];

impl RdmaKind {
    /// The op code on the wire.
    fn code(self) -> u64 {
        KINDS.iter().position(|&k| k == self).unwrap() as u64 + 1
    }

    /// The class name of its rows.
    pub fn name(self) -> &'static str {
        ["read", "write", "cas", "faa", "indirect_read"][self.code() as usize - 1]
    }
}

/// The workload: the seed of the region (shared with the server), the mix and the sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct RdmaSpec {
    pub seed: u64,
    /// Share of each of [`KINDS`]; they add up to 1.
    pub mix: [f64; 5],
    /// Words a READ or indirect READ asks for, smallest and largest (uniform between).
    pub read_words: [u64; 2],
    /// Words a WRITE carries, smallest and largest.
    pub write_words: [u64; 2],
}

/// One request: its words after the tag, the reply expected after the tag, and the verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct RdmaOp {
    pub kind: RdmaKind,
    /// The op word, then (after the tag, which is not kept) the address and the arguments.
    pub request: Vec<u64>,
    /// The reply's op word, then (after the tag) its data words.
    pub expect: Vec<u64>,
    /// The word index the reply's data words start at (an indirect READ's: its target).
    pub data_at: u64,
    pub answer: Option<Result<(), Mismatch>>,
}

/// How a reply differs from the expected one.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    pub why: String,
    /// Only in its data words (the op word and the length are right).
    pub data_only: bool,
}

/// Word `i` of the region as the server fills it: SplitMix64's `i`-th output from state
/// `seed` (Steele, Lea and Flood, OOPSLA 2014).
pub fn initial_word(seed: u64, i: u64) -> u64 {
    mix(seed.wrapping_add((i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)))
}

impl RdmaSpec {
    /// The server's arguments (after program, MAC and IP).
    pub fn server_args(&self) -> Vec<String> {
        vec![self.seed.to_string()]
    }

    /// Check every field; the error names it.
    pub fn validate(&self) -> Result<(), String> {
        if self.mix.iter().any(|&f| !FRACTION.contains(f)) {
            return Err("load.rdma: each op's fraction must be within 0..=1".into());
        }
        let total: f64 = self.mix.iter().sum();
        if (total - 1.0).abs() > 1e-9 {
            return Err(format!("load.rdma: the op fractions add up to {total}, not 1"));
        }
        sizes(self.read_words, "read_words")?;
        sizes(self.write_words, "write_words")
    }

    /// Each request's operation, drawn in send order from the classes the schedule gave
    /// them (an index into [`KINDS`]), with its reply from the model at that point.
    pub fn ops(&self, classes: impl Iterator<Item = usize>) -> Vec<RdmaOp> {
        let mut rng = Rng::stream(self.seed, 0x0d3a);
        let mut model = Model::new(self.seed);
        classes.map(|c| self.draw(KINDS[c], &mut rng, &mut model)).collect()
    }

    fn draw(&self, kind: RdmaKind, rng: &mut Rng, m: &mut Model) -> RdmaOp {
        // Drawn for every op (CAS and FAA ignore it): one draw sequence whatever the mix.
        let [lo, hi] = if kind == RdmaKind::Write { self.write_words } else { self.read_words };
        let n = lo + rng.below(hi - lo + 1);
        let (request, data, data_at) = match kind {
            RdmaKind::Read => m.read(rng, n),
            RdmaKind::Write => m.write(rng, n),
            RdmaKind::Cas => m.cas(rng),
            RdmaKind::Faa => m.faa(rng),
            RdmaKind::IndirectRead => m.indirect_read(rng, n),
        };
        let reply_words = if kind == RdmaKind::Write { 0 } else { data.len() as u64 };
        // Status 0 (served) in bits 8..16 of the reply's op word (docs/apps/rdma.md).
        let expect = [kind.code() | reply_words << 16].into_iter().chain(data).collect();
        let op_word = kind.code() | request.0 << 16;
        let request = [op_word].into_iter().chain(request.1).collect();
        RdmaOp { kind, request, expect, data_at, answer: None }
    }

    /// The request's payload words; `tag` identifies it (the send time, echoed).
    pub fn request_words(op: &RdmaOp, tag: u64) -> Vec<u64> {
        let mut w = vec![op.request[0], tag];
        w.extend(&op.request[1..]);
        w
    }

    /// Judge a reply's payload words: exactly the expected ones (the tag aside).
    pub fn judge(op: &RdmaOp, words: &[u64]) -> Result<(), Mismatch> {
        let (w0, data) = (words[0], &words[2..]);
        let what = format!("{} at {:#x}", op.kind.name(), op.request[1]);
        let wrong = |why: String, data_only| Err(Mismatch { why: format!("{what}: {why}"), data_only });
        if w0 != op.expect[0] || data.len() != op.expect.len() - 1 {
            let (code, status, n) = (w0 & 0xff, (w0 >> 8) & 0xff, w0 >> 16);
            let why =
                format!("reply word 0 {w0:#x}: op {code}, status {status}, {n} words; {} came", data.len());
            return wrong(why, false);
        }
        match data.iter().zip(&op.expect[1..]).position(|(a, b)| a != b) {
            Some(j) => {
                wrong(format!("word {j} is {:#x}, the model holds {:#x}", data[j], op.expect[1 + j]), true)
            }
            None => Ok(()),
        }
    }
}

/// Sizes within 1..=[`MAX_WORDS`], smallest first.
fn sizes([a, b]: [u64; 2], key: &str) -> Result<(), String> {
    match WORDS.contains(a) && WORDS.contains(b) && a <= b {
        true => Ok(()),
        false => Err(format!("load.rdma.{key}: [{a}, {b}] must be within 1..={MAX_WORDS}, smallest first")),
    }
}

/// The generator's view of the region, changed by each request in send order.
struct Model {
    words: Vec<u64>,
}

/// A drawn request: (its size field, its address and argument words), the reply's data, and
/// the word index that data starts at.
type Drawn = ((u64, Vec<u64>), Vec<u64>, u64);

impl Model {
    fn new(seed: u64) -> Model {
        Model { words: (0..REGION_WORDS).map(|i| initial_word(seed, i)).collect() }
    }

    /// `n` words from word `w`, wrapping at the end (as `rdma.c` reads them).
    fn span(&self, w: u64, n: u64) -> Vec<u64> {
        (w..w + n).map(|i| self.words[(i % REGION_WORDS) as usize]).collect()
    }

    /// A uniform word index where `n` words fit.
    fn address(rng: &mut Rng, n: u64) -> u64 {
        rng.below(REGION_WORDS - n + 1)
    }

    fn read(&mut self, rng: &mut Rng, n: u64) -> Drawn {
        let w = Model::address(rng, n);
        ((n, vec![8 * w]), self.span(w, n), w)
    }

    fn write(&mut self, rng: &mut Rng, n: u64) -> Drawn {
        let w = Model::address(rng, n);
        let data: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        self.words[w as usize..(w + n) as usize].copy_from_slice(&data);
        ((n, [8 * w].into_iter().chain(data).collect()), Vec::new(), w)
    }

    /// A CAS whose compare value is the word's (it succeeds) half the time, a random one
    /// (it fails) otherwise: both outcomes are checked.
    fn cas(&mut self, rng: &mut Rng) -> Drawn {
        let w = Model::address(rng, 1);
        let old = self.words[w as usize];
        let compare = if rng.next_f64() < 0.5 { old } else { rng.next_u64() };
        let desired = rng.next_u64();
        if compare == old {
            self.words[w as usize] = desired;
        }
        ((0, vec![8 * w, compare, desired]), vec![old], w)
    }

    fn faa(&mut self, rng: &mut Rng) -> Drawn {
        let w = Model::address(rng, 1);
        let (old, add) = (self.words[w as usize], rng.next_u64());
        self.words[w as usize] = old.wrapping_add(add);
        ((0, vec![8 * w, add]), vec![old], w)
    }

    /// The pointer word at a uniform address, taken modulo the region's size and aligned.
    fn indirect_read(&mut self, rng: &mut Rng, n: u64) -> Drawn {
        let w = Model::address(rng, 1);
        let target = (self.words[w as usize] % REGION_BYTES) / 8;
        ((n, vec![8 * w]), self.span(target, n), target)
    }
}

/// Wrong replies and lost requests. The model is serialized in send order, but the server
/// serves requests in flight at the same time in any order (several cores), so a reply's
/// data is judged only where that order cannot matter: none of the words it reports was
/// written by a request in flight with it (sent before its reply came, replied after it was
/// sent), nor is unsure. A word is unsure after two requests in flight together wrote it,
/// after a CAS or FAA on an unsure word, or after a lost request's write, until a WRITE with
/// no other writer in flight sets it. The rest of each reply (op, status, length) is always
/// judged; data that differs from the model where it may is counted in `unchecked`.
/// `times`: each request's send and reply times.
pub fn check(ops: &[RdmaOp], times: &[(Time, Option<Time>)]) -> KvErrors {
    let writers = Writers::of(ops);
    let mut unsure: HashMap<u64, bool> = HashMap::new();
    let mut e = KvErrors::default();
    for (i, op) in ops.iter().enumerate() {
        let contested = |w: &u64| writers.contested(i, *w, times);
        let sure = |w: &u64| !unsure.get(w).copied().unwrap_or(false) && !contested(w);
        match &op.answer {
            None => e.lost += 1,
            Some(Ok(())) => {}
            Some(Err(m)) if m.data_only && !reported(op).iter().all(sure) => e.unchecked += 1,
            Some(Err(m)) => e.add_wrong(m.why.clone()),
        }
        let lost = op.answer.is_none();
        for w in written(op) {
            let was = unsure.get(&w).copied().unwrap_or(false);
            let keeps = was && op.kind != RdmaKind::Write;
            unsure.insert(w, lost || keeps || contested(&w));
        }
    }
    e
}

/// The words a reply's data reports: READ and indirect READ their span (and the latter its
/// pointer), CAS and FAA their word, WRITE none.
fn reported(op: &RdmaOp) -> Vec<u64> {
    let (addr, n) = (op.request[1] / 8, op.request[0] >> 16);
    let span = |n: u64| (0..n).map(|j| (op.data_at + j) % REGION_WORDS);
    match op.kind {
        RdmaKind::Read => span(n).collect(),
        RdmaKind::IndirectRead => std::iter::once(addr).chain(span(n)).collect(),
        RdmaKind::Cas | RdmaKind::Faa => vec![addr],
        RdmaKind::Write => Vec::new(),
    }
}

/// The words a request may change.
fn written(op: &RdmaOp) -> Vec<u64> {
    let (addr, n) = (op.request[1] / 8, op.request[0] >> 16);
    match op.kind {
        RdmaKind::Write => (addr..addr + n).collect(),
        RdmaKind::Cas | RdmaKind::Faa => vec![addr],
        RdmaKind::Read | RdmaKind::IndirectRead => Vec::new(),
    }
}

/// For each word, the requests that may change it.
struct Writers(HashMap<u64, Vec<usize>>);

impl Writers {
    fn of(ops: &[RdmaOp]) -> Writers {
        let mut map: HashMap<u64, Vec<usize>> = HashMap::new();
        for (i, op) in ops.iter().enumerate() {
            written(op).into_iter().for_each(|w| map.entry(w).or_default().push(i));
        }
        Writers(map)
    }

    /// Whether a request other than `i` that may change word `w` was in flight with `i` (a
    /// request without a reply stays in flight).
    fn contested(&self, i: usize, w: u64, times: &[(Time, Option<Time>)]) -> bool {
        let end = |k: usize| times[k].1.unwrap_or(Time(u64::MAX));
        let overlap = |j: usize| j != i && times[j].0 < end(i) && times[i].0 < end(j);
        self.0.get(&w).is_some_and(|v| v.iter().any(|&j| overlap(j)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RdmaSpec {
        RdmaSpec { seed: 5, mix: [0.2; 5], read_words: [1, 8], write_words: [1, 8] }
    }

    fn reply(op: &RdmaOp) -> Vec<u64> {
        let mut w = vec![op.expect[0], 77];
        w.extend(&op.expect[1..]);
        w
    }

    #[test]
    fn a_read_after_a_write_expects_the_written_words() {
        let s = spec();
        let ops = s.ops([1, 0].into_iter());
        let (w, r) = (&ops[0], &ops[1]);
        assert_eq!(w.request.len(), 2 + (w.request[0] >> 16) as usize, "address, then data");
        let mut m = Model::new(5);
        let addr = w.request[1] / 8;
        assert_eq!(m.span(addr, 1)[0], initial_word(5, addr));
        let data = &w.request[2..];
        m.words[addr as usize..addr as usize + data.len()].copy_from_slice(data);
        assert_eq!(r.expect[1..], m.span(r.request[1] / 8, r.request[0] >> 16)[..]);
    }

    #[test]
    fn cas_and_faa_return_the_old_value_and_change_the_model() {
        let ops = spec().ops([2, 2, 2, 2, 3].into_iter());
        let succeeded = ops[..4].iter().filter(|o| o.request[2] == o.expect[1]).count();
        assert!((1..4).contains(&succeeded), "{succeeded} of 4 CAS succeed");
        let faa = &ops[4];
        assert_eq!(faa.expect[1], initial_word(5, faa.request[1] / 8));
    }

    #[test]
    fn judge_accepts_the_expected_reply_and_refuses_a_changed_word() {
        let ops = spec().ops(0..5);
        for op in &ops {
            assert_eq!(RdmaSpec::judge(op, &reply(op)), Ok(()), "{:?}", op.kind);
        }
        let mut bad = reply(&ops[0]);
        *bad.last_mut().unwrap() ^= 1;
        let m = RdmaSpec::judge(&ops[0], &bad).unwrap_err();
        assert!(m.data_only && m.why.contains("the model holds"), "{m:?}");
        let refused = [ops[0].expect[0] & 0xff | 3 << 8, 77];
        let m = RdmaSpec::judge(&ops[0], &refused).unwrap_err();
        assert!(!m.data_only && m.why.contains("status 3"), "{m:?}");
    }

    #[test]
    fn bad_mixes_and_sizes_are_refused() {
        let s = RdmaSpec { mix: [0.5; 5], ..spec() };
        assert!(s.validate().unwrap_err().contains("add up"));
        let s = RdmaSpec { read_words: [0, 8], ..spec() };
        assert!(s.validate().unwrap_err().starts_with("load.rdma.read_words"));
        let s = RdmaSpec { write_words: [1, 65], ..spec() };
        assert!(s.validate().is_err());
    }

    /// A request at word `w` of `n` words, answered as `answer` says.
    fn op(kind: RdmaKind, w: u64, n: u64, answer: Result<(), bool>) -> RdmaOp {
        let mut request = vec![kind.code() | n << 16, 8 * w];
        if kind == RdmaKind::Write {
            request.extend((0..n).map(|j| j + 1));
        }
        let answer = Some(answer.map_err(|data_only| Mismatch { why: "differs".into(), data_only }));
        RdmaOp { kind, request, expect: vec![kind.code()], data_at: w, answer }
    }

    fn at(from: u64, to: u64) -> (Time, Option<Time>) {
        (Time::from_ns(from), Some(Time::from_ns(to)))
    }

    #[test]
    fn data_other_orders_explain_is_unchecked_and_the_rest_is_wrong() {
        use RdmaKind::*;
        let ops = [
            op(Write, 100, 2, Ok(())),   // 0..50
            op(Write, 101, 1, Ok(())),   // 40..90: in flight with the first, word 101 unsure
            op(Read, 100, 2, Err(true)), // 200..250: word 101 unsure, 100 not: unchecked
            op(Read, 100, 1, Err(true)), // 300..350: word 100 sure: wrong
            op(Faa, 101, 0, Err(true)),  // 400..450: unsure word: unchecked, stays unsure
            op(Write, 101, 1, Ok(())),   // 500..550: alone: sure again
            op(Read, 101, 1, Err(true)), // 600..700: the next CAS in flight with it: unchecked
            op(Cas, 101, 0, Err(false)), // 650..660: its status is wrong, whatever the order
            op(Read, 101, 1, Err(true)), // 800..850: word 101 sure since the lone WRITE: wrong
        ];
        let times = [
            at(0, 50),
            at(40, 90),
            at(200, 250),
            at(300, 350),
            at(400, 450),
            at(500, 550),
            at(600, 700),
            at(650, 660),
            at(800, 850),
        ];
        let e = check(&ops, &times);
        assert_eq!((e.wrong, e.unchecked, e.lost), (3, 3, 0), "{e:?}");
        // The second WRITE never answered: in flight to the end, so even the lone WRITE at
        // 500 leaves word 101 unsure (the last READ unchecked); word 100 stays sure.
        let mut lost = ops.clone();
        lost[1].answer = None;
        let mut lost_times = times;
        lost_times[1].1 = None;
        let e = check(&lost, &lost_times);
        assert_eq!((e.lost, e.wrong, e.unchecked), (1, 2, 4), "{e:?}");
    }
}
