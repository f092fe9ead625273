//! `nanopu bench host-sort`: the host-speed yardstick (issue 40 item 4). The host itself
//! sorts the main job's 1,048,576 uniform 64-bit keys natively, so that a simulation's host
//! time can be stated as a multiple of something every machine does at its own speed:
//! `bench/yardstick` divides the main job's wall time by this benchmark's figure, and that
//! ratio compares across machines where seconds do not.

use serde_json::{json, Value};
use std::time::Instant;

/// The main job's keys: 65,536 cores x 16 keys (README.md, "Quick start").
const KEYS: usize = 1 << 20;

/// Rounds timed; the best is reported, as the least disturbed by other host load.
const ROUNDS: usize = 5;

/// Uniform 64-bit keys from a fixed xorshift64 seed: the same keys on every host.
fn keys(n: usize) -> Vec<u64> {
    let mut x = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n).map(|_| next()).collect()
}

/// Host seconds of one native sort of `input` (a copy, so each round sorts the same keys).
fn one_sort(input: &[u64]) -> f64 {
    let mut v = input.to_vec();
    let start = Instant::now();
    v.sort_unstable();
    let secs = start.elapsed().as_secs_f64();
    assert!(v.windows(2).all(|w| w[0] <= w[1]), "the host's own sort left keys out of order");
    secs
}

pub(super) fn host_sort() -> Value {
    let input = keys(KEYS);
    let rounds: Vec<f64> = (0..ROUNDS).map(|_| one_sort(&input)).collect();
    let best = rounds.iter().copied().fold(f64::INFINITY, f64::min);
    json!({ "benchmark": "host-sort", "keys": KEYS, "rounds": rounds,
        "host_seconds": best, "ns_per_key": best * 1e9 / KEYS as f64,
        "what": "Rust sort_unstable of 1,048,576 uniform 64-bit keys on one host thread, best of 5" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_are_fixed_and_spread() {
        let (a, b) = (keys(1000), keys(1000));
        assert_eq!(a, b);
        let high = a.iter().filter(|&&k| k >> 63 == 1).count();
        assert!((400..600).contains(&high), "{high} of 1,000 keys have the top bit set");
    }

    #[test]
    fn one_sort_reports_a_positive_time() {
        assert!(one_sort(&keys(4096)) > 0.0);
    }
}
