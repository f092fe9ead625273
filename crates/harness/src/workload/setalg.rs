//! The set algebra (document search) workload of the load generator, against
//! `sw/apps/setalg.c`: queries of 1 to 4 distinct words, each answered with the number of
//! documents holding every word and the first [`MAX_IDS`] of them. The generator builds the
//! same inverted index as the server, from the same seed by the same corpus generator
//! (docs/apps/setalg.md specifies it; `setalg.c` implements it in C), and checks every
//! reply against its own intersection of the posting lists.

use crate::workload::kv::{mix, KvErrors, Zipf};
use nanopu_cluster::config::bounds::Bounds;
use nanopu_cluster::config::check::FRACTION;
use nanopu_sim::Rng;

/// The server's limits (`setalg.c`), and the reply's most document ids: 32 keep a reply at
/// 280 bytes (35 words), well within a message (docs/apps/setalg.md).
pub const MAX_DOCUMENTS: u64 = 65_536;
pub const MAX_VOCABULARY: u64 = 16_384;
pub const MAX_WORDS_PER_DOCUMENT: u64 = 64;
pub const MAX_DRAWS: u64 = 1 << 18;
pub const MAX_QUERY_WORDS: usize = 4;
pub const MAX_IDS: usize = 32;
/// Documents in the corpus.
pub const DOCUMENTS: Bounds<u64> = Bounds::closed(1, MAX_DOCUMENTS);
/// Words of the vocabulary: enough for the largest query's distinct words.
pub const VOCABULARY: Bounds<u64> = Bounds::closed(MAX_QUERY_WORDS as u64, MAX_VOCABULARY);
/// Words drawn per document.
pub const WORDS_PER_DOCUMENT: Bounds<u64> = Bounds::closed(1, MAX_WORDS_PER_DOCUMENT);
/// SplitMix64's increment (Steele, Lea and Flood, OOPSLA 2014).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;
const OP_QUERY: u64 = 1;

/// The classes of a run: queries of 1, 2, 3 and 4 words.
pub const CLASSES: [&str; 4] = ["1-word", "2-word", "3-word", "4-word"];

/// The corpus both sides generate (docs/apps/setalg.md, "Corpus").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Corpus {
    pub seed: u64,
    pub documents: u64,
    pub vocabulary: u64,
    pub words_per_document: u64,
}

/// Word `r`'s posting list is `lists[r]`: the ascending ids of the documents holding it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Index {
    pub lists: Vec<Vec<u32>>,
}

impl Corpus {
    /// Check every field against the server's limits; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        let key = |k: &str, b: Bounds<u64>, v: u64| match b.contains(v) {
            true => Ok(()),
            false => Err(format!("load.setalg.{k}: {v} is not {} (setalg.c's limit)", b.describe(""))),
        };
        key("documents", DOCUMENTS, self.documents)?;
        key("vocabulary", VOCABULARY, self.vocabulary)?;
        key("words_per_document", WORDS_PER_DOCUMENT, self.words_per_document)?;
        match self.documents * self.words_per_document <= MAX_DRAWS {
            true => Ok(()),
            false => Err(format!(
                "load.setalg.documents: {} documents of {} words draw more than {MAX_DRAWS} words",
                self.documents, self.words_per_document
            )),
        }
    }

    /// The server's arguments (after program, MAC and IP).
    pub fn server_args(&self) -> Vec<String> {
        [self.seed, self.documents, self.vocabulary, self.words_per_document].map(|x| x.to_string()).into()
    }

    /// The cumulative Zipf weights: word r weighs floor(2^32 / (r + 1)).
    fn cumulative(&self) -> Vec<u64> {
        let mut sum = 0u64;
        (0..self.vocabulary).map(|r| sum_to(&mut sum, (1u64 << 32) / (r + 1))).collect()
    }

    /// Draw `k`'s word (draw k = d * words_per_document + j: document d's j-th word).
    fn word(&self, cum: &[u64], k: u64) -> usize {
        let u = mix(self.seed.wrapping_add((k + 1).wrapping_mul(GOLDEN)));
        let x = u % cum[cum.len() - 1];
        cum.partition_point(|&c| c <= x)
    }

    /// The inverted index: each document's distinct words, listed under each word.
    pub fn index(&self) -> Index {
        let cum = self.cumulative();
        let mut lists = vec![Vec::new(); self.vocabulary as usize];
        for d in 0..self.documents {
            for j in 0..self.words_per_document {
                let list: &mut Vec<u32> = &mut lists[self.word(&cum, d * self.words_per_document + j)];
                if list.last() != Some(&(d as u32)) {
                    list.push(d as u32);
                }
            }
        }
        Index { lists }
    }
}

fn sum_to(sum: &mut u64, w: u64) -> u64 {
    *sum += w;
    *sum
}

impl Index {
    pub fn postings(&self) -> usize {
        self.lists.iter().map(Vec::len).sum()
    }

    /// Every (word, document) pair in order, folded with SplitMix64's finalizer.
    pub fn checksum(&self) -> u64 {
        let pairs = self
            .lists
            .iter()
            .enumerate()
            .flat_map(|(r, l)| l.iter().map(move |&d| (r as u64) << 32 | u64::from(d)));
        pairs.fold(0, |c, p| mix(c.wrapping_add(p).wrapping_add(GOLDEN)))
    }

    /// The line `setalg.c` prints once it has built the index.
    pub fn start_up_line(&self, c: &Corpus) -> String {
        let (docs, words, posts) = (c.documents, c.vocabulary, self.postings());
        format!(
            "setalg: {docs} documents, {words} words, {posts} postings, checksum {:016x}",
            self.checksum()
        )
    }

    /// The documents holding every word: how many, and the first [`MAX_IDS`]. Each id of the
    /// shortest list is looked up in the others by binary search (not the server's
    /// galloping merge: the check does not share the server's algorithm).
    pub fn answer(&self, words: &[u64]) -> (u64, Vec<u32>) {
        let mut lists: Vec<&Vec<u32>> = words.iter().map(|&w| &self.lists[w as usize]).collect();
        lists.sort_by_key(|l| l.len());
        let all = lists[0].iter().filter(|d| lists[1..].iter().all(|l| l.binary_search(d).is_ok()));
        let matching: Vec<u32> = all.copied().collect();
        (matching.len() as u64, matching.into_iter().take(MAX_IDS).collect())
    }
}

/// How queries pick their words.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Popularity {
    Uniform,
    /// Zipf with this skew over the words by corpus rank: word 0, the corpus's most frequent,
    /// is also the most queried (Gray et al.'s generator, `kv::Zipf`).
    Zipf {
        theta: f64,
    },
}

/// The workload: the corpus (shared with the server), the query sizes and word popularity.
#[derive(Clone, Debug, PartialEq)]
pub struct SetalgSpec {
    pub corpus: Corpus,
    /// Share of queries of 1, 2, 3 and 4 words; they add up to 1.
    pub query_words: [f64; 4],
    pub popularity: Popularity,
}

/// One query: its words, the reply expected after the tag (count, then ids), the verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct SetalgOp {
    pub words: Vec<u64>,
    pub expect: Vec<u64>,
    pub answer: Option<Result<(), String>>,
}

impl SetalgSpec {
    /// Check every field; the error names its key.
    pub fn validate(&self) -> Result<(), String> {
        self.corpus.validate()?;
        if self.query_words.iter().any(|&f| !FRACTION.contains(f)) {
            return Err("load.setalg.query_words: each share must be within 0..=1".into());
        }
        let total: f64 = self.query_words.iter().sum();
        if (total - 1.0).abs() > 1e-9 {
            return Err(format!("load.setalg.query_words: the shares add up to {total}, not 1"));
        }
        match self.popularity {
            Popularity::Zipf { theta } if !crate::workload::kv::ZIPF_THETA.contains(theta) => {
                Err("load.setalg.theta: must be within (0, 1) (Gray et al.'s generator)".into())
            }
            _ => Ok(()),
        }
    }

    /// Each request's query, drawn in send order from its class (class i: i + 1 words), with
    /// the expected reply from the generator's own index.
    pub fn ops(&self, classes: impl Iterator<Item = usize>) -> Vec<SetalgOp> {
        let index = self.corpus.index();
        let mut rng = Rng::stream(self.corpus.seed, 0x5e7a);
        let zipf = match self.popularity {
            Popularity::Zipf { theta } => Some(Zipf::new(self.corpus.vocabulary, theta)),
            Popularity::Uniform => None,
        };
        let mut draw = |rng: &mut Rng| match &zipf {
            Some(z) => z.draw(rng),
            None => rng.below(self.corpus.vocabulary),
        };
        classes.map(|c| op(&index, distinct(c + 1, &mut rng, &mut draw))).collect()
    }

    /// The request's payload words; `tag` identifies it (the send time, echoed).
    pub fn request_words(op: &SetalgOp, tag: u64) -> Vec<u64> {
        let mut w = vec![OP_QUERY | (op.words.len() as u64) << 16, tag];
        w.extend(&op.words);
        w
    }

    /// Judge a reply's payload words: op, status 0 and the ids' number, then the count and
    /// the ids exactly as expected (the tag aside).
    pub fn judge(op: &SetalgOp, words: &[u64]) -> Result<(), String> {
        let ids = op.expect.len() as u64 - 1;
        let what = format!("query {:?}", op.words);
        let w0 = words[0];
        if w0 != OP_QUERY | ids << 16 || words.len() != 2 + op.expect.len() {
            let (code, status, n) = (w0 & 0xff, (w0 >> 8) & 0xff, w0 >> 16);
            let came = words.len().saturating_sub(2);
            return Err(format!("{what}: reply word 0 {w0:#x}: op {code}, status {status}, {n} ids; {came} words came, {} expected", ids + 1));
        }
        match words[2..] == op.expect[..] {
            true => Ok(()),
            false => Err(format!(
                "{what}: {} documents, first {:?}; the index has {}, first {:?}",
                words[2],
                &words[3..],
                op.expect[0],
                &op.expect[1..]
            )),
        }
    }
}

/// `n` distinct words, each from `draw` (drawn again when it repeats one).
fn distinct(n: usize, rng: &mut Rng, draw: &mut impl FnMut(&mut Rng) -> u64) -> Vec<u64> {
    let mut words = Vec::with_capacity(n);
    while words.len() < n {
        let w = draw(rng);
        if !words.contains(&w) {
            words.push(w);
        }
    }
    words
}

fn op(index: &Index, words: Vec<u64>) -> SetalgOp {
    let (count, ids) = index.answer(&words);
    let expect = [count].into_iter().chain(ids.into_iter().map(u64::from)).collect();
    SetalgOp { words, expect, answer: None }
}

/// Wrong replies and lost requests: every reply was judged when it came.
pub fn check(ops: &[SetalgOp]) -> KvErrors {
    let mut e = KvErrors::default();
    for op in ops {
        match &op.answer {
            None => e.lost += 1,
            Some(Ok(())) => {}
            Some(Err(why)) => e.add_wrong(why.clone()),
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Corpus {
        Corpus { seed: 7, documents: 512, vocabulary: 1024, words_per_document: 16 }
    }

    fn spec() -> SetalgSpec {
        SetalgSpec { corpus: corpus(), query_words: [0.25; 4], popularity: Popularity::Zipf { theta: 0.99 } }
    }

    #[test]
    fn lists_are_sorted_distinct_and_zipf_ranked() {
        let ix = corpus().index();
        assert!(ix.lists.iter().all(|l| l.windows(2).all(|w| w[0] < w[1])));
        let per_doc = |d: u32| ix.lists.iter().filter(|l| l.contains(&d)).count();
        assert!((1..=16).contains(&per_doc(0)) && (1..=16).contains(&per_doc(511)));
        // Word 0 weighs twice word 1 and about a seventh of all draws (1 / H(1024) = 0.133):
        // nearly every document of 16 words holds it.
        assert!(ix.lists[0].len() > 400 && ix.lists[0].len() > ix.lists[1].len(), "{}", ix.lists[0].len());
        assert!(ix.lists[1000].len() < 10);
    }

    /// The generator pinned to what `setalg.c` computes (tests/setalg.rs also compares the
    /// server's start-up line with [`Index::start_up_line`]).
    #[test]
    fn the_generator_is_pinned() {
        let c = corpus();
        let cum = c.cumulative();
        assert_eq!((cum[0], cum[1], cum[2]), (1 << 32, 3 << 31, (3 << 31) + (1 << 32) / 3));
        assert_eq!(c.index(), c.index(), "deterministic");
        let other = Corpus { seed: 8, ..c };
        assert_ne!(c.index().checksum(), other.index().checksum());
        // What `setalg.c` printed for these corpora (`nanopu run sw/build/apps/setalg.elf
        // --cores 1 -- 9 1024 2048 16`, and `-- 1 2048 4096 16`, the defaults).
        let printed = [
            ((9, 1024, 2048), 14_246, 0xec49_3849_91c6_75b7),
            ((1, 2048, 4096), 29_059, 0x7a94_7b40_3604_5932),
        ];
        for ((seed, documents, vocabulary), postings, sum) in printed {
            let ix = Corpus { seed, documents, vocabulary, words_per_document: 16 }.index();
            assert_eq!((ix.postings(), ix.checksum()), (postings, sum));
        }
    }

    #[test]
    fn answers_are_the_intersection() {
        let ix = corpus().index();
        let (n, ids) = ix.answer(&[0]);
        assert_eq!((n as usize, ids.len()), (ix.lists[0].len(), MAX_IDS));
        assert_eq!(ids[..], ix.lists[0][..MAX_IDS]);
        let (n, ids) = ix.answer(&[0, 1, 2]);
        let brute = (0..512u32).filter(|d| (0..3).all(|w| ix.lists[w].contains(d))).collect::<Vec<_>>();
        assert_eq!((n as usize, &ids[..]), (brute.len(), &brute[..brute.len().min(MAX_IDS)]));
        assert_eq!(ix.answer(&[1000, 1001, 1002, 1003]).0, 0);
    }

    fn reply(op: &SetalgOp) -> Vec<u64> {
        let mut w = vec![OP_QUERY | (op.expect.len() as u64 - 1) << 16, 77];
        w.extend(&op.expect);
        w
    }

    #[test]
    fn the_check_accepts_right_replies_and_catches_a_changed_one() {
        let s = spec();
        let mut ops = s.ops([0, 1, 2, 3, 1].into_iter());
        assert_eq!(ops.iter().map(|o| o.words.len()).collect::<Vec<_>>(), [1, 2, 3, 4, 2]);
        assert!(ops.iter().all(|o| (1..o.words.len()).all(|i| !o.words[..i].contains(&o.words[i]))));
        for op in ops.iter_mut() {
            op.answer = Some(SetalgSpec::judge(op, &reply(op)));
        }
        assert_eq!(check(&ops), KvErrors::default());
        let mut bad = reply(&ops[0]);
        bad[2] += 1; // one document more
        let why = SetalgSpec::judge(&ops[0], &bad).unwrap_err();
        assert!(why.contains("the index has"), "{why}");
        let mut bad = reply(&ops[0]);
        bad.pop(); // one id short: the length no longer matches
        assert!(SetalgSpec::judge(&ops[0], &bad).unwrap_err().contains("reply word 0"));
        ops[1].answer = Some(Err(why));
        ops[2].answer = None;
        let e = check(&ops);
        assert_eq!((e.wrong, e.lost, e.examples.len()), (1, 1, 1), "{e:?}");
    }

    #[test]
    fn bad_specs_name_the_key() {
        let bad = |f: &dyn Fn(&mut SetalgSpec)| {
            let mut s = spec();
            f(&mut s);
            s.validate().unwrap_err()
        };
        assert!(bad(&|s| s.corpus.documents = 0).starts_with("load.setalg.documents"));
        assert!(bad(&|s| s.corpus.vocabulary = 3).starts_with("load.setalg.vocabulary"));
        assert!(bad(&|s| s.corpus.words_per_document = 65).starts_with("load.setalg.words_per_document"));
        assert!(bad(&|s| s.corpus.documents = 65_536).starts_with("load.setalg.documents"));
        assert!(bad(&|s| s.query_words = [0.5; 4]).starts_with("load.setalg.query_words"));
        assert!(bad(&|s| s.popularity = Popularity::Zipf { theta: 1.0 }).starts_with("load.setalg.theta"));
    }
}
