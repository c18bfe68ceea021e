//! loom models of the three ring protocols: the in-process SPSC ring, the shared-memory
//! SPSC ring and the shared-memory MPSC ring. loom runs each body under every
//! interleaving (bounded by `LOOM_MAX_PREEMPTIONS`) and every outcome the C++ memory
//! model allows for the orderings used, and fails on a data race on a slot (the
//! facade's `UnsafeCell` tracks each access), a lost or duplicated value, or a leak.
//!
//! Run (from `.ci/run`):
//!
//! ```sh
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 CARGO_TARGET_DIR=target/loom \
//!     cargo test -p peregrine-queue --lib --release loom_models
//! ```
//!
//! Capacities are 2 and value counts 3, so every body wraps the ring and hits "full"
//! and "empty": the states where the cached counters are refreshed.

use loom::thread;

use crate::shm::{ShmMpsc, ShmSpsc};
use crate::spsc::{self, PushError};
use crate::sync::Arc;

/// Runs `body` under loom with the preemption bound from `LOOM_MAX_PREEMPTIONS` (loom
/// reads it) and room for the longer paths spinning on a full ring makes.
fn model(body: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 100_000;
    builder.check(body);
}

/// Pushes, yielding to the model while the ring is full.
fn push_spinning<T>(mut value: T, mut try_push: impl FnMut(T) -> Result<(), PushError<T>>) {
    loop {
        match try_push(value) {
            Ok(()) => return,
            Err(PushError::Full(v)) => {
                value = v;
                thread::yield_now();
            }
        }
    }
}

/// Pops, yielding to the model while the ring is empty.
fn pop_spinning<T>(mut try_pop: impl FnMut() -> Option<T>) -> T {
    loop {
        if let Some(value) = try_pop() {
            return value;
        }
        thread::yield_now();
    }
}

#[test]
fn spsc_ring_hands_over_in_order() {
    model(|| {
        let (mut tx, mut rx) = spsc::ring::<u32>(2);
        let producer = thread::spawn(move || {
            for i in 0..3 {
                push_spinning(i, |v| tx.try_push(v));
            }
        });
        for i in 0..3 {
            assert_eq!(pop_spinning(|| rx.try_pop()), i);
        }
        producer.join().unwrap();
        assert_eq!(rx.try_pop(), None);
    });
}

#[test]
fn spsc_ring_batches_and_drops_leftovers_once() {
    model(|| {
        let marker = Arc::new(());
        let (mut tx, mut rx) = spsc::ring::<Arc<()>>(2);
        let sent = Arc::clone(&marker);
        let producer = thread::spawn(move || {
            for _ in 0..3 {
                push_spinning(Arc::clone(&sent), |v| tx.try_push(v));
            }
            // The producer handle drops here, on its own thread, while the consumer
            // may still hold the ring: the last handle to go frees the leftovers.
        });
        let mut got = 0;
        while got < 2 {
            got += rx.pop_batch(2, drop);
            thread::yield_now();
        }
        drop(rx);
        producer.join().unwrap();
        // Every clone was dropped once: by the batch sink or by the ring's drop.
        assert_eq!(Arc::strong_count(&marker), 1);
    });
}

#[test]
fn shm_spsc_hands_over_in_order() {
    model(|| {
        let ring = ShmSpsc::<[u32; 2]>::in_memory(2).unwrap();
        let mut tx = ring.producer().unwrap();
        let mut rx = ring.consumer().unwrap();
        let producer = thread::spawn(move || {
            for i in 0..3 {
                push_spinning([i, !i], |v| tx.try_push(v));
            }
        });
        for i in 0..3 {
            assert_eq!(pop_spinning(|| rx.try_pop()), [i, !i]);
        }
        producer.join().unwrap();
        assert_eq!(rx.try_pop(), None);
    });
}

#[test]
fn shm_spsc_claim_hands_the_role_over() {
    model(|| {
        let ring = Arc::new(ShmSpsc::<u32>::in_memory(2).unwrap());
        let mut tx = ring.producer().unwrap();
        tx.try_push(1).unwrap();
        tx.try_push(2).unwrap();
        let other = Arc::clone(&ring);
        // A first consumer takes one value on another thread and lets the role go; a
        // second one (whichever thread claims it later) must start after that value.
        let first = thread::spawn(move || {
            let mut rx = other.consumer().unwrap();
            assert_eq!(rx.try_pop(), Some(1));
        });
        first.join().unwrap();
        let mut rx = ring.consumer().unwrap();
        assert_eq!(rx.try_pop(), Some(2));
        assert_eq!(rx.try_pop(), None);
    });
}

#[test]
fn shm_mpsc_one_producer_wraps_in_order() {
    model(|| {
        let ring = ShmMpsc::<[u32; 2]>::in_memory(2).unwrap();
        let tx = ring.producer();
        let producer = thread::spawn(move || {
            for i in 0..3 {
                push_spinning([i, !i], |v| tx.try_push(v));
            }
        });
        let mut rx = ring.consumer().unwrap();
        for i in 0..3 {
            assert_eq!(pop_spinning(|| rx.try_pop()), [i, !i]);
        }
        producer.join().unwrap();
        assert_eq!(rx.try_pop(), None);
    });
}

#[test]
fn shm_mpsc_two_producers_race_for_the_last_slot() {
    model(|| {
        // One message already waits, so one slot is free: the producers race for its
        // CAS, and the loser finds the ring full until the consumer frees the first
        // slot for the next lap.
        let ring = ShmMpsc::<[u32; 2]>::in_memory(2).unwrap();
        ring.producer().try_push([2, 9]).unwrap();
        let producers: Vec<_> = (0..2u32)
            .map(|p| {
                let tx = ring.producer();
                thread::spawn(move || push_spinning([p, 7 + p], |v| tx.try_push(v)))
            })
            .collect();
        let mut rx = ring.consumer().unwrap();
        assert_eq!(pop_spinning(|| rx.try_pop()), [2, 9]);
        let mut seen = [false; 2];
        for _ in 0..2 {
            let [p, v] = pop_spinning(|| rx.try_pop());
            assert_eq!(v, 7 + p, "a message arrives whole");
            assert!(!seen[p as usize], "each message once");
            seen[p as usize] = true;
        }
        for handle in producers {
            handle.join().unwrap();
        }
        assert_eq!(rx.try_pop(), None);
    });
}
