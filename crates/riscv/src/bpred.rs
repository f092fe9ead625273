//! Branch prediction in the spirit of Rocket's frontend (rocket-chip `BTBParams`, the
//! prototype's l-nic/rocket-chip `lnic-dev` `rocket/BTB.scala`): a BTB that must hit for a
//! taken prediction, a branch history table of 1-bit counters indexed as Rocket's `BHT`
//! indexes it (the fetch packet's address XOR a hash of the last 8 conditional branches'
//! outcomes, `BHTParams(nEntries = 512, counterLength = 1, historyLength = 8, historyBits =
//! 3)`), and a return address stack. Simplifications: the BTB is direct-mapped (Rocket's is
//! fully associative), the history advances as branches resolve (Rocket advances it
//! speculatively in fetch and repairs it on a mispredict, which leaves the same history),
//! and every branch updates the table (Rocket's only on a BTB hit). docs/models/node.md,
//! "Receiving, request by request", has the RTL's lines and what the indexing does to a
//! receive loop.
//!
//! Host layout: the state is read at nearly every branch of a core that thousands of others
//! dispatch in turn, so each read is likely a host cache miss; it is kept dense
//! (docs/profile.md, "What keeps it fast"). The BHT's 1-bit counters are bits, 64 to a word
//! (512 counters: one host cache line, not eight); the BTB holds each (pc, target) pair in
//! one `u64` while every pc and target given to it fits in 32 bits (the default memory
//! map's code does: DRAM at 0x8000_0000, 256 MiB), and full pairs from the first one that
//! does not (`Btb`). The predictions are the same either way (`tests` replays traces
//! through both and through the byte-per-counter, pair-per-entry layout this replaced).

/// Predictor state of one core.
#[derive(Hash)]
pub struct BranchPred {
    /// BHT counter `i` is bit `i % 64` of word `i / 64`.
    bht: Box<[u64]>,
    /// log2 of the BHT's entries.
    bht_bits: u32,
    /// The BHT's entries less one, and where the history's hash goes in an index
    /// (`bht_slot`): fixed by `bht_bits`, kept so that a branch does not compute them.
    bht_mask: usize,
    hash_shift: u32,
    /// Outcomes of the last 8 conditional branches, the newest in bit 7 (Rocket's
    /// `history := Cat(taken, history >> 1)`).
    history: u8,
    btb: Btb,
    /// The BTB's entries less one (a power of two).
    btb_mask: usize,
    ras: Box<[u64]>,
    ras_top: usize,
    ras_len: usize,
}

/// Where a translated trace finds the predictor's history and its hash table
/// (`jit/emit.rs`; the tables' words it is given at each call, `BranchPred::tables`).
pub(crate) mod layout {
    pub(crate) const HISTORY: i32 = std::mem::offset_of!(super::BranchPred, history) as i32;
    pub(crate) static HASH: &[u8; 256] = &super::HISTORY_HASH;
}

/// The BTB's entries: `Narrow` while every pc and target stored fits in 32 bits (pc in
/// the high half, target in the low; `EMPTY` marks an unused slot, and a pair that would
/// pack to it goes wide), `Wide` (pc, target) pairs after. A slot's index is the same in
/// both.
#[derive(Hash)]
enum Btb {
    Narrow(Box<[u64]>),
    Wide(Box<[(u64, u64)]>),
}

/// `BranchPred::bht_slot`'s hash of each history: Rocket's `(history * 221) >> 5`, 3 bits,
/// looked up rather than multiplied at every branch.
const HISTORY_HASH: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut h = 0;
    while h < 256 {
        t[h] = ((221 * h as u32) >> 5) as u8 & 7;
        h += 1;
    }
    t
};

/// An unused narrow slot.
const EMPTY: u64 = u64::MAX;

/// `(pc, target)` packed in one word, if both fit and the word is not `EMPTY`.
#[inline(always)]
pub(crate) fn pack(pc: u64, target: u64) -> Option<u64> {
    let w = pc << 32 | target;
    (pc >> 32 == 0 && target >> 32 == 0 && w != EMPTY).then_some(w)
}

/// The pc's part of a BHT index (`BranchPred::bht_slot`) for a table of `2^bits` counters:
/// Rocket's fetch-packet address folded to the table's width. Also a translated trace's,
/// which computes it when translating (`jit/emit.rs`).
#[inline(always)]
pub(crate) fn bht_pc_part(pc: u64, bits: u32) -> u64 {
    let hi = pc >> 2;
    hi ^ (hi >> bits) & 3
}

/// The BTB slot of `pc` in a table of `mask + 1` entries (`BranchPred::btb_slot`, and a
/// translated trace's).
#[inline(always)]
pub(crate) fn btb_index(pc: u64, mask: usize) -> usize {
    (pc >> 1) as usize & mask
}

impl Btb {
    fn new(n: usize) -> Btb {
        Btb::Narrow(vec![EMPTY; n].into_boxed_slice())
    }

    /// The target slot `i` holds for `pc`, if it holds `pc`.
    #[inline(always)]
    fn get(&self, i: usize, pc: u64) -> Option<u64> {
        match self {
            Btb::Narrow(e) => {
                let w = e[i];
                (w != EMPTY && w >> 32 == pc).then_some(w & 0xffff_ffff)
            }
            Btb::Wide(e) => {
                let (at, target) = e[i];
                (at == pc).then_some(target)
            }
        }
    }

    #[inline(always)]
    fn set(&mut self, i: usize, pc: u64, target: u64) {
        match (&mut *self, pack(pc, target)) {
            (Btb::Narrow(e), Some(w)) => e[i] = w,
            (Btb::Wide(e), _) => e[i] = (pc, target),
            (Btb::Narrow(_), None) => self.widen_with(i, pc, target),
        }
    }

    /// From packed words to full pairs, keeping every entry, then slot `i` set.
    #[cold]
    #[inline(never)]
    fn widen_with(&mut self, i: usize, pc: u64, target: u64) {
        if let Btb::Narrow(e) = self {
            let wide = e.iter().map(|&w| if w == EMPTY { (u64::MAX, 0) } else { (w >> 32, w & 0xffff_ffff) });
            let mut wide: Box<[(u64, u64)]> = wide.collect();
            wide[i] = (pc, target);
            *self = Btb::Wide(wide);
        }
    }
}

fn pow2(n: usize) -> usize {
    n.next_power_of_two().max(1)
}

impl BranchPred {
    pub fn new(bht: usize, btb: usize, ras: usize) -> BranchPred {
        let bht = pow2(bht);
        BranchPred {
            bht: vec![0; bht.div_ceil(64)].into_boxed_slice(),
            bht_bits: bht.trailing_zeros(),
            bht_mask: bht - 1,
            hash_shift: bht.trailing_zeros().saturating_sub(3),
            history: 0,
            btb: Btb::new(pow2(btb)),
            btb_mask: pow2(btb) - 1,
            ras: vec![0; ras.max(1)].into_boxed_slice(),
            ras_top: 0,
            ras_len: 0,
        }
    }

    /// What a translated trace is made for: log2 of the BHT's entries, where the history's
    /// hash goes in an index, the BTB's mask.
    pub(crate) fn shape(&self) -> (u32, u32, usize) {
        (self.bht_bits, self.hash_shift, self.btb_mask)
    }

    /// The BHT's words and the packed BTB's, for a translated trace that reads and writes
    /// them itself (`jit/`); `None` once the BTB holds full pairs.
    #[inline(always)]
    pub(crate) fn tables(&mut self) -> Option<(*mut u64, *mut u64)> {
        match &mut self.btb {
            Btb::Narrow(e) => Some((self.bht.as_mut_ptr(), e.as_mut_ptr())),
            Btb::Wide(_) => None,
        }
    }

    #[inline]
    fn btb_slot(&self, pc: u64) -> usize {
        btb_index(pc, self.btb_mask)
    }

    /// BTB prediction for `pc`, if it holds one.
    #[inline]
    fn btb(&self, pc: u64) -> Option<u64> {
        self.btb.get(self.btb_slot(pc), pc)
    }

    #[inline(always)]
    fn btb_set(&mut self, pc: u64, target: u64) {
        let i = self.btb_slot(pc);
        self.btb.set(i, pc, target);
    }

    /// Rocket's `BHT.index`: the fetch packet's address (4 bytes) folded to the table's
    /// width, XOR 3 bits of the history hashed by a multiply (221 = floor(sqrt(3)/2 * 2^8)),
    /// in the index's top bits.
    #[inline]
    fn bht_slot(&self, pc: u64) -> usize {
        let addr = bht_pc_part(pc, self.bht_bits) as usize;
        let hash = HISTORY_HASH[self.history as usize] as usize;
        (addr ^ hash << self.hash_shift) & self.bht_mask
    }

    /// Conditional branch at `pc`, resolved `taken` to `target`. Returns true if mispredicted.
    #[inline]
    pub fn branch(&mut self, pc: u64, taken: bool, target: u64) -> bool {
        self.branch_inline(pc, taken, target)
    }

    /// `branch`'s body, always inlined where it is called (the fast engine's line loop,
    /// `fast.rs`). The common case, a packed BTB with a pc and a target below 4 GiB (less
    /// one), reads each table once without bounds checks; any other goes through
    /// `Btb::get` and `Btb::set`.
    #[inline(always)]
    pub fn branch_inline(&mut self, pc: u64, taken: bool, target: u64) -> bool {
        let i = self.bht_slot(pc);
        let bit = 1u64 << (i % 64);
        debug_assert!(i / 64 < self.bht.len());
        // SAFETY: `bht_slot` is below 2^bht_bits, the counters `bht` holds (`new`).
        let w = unsafe { self.bht.get_unchecked_mut(i / 64) };
        let counter = *w & bit != 0;
        *w = if taken { *w | bit } else { *w & !bit };
        self.history = (taken as u8) << 7 | self.history >> 1;
        let slot = self.btb_slot(pc);
        // A branch's pc and target are even (instructions are 2-byte aligned, a branch's
        // offset is even), so `EMPTY`'s odd high half is never `pc` and no pair packs to
        // `EMPTY`: below 4 GiB is the whole test (one shift, where `< EMPTY >> 32` took a
        // constant made in two instructions).
        debug_assert!((pc | target) & 1 == 0, "odd branch pc {pc:#x} or target {target:#x}");
        let held = match &mut self.btb {
            Btb::Narrow(e) if (pc | target) >> 32 == 0 => {
                debug_assert!(slot < e.len());
                // SAFETY: `btb_slot` is masked by `btb_mask`, the table's length less one.
                let e = unsafe { e.get_unchecked_mut(slot) };
                let held = *e >> 32 == pc;
                if taken {
                    *e = pc << 32 | target;
                }
                held
            }
            _ => self.branch_btb_slow(slot, pc, taken, target),
        };
        (counter && held) != taken
    }

    /// `branch_inline`'s BTB part outside its common case: whether the BTB held `pc`, and
    /// a taken branch's entry set.
    #[cold]
    #[inline(never)]
    fn branch_btb_slow(&mut self, slot: usize, pc: u64, taken: bool, target: u64) -> bool {
        let held = self.btb.get(slot, pc).is_some();
        if taken {
            self.btb.set(slot, pc, target);
        }
        held
    }

    /// Direct jump; `link`: it is a call (rd = ra/t0). Returns true if mispredicted.
    /// Always inlined: the packed BTB's code made the compiler keep it a call.
    #[inline(always)]
    pub fn jal(&mut self, pc: u64, target: u64, link: Option<u64>) -> bool {
        if let Some(ret) = link {
            self.push(ret);
        }
        let hit = self.btb(pc) == Some(target);
        if !hit {
            self.btb_set(pc, target);
        }
        !hit
    }

    /// Indirect jump. `ret`: a return (`jalr x0, 0(ra)`), predicted by the RAS.
    pub fn jalr(&mut self, pc: u64, target: u64, ret: bool, link: Option<u64>) -> bool {
        let predicted = if ret { self.pop() } else { self.btb(pc) };
        if let Some(r) = link {
            self.push(r);
        }
        if !ret {
            self.btb_set(pc, target);
        }
        predicted != Some(target)
    }

    fn push(&mut self, addr: u64) {
        self.ras_top = (self.ras_top + 1) % self.ras.len();
        self.ras[self.ras_top] = addr;
        self.ras_len = (self.ras_len + 1).min(self.ras.len());
    }

    fn pop(&mut self) -> Option<u64> {
        if self.ras_len == 0 {
            return None;
        }
        let v = self.ras[self.ras_top];
        self.ras_top = (self.ras_top + self.ras.len() - 1) % self.ras.len();
        self.ras_len -= 1;
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_branch_learns_taken() {
        let mut bp = BranchPred::new(512, 32, 6);
        // Until 8 taken outcomes fill the history, each step may index a fresh counter.
        let warm: usize = (0..8).map(|_| bp.branch(0x8000_0010, true, 0x8000_0000) as usize).sum();
        assert!(warm <= 8, "{warm}");
        let miss: usize = (0..100).map(|_| bp.branch(0x8000_0010, true, 0x8000_0000) as usize).sum();
        assert_eq!(miss, 0);
        assert!(bp.branch(0x8000_0010, false, 0));
    }

    #[test]
    fn an_inner_loop_of_two_iterations_is_learned_from_the_history() {
        // rxcount's message loop: wait-exit (not taken), length test (not taken), the copy
        // loop's branch taken once then not, the outer loop's branch taken.
        let mut bp = BranchPred::new(512, 32, 6);
        let message = |bp: &mut BranchPred| {
            [(0xfc, false), (0x10e, false), (0x116, true), (0x116, false), (0x120, true)]
                .iter()
                .map(|&(pc, t)| bp.branch(0x8000_0000 + pc, t, 0x8000_0000) as usize)
                .sum::<usize>()
        };
        (0..8).for_each(|_| {
            message(&mut bp);
        });
        let miss: usize = (0..64).map(|_| message(&mut bp)).sum();
        assert_eq!(miss, 0, "a counter per history tells the two iterations apart");
    }

    #[test]
    fn ras_predicts_returns() {
        let mut bp = BranchPred::new(512, 32, 6);
        bp.jal(0x100, 0x200, Some(0x104));
        assert!(!bp.jalr(0x208, 0x104, true, None));
        assert!(bp.jalr(0x208, 0x104, true, None));
    }

    /// The layout this one replaced: a byte per BHT counter, a (pc, target) pair per BTB
    /// entry. Only the tables; the history and the RAS are the predictor's own.
    struct Bytes {
        bht: Vec<u8>,
        btb: Vec<(u64, u64)>,
    }

    impl Bytes {
        fn btb(&self, pc: u64) -> Option<u64> {
            let (at, target) = self.btb[(pc >> 1) as usize % self.btb.len()];
            (at == pc).then_some(target)
        }

        /// A conditional branch, as `BranchPred::branch` did with slot `i` of the BHT.
        fn branch(&mut self, i: usize, pc: u64, taken: bool, target: u64) -> bool {
            let predicted = self.bht[i] != 0 && self.btb(pc).is_some();
            self.bht[i] = taken as u8;
            if taken {
                let n = self.btb.len();
                self.btb[(pc >> 1) as usize % n] = (pc, target);
            }
            predicted != taken
        }

        fn jal(&mut self, pc: u64, target: u64) -> bool {
            let hit = self.btb(pc) == Some(target);
            let n = self.btb.len();
            self.btb[(pc >> 1) as usize % n] = (pc, target);
            !hit
        }
    }

    /// Random branches and jumps over `pcs` code addresses from `base`, targets anywhere
    /// in `span` bytes from it: both layouts predict the same at every step.
    fn replay(base: u64, span: u64, pcs: u64, steps: usize) {
        let mut rng = 0x2545_f491u32;
        let mut next = move |m: u64| crate::cache::xorshift(&mut rng) as u64 % m;
        for (bht, btb) in [(512, 32), (64, 8), (2048, 64)] {
            let mut bp = BranchPred::new(bht, btb, 6);
            let mut old = Bytes { bht: vec![0; bht], btb: vec![(u64::MAX, 0); btb] };
            for step in 0..steps {
                let pc = base + 2 * next(pcs);
                let target = base.wrapping_add(2 * next(span / 2));
                let (new, was) = if next(4) == 0 {
                    (bp.jal(pc, target, None), old.jal(pc, target))
                } else {
                    let taken = next(3) != 0;
                    let i = bp.bht_slot(pc);
                    (bp.branch(pc, taken, target), old.branch(i, pc, taken, target))
                };
                assert_eq!(new, was, "step {step}: pc {pc:#x} -> {target:#x}, BHT {bht}, BTB {btb}");
            }
        }
    }

    #[test]
    fn packed_tables_predict_as_bytes_and_pairs_did() {
        replay(0x8000_0000, 1 << 12, 300, 20_000);
    }

    #[test]
    fn a_target_past_4_gib_widens_the_btb_and_keeps_its_entries() {
        // Targets across the 4 GiB boundary: the first one above it widens the BTB mid-trace.
        replay(0xffff_f000, 1 << 13, 300, 20_000);
        let mut bp = BranchPred::new(512, 32, 6);
        bp.jal(0x8000_0000, 0x8000_0100, None);
        assert!(matches!(bp.btb, Btb::Narrow(_)));
        bp.jal(0x8000_0004, 0x1_0000_0000, None);
        assert!(matches!(bp.btb, Btb::Wide(_)));
        assert!(!bp.jal(0x8000_0000, 0x8000_0100, None), "kept when widened");
        assert!(!bp.jal(0x8000_0004, 0x1_0000_0000, None));
    }

    #[test]
    fn a_pair_that_packs_to_the_empty_mark_is_kept_wide() {
        let mut bp = BranchPred::new(512, 32, 6);
        bp.jal(0xffff_ffff, 0xffff_ffff, None);
        assert!(matches!(bp.btb, Btb::Wide(_)));
        assert!(!bp.jal(0xffff_ffff, 0xffff_ffff, None));
    }
}
