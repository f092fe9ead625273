//! Division by a divisor fixed at setup, without a division instruction.
//!
//! A hardware division takes tens of cycles and a packet's hop asked for several: the
//! switch and port of a node are divided here (the serialization time and the random
//! uplink's rejection threshold are precomputed where they are used). Dividing a
//! 32-bit number by a 32-bit divisor `d` is exactly a multiplication by `M = 2^64 / d`
//! rounded up, keeping the high 64 bits of the 128-bit product, and the remainder is the
//! high bits of the low product times `d` (Lemire, Kaser and Kurz, "Faster remainder by
//! direct computation", 2019).

/// A 32-bit divisor, with its reciprocal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Div32 {
    d: u32,
    m: u64,
}

impl Div32 {
    /// Panics on zero, as a division would.
    pub fn new(d: u32) -> Div32 {
        assert!(d > 0, "Div32::new(0)");
        Div32 { d, m: (u64::MAX / d as u64).wrapping_add(1) }
    }
    /// n / d. (Not `std::ops::Div`: the divisor is the receiver, fixed at construction.)
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn div(self, n: u32) -> u32 {
        if self.d == 1 {
            return n; // M wrapped to 0: 2^64 does not fit
        }
        ((self.m as u128 * n as u128) >> 64) as u32
    }
    /// n % d.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn rem(self, n: u32) -> u32 {
        let low = self.m.wrapping_mul(n as u64);
        ((low as u128 * self.d as u128) >> 64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;

    /// Agrees with the division instruction on edge cases and random operands.
    #[test]
    fn matches_division() {
        let mut rng = Rng::new(9);
        let mut cases: Vec<(u32, u32)> = vec![(0, 1), (u32::MAX, 1), (u32::MAX, u32::MAX), (7, 3), (255, 16)];
        for _ in 0..100_000 {
            let d = (rng.next_u64() >> (32 + rng.below(32))) as u32;
            cases.push((rng.next_u64() as u32, d.max(1)));
        }
        for (n, d) in cases {
            let f = Div32::new(d);
            assert_eq!((f.div(n), f.rem(n)), (n / d, n % d), "{n} / {d}");
        }
    }
}
