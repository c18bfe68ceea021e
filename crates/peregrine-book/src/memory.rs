//! Large preallocated tables: filled once, backed by transparent huge pages where the
//! kernel allows it.
//!
//! A book of a million orders touches its node arena, id table and levels at random.
//! With 4 KiB pages almost every such access also misses the TLB (a 64 MB arena is
//! 16,384 pages; the second-level TLB holds ~2,048), and the page walk is one more
//! dependent miss. Asking for 2 MiB pages (`madvise(MADV_HUGEPAGE)`, honoured when
//! `/sys/kernel/mm/transparent_hugepage/enabled` is `always` or `madvise`) makes the
//! same arena 32 TLB entries. Measured in `docs/performance.md`.

/// Below this size a table is left on normal pages.
const HUGE: usize = 2 << 20;

/// A `Vec` of `n` copies of `fill`, its memory advised as huge pages before it is
/// first written (the advice only applies to pages not yet faulted in).
pub(crate) fn filled_vec<T: Copy>(n: usize, fill: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise_huge(v.as_mut_ptr().cast::<u8>(), n * core::mem::size_of::<T>());
    v.resize(n, fill);
    v
}

/// Advises the 2 MiB-aligned interior of `[ptr, ptr + len)` as huge pages. Best
/// effort: errors (no THP support, an old kernel) are ignored.
#[allow(unsafe_code)] // reason: madvise takes a raw address range
fn advise_huge(ptr: *mut u8, len: usize) {
    if len < 2 * HUGE {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + len) / HUGE * HUGE;
    if end <= start {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: `[start, end)` lies inside the allocation of `len` bytes at `ptr` that
    // the caller owns and has not yet initialised or shared. MADV_HUGEPAGE changes
    // only how the kernel backs those pages, never their contents or validity.
    unsafe {
        let _ = rustix::mm::madvise(
            start as *mut core::ffi::c_void,
            end - start,
            rustix::mm::Advice::LinuxHugepage,
        );
    }
}
