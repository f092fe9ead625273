//! The node's table of the stores its cores have shown each other (docs/models/node.md
//! "Cores sharing memory"): for each line, the cycle of the latest store to it, which core
//! made it, and the latest store by any other core. A core that misses on a line stored by
//! another core at a cycle still in its own future waits until then (`core/coherence.rs`).
//!
//! One table per node, not one per core: each store is entered once, however many cores
//! observe it, and a reader asks for the latest store by a core other than itself (the
//! two figures kept per line answer that for every reader). A store whose cycle a reader
//! has already passed makes it wait for nothing, so what each reader saw when the store
//! was published needs no keeping: its clock only moves forward.

use nanopu_sim::hash::IntMap;

/// The latest stores to one line.
#[derive(Clone, Copy)]
struct Latest {
    /// Cycle of the latest store, and the core that made it.
    cycle: u64,
    by: usize,
    /// Cycle of the latest store by any core but `by` (0: none).
    other: u64,
}

/// Lines stored to by the node's cores while another core of the node was running.
#[derive(Default)]
pub struct StoreTable {
    lines: IntMap<u64, Latest>,
    /// `lines`' size after it was last pruned (it is pruned when it has doubled).
    pruned_len: usize,
}

impl StoreTable {
    /// Core `by` stored to `line` at `cycle`.
    pub fn record(&mut self, by: usize, line: u64, cycle: u64) {
        let e = self.lines.entry(line).or_insert(Latest { cycle, by, other: 0 });
        if e.by == by {
            e.cycle = e.cycle.max(cycle);
        } else if cycle > e.cycle {
            *e = Latest { cycle, by, other: e.cycle };
        } else {
            e.other = e.other.max(cycle);
        }
    }

    /// Cycle of the latest store to `line` by a core other than `reader` (0: none).
    #[inline(always)]
    pub fn latest_by_other(&self, line: u64, reader: usize) -> u64 {
        if self.lines.is_empty() {
            return 0;
        }
        self.lines.get(&line).map_or(0, |e| if e.by == reader { e.other } else { e.cycle })
    }

    /// Forget stores no core can wait for any more: every core that may still read is at
    /// `earliest` or later. Done only once the table has doubled, so its cost is spread.
    pub fn prune(&mut self, earliest: u64) {
        if self.lines.len() >= 2 * self.pruned_len.max(128) {
            self.lines.retain(|_, e| e.cycle > earliest);
            self.pruned_len = self.lines.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_sees_the_latest_store_of_the_others_not_its_own() {
        let mut t = StoreTable::default();
        t.record(0, 7, 100);
        assert_eq!((t.latest_by_other(7, 0), t.latest_by_other(7, 1)), (0, 100));
        t.record(1, 7, 300);
        t.record(0, 7, 200);
        assert_eq!((t.latest_by_other(7, 0), t.latest_by_other(7, 1), t.latest_by_other(7, 2)), (300, 200, 300));
        t.record(2, 7, 250);
        assert_eq!((t.latest_by_other(7, 1), t.latest_by_other(7, 3)), (250, 300));
        assert_eq!(t.latest_by_other(8, 1), 0);
    }

    #[test]
    fn pruning_keeps_the_stores_a_core_may_still_wait_for() {
        let mut t = StoreTable::default();
        (0..256).for_each(|line| t.record(0, line, line));
        t.prune(200);
        assert_eq!(t.lines.len(), 55);
        assert_eq!((t.latest_by_other(199, 1), t.latest_by_other(201, 1)), (0, 201));
    }
}
