//! Hash maps for the transport's per-message state, with a small multiplicative hasher.
//!
//! Every data and control packet looks its message up, and with hundreds of messages open
//! per endpoint an ordered map's search was the endpoint's hottest code. Iteration order
//! of these maps is never relied on: wherever the transport walks them it sorts first, so
//! results do not depend on hashing.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map keyed by message, hashed with [`KeyHasher`].
pub type MsgMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// Folds each integer in with a rotate and an odd multiply (the scheme of Firefox's
/// FxHash): a few cycles for a key of two or three small integers, and deterministic.
#[derive(Default, Clone, Copy)]
pub struct KeyHasher(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl KeyHasher {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(K);
    }
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.add(b as u64));
    }
    fn write_u16(&mut self, x: u16) {
        self.add(x as u64);
    }
    fn write_u32(&mut self, x: u32) {
        self.add(x as u64);
    }
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
}
