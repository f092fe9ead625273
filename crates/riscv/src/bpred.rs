//! Branch prediction in the spirit of Rocket's frontend (rocket-chip `BTBParams`): a BTB
//! that must hit for a taken prediction, a table of 2-bit counters for direction, and a
//! return address stack. Simplifications: the BHT is indexed by PC only (Rocket mixes in
//! global history) and the BTB is direct-mapped (Rocket's is fully associative).

/// Predictor state of one core.
pub struct BranchPred {
    bht: Box<[u8]>,
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
            bht: vec![1; pow2(bht)].into_boxed_slice(),
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

    /// Conditional branch at `pc` resolved `taken` to `target`. Returns true if mispredicted.
    #[inline]
    pub fn branch(&mut self, pc: u64, taken: bool, target: u64) -> bool {
        let i = (pc >> 1) as usize & (self.bht.len() - 1);
        let ctr = self.bht[i];
        let predicted = ctr >= 2 && self.btb(pc).is_some();
        self.bht[i] = if taken { (ctr + 1).min(3) } else { ctr.saturating_sub(1) };
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
        let miss: usize = (0..100).map(|_| bp.branch(0x8000_0010, true, 0x8000_0000) as usize).sum();
        assert!(miss <= 2, "{miss}");
        assert!(bp.branch(0x8000_0010, false, 0));
    }

    #[test]
    fn ras_predicts_returns() {
        let mut bp = BranchPred::new(512, 32, 6);
        bp.jal(0x100, 0x200, Some(0x104));
        assert!(!bp.jalr(0x208, 0x104, true, None));
        assert!(bp.jalr(0x208, 0x104, true, None));
    }
}
