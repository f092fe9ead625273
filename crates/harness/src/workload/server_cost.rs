//! What the server's cores spent on a load run, from the simulator's counters: summed over
//! the cores, from the first request's send time (`load.start_us`) to the run's end, so that
//! a server's start-up work (a store's preloading) is left out.

use nanopu_cluster::Simulation;

/// Counter totals over the server's cores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerCost {
    pub instructions: u64,
    /// Cycles not spent blocked on an empty netRX (a server that blocks in its read of
    /// `x30` instead of polling is busy exactly for these).
    pub busy_cycles: u64,
    pub dcache_misses: u64,
    pub llc_misses: u64,
}

impl ServerCost {
    /// The counters of the single node's cores now.
    pub fn of(sim: &Simulation) -> ServerCost {
        let mut c = ServerCost::default();
        for core in &sim.node().cores {
            let s = core.stats();
            c.instructions += s.instret;
            c.busy_cycles += core.cycle().saturating_sub(s.stall_netrx);
            c.dcache_misses += s.dcache_misses;
            c.llc_misses += s.llc_misses;
        }
        c
    }

    /// What was spent between `before` and `self`.
    pub fn since(self, before: ServerCost) -> ServerCost {
        ServerCost {
            instructions: self.instructions - before.instructions,
            busy_cycles: self.busy_cycles.saturating_sub(before.busy_cycles),
            dcache_misses: self.dcache_misses - before.dcache_misses,
            llc_misses: self.llc_misses - before.llc_misses,
        }
    }

    /// Per request, for `n` requests: instructions, busy cycles, D-cache and LLC misses.
    pub fn per(self, n: usize) -> [f64; 4] {
        let d = n.max(1) as f64;
        [self.instructions, self.busy_cycles, self.dcache_misses, self.llc_misses].map(|x| x as f64 / d)
    }
}
