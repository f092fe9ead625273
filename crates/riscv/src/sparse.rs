//! The private part of one node's DRAM: chunks of 256 bytes that the node has written,
//! held in a three-level table (2 MiB leaves of 4 KiB pages of chunks, each level allocated
//! on demand). Everything else reads as the program image or zeros.
//!
//! Why chunks and not pages: a NanoSort node writes only parts of most of its pages (a
//! stack's top, a buffer's head, a few records of a sort area), and with 4 KiB pages the
//! untouched rest of them was more than half of the host memory of a large cluster.
//! Measured on 1,024 4-core nodes: the bytes that differ from the image cover 40 KiB per
//! node in 256-byte chunks, 54 KiB in 512-byte ones, 79 KiB in 1 KiB ones, against 207 KiB
//! in pages. Chunks never move once allocated, so cores may cache host pointers to them.

use crate::program::PAGE;

/// Bytes per chunk: the granularity of private DRAM (and of the cores' software TLBs).
pub const CHUNK: u64 = 256;
pub type Chunk = [u8; CHUNK as usize];
pub(crate) const CHUNKS_PER_PAGE: u64 = PAGE / CHUNK;
const LEAF_PAGES: usize = 512;

type PageChunks = [Option<Box<Chunk>>; CHUNKS_PER_PAGE as usize];
type Leaf = [Option<Box<PageChunks>>; LEAF_PAGES];

/// What the private chunks cost: (pages holding any, chunks, leaves of the page table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resident {
    pub pages: usize,
    pub chunks: usize,
    pub leaves: usize,
}

/// Private chunks of the DRAM pages from `base_pn` on.
pub(crate) struct Sparse {
    base_pn: u64,
    dir: Vec<Option<Box<Leaf>>>,
}

impl Sparse {
    /// Room for `pages` pages from page number `base_pn`.
    pub fn new(base_pn: u64, pages: u64) -> Sparse {
        let leaves = pages.div_ceil(LEAF_PAGES as u64) as usize;
        Sparse { base_pn, dir: (0..leaves).map(|_| None).collect() }
    }

    /// (leaf, page in leaf, chunk in page) of absolute chunk number `cn` (must be in DRAM).
    #[inline]
    fn slot(&self, cn: u64) -> (usize, usize, usize) {
        let rel = (cn / CHUNKS_PER_PAGE - self.base_pn) as usize;
        (rel / LEAF_PAGES, rel % LEAF_PAGES, (cn % CHUNKS_PER_PAGE) as usize)
    }

    fn page(&self, pn: u64) -> Option<&PageChunks> {
        let (d, i, _) = self.slot(pn * CHUNKS_PER_PAGE);
        self.dir[d].as_ref()?[i].as_deref()
    }

    /// The private copy of chunk `cn`, if the node has one.
    #[inline]
    pub fn get(&self, cn: u64) -> Option<&Chunk> {
        let (d, i, c) = self.slot(cn);
        self.dir[d].as_ref()?[i].as_ref()?[c].as_deref()
    }

    /// The private copy of chunk `cn`, made from `init()` if there is none yet; true with
    /// it when it was made now.
    pub fn get_or_make(&mut self, cn: u64, init: impl FnOnce() -> Chunk) -> (&mut Chunk, bool) {
        let (d, i, c) = self.slot(cn);
        let leaf = self.dir[d].get_or_insert_with(|| Box::new([const { None }; LEAF_PAGES]));
        let page = leaf[i].get_or_insert_with(|| Box::new([const { None }; CHUNKS_PER_PAGE as usize]));
        let made = page[c].is_none();
        (page[c].get_or_insert_with(|| Box::new(init())), made)
    }

    /// Does page `pn` (in DRAM) hold any private chunk?
    pub fn has_page(&self, pn: u64) -> bool {
        self.page(pn).is_some()
    }

    pub fn resident(&self) -> Resident {
        let leaves = self.dir.iter().flatten();
        let pages = leaves.clone().flat_map(|l| l.iter().flatten());
        Resident {
            pages: pages.clone().count(),
            chunks: pages.map(|p| p.iter().flatten().count()).sum(),
            leaves: leaves.count(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_small() {
        assert_eq!(std::mem::size_of::<Leaf>(), 4096);
        assert_eq!(std::mem::size_of::<PageChunks>(), 128);
    }

    #[test]
    fn chunks_are_made_once_and_stay_put() {
        let mut s = Sparse::new(0x80000, 4096);
        let cn = 0x80123 * CHUNKS_PER_PAGE + 3;
        assert!(s.get(cn).is_none());
        let (c, made) = s.get_or_make(cn, || [7; CHUNK as usize]);
        assert!(made);
        let ptr = c.as_ptr();
        let (c, made) = s.get_or_make(cn, || [0; CHUNK as usize]);
        assert!(!made && c[0] == 7 && c.as_ptr() == ptr);
        s.get_or_make(cn + 1, || [0; CHUNK as usize]);
        assert!(s.has_page(0x80123) && !s.has_page(0x80124));
        assert_eq!(s.resident(), Resident { pages: 1, chunks: 2, leaves: 1 });
    }
}
