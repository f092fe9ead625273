//! The fast engine's blocks (`fast.rs`): runs of pre-decoded ops inside one I-cache line,
//! ending after the first jump or op that is not executed inline (anything `exec_rare`
//! runs) or at the line's end; a conditional branch ends the run only when taken (a
//! superblock: one entry, an exit at each branch). A block is run with one lookup, one
//! line step and one page check, where the interpreter takes each per instruction.
//!
//! One cache per node (`NodeMem::blocks`), since the decoded code it copies is the node's
//! (`NodeMem::code_page`): it is emptied whenever a page is decoded again, so that a block
//! always holds the ops the interpreter's `fetch` would read (docs/profile.md "Core
//! engines"). It is empty, and costs nothing, until the fast engine runs on the node.

use crate::op::Op;

/// Direct-mapped lookup slots (by pc); a collision replaces the older block's slot.
const SLOTS: usize = 1024;
/// Ops held before the cache starts again from empty (128 KiB): blocks displaced from
/// their slot stay in `ops` until then.
const MAX_OPS: usize = 16 * 1024;

/// A block: its first pc and its ops, `ops[first..first + len]` of the cache.
#[derive(Clone, Copy)]
pub(crate) struct Block {
    pub pc: u64,
    pub first: u32,
    pub len: u32,
}

#[derive(Default)]
pub(crate) struct BlockCache {
    /// Index + 1 into `blocks` (0: empty); allocated on the first insert.
    slots: Vec<u32>,
    blocks: Vec<Block>,
    ops: Vec<Op>,
    /// log2 of the I-cache line size the blocks were cut at.
    line_shift: u32,
}

#[inline(always)]
fn slot(pc: u64) -> usize {
    (pc >> 1) as usize & (SLOTS - 1)
}

impl BlockCache {
    /// The block starting at `pc`, if cached.
    #[inline(always)]
    pub fn get(&self, pc: u64) -> Option<Block> {
        let i = *self.slots.get(slot(pc))? as usize;
        let b = *self.blocks.get(i.wrapping_sub(1))?;
        (b.pc == pc).then_some(b)
    }

    /// The first op of `b`, valid until the next `insert` or `clear`.
    #[inline(always)]
    pub fn ops(&self, b: Block) -> *const Op {
        // SAFETY: `first` is an index into `ops` (made by `insert`).
        unsafe { self.ops.as_ptr().add(b.first as usize) }
    }

    /// Cache the block of `ops` starting at `pc`.
    pub fn insert(&mut self, pc: u64, ops: impl Iterator<Item = Op>) -> Block {
        if self.ops.len() >= MAX_OPS || self.blocks.len() >= u32::MAX as usize - 1 {
            self.clear();
        }
        if self.slots.is_empty() {
            self.slots = vec![0; SLOTS];
        }
        let first = self.ops.len();
        self.ops.extend(ops);
        let b = Block { pc, first: first as u32, len: (self.ops.len() - first) as u32 };
        self.blocks.push(b);
        self.slots[slot(pc)] = self.blocks.len() as u32;
        b
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
