//! A small map from page numbers to entries of a caller's vector, looked up on every
//! software-TLB miss (`sparse.rs`: a node's private pages; `program/mod.rs`: the image's pages).

/// Page numbers to their entries (`Sparse::pages`, the program image's pages): open
/// addressing with linear probing, at most half full. Written out rather than a `HashMap`
/// because it is looked up at every software-TLB miss: inlined, a look-up is a multiply
/// and a load or two (a `HashMap`'s took 88 host instructions here, its hash and key
/// comparison out of line). A slot holds the page number and its entry together, so that
/// a look-up whose home slot holds the page touches one host line (with the page numbers
/// and entries in two vectors, a look-up in a node's table cold in the host's caches
/// missed twice).
#[derive(Default)]
pub(crate) struct PageIndex {
    /// (page number, its entry), `EMPTY` page numbers where none; a power of two long (or
    /// empty).
    slots: Vec<(u64, u32)>,
    len: usize,
}

const EMPTY: u64 = u64::MAX;

impl PageIndex {
    /// The entry of page `pn`, if it has one.
    #[inline]
    pub(crate) fn find(&self, pn: u64) -> Option<u32> {
        let mask = self.slots.len().wrapping_sub(1);
        let mut h = self.home(pn);
        loop {
            let &(key, at) = self.slots.get(h)?;
            if key == EMPTY {
                return None;
            }
            if key == pn {
                return Some(at);
            }
            h = (h + 1) & mask;
        }
    }

    /// The slot where the search for `pn` starts: the top bits of a multiplicative hash
    /// (Knuth's, the golden ratio's), so that pages in a row land apart.
    #[inline]
    fn home(&self, pn: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        match bits {
            0 => 0,
            _ => (pn.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize,
        }
    }

    /// Add `pn` (not present) at entry `p`, doubling the table first if it would be more
    /// than half full.
    pub(crate) fn insert(&mut self, pn: u64, p: u32) {
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut h = self.home(pn);
        while self.slots[h].0 != EMPTY {
            h = (h + 1) & mask;
        }
        self.slots[h] = (pn, p);
        self.len += 1;
    }

    fn grow(&mut self) {
        let n = (2 * self.slots.len()).max(16);
        let old = std::mem::replace(self, PageIndex { slots: vec![(EMPTY, 0); n], len: 0 });
        for &(pn, p) in old.slots.iter().filter(|&&(pn, _)| pn != EMPTY) {
            self.insert(pn, p);
        }
    }
}
