//! Hints to the processor.

/// Start loading the cache lines of `r` (up to 128 bytes) without waiting for them: for data
/// known to be needed soon and likely not cached. Only a hint; results never depend on it.
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = r as *const T as *const i8;
        // SAFETY: a prefetch reads nothing architecturally and never faults, whatever the
        // address; SSE is part of the x86_64 baseline.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p);
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
