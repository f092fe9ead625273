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

/// Predictor state of one core.
#[derive(Hash)]
pub struct BranchPred {
    bht: Box<[u8]>,
    /// Outcomes of the last 8 conditional branches, the newest in bit 7 (Rocket's
    /// `history := Cat(taken, history >> 1)`).
    history: u8,
    /// (branch PC, target) pairs, so that a lookup touches one host cache line.
    btb: Box<[(u64, u64)]>,
    ras: Box<[u64]>,
    ras_top: usize,
    ras_len: usize,
}

fn pow2(n: usize) -> usize {
    n.next_power_of_two().max(1)
}

impl BranchPred {
    pub fn new(bht: usize, btb: usize, ras: usize) -> BranchPred {
        BranchPred {
            bht: vec![0; pow2(bht)].into_boxed_slice(),
            history: 0,
            btb: vec![(u64::MAX, 0); pow2(btb)].into_boxed_slice(),
            ras: vec![0; ras.max(1)].into_boxed_slice(),
            ras_top: 0,
            ras_len: 0,
        }
    }

    #[inline]
    fn btb_slot(&self, pc: u64) -> usize {
        (pc >> 1) as usize & (self.btb.len() - 1)
    }

    /// BTB prediction for `pc`, if it holds one.
    #[inline]
    fn btb(&self, pc: u64) -> Option<u64> {
        let (at, target) = self.btb[self.btb_slot(pc)];
        (at == pc).then_some(target)
    }

    fn btb_set(&mut self, pc: u64, target: u64) {
        let i = self.btb_slot(pc);
        self.btb[i] = (pc, target);
    }

    /// Rocket's `BHT.index`: the fetch packet's address (4 bytes) folded to the table's
    /// width, XOR 3 bits of the history hashed by a multiply (221 = floor(sqrt(3)/2 * 2^8)),
    /// in the index's top bits.
    #[inline]
    fn bht_slot(&self, pc: u64) -> usize {
        let bits = self.bht.len().trailing_zeros();
        let hi = pc >> 2;
        let addr = (hi ^ (hi >> bits) & 3) as usize;
        let hash = ((221 * self.history as u32) >> 5) as usize & 7;
        (addr ^ hash << bits.saturating_sub(3)) & (self.bht.len() - 1)
    }

    /// Conditional branch at `pc` resolved `taken` to `target`. Returns true if mispredicted.
    #[inline]
    pub fn branch(&mut self, pc: u64, taken: bool, target: u64) -> bool {
        self.branch_inline(pc, taken, target)
    }

    /// `branch`'s body, always inlined where it is called (the fast engine's block loop,
    /// `fast.rs`, where the compiler had kept it a call of about 57 host instructions).
    #[inline(always)]
    pub fn branch_inline(&mut self, pc: u64, taken: bool, target: u64) -> bool {
        let i = self.bht_slot(pc);
        let predicted = self.bht[i] != 0 && self.btb(pc).is_some();
        self.bht[i] = taken as u8;
        self.history = (taken as u8) << 7 | self.history >> 1;
        if taken {
            self.btb_set(pc, target);
        }
        predicted != taken
    }

    /// Direct jump; `link`: it is a call (rd = ra/t0). Returns true if mispredicted.
    #[inline]
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
}
