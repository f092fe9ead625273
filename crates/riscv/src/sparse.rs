//! The private part of one node's DRAM: chunks of 64 bytes that the node has written.
//! Everything else reads as the program image or zeros.
//!
//! Why small chunks and not pages: a NanoSort node writes only parts of most of its pages
//! (a stack's top, a buffer's head, a few records of a sort area). Measured on the
//! 16,384-core sort of the datacenter's shape (docs/profile.md), at the end of the run the
//! chunks a node made private held 50.0 KiB in 256-byte chunks (200 of them over 48
//! pages), 41.6 KiB in 128-byte ones (333) and 36.7 KiB in 64-byte ones (587); 1 KiB
//! chunks held 79 KiB and pages 207 KiB on 1,024 nodes of an earlier program.
//!
//! Why 64 bytes: the main job (65,536 cores, README) must peak under 2 GiB (issue 40).
//! Against 128-byte chunks they take 5 KiB a node off its resident peak (2,110 -> 2,002
//! MiB), but the chunk is also the unit of the cores' software TLBs, whose 32 entries
//! then reach half as far: a 1,024-core sort's TLB misses double, about 300 host
//! instructions each, +2.4% host instructions in all (8,056 -> 8,247 M, cachegrind;
//! CHANGELOG, 2026-12-05; cheaper misses and TLB index took 1.0% back). A larger TLB does
//! not fit the `Core`'s size class.
//!
//! How they are found: a finer grain pays only if the table that finds the chunks does
//! not grow with it. A hash table of chunk numbers with a box per chunk cost 16-byte
//! entries and twice the slots (128-byte chunks did not pay that way); so the table here
//! is by page: each page holding private chunks has a mask of which of its chunks are
//! private and their slots in the node's arena, in chunk order (a chunk's slot is found
//! by counting the mask's bits below it). The arena is blocks of 1 KiB that never move,
//! so cores may cache host pointers to chunks (their software TLBs). A look-up happens
//! only when a core's software TLB misses.

use crate::program::pageindex::PageIndex;
use crate::program::PAGE;

/// Bytes per chunk: the granularity of private DRAM (and of the cores' software TLBs).
pub const CHUNK: u64 = 64;
pub type Chunk = [u8; CHUNK as usize];
pub(crate) const CHUNKS_PER_PAGE: u64 = PAGE / CHUNK;
// A page's private chunks are one bit each of a u64 mask.
const _: () = assert!(CHUNKS_PER_PAGE <= 64);

/// Chunks per arena block (1 KiB: on average half a block a node is unused).
const BLOCK: usize = 1024 / CHUNK as usize;
type Block = [Chunk; BLOCK];

/// What the private chunks cost: the pages holding any, and the chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resident {
    pub pages: usize,
    pub chunks: usize,
}

/// A page's private chunks: which ones (bit `i` for chunk `i` of the page), and their
/// arena slots in the order of the chunks. The slots are a boxed slice of exactly the
/// mask's chunks, remade one longer when a chunk is made (a few hundred times a node): a
/// `Vec` took 8 bytes more in every entry (32 bytes, now 24) and grew by doubling (0.7 KiB
/// a node more at the 16,384-core sort's peak; remaking costs 0.23% more host
/// instructions in a 1,024-core sort, CHANGELOG). One vector of every page's slots, page
/// after page, saved as much, and 16-bit slots 1.1 KiB more, but each cost 1.6-1.7% in
/// the `fast` build: the cores' inner loop (`fast.rs`) compiled to 120 M more
/// instructions, the look-up itself 33 M (CHANGELOG).
#[derive(Default)]
struct Page {
    mask: u64,
    slots: Box<[u32]>,
}

impl Page {
    /// Where chunk `i`'s slot is (or would go) in `slots`: the private chunks below it.
    fn rank(&self, i: u64) -> usize {
        (self.mask & ((1u64 << i) - 1)).count_ones() as usize
    }

    /// Is chunk `i` of the page private?
    #[inline]
    fn holds(&self, i: u64) -> bool {
        self.mask >> i & 1 != 0
    }

    fn slot(&self, i: u64) -> Option<u32> {
        self.holds(i).then(|| self.slots[self.rank(i)])
    }
}

/// Private chunks of one node's DRAM, by absolute chunk number (`addr / CHUNK`).
#[derive(Default)]
pub(crate) struct Sparse {
    index: PageIndex,
    pages: Vec<Page>,
    /// Blocks of `BLOCK` chunks: thin boxes, 8 bytes each in the vector where a boxed
    /// slice takes 16. Boxed so that they never move as the vector grows (the cores'
    /// TLBs point into them).
    #[allow(clippy::vec_box)]
    arena: Vec<Box<Block>>,
    chunks: u32,
}

impl Sparse {
    /// No private chunk yet, in a DRAM whose first page is `origin`.
    pub fn new(origin: u64) -> Sparse {
        Sparse { index: PageIndex::new(origin), ..Sparse::default() }
    }

    /// The arena slot of chunk `cn`'s private copy, if the node has one (for `at_mut`).
    #[inline]
    pub fn slot_of(&self, cn: u64) -> Option<usize> {
        let page = &self.pages[self.index.find(cn / CHUNKS_PER_PAGE)? as usize];
        page.slot(cn % CHUNKS_PER_PAGE).map(|s| s as usize)
    }

    /// Has the node a private copy of chunk `cn`? (Its page's mask alone, not its slot.)
    #[inline]
    pub fn has(&self, cn: u64) -> bool {
        let page = self.index.find(cn / CHUNKS_PER_PAGE);
        page.is_some_and(|p| self.pages[p as usize].holds(cn % CHUNKS_PER_PAGE))
    }

    /// The private copy of chunk `cn`, if the node has one.
    #[inline]
    pub fn get(&self, cn: u64) -> Option<&Chunk> {
        let s = self.slot_of(cn)?;
        Some(&self.arena[s / BLOCK][s % BLOCK])
    }

    /// The private copy of chunk `cn` to write, if the node has one.
    #[inline]
    pub fn get_mut(&mut self, cn: u64) -> Option<&mut Chunk> {
        let s = self.slot_of(cn)?;
        Some(self.at_mut(s))
    }

    /// The private chunk in arena slot `s` (from `slot_of`).
    #[inline]
    pub fn at_mut(&mut self, s: usize) -> &mut Chunk {
        &mut self.arena[s / BLOCK][s % BLOCK]
    }

    /// The private copy of chunk `cn`, made from `init()` if there is none yet; true with
    /// it when it was made now.
    pub fn get_or_make(&mut self, cn: u64, init: impl FnOnce() -> Chunk) -> (&mut Chunk, bool) {
        let i = cn % CHUNKS_PER_PAGE;
        let p = self.page_of(cn / CHUNKS_PER_PAGE);
        let page = &mut self.pages[p];
        let (s, made) = match page.slot(i) {
            Some(s) => (s as usize, false),
            None => {
                let s = self.chunks;
                page.slots = with_slot(&page.slots, page.rank(i), s);
                page.mask |= 1 << i;
                (Self::place(&mut self.arena, s as usize, init()), true)
            }
        };
        self.chunks += made as u32;
        (&mut self.arena[s / BLOCK][s % BLOCK], made)
    }

    /// Where page `pn`'s entry is in `pages`, made empty if it has none.
    fn page_of(&mut self, pn: u64) -> usize {
        if let Some(p) = self.index.find(pn) {
            return p as usize;
        }
        self.index.insert(pn, self.pages.len() as u32);
        self.pages.push(Page::default());
        self.pages.len() - 1
    }

    /// Put a new chunk's bytes in arena slot `s` (the next free one), adding a block when
    /// the last is full.
    #[allow(clippy::vec_box)]
    fn place(arena: &mut Vec<Box<Block>>, s: usize, bytes: Chunk) -> usize {
        if s == arena.len() * BLOCK {
            arena.push(Box::new([[0; CHUNK as usize]; BLOCK]));
        }
        arena[s / BLOCK][s % BLOCK] = bytes;
        s
    }

    /// Does page `pn` hold any private chunk?
    pub fn has_page(&self, pn: u64) -> bool {
        self.index.find(pn).is_some()
    }

    pub fn resident(&self) -> Resident {
        Resident { pages: self.pages.len(), chunks: self.chunks as usize }
    }
}

/// `slots` with `s` inserted at `at`, in a slice of exactly their number.
fn with_slot(slots: &[u32], at: usize, s: u32) -> Box<[u32]> {
    let mut v = Vec::with_capacity(slots.len() + 1);
    v.extend_from_slice(&slots[..at]);
    v.push(s);
    v.extend_from_slice(&slots[at..]);
    v.into_boxed_slice()
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
            s.get_or_make(cn + CHUNKS_PER_PAGE / 4 * k, || [0; CHUNK as usize]);
            // the tables grow
        }
        let (c, made) = s.get_or_make(cn, || [0; CHUNK as usize]);
        assert!(!made && c[0] == 7 && c.as_ptr() == ptr);
        assert!(s.has_page(0x80123) && s.has_page(0x80124) && !s.has_page(0x80122));
        assert_eq!(s.resident(), Resident { pages: 250, chunks: 1000 });
    }

    /// Chunks made in any order within a page are each found with their own bytes, and a
    /// chunk not made is not found.
    #[test]
    fn each_chunk_of_a_page_keeps_its_own_bytes() {
        let mut s = Sparse::default();
        let n = CHUNKS_PER_PAGE;
        let order = [n - 1, 0, n / 2 + 1, 5, n - 2, 1, n / 2 + 8];
        for (k, &i) in order.iter().enumerate() {
            let (_, made) = s.get_or_make(7 * CHUNKS_PER_PAGE + i, || [k as u8 + 1; CHUNK as usize]);
            assert!(made);
        }
        for (k, &i) in order.iter().enumerate() {
            assert_eq!(s.get(7 * CHUNKS_PER_PAGE + i).map(|c| c[0]), Some(k as u8 + 1), "chunk {i}");
        }
        assert!(s.get(7 * CHUNKS_PER_PAGE + 2).is_none() && s.get(8 * CHUNKS_PER_PAGE).is_none());
        assert!(order.iter().all(|&i| s.has(7 * CHUNKS_PER_PAGE + i)));
        assert!(!s.has(7 * CHUNKS_PER_PAGE + 2) && !s.has(8 * CHUNKS_PER_PAGE));
        assert_eq!(s.resident(), Resident { pages: 1, chunks: 7 });
    }

    /// Chunks made in pages taken in turn keep their bytes and their places, and a page
    /// below the index's origin is not found.
    #[test]
    fn chunks_of_pages_made_in_turn_keep_their_bytes() {
        let mut s = Sparse::new(0x80000);
        let mut made = Vec::new();
        for k in 0..200u64 {
            let page = 0x80000 + (k * 7) % 5;
            let cn = page * CHUNKS_PER_PAGE + (k * 13) % CHUNKS_PER_PAGE;
            if s.get(cn).is_none() {
                let (c, new) = s.get_or_make(cn, || [k as u8; CHUNK as usize]);
                assert!(new);
                made.push((cn, k as u8, c.as_ptr()));
            }
        }
        for &(cn, b, ptr) in &made {
            let c = s.get(cn).expect("made");
            assert!(c[0] == b && c.as_ptr() == ptr, "chunk {cn:#x}");
        }
        assert_eq!(s.resident(), Resident { pages: 5, chunks: made.len() });
        assert!(s.get(0x7ffff * CHUNKS_PER_PAGE).is_none(), "below the origin");
    }
}
