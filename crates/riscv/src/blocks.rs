//! The fast engine's blocks (`fast.rs`): runs of pre-decoded ops inside one I-cache line
//! (and 256 bytes), ending after the first jump or op that is not executed inline
//! (anything `exec_rare` runs) or at the line's end; a conditional branch ends the run only
//! when taken (a superblock: one entry, an exit at each branch). A block is run with one
//! lookup (none when a block follows itself, or the block it left for last time: its
//! successor is cached in it), one line step and one page check, where the interpreter
//! takes each per instruction.
//!
//! What does not depend on the run is worked out once, when a block is cut ([`BOp`]): each
//! op's offset in the block, its place, and whether it reads a register that a load earlier
//! in the block wrote (the only scoreboard entries that can become pending inside a block
//! entered with the scoreboard quiet: `fast.rs`, "quick path"). An extra op of kind
//! `Illegal` past the last one marks the end (`fast.rs` hands it to its careful path, which
//! sees it is past the block).
//!
//! One cache per node (`NodeMem::blocks`), since the decoded code it copies is the node's
//! (`NodeMem::code_page`): it is emptied whenever a page is decoded again, so that a block
//! always holds the ops the interpreter's `fetch` would read (docs/profile.md "Core
//! engines"). It is empty, and costs nothing, until the fast engine runs on the node.

use crate::op::{Kind, Op};

/// Direct-mapped lookup slots (by pc); a collision replaces the older block's slot.
const SLOTS: usize = 1024;
/// Ops held before the cache starts again from empty (16 Ki ops of 12 bytes, 192 KiB):
/// blocks displaced from their slot stay in `ops` until then.
const MAX_OPS: usize = 16 * 1024;
/// A block spans at most this many bytes, so that an op's offset fits its byte (and the
/// ops after it, at 2 bytes or more each, a signed one).
pub(crate) const MAX_SPAN: u64 = 256;

/// An op of a block with what the quick path needs to know of it without looking around.
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct BOp {
    pub op: Op,
    /// `op.kind()`, unpacked (`Illegal` for the end marker).
    pub kind: Kind,
    /// Its pc less the block's.
    pub off: u8,
    /// The ops of the block after it (-1 for the end marker).
    pub left: i8,
    /// Its index in the block (the end marker's is the block's length).
    pub idx: u8,
}

const _: () = assert!(std::mem::size_of::<BOp>() == 12);

/// A block: its first pc, its ops `ops[first..first + len]` of the cache (and the end
/// marker after them), and the block it last left for (`next_pc`, `next`: index + 1 into
/// the cache's blocks, 0 for none).
#[derive(Clone, Copy)]
pub(crate) struct Block {
    pub pc: u64,
    pub first: u32,
    pub len: u32,
    pub next_pc: u64,
    pub next: u32,
}

impl Block {
    pub const NONE: Block = Block { pc: u64::MAX, first: 0, len: 0, next_pc: u64::MAX, next: 0 };
}

#[derive(Default)]
pub(crate) struct BlockCache {
    /// Index + 1 into `blocks` (0: empty); allocated on the first insert.
    slots: Vec<u32>,
    blocks: Vec<Block>,
    ops: Vec<BOp>,
    /// log2 of the I-cache line size the blocks were cut at.
    line_shift: u32,
}

#[inline(always)]
fn slot(pc: u64) -> usize {
    (pc >> 1) as usize & (SLOTS - 1)
}

impl BlockCache {
    /// The index + 1 of the block starting at `pc`, if cached (else 0).
    #[inline(always)]
    pub fn find(&self, pc: u64) -> u32 {
        let Some(&i) = self.slots.get(slot(pc)) else { return 0 };
        match self.blocks.get((i as usize).wrapping_sub(1)) {
            Some(b) if b.pc == pc => i,
            _ => 0,
        }
    }

    /// Block `id` (index + 1, from `find` or `insert`).
    #[inline(always)]
    pub fn block(&self, id: u32) -> Block {
        self.blocks[id as usize - 1]
    }

    /// Remember that block `from` (index + 1) was left for block `to` at `pc`.
    #[inline(always)]
    pub fn chain(&mut self, from: u32, pc: u64, to: u32) {
        let b = &mut self.blocks[from as usize - 1];
        (b.next_pc, b.next) = (pc, to);
    }

    /// The first op of `b`, valid until the next `insert` or `clear`.
    #[inline(always)]
    pub fn ops(&self, b: Block) -> *const BOp {
        // SAFETY: `first` is an index into `ops` (made by `insert`).
        unsafe { self.ops.as_ptr().add(b.first as usize) }
    }

    /// Cache the block of `ops` starting at `pc`; returns its index + 1.
    pub fn insert(&mut self, pc: u64, ops: impl Iterator<Item = Op>) -> u32 {
        if self.ops.len() >= MAX_OPS || self.blocks.len() >= u32::MAX as usize - 1 {
            self.clear();
        }
        if self.slots.is_empty() {
            self.slots = vec![0; SLOTS];
        }
        let first = self.ops.len();
        let mut off = 0u64;
        for op in ops {
            let idx = (self.ops.len() - first) as u8;
            self.ops.push(BOp { op, kind: op.kind(), off: off as u8, left: 0, idx });
            off += op.len() as u64;
        }
        let len = self.ops.len() - first;
        for (i, b) in self.ops[first..].iter_mut().enumerate() {
            b.left = (len - 1 - i) as i8;
        }
        let end = BOp { op: Op::ILLEGAL0, kind: Kind::Illegal, off: off as u8, left: -1, idx: len as u8 };
        self.ops.push(end);
        self.blocks.push(Block { pc, first: first as u32, len: len as u32, ..Block::NONE });
        let id = self.blocks.len() as u32;
        self.slots[slot(pc)] = id;
        id
    }

    /// Forget every block (code decoded again), keeping the allocations.
    pub fn clear(&mut self) {
        self.slots.fill(0);
        self.blocks.clear();
        self.ops.clear();
    }

    /// Blocks cut at another line size than `line_shift` are forgotten (a node's cores
    /// may in principle differ).
    #[inline(always)]
    pub fn use_lines(&mut self, line_shift: u32) {
        if self.line_shift != line_shift {
            self.clear();
            self.line_shift = line_shift;
        }
    }
}
