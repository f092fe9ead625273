//! The key-value workload of the load generator, against the MICA-style store
//! `sw/apps/mica.c`: which key each request names, the values it sets, the request and reply
//! words, and the check of every reply. Wire format, keys and values: docs/apps/mica.md
//! (the store computes the same keys, partitions and preloaded values from the same seed).

use super::{chain_proto, kv_proto};
use nanopu_cluster::config::bounds::Bounds;
use nanopu_cluster::config::check::FRACTION;
use nanopu_sim::{Rng, Time};

/// GET or SET (the same codes in both formats).
pub use super::kv_proto::{OP_GET, OP_SET};
/// Reply status of a request served (docs/apps/mica.md).
const ST_OK: u64 = 0;
/// Largest value the store takes, bytes (the "values up to 512 bytes").
pub const MAX_VALUE: u64 = 512;
/// Items per core: `mica.c`'s index holds 16,384.
pub const ITEMS_PER_CORE: Bounds<u64> = Bounds::closed(1, 16_384);
/// A value's size, bytes: whole words ([`VALUE_WORD`]) up to [`MAX_VALUE`].
pub const VALUE_BYTES: Bounds<u64> = Bounds::closed(VALUE_WORD, MAX_VALUE);
/// Values are whole 8-byte words, the register interface's word (docs/apps/mica.md).
pub const VALUE_WORD: u64 = 8;
/// A Zipf skew within Gray et al.'s generator's range (shared with the set algebra).
pub const ZIPF_THETA: Bounds<f64> = Bounds::open(0.0, 1.0);

/// How requests pick their key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Keys {
    Uniform,
    /// Zipf with this skew over the keys, key 0 the most popular (MICA's evaluation: 0.99).
    Zipf {
        theta: f64,
    },
}

/// Which context a request goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Steering {
    /// Context 0 on every core, the NIC picks the core by JBSQ; any core serves any key.
    Jbsq,
    /// Context = the core owning the key's partition (MICA's EREW with client steering).
    Static,
}

/// The requests' and replies' format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KvFormat {
    /// `sw/apps/mica.c`'s (docs/apps/mica.md), with versioned values checked for
    /// linearizability.
    #[default]
    Ours,
    /// The nanoPU prototype's load generator's and MICA server's (`kv_proto`): keys 1 to
    /// `items_per_core`, SETs and GETs alternating, every value the preloaded one.
    Prototype,
    /// The nanoPU prototype's chain load generator's (`chain_proto`), for its own chain
    /// (`[chain] format = "prototype"`): writes only, keys 1 to `items_per_core`, 64-byte
    /// values.
    PrototypeChain,
}

/// The workload: store size and seed (shared with the server), the mix and the keys.
#[derive(Clone, Debug, PartialEq)]
pub struct KvSpec {
    pub items_per_core: u64,
    /// Server cores = partitions.
    pub cores: u64,
    /// Seed of the keys and values, passed to the server.
    pub seed: u64,
    pub get_fraction: f64,
    pub keys: Keys,
    /// Value sizes, bytes, multiples of 8: preloaded and set values are drawn from here.
    pub value_min: u64,
    pub value_max: u64,
    pub steering: Steering,
    pub format: KvFormat,
}

/// What a request of the workload does, and what came back.
#[derive(Clone, Debug, PartialEq)]
pub struct KvOp {
    pub set: bool,
    pub key: u32,
    /// SET: the version it writes (1, 2, ... per key); GET: 0.
    pub version: u32,
    /// The version a GET read (0 = preloaded), or what was wrong with the reply.
    pub answer: Option<Result<u32, String>>,
}

/// The SplitMix64 finalizer (Steele, Lea and Flood, OOPSLA 2014), as `mica.c` has it.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl KvSpec {
    /// Keys in the store: `items_per_core` per core (the prototype's load generator draws
    /// its keys from one range, whatever the cores).
    pub fn keys(&self) -> u64 {
        match self.format {
            KvFormat::Ours => self.items_per_core * self.cores,
            KvFormat::Prototype | KvFormat::PrototypeChain => self.items_per_core,
        }
    }

    /// Whether request `i` of a run is a SET, `u` a uniform draw in [0, 1): the prototype's
    /// load generator sends a SET when the message's id (counting from 0) is even.
    pub fn is_set(&self, i: usize, u: f64) -> bool {
        match self.format {
            KvFormat::Ours | KvFormat::PrototypeChain => u >= self.get_fraction,
            KvFormat::Prototype => i.is_multiple_of(2),
        }
    }

    /// The 16-byte key of key number `k`.
    pub fn key(&self, k: u64) -> [u64; 2] {
        [mix(self.seed ^ (k << 1)), k]
    }

    /// The core whose partition holds key `k` (from the key's hash, as MICA partitions).
    pub fn partition(&self, k: u64) -> u64 {
        let [k0, k1] = self.key(k);
        let h = mix(k0 ^ mix(k1.wrapping_add(0x9e37_79b9_7f4a_7c15)));
        ((h >> 16) & 0xffff_ffff) % self.cores
    }

    /// Version `v` of key `k`'s value (0 = preloaded): its words.
    pub fn value(&self, k: u64, v: u64) -> Vec<u64> {
        let base = mix(mix(self.seed ^ k).wrapping_add(v));
        let len = self.value_min + 8 * (base % ((self.value_max - self.value_min) / 8 + 1));
        (0..len / 8).map(|j| if j == 0 { k << 32 | v } else { mix(base ^ j) }).collect()
    }

    /// The server's arguments (after program, MAC and IP).
    pub fn server_args(&self) -> Vec<String> {
        if self.format != KvFormat::Ours {
            return Vec::new();
        }
        let mode = if self.steering == Steering::Jbsq { "jbsq" } else { "static" };
        [mode.to_string()]
            .into_iter()
            .chain([self.items_per_core, self.seed, self.value_min, self.value_max].map(|x| x.to_string()))
            .collect()
    }

    /// Check every field; the error names its key.
    pub fn validate(&self) -> Result<(), String> {
        let fail = |k: &str, why: &str| Err(format!("load.kv.{k}: {why}"));
        if !ITEMS_PER_CORE.contains(self.items_per_core) {
            return fail(
                "items_per_core",
                &format!("must be {} (mica.c's index)", ITEMS_PER_CORE.describe("")),
            );
        }
        if !(1..=8).contains(&self.cores) {
            return Err("server.cores: the key-value store runs on 1..=8 cores".into());
        }
        if !FRACTION.contains(self.get_fraction) {
            return fail("get_fraction", "must be within 0..=1");
        }
        if let Keys::Zipf { theta } = self.keys {
            if !ZIPF_THETA.contains(theta) {
                return fail("theta", "must be within (0, 1) (Gray et al.'s generator)");
            }
        }
        let (a, b) = (self.value_min, self.value_max);
        let sized = |v: u64| VALUE_BYTES.contains(v) && v.is_multiple_of(VALUE_WORD);
        if !sized(a) || !sized(b) || a > b {
            return fail("value_bytes", "min and max must be multiples of 8 within 8..=512, min <= max");
        }
        self.validate_prototype()
    }

    /// The prototype's format fixes the mix, the keys, the values and the context.
    fn validate_prototype(&self) -> Result<(), String> {
        let fixed = |k: &str, why: &str| Err(format!("load.kv.{k}: with format = \"prototype\", {why}"));
        if self.format == KvFormat::PrototypeChain {
            return self.validate_prototype_chain();
        }
        if self.format != KvFormat::Prototype {
            return Ok(());
        }
        if self.get_fraction != 0.5 {
            return fixed("get_fraction", "must be 0.5 (SETs and GETs alternate)");
        }
        if self.keys != Keys::Uniform {
            return fixed("keys", "must be \"uniform\" (keys 1..=items_per_core)");
        }
        if (self.value_min, self.value_max) != (MAX_VALUE, MAX_VALUE) {
            return fixed("value_bytes", "must be [512, 512] (64 value words)");
        }
        match self.steering {
            Steering::Jbsq => Ok(()),
            Steering::Static => fixed("steering", "must be \"jbsq\" (every request to context 0)"),
        }
    }

    /// The prototype's chain load (its load type CHAINREP) fixes the mix, keys and values.
    fn validate_prototype_chain(&self) -> Result<(), String> {
        let fixed =
            |k: &str, why: &str| Err(format!("load.kv.{k}: with chain.format = \"prototype\", {why}"));
        if self.get_fraction != 0.0 {
            return fixed(
                "get_fraction",
                "must be 0 (its load generator sends writes; its reads lack the key hash its replicas read)",
            );
        }
        if self.keys != Keys::Uniform {
            return fixed("keys", "must be \"uniform\" (keys 1..=items_per_core)");
        }
        if (self.value_min, self.value_max) != (64, 64) {
            return fixed("value_bytes", "must be [64, 64] (8 value words)");
        }
        if self.items_per_core > 10_000 {
            return fixed("items_per_core", "must be at most 10,000 (the keys each replica preloads)");
        }
        Ok(())
    }

    /// A fresh key chooser for this workload.
    pub fn chooser(&self) -> KeyChooser {
        let zipf = match self.keys {
            Keys::Zipf { theta } => Some(Zipf::new(self.keys(), theta)),
            Keys::Uniform => None,
        };
        KeyChooser { n: self.keys(), zipf, versions: vec![0; self.keys() as usize] }
    }

    /// The context a request for key `k` goes to.
    pub fn context(&self, k: u64) -> u16 {
        match self.steering {
            Steering::Jbsq => 0,
            Steering::Static => self.partition(k) as u16,
        }
    }

    /// The request's payload words; `tag` identifies it (the send time, echoed).
    pub fn request_words(&self, op: &KvOp, tag: u64) -> Vec<u64> {
        match self.format {
            KvFormat::Prototype => return kv_proto::request_words(op.set, u64::from(op.key) + 1, tag),
            KvFormat::PrototypeChain => return chain_proto::write_words(u64::from(op.key) + 1, tag),
            KvFormat::Ours => {}
        }
        let key = self.key(op.key.into());
        if !op.set {
            return vec![OP_GET, tag, key[0], key[1]];
        }
        let value = self.value(op.key.into(), op.version.into());
        let mut w = vec![OP_SET | (8 * value.len() as u64) << 16, tag, key[0], key[1]];
        w.extend(value);
        w
    }

    /// Judge a reply's payload words to `op`: the version a GET read (the value must be
    /// exactly one this key had), or what is wrong with it.
    pub fn judge(&self, op: &KvOp, words: &[u64]) -> Result<u32, String> {
        match self.format {
            KvFormat::Prototype => return kv_proto::judge(op.set, u64::from(op.key) + 1, words),
            KvFormat::PrototypeChain => {
                return chain_proto::judge(u64::from(op.key) + 1, words).map(|_| op.version)
            }
            KvFormat::Ours => {}
        }
        let want = if op.set { OP_SET } else { OP_GET };
        let (w0, value) = (words[0], &words[2..]);
        let (got_op, status, len) = (w0 & 0xff, (w0 >> 8) & 0xff, w0 >> 16);
        if got_op != want || status != ST_OK || len != 8 * value.len() as u64 {
            return Err(format!("reply word 0 {w0:#x}: op {got_op}, status {status}, length {len}"));
        }
        if op.set {
            return match value.is_empty() {
                true => Ok(op.version),
                false => Err("a SET reply with a value".into()),
            };
        }
        let k = u64::from(op.key);
        let v = value.first().map_or(u64::MAX, |w| w & 0xffff_ffff);
        match value.first().is_some_and(|w| w >> 32 == k) && self.value(k, v) == value {
            true => Ok(v as u32),
            false => Err(format!("GET of key {k} returned a value it never had ({} bytes)", 8 * value.len())),
        }
    }
}

/// Draws the key of each request, and numbers the versions each key's SETs write.
pub struct KeyChooser {
    n: u64,
    zipf: Option<Zipf>,
    versions: Vec<u32>,
}

impl KeyChooser {
    /// The next request: a GET with probability `get_fraction`, else a SET of a new version.
    pub fn draw(&mut self, rng: &mut Rng, set: bool) -> KvOp {
        let key = match &self.zipf {
            Some(z) => z.draw(rng),
            None => rng.below(self.n),
        } as u32;
        let version = match set {
            true => {
                self.versions[key as usize] += 1;
                self.versions[key as usize]
            }
            false => 0,
        };
        KvOp { set, key, version, answer: None }
    }
}

/// Zipf-distributed ranks 0..n by the method of Gray, Sundaresan, Englert, Baclawski and
/// Weinberger, "Quickly Generating Billion-Record Synthetic Databases" (SIGMOD 1994), the
/// generator YCSB and MICA's evaluation use; P(rank i) proportional to 1 / (i + 1)^theta.
pub(crate) struct Zipf {
    n: f64,
    theta: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
}

impl Zipf {
    pub(crate) fn new(n: u64, theta: f64) -> Zipf {
        let zetan: f64 = (1..=n).map(|i| (i as f64).powf(-theta)).sum();
        let zeta2 = 1.0 + 0.5f64.powf(theta);
        let n = n as f64;
        let eta = (1.0 - (2.0 / n).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
        Zipf { n, theta, zetan, alpha: 1.0 / (1.0 - theta), eta }
    }

    pub(crate) fn draw(&self, rng: &mut Rng) -> u64 {
        let u = rng.next_f64();
        let uz = u * self.zetan;
        let r = match uz {
            _ if uz < 1.0 => 0,
            _ if uz < 1.0 + 0.5f64.powf(self.theta) => 1,
            _ => (self.n * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64,
        };
        r.min(self.n as u64 - 1)
    }
}

/// Replies the check found wrong and requests never answered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KvErrors {
    pub wrong: usize,
    pub lost: usize,
    /// The first few wrong replies, one sentence each.
    pub examples: Vec<String>,
    /// Replies whose data differed from the model where another order of requests in flight
    /// together may explain it, so it was not judged (the RDMA check, `rdma::check`; 0 for
    /// the key-value check).
    pub unchecked: usize,
}

impl KvErrors {
    /// Count a wrong reply, keeping the first few reasons.
    pub fn add_wrong(&mut self, why: String) {
        self.wrong += 1;
        if self.examples.len() < 5 {
            self.examples.push(why);
        }
    }
}

/// One request as the check sees it: key, kind, times and answer.
pub struct Observed<'a> {
    pub op: &'a KvOp,
    pub sent: Time,
    pub replied: Option<Time>,
}

/// Check every reply: a SET or GET reply judged wrong is an error, and so is a GET that read
/// a version no linearizable order allows: one sent after its reply came, or one overwritten
/// for certain before the GET was sent (a SET that began after it ended and itself ended
/// before the GET began). Requests without a reply are lost.
pub fn check(spec: &KvSpec, requests: &[Observed]) -> KvErrors {
    let mut sets: Vec<Vec<(Time, Option<Time>, u32)>> = vec![Vec::new(); spec.keys() as usize];
    for r in requests.iter().filter(|r| r.op.set) {
        sets[r.op.key as usize].push((r.sent, r.replied, r.op.version));
    }
    let mut e = KvErrors::default();
    for r in requests {
        let verdict = match (&r.op.answer, r.replied) {
            (None, _) | (_, None) => {
                e.lost += 1;
                continue;
            }
            (Some(Err(why)), _) => Err(why.clone()),
            (Some(Ok(_)), _) if r.op.set || spec.format == KvFormat::Prototype => Ok(()),
            (Some(Ok(v)), Some(done)) => readable(&sets[r.op.key as usize], *v, r.sent, done),
        };
        if let Err(why) = verdict {
            e.wrong += 1;
            if e.examples.len() < 5 {
                e.examples.push(format!("request sent at {}: {why}", r.sent));
            }
        }
    }
    e
}

/// Whether a GET over [`from`, `to`] may have read version `v` of a key with these SETs.
fn readable(sets: &[(Time, Option<Time>, u32)], v: u32, from: Time, to: Time) -> Result<(), String> {
    let written_done = match v {
        0 => Some(Time::ZERO),
        _ => match sets.iter().find(|s| s.2 == v) {
            Some(&(sent, _, _)) if sent >= to => return Err(format!("read version {v}, set only after")),
            Some(&(_, done, _)) => done,
            None => return Err(format!("read version {v}, never set")),
        },
    };
    let Some(written_done) = written_done else { return Ok(()) };
    let later = sets.iter().find(|s| s.0 > written_done && s.1.is_some_and(|d| d < from));
    match later {
        Some(s) => Err(format!("read version {v}, overwritten by version {} before the GET", s.2)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> KvSpec {
        KvSpec {
            items_per_core: 1000,
            cores: 4,
            seed: 7,
            get_fraction: 0.5,
            keys: Keys::Zipf { theta: 0.99 },
            value_min: 8,
            value_max: 64,
            steering: Steering::Static,
            format: KvFormat::Ours,
        }
    }

    #[test]
    fn zipf_rank_zero_has_its_share() {
        let s = spec();
        let mut c = s.chooser();
        let mut rng = Rng::new(1);
        let n = 200_000;
        let hits = (0..n).filter(|_| c.draw(&mut rng, false).key == 0).count() as f64 / n as f64;
        let zetan: f64 = (1..=4000).map(|i| (i as f64).powf(-0.99)).sum();
        assert!((hits - 1.0 / zetan).abs() < 0.005, "{hits} vs {}", 1.0 / zetan);
    }

    #[test]
    fn a_store_of_one_key_is_always_asked_for_that_key() {
        let s = KvSpec { items_per_core: 1, cores: 1, ..spec() };
        let mut c = s.chooser();
        let mut rng = Rng::new(1);
        assert!((0..1000).all(|_| c.draw(&mut rng, true).key == 0));
    }

    #[test]
    fn partitions_split_the_keys_about_evenly() {
        let s = spec();
        let mut count = [0u32; 4];
        (0..s.keys()).for_each(|k| count[s.partition(k) as usize] += 1);
        assert!(count.iter().all(|&c| (900..1100).contains(&c)), "{count:?}");
    }

    fn reply(s: &KvSpec, op: &KvOp, v: u64) -> Vec<u64> {
        let value = s.value(op.key.into(), v);
        let mut w = vec![OP_GET | (8 * value.len() as u64) << 16, 99];
        w.extend(value);
        w
    }

    #[test]
    fn judge_accepts_the_value_and_refuses_a_changed_word() {
        let s = spec();
        let get = KvOp { set: false, key: 5, version: 0, answer: None };
        assert_eq!(s.judge(&get, &reply(&s, &get, 3)), Ok(3));
        let mut bad = reply(&s, &get, 3);
        *bad.last_mut().unwrap() ^= 1;
        assert!(s.judge(&get, &bad).is_err());
        let other = KvOp { key: 6, ..get.clone() };
        assert!(s.judge(&other, &reply(&s, &get, 3)).is_err(), "another key's value");
        let miss = [OP_GET | 1 << 8, 99];
        assert!(s.judge(&get, &miss).unwrap_err().contains("status 1"));
    }

    #[test]
    fn a_get_must_read_the_last_completed_set_or_an_overlapping_one() {
        let t = |ns| Time::from_ns(ns);
        let sets = vec![(t(100), Some(t(200)), 1), (t(300), Some(t(400)), 2), (t(450), Some(t(600)), 3)];
        assert!(readable(&sets, 2, t(420), t(500)).is_ok(), "last completed");
        assert!(readable(&sets, 3, t(420), t(500)).is_ok(), "overlapping");
        assert!(readable(&sets, 1, t(420), t(500)).is_err(), "overwritten by 2");
        assert!(readable(&sets, 0, t(150), t(160)).is_ok(), "preloaded, set 1 not done");
        assert!(readable(&sets, 0, t(250), t(260)).is_err(), "preloaded after set 1");
        assert!(readable(&sets, 3, t(420), t(440)).is_err(), "set after the GET ended");
        assert!(readable(&sets, 9, t(420), t(440)).is_err(), "never set");
    }
}
