//! Sort inputs: records of an 8-byte key and a 96-byte value from a seeded generator, and
//! the order-independent checksum the validator compares (docs/sort-harness.md).

use nanopu_sim::rng::splitmix64;
use nanopu_sim::Rng;

/// Words in a 96-byte value.
pub const VALUE_WORDS: usize = 12;

/// How keys are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// Uniform 64-bit keys.
    Uniform,
    /// `floor(2^64 * u^8)` for uniform u: most keys crowd near 0, all still distinct-ish.
    Skewed,
    /// Every key shares its upper 48 bits; the lower 16 are uniform, so keys repeat often.
    DupPrefix,
}

impl Distribution {
    /// Every distribution by its name (the one list `parse` and `--help` use).
    pub const ALL: [(&'static str, Distribution); 3] = [
        ("uniform", Distribution::Uniform),
        ("skewed", Distribution::Skewed),
        ("dup-prefix", Distribution::DupPrefix),
    ];

    pub fn parse(s: &str) -> Result<Distribution, String> {
        crate::sort::by_name(&Self::ALL, s, "distribution")
    }
    fn key(self, rng: &mut Rng) -> u64 {
        match self {
            Distribution::Uniform => rng.next_u64(),
            Distribution::Skewed => (rng.next_f64().powi(8) * 2f64.powi(64)) as u64,
            Distribution::DupPrefix => 0x5eed_0000_cafe_0000 | (rng.next_u64() & 0xffff),
        }
    }
}

/// The records given to one sorter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Records {
    pub keys: Vec<u64>,
    /// `keys.len() * VALUE_WORDS` words.
    pub values: Vec<u64>,
}

/// Sorter `sorter`'s `n` input records for `seed`: independent of how many sorters there are
/// or in which order they are generated.
pub fn generate(seed: u64, sorter: u64, n: usize, dist: Distribution) -> Records {
    let mut rng = Rng::stream(seed, 0x5027_0000_0000 + sorter);
    let keys: Vec<u64> = (0..n).map(|_| dist.key(&mut rng)).collect();
    let values = (0..n * VALUE_WORDS).map(|_| rng.next_u64()).collect();
    Records { keys, values }
}

/// Order-independent fingerprint of a multiset of records: two wrapping sums of two
/// different 64-bit hashes of each record, and the count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checksum {
    pub count: u64,
    pub sum_a: u64,
    pub sum_b: u64,
}

impl Checksum {
    pub fn add(&mut self, key: u64, value: &[u64]) {
        let (mut a, mut b) = (key ^ 0x243f_6a88_85a3_08d3, key.rotate_left(29) ^ 0x1319_8a2e_0370_7344);
        for &w in value {
            a = splitmix64(&mut (a ^ w));
            b = splitmix64(&mut (b.wrapping_add(w)));
        }
        self.count += 1;
        self.sum_a = self.sum_a.wrapping_add(a);
        self.sum_b = self.sum_b.wrapping_add(b);
    }
    pub fn of(r: &Records) -> Checksum {
        let mut c = Checksum::default();
        for (i, &k) in r.keys.iter().enumerate() {
            c.add(k, &r.values[i * VALUE_WORDS..(i + 1) * VALUE_WORDS]);
        }
        c
    }
    pub fn merge(&mut self, o: Checksum) {
        self.count += o.count;
        self.sum_a = self.sum_a.wrapping_add(o.sum_a);
        self.sum_b = self.sum_b.wrapping_add(o.sum_b);
    }
}

/// What the validator needs of the inputs: their checksum and smallest key. Kept instead
/// of the records themselves, which are about 100 bytes each (7 MB per 65,536 records).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputDigest {
    pub checksum: Checksum,
    pub min_key: Option<u64>,
}

impl InputDigest {
    pub fn add(&mut self, r: &Records) {
        self.checksum.merge(Checksum::of(r));
        self.min_key = match (self.min_key, r.keys.iter().copied().min()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    pub fn of(inputs: &[Records]) -> InputDigest {
        let mut d = InputDigest::default();
        inputs.iter().for_each(|r| d.add(r));
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_per_sorter_and_reproducible() {
        let a = generate(1, 5, 16, Distribution::Uniform);
        assert_eq!(a, generate(1, 5, 16, Distribution::Uniform));
        assert_ne!(a.keys, generate(1, 6, 16, Distribution::Uniform).keys);
        assert_eq!(a.values.len(), 16 * VALUE_WORDS);
        let d = generate(1, 5, 1000, Distribution::DupPrefix);
        assert!(d.keys.iter().all(|k| k >> 16 == 0x5eed_0000_cafe));
        let s = generate(1, 5, 1000, Distribution::Skewed);
        assert!(s.keys.iter().filter(|&&k| k < 1 << 60).count() > 700, "skewed keys crowd near 0");
    }

    #[test]
    fn checksum_ignores_order_but_not_content() {
        let r = generate(2, 0, 8, Distribution::Uniform);
        let mut swapped = r.clone();
        swapped.keys.swap(0, 1);
        let (v0, v1) = (r.values[..VALUE_WORDS].to_vec(), r.values[VALUE_WORDS..2 * VALUE_WORDS].to_vec());
        swapped.values[..VALUE_WORDS].copy_from_slice(&v1);
        swapped.values[VALUE_WORDS..2 * VALUE_WORDS].copy_from_slice(&v0);
        assert_eq!(Checksum::of(&r), Checksum::of(&swapped));
        let mut moved_value = r.clone();
        moved_value.values.swap(0, VALUE_WORDS);
        assert_ne!(Checksum::of(&r), Checksum::of(&moved_value), "a value with another key");
    }

    #[test]
    fn a_digest_is_the_merged_checksum_and_the_smallest_key() {
        let rs: Vec<Records> = (0..3).map(|s| generate(5, s, 4, Distribution::Uniform)).collect();
        let d = InputDigest::of(&rs);
        assert_eq!(d.checksum.count, 12);
        assert_eq!(d.min_key, rs.iter().flat_map(|r| r.keys.iter()).min().copied());
        assert_eq!(InputDigest::of(&[]).min_key, None);
    }
}
