//! A small map from page numbers to entries of a caller's vector, looked up on every
//! software-TLB miss (`sparse.rs`: a node's private pages; `program/mod.rs`: the image's pages).

/// Page numbers to their entries (`Sparse::pages`, the program image's pages): open
/// addressing with linear probing, at most half full. Written out rather than a `HashMap`
/// because it is looked up at every software-TLB miss: inlined, a look-up is a multiply
/// and a load or two (a `HashMap`'s took 88 host instructions here, its hash and key
/// comparison out of line). A slot holds the page number and its entry together, so that
/// a look-up whose home slot holds the page touches one host line (with the page numbers
/// and entries in two vectors, a look-up in a node's table cold in the host's caches
/// missed twice). Page numbers are kept as 32-bit distances from an origin (DRAM's first
/// page): a slot is 8 bytes, and a node's table of about 50 private pages 1 KiB where
/// 64-bit page numbers took 2 (DRAM is below 16 TiB, `elf::Dram::new`).
#[derive(Default)]
pub(crate) struct PageIndex {
    /// (page number less `origin`, its entry), `EMPTY` keys where none; a power of two
    /// long (or empty).
    slots: Vec<(u32, u32)>,
    len: usize,
    origin: u64,
}

const EMPTY: u32 = u32::MAX;

impl PageIndex {
    /// An empty index of pages from `origin` on (to `origin + 2^32 - 2`).
    pub(crate) fn new(origin: u64) -> PageIndex {
        PageIndex { origin, ..PageIndex::default() }
    }

    /// The entry of page `pn`, if it has one.
    #[inline]
    pub(crate) fn find(&self, pn: u64) -> Option<u32> {
        let pn = u32::try_from(pn.wrapping_sub(self.origin)).ok()?;
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
    fn home(&self, key: u32) -> usize {
        let bits = self.slots.len().trailing_zeros();
        match bits {
            0 => 0,
            _ => (u64::from(key).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize,
        }
    }

    /// Add `pn` (not present) at entry `p`, doubling the table first if it would be more
    /// than half full.
    pub(crate) fn insert(&mut self, pn: u64, p: u32) {
        let key = u32::try_from(pn.wrapping_sub(self.origin)).ok().filter(|&k| k != EMPTY);
        self.put(key.expect("a page of DRAM, which is below 16 TiB (elf::Dram::new)"), p);
    }

    /// Add `key` (a page number less `origin`) at entry `p`.
    fn put(&mut self, key: u32, p: u32) {
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut h = self.home(key);
        while self.slots[h].0 != EMPTY {
            h = (h + 1) & mask;
        }
        self.slots[h] = (key, p);
        self.len += 1;
    }

    fn grow(&mut self) {
        let n = (2 * self.slots.len()).max(16);
        let old = std::mem::replace(&mut self.slots, vec![(EMPTY, 0); n]);
        self.len = 0;
        for &(key, p) in old.iter().filter(|&&(key, _)| key != EMPTY) {
            self.put(key, p);
        }
    }
}
