//! Software prefetch: start loading a cache line that will be read soon.
//!
//! A book of a million resting orders does not fit in cache: a cancel or a replace
//! reads an id-table entry, the order's node, its two neighbours and one or two price
//! levels, each possibly a miss to DRAM. Issuing the loads early lets them overlap
//! (see `OrderBook::prefetch` and the measurements in `docs/performance.md`).

/// Hints the CPU to bring the cache line holding `r` into L1. Never faults, reads
/// nothing architecturally and changes nothing; a no-op on other architectures.
#[inline(always)]
#[allow(unsafe_code)] // reason: the prefetch intrinsic is `unsafe` only because of its target feature
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` requires SSE, which is part of the x86_64 baseline (every
    // x86_64 CPU has it, and the target enables it). The instruction is a hint: it
    // never faults and performs no architectural read, so any address is fine; this
    // one comes from a live reference anyway.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            (r as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
