//! Push and pop never allocate: a counting global allocator watches this thread while
//! the rings are exercised after construction.
#![allow(unsafe_code, reason = "a GlobalAlloc wrapper is unsafe to implement")]
#![cfg(not(miri))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use peregrine_queue::shm::{ShmMpsc, ShmSpsc};
use peregrine_queue::{mux, spsc};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to `System` unchanged; the counter is a const-initialised
// thread-local Cell, which needs no allocation and no locking.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> u64 {
    let before = ALLOCS.with(Cell::get);
    f();
    ALLOCS.with(Cell::get) - before
}

#[test]
fn the_counter_sees_allocations() {
    assert!(allocations_during(|| drop(std::hint::black_box(vec![1u8; 10]))) >= 1);
}

#[test]
fn rings_do_not_allocate_on_push_or_pop() {
    let (mut tx, mut rx) = spsc::ring::<[u64; 4]>(64);
    let (mut txs, mut mux) = mux::mux::<u64>(3, 64);
    let dir = tempfile::tempdir().unwrap();
    let shm_spsc = ShmSpsc::<u64>::create(&dir.path().join("s"), 64).unwrap();
    let (mut stx, mut srx) = (shm_spsc.producer().unwrap(), shm_spsc.consumer().unwrap());
    let shm_mpsc = ShmMpsc::<u64>::create(&dir.path().join("m"), 64).unwrap();
    let (mtx, mut mrx) = (shm_mpsc.producer(), shm_mpsc.consumer().unwrap());
    let count = allocations_during(|| {
        for i in 0..1000u64 {
            tx.try_push([i; 4]).unwrap();
            assert_eq!(rx.try_pop(), Some([i; 4]));
            txs[(i % 3) as usize].try_push(i).unwrap();
            assert_eq!(mux.try_pop(), Some(i));
            stx.try_push(i).unwrap();
            assert_eq!(srx.try_pop(), Some(i));
            mtx.try_push(i).unwrap();
            assert_eq!(mrx.try_pop(), Some(i));
        }
        let mut sum = 0;
        tx.try_push([1; 4]).unwrap();
        rx.pop_batch(8, |v| sum += v[0]);
        assert_eq!(sum, 1);
    });
    assert_eq!(count, 0);
}
