//! The set of a message's packets that were acknowledged or received.
//!
//! One bit per packet, the first 128 inline: messages are up to 38 packets by default
//! (`docs/platform.md` section 3), so the set lives in the message's own cache lines. A `Vec<bool>` would be a
//! separate allocation per message, and reading it a host cache miss per packet.

/// Bits for packet offsets; offsets of 128 and up spill to a slice, grown on demand. 32
/// bytes: a `u128` and a `Vec` were 48 (the `u128` aligned to 16), in every message being
/// sent or received (docs/profile.md).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketSet {
    inline: [u64; 2],
    spill: Box<[u64]>,
}

const _: () = assert!(std::mem::size_of::<PacketSet>() == 32);

impl PacketSet {
    #[inline]
    pub fn contains(&self, o: usize) -> bool {
        let (words, i) = self.word_of(o);
        words.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 != 0)
    }

    /// Add `o`; false if it was there already.
    #[inline]
    pub fn insert(&mut self, o: usize) -> bool {
        let fresh = !self.contains(o);
        if o >= 128 && self.spill.len() <= (o - 128) / 64 {
            let mut grown = std::mem::take(&mut self.spill).into_vec();
            grown.resize((o - 128) / 64 + 1, 0);
            self.spill = grown.into_boxed_slice();
        }
        let (i, words) = match o.checked_sub(128) {
            None => (o, &mut self.inline[..]),
            Some(s) => (s, &mut self.spill[..]),
        };
        words[i / 64] |= 1 << (i % 64);
        fresh
    }

    /// How many offsets the set holds.
    #[inline]
    pub fn len(&self) -> u32 {
        // Not one chained iterator: its fold was a call of its own (on every ACK).
        let ones = |words: &[u64]| words.iter().map(|w| w.count_ones()).sum::<u32>();
        ones(&self.inline) + ones(&self.spill)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The words holding bit `o`, and its index in them.
    #[inline]
    fn word_of(&self, o: usize) -> (&[u64], usize) {
        match o.checked_sub(128) {
            None => (&self.inline, o),
            Some(s) => (&self.spill, s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_spilled_offsets() {
        let mut s = PacketSet::default();
        for o in [0, 5, 127, 128, 200, 1000] {
            assert!(!s.contains(o));
            assert!(s.insert(o));
            assert!(!s.insert(o), "second insert of {o}");
            assert!(s.contains(o));
        }
        assert!(!s.contains(1) && !s.contains(129) && !s.contains(5000));
        assert_eq!(s.len(), 6);
    }
}
