//! The one-sided RDMA workload of the load generator, against `sw/apps/rdma.c`: READ,
//! WRITE, compare-and-swap, fetch-and-add and indirect READ at uniform word-aligned
//! addresses of a 4 MiB region. The generator keeps a model of the region, serialized in
//! send order, and computes each request's expected reply when it draws the request; every
//! reply is checked against it. Wire format and initial contents: docs/apps/rdma.md.

use crate::kv::{mix, KvErrors};
use nanopu_sim::Rng;

/// The region's size (the 4 MiB), and in words.
pub const REGION_BYTES: u64 = 4 << 20;
const REGION_WORDS: u64 = REGION_BYTES / 8;
/// Most words one READ, WRITE or indirect READ moves (`rdma.c`'s MAX_WORDS).
pub const MAX_WORDS: u64 = 64;

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
    pub answer: Option<Result<(), String>>,
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
        if self.mix.iter().any(|f| !(0.0..=1.0).contains(f)) {
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
        let (request, data) = match kind {
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
        RdmaOp { kind, request, expect, answer: None }
    }

    /// The request's payload words; `tag` identifies it (the send time, echoed).
    pub fn request_words(op: &RdmaOp, tag: u64) -> Vec<u64> {
        let mut w = vec![op.request[0], tag];
        w.extend(&op.request[1..]);
        w
    }

    /// Judge a reply's payload words: exactly the expected ones (the tag aside).
    pub fn judge(op: &RdmaOp, words: &[u64]) -> Result<(), String> {
        let (w0, data) = (words[0], &words[2..]);
        let what = format!("{} at {:#x}", op.kind.name(), op.request[1]);
        if w0 != op.expect[0] {
            let (code, status, n) = (w0 & 0xff, (w0 >> 8) & 0xff, w0 >> 16);
            return Err(format!("{what}: reply word 0 {w0:#x}: op {code}, status {status}, {n} words"));
        }
        match data.iter().zip(&op.expect[1..]).position(|(a, b)| a != b) {
            _ if data.len() != op.expect.len() - 1 => Err(format!("{what}: {} data words", data.len())),
            Some(j) => {
                Err(format!("{what}: word {j} is {:#x}, the model holds {:#x}", data[j], op.expect[1 + j]))
            }
            None => Ok(()),
        }
    }
}

/// Sizes within 1..=[`MAX_WORDS`], smallest first.
fn sizes([a, b]: [u64; 2], key: &str) -> Result<(), String> {
    match 1 <= a && a <= b && b <= MAX_WORDS {
        true => Ok(()),
        false => Err(format!("load.rdma.{key}: [{a}, {b}] must be within 1..={MAX_WORDS}, smallest first")),
    }
}

/// The generator's view of the region, changed by each request in send order.
struct Model {
    words: Vec<u64>,
}

/// A drawn request: (its size field, its address and argument words), and the reply's data.
type Drawn = ((u64, Vec<u64>), Vec<u64>);

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
        ((n, vec![8 * w]), self.span(w, n))
    }

    fn write(&mut self, rng: &mut Rng, n: u64) -> Drawn {
        let w = Model::address(rng, n);
        let data: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        self.words[w as usize..(w + n) as usize].copy_from_slice(&data);
        ((n, [8 * w].into_iter().chain(data).collect()), Vec::new())
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
        ((0, vec![8 * w, compare, desired]), vec![old])
    }

    fn faa(&mut self, rng: &mut Rng) -> Drawn {
        let w = Model::address(rng, 1);
        let (old, add) = (self.words[w as usize], rng.next_u64());
        self.words[w as usize] = old.wrapping_add(add);
        ((0, vec![8 * w, add]), vec![old])
    }

    /// The pointer word at a uniform address, taken modulo the region's size and aligned.
    fn indirect_read(&mut self, rng: &mut Rng, n: u64) -> Drawn {
        let w = Model::address(rng, 1);
        let target = (self.words[w as usize] % REGION_BYTES) / 8;
        ((n, vec![8 * w]), self.span(target, n))
    }
}

/// Wrong replies and lost requests: a reply that is not the expected one, a request with
/// none.
pub fn check(ops: &[RdmaOp]) -> KvErrors {
    let mut e = KvErrors::default();
    for op in ops {
        match &op.answer {
            None => e.lost += 1,
            Some(Ok(())) => {}
            Some(Err(why)) => {
                e.wrong += 1;
                if e.examples.len() < 5 {
                    e.examples.push(why.clone());
                }
            }
        }
    }
    e
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
        assert!(RdmaSpec::judge(&ops[0], &bad).unwrap_err().contains("the model holds"));
        let refused = [ops[0].expect[0] & 0xff | 3 << 8, 77];
        assert!(RdmaSpec::judge(&ops[0], &refused).unwrap_err().contains("status 3"));
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
}
