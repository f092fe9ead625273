//! FASED's DDR3 timing as the prototype's FireSim build ran it (docs/models/node.md "Memory
//! system"): the latency of an LLC miss's read from the bank state it finds.
//!
//! Each bank of each rank keeps its open row (open-page policy). A read to the open row
//! issues its CAS at once; to a precharged bank it activates first (tRCD); to a bank with
//! another row open it precharges, then activates (tRP + tRCD). The data comes back tCAS +
//! tAL + FASED's backend latency after the CAS (`FRFCFSModel.scala`: `readLatency`), and a
//! CAS may follow an activate after tRCD - tAL (`DramCommon.scala`, bank state machine).
//!
//! Refresh (l-nic/firesim c2d8e3a4 `DramCommon.scala` `RankStateTracker`, `RefreshUnit`):
//! every rank counts cycles from reset and wants a refresh each time its counter reaches
//! tREFI (then restarts from 0, so every tREFI + 1 cycles, all ranks in step); the refresh
//! unit, ahead of every other command, precharges the rank's open banks and issues REF, one
//! command a cycle, ranks in priority order (rank 0 first); the rank then takes no activate
//! for tRFC. So a read to a rank in refresh waits for its end, and finds its bank closed.
//!
//! Writes (the LLC's dirty victims) leave their row open in their bank as a read does and
//! cost the reader nothing: FASED's LLC issues the victim's write beside the refill's read
//! (`LastLevelCache.scala`: `s2_aw_mem` and `s2_ar_mem` enqueued together), and the model
//! orders it after the read.
//!
//! Not modelled (the model's misses do not overlap, so few of these would bind): queueing
//! and first-ready reordering between requests, the other inter-command constraints (tRAS,
//! tRC, tRRD, tFAW, tRTP, tCCD, tWTR, tCMD), a write's own bank and bus time.

use crate::params::Ddr3Params;
use std::sync::Arc;

/// No row open in a bank.
const CLOSED: u64 = u64::MAX;

/// The banks of one node's DRAM.
pub struct Dram {
    /// Shared by the nodes of one configuration (`NodeMem::sharing`): 96 bytes in each.
    t: Arc<Ddr3Params>,
    /// Open row per (rank, bank); empty until the first access.
    open: Vec<u64>,
    /// Cycle of the last access per (rank, bank), to tell whether a refresh closed it since.
    last: Vec<u64>,
}

impl Dram {
    pub fn new(t: impl Into<Arc<Ddr3Params>>) -> Dram {
        Dram { t: t.into(), open: Vec::new(), last: Vec::new() }
    }

    /// Cycles from a read of physical address `addr` reaching the controller at cycle `at`
    /// to its data leaving the memory model; the bank keeps the row open if the policy says
    /// so.
    pub fn read(&mut self, addr: u64, at: u64) -> u64 {
        let (bank, row) = self.locate(addr);
        let wait = self.refresh(bank, addr, at);
        let keep = if self.t.open_page { row } else { CLOSED };
        let was = std::mem::replace(&mut self.open[bank], keep);
        wait + self.activate_cycles(was, row) + self.t.t_cas + self.t.t_al + self.t.backend_latency
    }

    /// A write of `addr` at cycle `at` (an LLC victim's): its row is left as a read's.
    pub fn write(&mut self, addr: u64, at: u64) {
        self.read(addr, at);
    }

    /// Cycles a request to `bank` at cycle `at` waits for its rank's refresh, closing the
    /// bank if a refresh began since its last access.
    fn refresh(&mut self, bank: usize, addr: u64, at: u64) -> u64 {
        let rank = (addr >> self.t.rank_offset) & self.t.rank_mask;
        let Some((start, end)) = self.refresh_window(rank, at) else {
            self.last[bank] = self.last[bank].max(at);
            return 0;
        };
        if self.last[bank] < start {
            self.open[bank] = CLOSED;
        }
        let wait = end.saturating_sub(at);
        self.last[bank] = self.last[bank].max(at + wait);
        wait
    }

    /// The latest refresh of `rank` to begin at or before cycle `at`: (its first precharge,
    /// the cycle its rank may activate again).
    fn refresh_window(&self, rank: u64, at: u64) -> Option<(u64, u64)> {
        let t = &self.t;
        let first = t.t_refi + rank;
        if !t.refresh || t.t_refi == 0 || at < first {
            return None;
        }
        let start = first + (at - first) / (t.t_refi + 1) * (t.t_refi + 1);
        // Open-page leaves rows open: the rank's banks are precharged before the REF.
        let pre = if t.open_page { t.t_rp } else { 0 };
        Some((start, start + pre + t.t_rfc))
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
            self.last = vec![0; self.open.len()];
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

    /// The run's timings with refresh off, to time the bank states alone.
    fn no_refresh() -> Ddr3Params {
        Ddr3Params { refresh: false, ..Ddr3Params::default() }
    }

    /// The run's timings with refresh.
    fn refreshing() -> Ddr3Params {
        Ddr3Params { refresh: true, ..Ddr3Params::default() }
    }

    #[test]
    fn closed_bank_then_row_hit_then_conflict() {
        let mut d = Dram::new(no_refresh());
        // tRCD + tCAS + backend = 14 + 14 + 2 on a bank nothing has opened.
        assert_eq!(d.read(BASE, 0), 30);
        // Same 8 KiB row: CAS at once.
        assert_eq!(d.read(BASE + 4096, 0), 16);
        // Same bank and rank, next row (bit 18): precharge first.
        assert_eq!(d.read(BASE + (1 << 18), 0), 44);
        // Another bank (bit 13) is still closed.
        assert_eq!(d.read(BASE + (1 << 13), 0), 30);
        // Another rank (bit 16) too.
        assert_eq!(d.read(BASE + (1 << 16), 0), 30);
    }

    #[test]
    fn a_read_meeting_a_refresh_waits_for_it_and_finds_its_bank_closed() {
        let mut d = Dram::new(refreshing());
        assert_eq!(d.read(BASE, 100), 30);
        assert_eq!(d.read(BASE, 7_799), 16, "row still open just before the first refresh");
        // Rank 0 refreshes from cycle 7,800: precharge (tRP 14) then tRFC 160, to 7,974.
        assert_eq!(d.read(BASE, 7_800), 174 + 30);
        assert_eq!(d.read(BASE, 7_973), 1 + 16, "reopened by the read that waited");
        // Rank 1 (bit 16) starts a cycle later (one command a cycle, rank 0 first).
        assert_eq!(d.read(BASE + (1 << 16), 7_801), 174 + 30);
        // Every tREFI + 1 cycles: the next at 15,601; a bank idle since is closed.
        assert_eq!(d.read(BASE, 15_600), 16);
        assert_eq!(d.read(BASE, 16_000), 30);
        assert_eq!(d.read(BASE + (1 << 13), 15_601 + 10), 164 + 30);
        // tREFI = 0 turns it off, as in FASED.
        let mut d = Dram::new(Ddr3Params { t_refi: 0, ..refreshing() });
        assert_eq!(d.read(BASE, 7_800), 30);
    }

    #[test]
    fn a_write_opens_its_row() {
        let mut d = Dram::new(no_refresh());
        d.write(BASE + (1 << 18), 0);
        assert_eq!(d.read(BASE + (1 << 18), 0), 16);
        assert_eq!(d.read(BASE, 0), 44);
    }

    #[test]
    fn closed_page_policy_activates_every_time() {
        let t = Ddr3Params { open_page: false, ..no_refresh() };
        let mut d = Dram::new(t.clone());
        assert_eq!(d.read(BASE, 0), 30);
        assert_eq!(d.read(BASE, 0), 30);
    }

    #[test]
    fn additive_latency_moves_cycles_but_not_the_total() {
        let t = Ddr3Params { t_al: 4, ..no_refresh() };
        assert_eq!(Dram::new(t.clone()).read(BASE, 0), 30);
    }
}
