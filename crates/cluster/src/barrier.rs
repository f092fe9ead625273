//! A barrier that spins before it yields.
//!
//! Partitions meet twice per window, and a window of a loaded network is a few hundred
//! microseconds of work. `std::sync::Barrier` puts waiting threads to sleep on a futex and
//! waking one takes tens of microseconds on a virtual machine, a fifth of the host time of
//! `nanopu bench network` on two threads. Spinning answers within a cache-line transfer.
//! A thread that spins long (more threads than host cores) yields its core to the others.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicUsize, Ordering::AcqRel, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};

/// Spins before each yield: a few microseconds, longer than a window's usual imbalance.
const SPINS: u32 = 1 << 12;

pub(crate) struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    /// Incremented by the last thread to arrive, which releases the others.
    generation: AtomicUsize,
}

impl SpinBarrier {
    pub fn new(threads: usize) -> SpinBarrier {
        SpinBarrier { threads, arrived: AtomicUsize::new(0), generation: AtomicUsize::new(0) }
    }

    /// Wait until every thread has called `wait`. What a thread wrote before is visible to
    /// every thread after (the arrivals chain through `arrived` to the last thread, whose
    /// release of `generation` the others acquire).
    pub fn wait(&self) {
        let generation = self.generation.load(Acquire);
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.threads {
            self.arrived.store(0, Relaxed);
            self.generation.fetch_add(1, Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Acquire) == generation {
            if spins < SPINS {
                spins += 1;
                spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// No thread passes round r before every thread has finished round r - 1's write.
    #[test]
    fn rounds_do_not_overlap() {
        let (b, sum) = (SpinBarrier::new(4), AtomicU64::new(0));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for round in 1..=200u64 {
                        sum.fetch_add(1, Relaxed);
                        b.wait();
                        assert_eq!(sum.load(Relaxed), 4 * round);
                        b.wait();
                    }
                });
            }
        });
    }
}
