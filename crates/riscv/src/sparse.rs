//! The private part of one node's DRAM: chunks of 256 bytes that the node has written,
//! found through a hash table by chunk number. Everything else reads as the program image
//! or zeros.
//!
//! Why chunks and not pages: a NanoSort node writes only parts of most of its pages (a
//! stack's top, a buffer's head, a few records of a sort area), and with 4 KiB pages the
//! untouched rest of them would be more than half of the host memory of a large cluster.
//! Measured on 1,024 4-core nodes: the bytes that differ from the image cover 40 KiB per
//! node in 256-byte chunks, 54 KiB in 512-byte ones, 79 KiB in 1 KiB ones, against 207 KiB
//! in pages. Why a hash table: a node holds about 160 chunks spread over 50 pages in two
//! 2 MiB regions, which a radix table (a 4 KiB leaf per 2 MiB, 128 bytes of pointers per
//! page) stored in 16 KiB against 4 KiB for the table. It is consulted only when a core's
//! software TLB misses. Chunks never move once allocated, so cores may cache host pointers
//! to them.

use nanopu_sim::hash::IntMap;

use crate::program::PAGE;

/// Bytes per chunk: the granularity of private DRAM (and of the cores' software TLBs).
pub const CHUNK: u64 = 256;
pub type Chunk = [u8; CHUNK as usize];
pub(crate) const CHUNKS_PER_PAGE: u64 = PAGE / CHUNK;

/// What the private chunks cost: the pages holding any, and the chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resident {
    pub pages: usize,
    pub chunks: usize,
}

/// Private chunks of one node's DRAM, by absolute chunk number (`addr / CHUNK`).
#[derive(Default)]
pub(crate) struct Sparse {
    chunks: IntMap<u64, Box<Chunk>>,
}

impl Sparse {
    /// The private copy of chunk `cn`, if the node has one.
    #[inline]
    pub fn get(&self, cn: u64) -> Option<&Chunk> {
        self.chunks.get(&cn).map(|c| &**c)
    }

    /// The private copy of chunk `cn`, made from `init()` if there is none yet; true with
    /// it when it was made now.
    pub fn get_or_make(&mut self, cn: u64, init: impl FnOnce() -> Chunk) -> (&mut Chunk, bool) {
        let mut made = false;
        let c = self.chunks.entry(cn).or_insert_with(|| {
            made = true;
            Box::new(init())
        });
        (c, made)
    }

    /// Does page `pn` hold any private chunk?
    pub fn has_page(&self, pn: u64) -> bool {
        (pn * CHUNKS_PER_PAGE..(pn + 1) * CHUNKS_PER_PAGE).any(|cn| self.chunks.contains_key(&cn))
    }

    pub fn resident(&self) -> Resident {
        let mut pages: Vec<u64> = self.chunks.keys().map(|cn| cn / CHUNKS_PER_PAGE).collect();
        pages.sort_unstable();
        pages.dedup();
        Resident { pages: pages.len(), chunks: self.chunks.len() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_made_once_and_stay_put() {
        let mut s = Sparse::default();
        let cn = 0x80123 * CHUNKS_PER_PAGE + 3;
        assert!(s.get(cn).is_none());
        let (c, made) = s.get_or_make(cn, || [7; CHUNK as usize]);
        assert!(made);
        let ptr = c.as_ptr();
        for k in 1..1000 {
            s.get_or_make(cn + 16 * k, || [0; CHUNK as usize]); // the table grows and rehashes
        }
        let (c, made) = s.get_or_make(cn, || [0; CHUNK as usize]);
        assert!(!made && c[0] == 7 && c.as_ptr() == ptr);
        assert!(s.has_page(0x80123) && s.has_page(0x80124) && !s.has_page(0x80122));
        assert_eq!(s.resident(), Resident { pages: 1000, chunks: 1000 });
    }
}
