//! The set of a message's packets that were acknowledged or received.
//!
//! One bit per packet, the first 64 inline: messages are up to 38 packets by default
//! (`docs/platform.md` section 3), so the set lives in the message's own cache lines. A `Vec<bool>` would be a
//! separate allocation per message, and reading it a host cache miss per packet.

/// Bits for packet offsets; offsets of 64 and up spill to a vector, grown on demand and
/// boxed so that the set is 16 bytes (a `u128` and a `Vec` were 48, two words and a boxed
/// slice 32), in every message being sent or received: 16 bytes fewer bring a message's
/// state to 128 bytes, an allocator size class (docs/profile.md). NanoSort's messages are
/// one packet; the default's longest, 38 (`docs/platform.md` section 3), stay inline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketSet {
    inline: u64,
    #[allow(clippy::box_collection)] // a thin pointer: 8 bytes where a `Vec` takes 24
    spill: Option<Box<Vec<u64>>>,
}

const _: () = assert!(std::mem::size_of::<PacketSet>() == 16);

/// Offsets held in `PacketSet::inline`.
const INLINE: usize = 64;

impl PacketSet {
    #[inline]
    pub fn contains(&self, o: usize) -> bool {
        match o.checked_sub(INLINE) {
            None => self.inline >> o & 1 != 0,
            Some(s) => self.spilled().get(s / 64).is_some_and(|w| w >> (s % 64) & 1 != 0),
        }
    }

    /// Add `o`; false if it was there already.
    #[inline]
    pub fn insert(&mut self, o: usize) -> bool {
        let fresh = !self.contains(o);
        match o.checked_sub(INLINE) {
            None => self.inline |= 1 << o,
            Some(s) => self.spill_word(s / 64)[0] |= 1 << (s % 64),
        }
        fresh
    }

    /// How many offsets the set holds.
    #[inline]
    pub fn len(&self) -> u32 {
        self.inline.count_ones() + self.spilled().iter().map(|w| w.count_ones()).sum::<u32>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The words of offsets from `INLINE` on (none until one is added).
    #[inline]
    fn spilled(&self) -> &[u64] {
        self.spill.as_deref().map_or(&[], |v| &v[..])
    }

    /// Spilled word `w`, the vector grown to hold it.
    #[cold]
    fn spill_word(&mut self, w: usize) -> &mut [u64] {
        let v = self.spill.get_or_insert_with(Box::default);
        if v.len() <= w {
            v.resize(w + 1, 0);
        }
        &mut v[w..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_spilled_offsets() {
        let mut s = PacketSet::default();
        for o in [0, 5, 63, 64, 127, 128, 200, 1000] {
            assert!(!s.contains(o));
            assert!(s.insert(o));
            assert!(!s.insert(o), "second insert of {o}");
            assert!(s.contains(o));
        }
        assert!(!s.contains(1) && !s.contains(65) && !s.contains(129) && !s.contains(5000));
        assert_eq!(s.len(), 8);
    }
}
