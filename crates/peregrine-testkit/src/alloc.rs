//! [`CountingAllocator`] proves "no allocation on the hot path". A test binary installs
//! it once:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: peregrine_testkit::CountingAllocator = peregrine_testkit::CountingAllocator;
//! ```
//!
//! and asserts `allocations_during(|| hot_path()) == 0`. The count is per thread, so the
//! test harness's own threads (its output capture, its "running for over 60 seconds"
//! notice) never leak into a measurement.
#![allow(
    unsafe_code,
    reason = "a global allocator must implement the unsafe GlobalAlloc trait; every method \
              forwards to System unchanged"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    // `const`-initialised: touching it never allocates, so the allocator cannot recurse.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// The system allocator plus a per-thread count of allocations and reallocations.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAllocator;

fn bump() {
    // `try_with`: during thread teardown the thread-local may be gone; then we just
    // do not count.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every method forwards to `System` with the caller's arguments, so `System`
// upholds the `GlobalAlloc` contract; the only addition is a thread-local counter bump,
// which never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` (via `alloc`/`realloc` above) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: forwarded unchanged; `ptr` came from `System` with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations (and reallocations) made by the calling thread so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Allocations made by the calling thread while `f` runs.
pub fn allocations_during(f: impl FnOnce()) -> u64 {
    let before = allocations();
    f();
    allocations() - before
}
