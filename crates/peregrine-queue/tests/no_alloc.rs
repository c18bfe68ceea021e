//! Push and pop never allocate: a counting global allocator watches this thread while
//! the rings are exercised after construction.
#![cfg(not(miri))]

use peregrine_queue::shm::{ShmMpsc, ShmSpsc};
use peregrine_queue::{mux, spsc};
use peregrine_testkit::allocations_during;

#[global_allocator]
static GLOBAL: peregrine_testkit::CountingAllocator = peregrine_testkit::CountingAllocator;

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
