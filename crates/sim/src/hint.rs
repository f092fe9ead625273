//! Hints to the processor.

/// Start loading the cache lines of `r` (up to 128 bytes) without waiting for them: for data
/// known to be needed soon and likely not cached (of a slice, its first 128 bytes). Only a
/// hint; results never depend on it. Inline: generic, it was left a call at every prefetch
/// (the fabric's at each hop that leaves a packet waiting: `nanopu bench network` 9 M fewer
/// host instructions inline, CHANGELOG).
#[inline]
pub fn prefetch<T: ?Sized>(r: &T) {
    let p = r as *const T as *const u8;
    prefetch_line(p);
    prefetch_line(p.wrapping_add(64));
}

/// Start loading the one cache line holding the byte at `p` (any address: nothing is read;
/// see `prefetch`): for a line found by arithmetic on a pointer, such as the reference
/// counts just before an `Arc`'s value.
#[inline]
pub fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing architecturally and never faults, whatever the
        // address; SSE is part of the x86_64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Start loading every cache line of `r`, whatever its size (see `prefetch`): for a
/// structure read all over soon after, such as a core's state before its run.
#[inline]
pub fn prefetch_all<T>(r: &T) {
    let p = r as *const T as *const u8;
    for off in (0..std::mem::size_of::<T>()).step_by(64) {
        prefetch_line(p.wrapping_add(off));
    }
}
