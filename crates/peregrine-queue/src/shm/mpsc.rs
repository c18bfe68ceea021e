//! A bounded MPSC ring in a mapped file: Vyukov's bounded queue (the algorithm family
//! of crossbeam's `ArrayQueue`) with a single consumer.
//!
//! Each slot carries a sequence number. Slot `i` starts with `seq = i`. A producer
//! reads `tail`, and if the slot's `seq == tail` the slot is free for this lap: it claims
//! the index with a CAS on `tail`, writes the message and publishes it with
//! `seq = tail + 1`. If `seq < tail` the slot still holds last lap's message: the ring is
//! full. The consumer takes slot `head` once `seq == head + 1`, then frees it for the
//! next lap with `seq = head + capacity`. Producers contend on one atomic (`tail`); the
//! consumer never contends. The capacity must be at least 2 (see
//! [`Mpsc::MIN_CAPACITY`](super::Algorithm::MIN_CAPACITY)).

use std::marker::PhantomData;

use super::{Algorithm, Claim, Layout, Pod, Region, RingKind, Role, ShmError, ShmRing};
use crate::spsc::PushError;
use crate::sync::{Arc, AtomicU64, Ordering, UnsafeCell};

/// The MPSC algorithm (the type parameter of [`ShmMpsc`]).
#[derive(Debug)]
pub enum Mpsc {}

impl super::sealed::Sealed for Mpsc {}

impl Algorithm for Mpsc {
    const KIND: RingKind = RingKind::Mpsc;
    /// With one slot, "published for lap n" (`seq = n + 1`) and "free for lap n + 1"
    /// (`seq = n + capacity`) are the same number: a producer could overwrite a message
    /// the consumer has not read (the loom model `shm_mpsc_*` found this). crossbeam's
    /// `ArrayQueue` avoids it with a lap stride above the capacity; two slots suffice.
    const MIN_CAPACITY: u64 = 2;

    fn layout<T: Pod>() -> Layout {
        Layout::of::<T, Slot<T>>(Self::KIND, Self::MIN_CAPACITY)
    }

    fn init_slots<T: Pod>(region: &Region) {
        for index in 0..region.capacity() {
            #[cfg(not(loom))]
            // Relaxed: published by the Release store of the magic in `Header::publish`.
            slot::<T>(region, index).seq.store(index, Ordering::Relaxed);
            #[cfg(loom)]
            // SAFETY: in bounds and aligned (see `slot`); the region is not published
            // yet, so nobody else touches it; loom's atomics must be constructed.
            unsafe {
                slot_ptr::<T>(region, index).write(Slot {
                    seq: AtomicU64::new(index),
                    msg: UnsafeCell::new(T::zeroed()),
                })
            };
        }
    }
}

/// One slot: its sequence number and the message. `repr(C)` so every process agrees.
#[repr(C)]
struct Slot<T> {
    seq: AtomicU64,
    msg: UnsafeCell<T>,
}

/// A mapped MPSC ring file; hands out any number of producers and one consumer.
pub type ShmMpsc<T> = ShmRing<T, Mpsc>;

impl<T: Pod> ShmRing<T, Mpsc> {
    /// A producer handle; any number may exist, in any process.
    pub fn producer(&self) -> ShmMpscProducer<T> {
        ShmMpscProducer {
            region: Arc::clone(&self.region),
            _msg: PhantomData,
        }
    }

    /// Claims the consumer role.
    pub fn consumer(&self) -> Result<ShmMpscConsumer<T>, ShmError> {
        let claim = Claim::take(&self.region, Role::Consumer)?;
        // Relaxed: only the consumer writes head, and the claim's Acquire ordered us
        // after the previous consumer's last store.
        let head = self.region.header().head.load(Ordering::Relaxed);
        Ok(ShmMpscConsumer {
            claim,
            head,
            _msg: PhantomData,
        })
    }
}

fn slot_ptr<T: Pod>(region: &Region, index: u64) -> *mut Slot<T> {
    region
        .slot_ptr(index, size_of::<Slot<T>>() as u64)
        .cast::<Slot<T>>()
}

/// Slot `index`.
#[inline]
fn slot<T: Pod>(region: &Region, index: u64) -> &Slot<T> {
    // SAFETY: slot_ptr is in bounds and aligned for Slot<T> (stride = size_of::<Slot<T>>,
    // slot 0 at a multiple of 128 >= its alignment, validated at attach); the bytes are
    // a valid Slot<T> (an atomic and a cell of Pod: any bits; under loom `init_slots`
    // built them); shared access is what both fields are for; the reference lives no
    // longer than `region`.
    unsafe { &*slot_ptr::<T>(region, index) }
}

/// A producing handle of a [`ShmMpsc`]. `Send` and `Sync`: producers synchronise
/// through the CAS on `tail`.
#[derive(Debug)]
pub struct ShmMpscProducer<T: Pod> {
    region: Arc<Region>,
    _msg: PhantomData<T>,
}

impl<T: Pod> Clone for ShmMpscProducer<T> {
    fn clone(&self) -> Self {
        Self {
            region: Arc::clone(&self.region),
            _msg: PhantomData,
        }
    }
}

// SAFETY: push goes through the slot protocol (CAS on tail, Release on seq) which is
// safe from any number of threads; messages are Pod, so Send.
unsafe impl<T: Pod> Send for ShmMpscProducer<T> {}
// SAFETY: as above; `try_push` takes `&self` and needs no exclusive access.
unsafe impl<T: Pod> Sync for ShmMpscProducer<T> {}

impl<T: Pod> ShmMpscProducer<T> {
    /// Copies `value` into the ring, or hands it back if the ring is full.
    #[inline]
    pub fn try_push(&self, value: T) -> Result<(), PushError<T>> {
        let tail_atomic = &self.region.header().tail;
        // Relaxed: the index is validated against the slot's seq (Acquire) below, and the
        // claim is the CAS.
        let mut tail = tail_atomic.load(Ordering::Relaxed);
        loop {
            let slot = slot::<T>(&self.region, tail);
            // Acquire pairs with the consumer's Release store of seq in `try_pop`: if the
            // slot is free for this lap, the consumer's read of it has finished.
            let seq = slot.seq.load(Ordering::Acquire);
            let lag = seq.wrapping_sub(tail) as i64;
            if lag == 0 {
                // Relaxed: the CAS only claims the index; the message is published by the
                // Release store of seq below.
                match tail_atomic.compare_exchange_weak(
                    tail,
                    tail.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: winning the CAS for `tail` while seq == tail gives us
                        // sole write access to the slot until we store seq = tail + 1;
                        // T: Pod.
                        slot.msg.with_mut(|msg| unsafe { msg.write(value) });
                        // Release pairs with the Acquire load of seq in `try_pop`.
                        slot.seq.store(tail.wrapping_add(1), Ordering::Release);
                        return Ok(());
                    }
                    Err(current) => tail = current,
                }
            } else if lag < 0 {
                // The slot still holds last lap's message. Re-check tail: if it moved, we
                // were just slow; if not, the ring is full.
                // Relaxed: as for the first load.
                let current = tail_atomic.load(Ordering::Relaxed);
                if current == tail {
                    return Err(PushError::Full(value));
                }
                tail = current;
            } else {
                // Another producer claimed this index already; catch up.
                // Relaxed: as for the first load.
                tail = tail_atomic.load(Ordering::Relaxed);
            }
        }
    }
}

/// The consuming end of a [`ShmMpsc`]. `Send`, not `Sync`.
#[derive(Debug)]
pub struct ShmMpscConsumer<T: Pod> {
    claim: Claim,
    head: u64,
    _msg: PhantomData<std::cell::Cell<T>>,
}

// SAFETY: the handle owns the consumer role; moving it moves the role. Not Sync.
unsafe impl<T: Pod> Send for ShmMpscConsumer<T> {}

impl<T: Pod> ShmMpscConsumer<T> {
    /// Copies the oldest message out, if any.
    #[inline]
    pub fn try_pop(&mut self) -> Option<T> {
        let region = self.claim.region();
        let slot = slot::<T>(region, self.head);
        // Acquire pairs with the producer's Release store of seq in `try_push`.
        if slot.seq.load(Ordering::Acquire) != self.head.wrapping_add(1) {
            return None;
        }
        // SAFETY: seq == head + 1 means a producer published this slot and no producer
        // writes it until we store the next lap's seq; T: Pod.
        let value = slot.msg.with(|msg| unsafe { msg.read() });
        let next_lap = self.head.wrapping_add(region.capacity());
        // Release pairs with the Acquire load of seq in `try_push`.
        slot.seq.store(next_lap, Ordering::Release);
        self.head = self.head.wrapping_add(1);
        // Relaxed: head in the header is only read by a later consumer, ordered by the
        // claim flag's Release/Acquire, and by statistics.
        region.header().head.store(self.head, Ordering::Relaxed);
        Some(value)
    }
}

#[cfg(all(test, not(loom)))]
mod heap_tests {
    use super::*;
    use crate::shm::ShmSpsc;

    /// The same code over heap memory: runs under Miri, which cannot map files.
    #[test]
    fn in_memory_fifo_and_full() {
        let ring = ShmMpsc::<u16>::in_memory(2).unwrap();
        let (a, b) = (ring.producer(), ring.producer());
        let mut rx = ring.consumer().unwrap();
        for lap in 0..3u16 {
            a.try_push(lap).unwrap();
            b.try_push(lap + 100).unwrap();
            assert_eq!(a.try_push(7), Err(PushError::Full(7)));
            assert_eq!(rx.try_pop(), Some(lap));
            assert_eq!(rx.try_pop(), Some(lap + 100));
            assert_eq!(rx.try_pop(), None);
        }
    }

    #[test]
    fn one_slot_is_refused() {
        // With one slot a producer can overwrite an unread message (see MIN_CAPACITY).
        assert!(matches!(
            ShmMpsc::<u16>::in_memory(1),
            Err(ShmError::BadCapacity(1))
        ));
        assert!(ShmSpsc::<u16>::in_memory(1).is_ok());
    }
}

#[cfg(all(test, not(miri), not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fifo_full_and_claim() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mpsc");
        let ring = ShmMpsc::<u32>::create(&path, 4).unwrap();
        let tx = ring.producer();
        let mut rx = ShmMpsc::<u32>::attach(&path).unwrap().consumer().unwrap();
        assert!(matches!(
            ring.consumer(),
            Err(ShmError::AlreadyClaimed("consumer"))
        ));
        for lap in 0..3 {
            for i in 0..4 {
                tx.try_push(lap * 10 + i).unwrap();
            }
            assert_eq!(tx.try_push(99), Err(PushError::Full(99)));
            for i in 0..4 {
                assert_eq!(rx.try_pop(), Some(lap * 10 + i));
            }
            assert_eq!(rx.try_pop(), None);
        }
    }

    #[test]
    fn stress_many_producers() {
        peregrine_testkit::with_timeout(120, || {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("mpsc");
            let ring = ShmMpsc::<[u64; 2]>::create(&path, 32).unwrap();
            let per = 100_000u64;
            let producers = 3u64;
            let handles: Vec<_> = (0..producers)
                .map(|p| {
                    let tx = ring.producer();
                    std::thread::spawn(move || {
                        for i in 0..per {
                            while tx.try_push([p, i]).is_err() {
                                std::thread::yield_now();
                            }
                        }
                    })
                })
                .collect();
            let mut rx = ring.consumer().unwrap();
            let mut next = vec![0u64; producers as usize];
            let mut seen = 0;
            while seen < producers * per {
                match rx.try_pop() {
                    Some([p, i]) => {
                        assert_eq!(next[p as usize], i, "per-producer FIFO");
                        next[p as usize] += 1;
                        seen += 1;
                    }
                    None => std::thread::yield_now(),
                }
            }
            for handle in handles {
                handle.join().unwrap();
            }
            assert_eq!(rx.try_pop(), None);
        });
    }
}
