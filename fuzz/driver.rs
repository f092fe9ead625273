//! Drives a fuzz target's body on stable Rust, without libFuzzer: a seeded mutator over a
//! seed corpus, run for a bounded time, so that `make test` can run every target briefly on
//! any toolchain and any machine. There is no coverage feedback; inputs the body accepts
//! join the corpus instead, so mutations build on valid structure rather than dying at
//! the first check. The same seed gives the same sequence of inputs.
//!
//! Each crate's test that drives its targets includes this file with `#[path]` (the crates
//! share no test-support crate).
//!
//! Environment: `NANOPU_FUZZ_SECS`, seconds per target (default 20); `NANOPU_FUZZ_SEED`
//! (default 1). An input that panics is saved to `$TMPDIR/nanopu-fuzz-<target>.bin`, to
//! replay with `cargo fuzz run <target> FILE` or the target's body, and fails the test.

#![allow(dead_code)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// Largest corpus kept; past it, accepted inputs replace random entries.
const MAX_CORPUS: usize = 1024;
/// Inputs never grow past this many bytes (nor past twice the largest seed).
const MAX_LEN: usize = 1 << 20;

/// What a run did.
#[derive(Debug)]
pub struct Stats {
    pub execs: u64,
    pub accepted: u64,
    pub corpus: usize,
}

/// Seconds per target from `NANOPU_FUZZ_SECS`, else 20.
pub fn budget() -> Duration {
    let secs = std::env::var("NANOPU_FUZZ_SECS").ok().and_then(|s| s.parse::<f64>().ok());
    Duration::from_secs_f64(secs.filter(|s| s.is_finite() && *s >= 0.0).unwrap_or(20.0))
}

fn seed() -> u64 {
    std::env::var("NANOPU_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1)
}

/// Runs `body` on the seeds, then on mutations of the corpus until `budget` is spent.
/// `body` returns whether it accepted the input. Tokens of `dict` are spliced in by one of
/// the mutations (keys and values of a text format).
pub fn run(name: &str, seeds: Vec<Vec<u8>>, dict: &[&[u8]], body: impl Fn(&[u8]) -> bool) -> Stats {
    let deadline = Instant::now() + budget();
    let max_len = seeds.iter().map(Vec::len).max().unwrap_or(0).saturating_mul(2).clamp(64, MAX_LEN);
    let mut f = Fuzzer { rng: Rng(seed() | 1), corpus: seeds.clone(), dict, max_len };
    let mut stats = Stats { execs: 0, accepted: 0, corpus: 0 };
    for input in seeds {
        stats.accepted += u64::from(exec(name, &input, &body));
        stats.execs += 1;
    }
    while Instant::now() < deadline {
        let input = f.mutant();
        if exec(name, &input, &body) {
            stats.accepted += 1;
            f.keep(input);
        }
        stats.execs += 1;
    }
    stats.corpus = f.corpus.len();
    eprintln!("fuzz {name}: {} inputs, {} accepted, corpus {}", stats.execs, stats.accepted, stats.corpus);
    stats
}

/// Runs the body on one input; a panic saves the input and fails the caller.
fn exec(name: &str, input: &[u8], body: &impl Fn(&[u8]) -> bool) -> bool {
    match catch_unwind(AssertUnwindSafe(|| body(input))) {
        Ok(accepted) => accepted,
        Err(_) => {
            let path = std::env::temp_dir().join(format!("nanopu-fuzz-{name}.bin"));
            let saved = std::fs::write(&path, input)
                .map_or("could not be saved".into(), |_| path.display().to_string());
            panic!("fuzz {name}: an input of {} bytes panicked (above); it is in {saved}", input.len());
        }
    }
}

/// xorshift64* (Vigna 2016): small, deterministic, good enough to pick mutations (and,
/// in the crates' fuzz-style tests, bytes). The state must not be 0.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

struct Fuzzer<'a> {
    rng: Rng,
    corpus: Vec<Vec<u8>>,
    dict: &'a [&'a [u8]],
    max_len: usize,
}

/// Values at the edges of integer fields, where overflow and off-by-one bugs live.
const INTERESTING: [u64; 14] = [
    0,
    1,
    2,
    0x7f,
    0x80,
    0xff,
    0xffff,
    0x1000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    1 << 34,
    i64::MAX as u64,
    u64::MAX,
];

impl Fuzzer<'_> {
    fn keep(&mut self, input: Vec<u8>) {
        if self.corpus.len() < MAX_CORPUS {
            self.corpus.push(input);
        } else {
            let i = self.rng.below(MAX_CORPUS);
            self.corpus[i] = input;
        }
    }

    /// A corpus entry with one to eight stacked mutations, mostly few.
    fn mutant(&mut self) -> Vec<u8> {
        let mut b = self.corpus[self.rng.below(self.corpus.len())].clone();
        let n = 1 + (self.rng.below(8) * self.rng.below(8)) / 8;
        for _ in 0..n {
            self.mutate(&mut b);
        }
        b.truncate(self.max_len);
        b
    }

    fn mutate(&mut self, b: &mut Vec<u8>) {
        match self.rng.below(10) {
            0 => self.flip_bit(b),
            1 | 2 => self.set_byte(b),
            3 | 4 => self.set_word(b),
            5 => self.add_to_byte(b),
            6 => self.insert(b),
            7 => self.delete(b),
            8 => self.splice(b),
            _ => self.insert_token(b),
        }
    }

    /// A position, biased to the first and last 256 bytes: formats keep their headers at
    /// the start, and ELF keeps its section headers at the end.
    fn pos(&mut self, len: usize) -> usize {
        match self.rng.below(4) {
            0 => self.rng.below(len.min(256)),
            1 => len.saturating_sub(1 + self.rng.below(len.min(256))),
            _ => self.rng.below(len),
        }
    }

    fn flip_bit(&mut self, b: &mut [u8]) {
        if !b.is_empty() {
            let i = self.pos(b.len());
            b[i] ^= 1 << self.rng.below(8);
        }
    }

    fn set_byte(&mut self, b: &mut [u8]) {
        if !b.is_empty() {
            let (i, v) = (self.pos(b.len()), self.value());
            b[i] = v as u8;
        }
    }

    fn add_to_byte(&mut self, b: &mut [u8]) {
        if !b.is_empty() {
            let i = self.pos(b.len());
            b[i] = b[i].wrapping_add(self.rng.below(33) as u8).wrapping_sub(16);
        }
    }

    /// An interesting or random value, sometimes nudged by one.
    fn value(&mut self) -> u64 {
        let v = match self.rng.below(3) {
            0 => self.rng.next(),
            _ => INTERESTING[self.rng.below(INTERESTING.len())],
        };
        v.wrapping_add(self.rng.below(3) as u64).wrapping_sub(1)
    }

    /// A 2-, 4- or 8-byte value in either byte order (ELF is little-endian, the wire big).
    fn set_word(&mut self, b: &mut [u8]) {
        let n = [2, 4, 8][self.rng.below(3)];
        if b.len() < n {
            return;
        }
        let at = self.pos(b.len() - n + 1).min(b.len() - n);
        let v = self.value().to_le_bytes();
        b[at..at + n].copy_from_slice(&v[..n]);
        if self.rng.below(2) == 0 {
            b[at..at + n].reverse();
        }
    }

    fn insert(&mut self, b: &mut Vec<u8>) {
        let (at, n) = (self.pos(b.len() + 1).min(b.len()), 1 + self.rng.below(16));
        let fill = self.rng.next() as u8;
        let bytes: Vec<u8> =
            (0..n).map(|_| if fill & 1 == 0 { fill } else { self.rng.next() as u8 }).collect();
        b.splice(at..at, bytes);
    }

    fn delete(&mut self, b: &mut Vec<u8>) {
        if !b.is_empty() {
            let at = self.pos(b.len());
            let n = 1 + self.rng.below((b.len() - at).min(64));
            b.drain(at..at + n);
        }
    }

    /// The head of this input and the tail of another, or this one cut short.
    fn splice(&mut self, b: &mut Vec<u8>) {
        let (k, cut, from) =
            (self.rng.below(self.corpus.len()), self.rng.below(b.len() + 1), self.rng.next());
        let other = if self.rng.below(2) == 0 { &self.corpus[k][..] } else { &[][..] };
        b.truncate(cut);
        b.extend_from_slice(&other[(from % (other.len() as u64 + 1)) as usize..]);
    }

    fn insert_token(&mut self, b: &mut Vec<u8>) {
        if self.dict.is_empty() {
            return self.set_word(b);
        }
        let token = self.dict[self.rng.below(self.dict.len())];
        let at = self.rng.below(b.len() + 1);
        b.splice(at..at, token.iter().copied());
    }
}
