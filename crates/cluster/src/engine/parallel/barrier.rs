//! A barrier that spins before it sleeps.
//!
//! Partitions meet twice per window, and a window of a loaded network is a few hundred
//! microseconds of work. `std::sync::Barrier` puts waiting threads to sleep on a futex and
//! waking one takes tens of microseconds on a virtual machine, a tenth of the host time of
//! `nanopu bench network` on two threads. Spinning answers within a cache-line transfer.
//! A thread that spins for long (more threads than host cores, or a partition with much
//! more work than the others) goes to sleep as before, so that it does not take a core from
//! a thread with work to do.

use std::hint::spin_loop;
use std::sync::atomic::{
    AtomicUsize, Ordering::AcqRel, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::sync::{Condvar, Mutex};

/// Spins, then yields, before sleeping: together a few hundred microseconds, longer than a
/// window's usual imbalance.
const SPINS: u32 = 1 << 12;
const YIELDS: u32 = 1 << 7;

pub(crate) struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    /// Incremented by the last thread to arrive, which releases the others.
    generation: AtomicUsize,
    /// Threads asleep (changed and read under the lock, so a wake-up is never lost).
    sleepers: Mutex<usize>,
    wake: Condvar,
}

impl SpinBarrier {
    pub fn new(threads: usize) -> SpinBarrier {
        let (arrived, generation) = (AtomicUsize::new(0), AtomicUsize::new(0));
        SpinBarrier { threads, arrived, generation, sleepers: Mutex::new(0), wake: Condvar::new() }
    }

    /// The threads that meet here.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Wait until every thread has called `wait`. What a thread wrote before is visible to
    /// every thread after (the arrivals chain through `arrived` to the last thread, whose
    /// release of `generation` the others acquire).
    pub fn wait(&self) {
        let generation = self.generation.load(Acquire);
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.threads {
            self.arrived.store(0, Relaxed);
            let sleepers = self.sleepers.lock().expect("barrier");
            self.generation.fetch_add(1, Release);
            if *sleepers > 0 {
                self.wake.notify_all();
            }
            return;
        }
        for _ in 0..SPINS {
            if self.generation.load(Acquire) != generation {
                return;
            }
            spin_loop();
        }
        for _ in 0..YIELDS {
            if self.generation.load(Acquire) != generation {
                return;
            }
            std::thread::yield_now();
        }
        self.sleep(generation);
    }

    /// Wait on the condition variable until `generation` has passed.
    #[cold]
    fn sleep(&self, generation: usize) {
        let mut sleepers = self.sleepers.lock().expect("barrier");
        *sleepers += 1;
        while self.generation.load(Acquire) == generation {
            sleepers = self.wake.wait(sleepers).expect("barrier");
        }
        *sleepers -= 1;
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
