//! Proves `Journal::append` does not allocate, with a counting global allocator.
//!
//! Steady state only: opening the journal and rotating to a new segment
//! allocate (paths, the buffer); appends within a segment, buffer flushes
//! and `commit` must not.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use peregrine_journal::{FsyncPolicy, Journal, JournalConfig, Timestamps};

struct Counting;

// Counts only allocations made by the thread that measures: the test harness's own
// threads (for example its "running for over 60 seconds" notice under load) must not
// count. Const-initialised thread-locals never allocate.
thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn bump() {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

// The counting allocator must forward to `System`: implementing
// `GlobalAlloc` is unsafe by definition.
#[allow(unsafe_code)]
// SAFETY: every method forwards to `System` with the caller's arguments,
// so `System` upholds the `GlobalAlloc` contract; the counter is a side effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` above with this `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: forwarded unchanged; `ptr` came from this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCS.with(Cell::get)
}

fn appends_allocate_nothing(policy: FsyncPolicy) {
    let dir = tempfile::tempdir().unwrap();
    let config = JournalConfig {
        fsync: policy,
        buffer_bytes: 16 << 10, // small: the loop also exercises buffer flushes
        ..JournalConfig::default()
    };
    let (mut j, _) = Journal::open(dir.path(), config).unwrap();
    let payload = [7u8; 64];
    j.append(1, Timestamps::default(), 1, &payload).unwrap(); // creates the segment
    j.commit().unwrap();
    let before = allocations();
    for seq in 2..5_000u64 {
        let ts = Timestamps {
            recv_ns: seq,
            engine_ns: seq,
        };
        j.append(seq, ts, 1, &payload).unwrap();
        if seq.is_multiple_of(64) {
            j.commit().unwrap();
        }
    }
    j.commit().unwrap();
    let during = allocations() - before;
    j.close().unwrap();
    assert_eq!(
        during, 0,
        "{policy:?}: {during} allocations in steady-state appends"
    );
}

#[test]
fn append_and_commit_do_not_allocate() {
    // One test function: the counter is global, parallel tests would mix counts.
    appends_allocate_nothing(FsyncPolicy::None);
    appends_allocate_nothing(FsyncPolicy::Batch);
    appends_allocate_nothing(FsyncPolicy::EveryCommand);
}
