//! Seedable pseudo-random numbers: xoshiro256** seeded through SplitMix64
//! (Blackman and Vigna, "Scrambled linear pseudorandom number generators", 2018).
//! Every component draws from its own stream `Rng::stream(seed, component_id)`, so adding a
//! component or reordering draws in one never perturbs another.

/// SplitMix64 step: used to expand seeds into generator state.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut sm = seed;
        Rng { s: [0; 4].map(|_| splitmix64(&mut sm)) }
    }
    /// An independent stream for component `id` of a run seeded with `seed`.
    pub fn stream(seed: u64, id: u64) -> Rng {
        let mut sm = seed ^ id.wrapping_mul(0xD605_BBB5_8C8A_BBE5);
        Rng::new(splitmix64(&mut sm))
    }
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in [0, n) without modulo bias (Lemire's multiply-shift with rejection).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        self.below_with(n, n.wrapping_neg() % n)
    }
    /// `below(n)` given its rejection threshold `n.wrapping_neg() % n`, for a caller that
    /// draws below the same `n` on a hot path and computed it once (a division saved).
    pub fn below_with(&mut self, n: u64, threshold: u64) -> u64 {
        debug_assert_eq!(threshold, n.wrapping_neg() % n);
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }
    /// Exponentially distributed with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.next_f64()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(7, 1).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::stream(7, 1).next_u64(), Rng::stream(7, 2).next_u64());
        assert_ne!(Rng::stream(7, 1).next_u64(), Rng::stream(8, 1).next_u64());
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::new(1);
        let mut seen = [0u32; 6];
        for _ in 0..6000 {
            seen[r.below(6) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
    }

    #[test]
    fn exponential_mean_is_close() {
        let mut r = Rng::new(3);
        let mean = (0..100_000).map(|_| r.exponential(2.0)).sum::<f64>() / 100_000.0;
        assert!((mean - 2.0).abs() < 0.05, "{mean}");
    }
}
