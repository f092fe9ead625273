//! A small deterministic hasher for maps keyed by a few integers (message keys, chunk
//! numbers), several times cheaper than the standard library's SipHash. Nothing may rely
//! on the iteration order of such a map: callers sort wherever they walk one, so results
//! never depend on hashing.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map hashed with [`KeyHasher`].
pub type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// Folds each integer in with a rotate and an odd multiply (the scheme of Firefox's
/// FxHash): a few cycles for a key of one to three small integers.
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
