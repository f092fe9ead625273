//! FASED's DDR3 timing as the prototype's FireSim build ran it (docs/models/node.md "Memory
//! system"): the latency of an LLC miss's read from the bank state it finds.
//!
//! Each bank of each rank keeps its open row (open-page policy). A read to the open row
//! issues its CAS at once; to a precharged bank it activates first (tRCD); to a bank with
//! another row open it precharges, then activates (tRP + tRCD). The data comes back tCAS +
//! tAL + FASED's backend latency after the CAS (`FRFCFSModel.scala`: `readLatency`), and a
//! CAS may follow an activate after tRCD - tAL (`DramCommon.scala`, bank state machine).
//!
//! Not modelled (the model's misses do not overlap, so few of these would bind): queueing
//! and first-ready reordering between requests, the other inter-command constraints (tRAS,
//! tRC, tRRD, tFAW, tRTP, tCCD, tWTR, tCMD), refresh (tRFC every tREFI), and writes (L2
//! and LLC write-backs are not modelled).

use crate::params::Ddr3Params;

/// No row open in a bank.
const CLOSED: u64 = u64::MAX;

/// The banks of one node's DRAM.
pub struct Dram {
    t: Ddr3Params,
    /// Open row per (rank, bank); empty until the first read.
    open: Vec<u64>,
}

impl Dram {
    pub fn new(t: &Ddr3Params) -> Dram {
        Dram { t: t.clone(), open: Vec::new() }
    }

    /// Cycles from a read of physical address `addr` reaching the controller to its data
    /// leaving the memory model; the bank keeps the row open if the policy says so.
    pub fn read(&mut self, addr: u64) -> u64 {
        let (bank, row) = self.locate(addr);
        let keep = if self.t.open_page { row } else { CLOSED };
        let was = std::mem::replace(&mut self.open[bank], keep);
        self.activate_cycles(was, row) + self.t.t_cas + self.t.t_al + self.t.backend_latency
    }

    /// Cycles before the CAS can issue: none on a row hit, an activate on a closed bank,
    /// a precharge and an activate on a row conflict.
    fn activate_cycles(&self, open: u64, row: u64) -> u64 {
        let act = self.t.t_rcd.saturating_sub(self.t.t_al);
        match open {
            o if o == row => 0,
            CLOSED => act,
            _ => self.t.t_rp + act,
        }
    }

    /// (bank index across ranks, row) of `addr`, sizing the bank table on first use.
    fn locate(&mut self, addr: u64) -> (usize, u64) {
        let t = &self.t;
        let banks = (t.bank_mask + 1) as usize;
        if self.open.is_empty() {
            self.open = vec![CLOSED; banks * (t.rank_mask + 1) as usize];
        }
        let bank = (addr >> t.bank_offset) & t.bank_mask;
        let rank = (addr >> t.rank_offset) & t.rank_mask;
        (rank as usize * banks + bank as usize, (addr >> t.row_offset) & t.row_mask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: u64 = 0x8000_0000;

    #[test]
    fn closed_bank_then_row_hit_then_conflict() {
        let mut d = Dram::new(&Ddr3Params::default());
        // tRCD + tCAS + backend = 14 + 14 + 2 on a bank nothing has opened.
        assert_eq!(d.read(BASE), 30);
        // Same 8 KiB row: CAS at once.
        assert_eq!(d.read(BASE + 4096), 16);
        // Same bank and rank, next row (bit 18): precharge first.
        assert_eq!(d.read(BASE + (1 << 18)), 44);
        // Another bank (bit 13) is still closed.
        assert_eq!(d.read(BASE + (1 << 13)), 30);
        // Another rank (bit 16) too.
        assert_eq!(d.read(BASE + (1 << 16)), 30);
    }

    #[test]
    fn closed_page_policy_activates_every_time() {
        let t = Ddr3Params { open_page: false, ..Ddr3Params::default() };
        let mut d = Dram::new(&t);
        assert_eq!(d.read(BASE), 30);
        assert_eq!(d.read(BASE), 30);
    }

    #[test]
    fn additive_latency_moves_cycles_but_not_the_total() {
        let t = Ddr3Params { t_al: 4, ..Ddr3Params::default() };
        assert_eq!(Dram::new(&t).read(BASE), 30);
    }
}
