//! The set of a message's packets that were acknowledged or received.
//!
//! One bit per packet, the first 128 inline: messages are up to 38 packets by default
//! (`docs/platform.md` section 3), so the set lives in the message's own cache lines. A `Vec<bool>` would be a
//! separate allocation per message, and reading it a host cache miss per packet.

/// Bits for packet offsets; offsets of 128 and up spill to a vector, grown on demand.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketSet {
    inline: u128,
    spill: Vec<u64>,
}

impl PacketSet {
    pub fn contains(&self, o: usize) -> bool {
        match o.checked_sub(128) {
            None => self.inline >> o & 1 != 0,
            Some(s) => self.spill.get(s / 64).is_some_and(|w| w >> (s % 64) & 1 != 0),
        }
    }

    /// Add `o`; false if it was there already.
    pub fn insert(&mut self, o: usize) -> bool {
        let fresh = !self.contains(o);
        match o.checked_sub(128) {
            None => self.inline |= 1 << o,
            Some(s) => {
                if self.spill.len() <= s / 64 {
                    self.spill.resize(s / 64 + 1, 0);
                }
                self.spill[s / 64] |= 1 << (s % 64);
            }
        }
        fresh
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
    }
}
