//! A core's software TLB: host pointers to the DRAM chunks (`sparse::CHUNK` bytes) it
//! touched lately, valid for the current `run` only (`Core::begin_run`).
//!
//! One table serves loads and stores. An entry maps a chunk either to the node's private
//! copy, which loads and stores use and which never moves, or to a chunk still shared with
//! the program image (or zeros), which only loads use: a store there must make the chunk
//! private first (`NodeMem::store_in_chunk`), unless it leaves the bytes as they are. Which
//! one is the tag's low bit, so that a load's check is one shift and compare and a store's
//! one compare.
//!
//! Why one table of 32 entries and not two of 16 (loads', stores'), in the same room
//! in the `Core`: a chunk a core both reads and writes (its stack, its buffers) took
//! an entry in each, and the stores' table never held a shared chunk, so every store of
//! zeros to still-zero memory (NanoSort clears its buffers before use) left the fast path.
//! Why the page's bits in the index (`slot`): buffers a whole number of pages apart (a
//! copy from one to another) took the same entry in turn. Measured on the 1,024-core sort
//! (docs/profile.md, callgrind) with 128-byte chunks: of 8.3 M loads and 8.0 M stores,
//! 0.76 M loads and 3.24 M stores missed two tables of 16; 1.14 M and 3.59 M missed one of
//! 32 indexed by the chunk's low bits alone; 0.31 M and 0.33 M one indexed by its low bits
//! crossed with those above. Watched chunks (`watch.rs`) never enter it.

use crate::mem::ChunkRef;

/// Entries in a core's TLB (direct-mapped, by chunk number).
pub(crate) const TLB_SIZE: usize = 32;

/// The entry that may hold chunk `cn`: the top bits of a multiplicative hash of its number
/// (Knuth's, the golden ratio's, as `PageIndex`), so that neither the chunks in a row nor
/// buffers a whole number of pages apart take one entry in turn. Two host instructions
/// where the chunk's low bits crossed with those above them (`cn ^ cn >> 5`) took three, at
/// every load and store: a 1,024-core sort's host instructions -0.36% (cachegrind, before
/// `store_quick` took the stores that leave a shared chunk as it is), its TLB misses
/// slightly fewer (`load_slow` 605,701 -> 598,140 calls, `store_slow` 457,541 -> 444,003;
/// CHANGELOG).
#[inline(always)]
fn slot(cn: u64) -> usize {
    (cn.wrapping_mul(layout::HASH) >> layout::SHIFT) as usize
}

/// Where a translated trace finds the table, and how it picks a slot (`slot`), for the
/// loads it runs itself (`jit/emit.rs`).
pub(crate) mod layout {
    use super::{Tlb, TLB_SIZE};
    pub(crate) const HASH: u64 = 0x9e37_79b9_7f4a_7c15;
    pub(crate) const SHIFT: u32 = 64 - TLB_SIZE.trailing_zeros();
    pub(crate) const TAGS: i32 = std::mem::offset_of!(Tlb, tags) as i32;
    pub(crate) const PTRS: i32 = std::mem::offset_of!(Tlb, ptrs) as i32;
}

/// The tag's low bit: the entry points to a shared chunk (loads only).
const SHARED: u32 = 1;

/// Chunks below this number may enter (their tag is a positive `i32`): addresses below
/// 64 GiB with 64-byte chunks, which holds DRAM in every memory map here (a 256 MiB DRAM
/// at 2 GiB by default). A chunk above takes the slow path at every access.
const TAGGED_CHUNKS: u64 = 1 << 30;

/// An empty entry's tag: -1, which widens to `u64::MAX` and matches no chunk (chunk
/// numbers are below 2^57).
const NONE: u32 = u32::MAX;

/// An entry, as the table gives it: `tag` is the chunk number shifted left by one,
/// `SHARED` set for a shared chunk, sign-extended from the table's 32 bits (so that an
/// empty entry matches no chunk, whatever its number).
#[derive(Clone, Copy)]
pub(crate) struct TlbEntry {
    tag: u64,
    pub ptr: *mut u8,
}

impl TlbEntry {
    /// May a load of chunk `cn` use `ptr`?
    #[inline(always)]
    pub fn reads(&self, cn: u64) -> bool {
        self.tag >> 1 == cn
    }

    /// May a store to chunk `cn` write through `ptr` (a private chunk)?
    #[inline(always)]
    pub fn writes(&self, cn: u64) -> bool {
        self.tag == cn << 1
    }
}

/// The table; see the module's documentation. Tags and pointers are apart, the tags 32
/// bits: 384 bytes of the `Core` where entries of a 64-bit tag and a pointer took 512, and
/// a node's 4 `Core`s fit mimalloc's 8 KiB class (docs/profile.md). A look-up reads the
/// same two words as before, from two host lines.
#[derive(Clone, Copy)]
pub(crate) struct Tlb {
    tags: [u32; TLB_SIZE],
    ptrs: [*mut u8; TLB_SIZE],
}

impl Default for Tlb {
    fn default() -> Self {
        Tlb { tags: [NONE; TLB_SIZE], ptrs: [std::ptr::null_mut(); TLB_SIZE] }
    }
}

/// A 32-bit tag as the 64 bits an entry compares: sign-extended.
#[inline(always)]
fn widen(tag: u32) -> u64 {
    tag as i32 as i64 as u64
}

impl Tlb {
    /// The entry that may hold chunk `cn`.
    #[inline(always)]
    pub fn get(&self, cn: u64) -> TlbEntry {
        let i = slot(cn);
        TlbEntry { tag: widen(self.tags[i]), ptr: self.ptrs[i] }
    }

    /// Enter chunk `cn` as it is now: private (loads and stores) or shared (loads); where
    /// its bytes are.
    pub fn fill(&mut self, cn: u64, chunk: ChunkRef) -> *const u8 {
        match chunk {
            ChunkRef::Private(c) => self.fill_private(cn, c.as_mut_ptr()),
            ChunkRef::Shared(c) => self.fill_shared(cn, c.as_ptr()),
        }
    }

    /// Chunk `cn` is the node's private copy at `ptr`.
    pub fn fill_private(&mut self, cn: u64, ptr: *mut u8) -> *const u8 {
        self.enter(cn, 0, ptr)
    }

    /// Chunk `cn` is shared, its bytes at `ptr` (for loads only).
    pub fn fill_shared(&mut self, cn: u64, ptr: *const u8) -> *const u8 {
        self.enter(cn, SHARED, ptr as *mut u8)
    }

    /// Enter chunk `cn` (if its tag fits, `TAGGED_CHUNKS`); `ptr` back.
    fn enter(&mut self, cn: u64, shared: u32, ptr: *mut u8) -> *const u8 {
        if cn < TAGGED_CHUNKS {
            let i = slot(cn);
            (self.tags[i], self.ptrs[i]) = ((cn as u32) << 1 | shared, ptr);
        }
        ptr
    }

    /// Chunk `cn` may have been made private: drop its entry if it points to the shared
    /// bytes.
    pub fn forget_shared_chunk(&mut self, cn: u64) {
        let i = slot(cn);
        if widen(self.tags[i]) == cn << 1 | SHARED as u64 {
            self.tags[i] = NONE;
        }
    }

    /// Drop every entry that points to shared bytes; private chunks never move.
    pub fn forget_shared(&mut self) {
        for t in &mut self.tags {
            if *t & SHARED != 0 {
                *t = NONE;
            }
        }
    }

    /// Drop every entry.
    pub fn clear(&mut self) {
        *self = Tlb::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_entry_serves_loads_only_and_a_private_one_both() {
        let mut t = Tlb::default();
        let (cn, byte) = (0x0100_0001_u64, 0u8);
        assert!(!t.get(cn).reads(cn) && !t.get(cn).writes(cn));
        t.fill_shared(cn, &byte);
        assert!(t.get(cn).reads(cn) && !t.get(cn).writes(cn));
        assert!(!t.get(cn + TLB_SIZE as u64).reads(cn + TLB_SIZE as u64), "same slot, other chunk");
        t.forget_shared_chunk(cn);
        assert!(!t.get(cn).reads(cn));
        let mut b = 0u8;
        t.fill_private(cn, &mut b);
        t.forget_shared_chunk(cn);
        t.forget_shared();
        assert!(t.get(cn).reads(cn) && t.get(cn).writes(cn), "private entries stay");
        t.clear();
        assert!(!t.get(cn).reads(cn));
    }

    #[test]
    fn a_chunk_beyond_the_tags_never_enters() {
        let mut t = Tlb::default();
        let mut b = 0u8;
        let far = [TAGGED_CHUNKS, TAGGED_CHUNKS + 1, (1 << 31) - 1, u64::MAX / crate::sparse::CHUNK];
        for cn in far {
            assert_eq!(t.fill_private(cn, &mut b), &b as *const u8);
            assert!(!t.get(cn).reads(cn) && !t.get(cn).writes(cn), "chunk {cn:#x}");
        }
        t.fill_private(TAGGED_CHUNKS - 1, &mut b);
        assert!(t.get(TAGGED_CHUNKS - 1).writes(TAGGED_CHUNKS - 1));
    }

    #[test]
    fn an_empty_entry_matches_no_chunk() {
        let t = Tlb::default();
        for cn in [0, 1, 0x80_0000, (1 << 31) - 1, u64::MAX / crate::sparse::CHUNK] {
            assert!(!t.get(cn).reads(cn) && !t.get(cn).writes(cn), "chunk {cn:#x}");
        }
    }
}
