//! A bounded MPSC ring in a mapped file: Vyukov's bounded queue (the algorithm family
//! of crossbeam's `ArrayQueue`) with a single consumer.
//!
//! Each slot carries a sequence number. Slot `i` starts with `seq = i`. A producer
//! reads `tail`, and if the slot's `seq == tail` the slot is free for this lap: it claims
//! the index with a CAS on `tail`, writes the message and publishes it with
//! `seq = tail + 1`. If `seq < tail` the slot still holds last lap's message: the ring is
//! full. The consumer takes slot `head` once `seq == head + 1`, then frees it for the
//! next lap with `seq = head + capacity`. Producers contend on one atomic (`tail`); the
//! consumer never contends.

use std::marker::PhantomData;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{claim, unclaim, Layout, Pod, Region, RingKind, ShmError};
use crate::spsc::PushError;

/// One slot: its sequence number and the message. `repr(C)` so every process agrees.
#[repr(C)]
struct Slot<T> {
    seq: AtomicU64,
    msg: T,
}

fn layout<T: Pod>() -> Layout {
    Layout {
        kind: RingKind::Mpsc,
        msg_size: size_of::<T>() as u64,
        msg_align: align_of::<T>() as u64,
        slot_stride: size_of::<Slot<T>>() as u64,
    }
}

/// A mapped MPSC ring file; hands out any number of producers and one consumer.
#[derive(Debug)]
pub struct ShmMpsc<T: Pod> {
    region: Arc<Region>,
    _msg: PhantomData<T>,
}

impl<T: Pod> ShmMpsc<T> {
    /// Creates the ring file at `path` (which must not exist) with `capacity` slots (a
    /// power of two).
    pub fn create(path: &Path, capacity: usize) -> Result<Self, ShmError> {
        let region = Region::create(path, capacity, layout::<T>(), |region| {
            for index in 0..region.capacity() {
                // Relaxed: published by the Release store of the magic in `create`.
                slot_seq::<T>(region, index).store(index, Ordering::Relaxed);
            }
        })?;
        Ok(Self::from_region(region))
    }

    /// Maps an existing ring file, validating its header against `T`.
    pub fn attach(path: &Path) -> Result<Self, ShmError> {
        Ok(Self::from_region(Region::attach(path, layout::<T>())?))
    }

    fn from_region(region: Region) -> Self {
        Self {
            region: Arc::new(region),
            _msg: PhantomData,
        }
    }

    /// Slots in the ring.
    pub fn capacity(&self) -> usize {
        self.region.capacity() as usize
    }

    /// A producer handle; any number may exist, in any process.
    pub fn producer(&self) -> ShmMpscProducer<T> {
        ShmMpscProducer {
            region: Arc::clone(&self.region),
            _msg: PhantomData,
        }
    }

    /// Claims the consumer role.
    pub fn consumer(&self) -> Result<ShmMpscConsumer<T>, ShmError> {
        let header = self.region.header();
        claim(&header.consumer_claimed, "consumer")?;
        // Relaxed: only the consumer writes head, and the claim's Acquire ordered us
        // after the previous consumer's last store.
        let head = header.head.load(Ordering::Relaxed);
        Ok(ShmMpscConsumer {
            region: Arc::clone(&self.region),
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

fn slot_seq<T: Pod>(region: &Region, index: u64) -> &AtomicU64 {
    // SAFETY: slot_ptr is in bounds and aligned for Slot<T> (stride = size_of::<Slot<T>>,
    // slot 0 at a multiple of 128 >= its alignment, validated at attach); an AtomicU64 is
    // valid for any bits and may be shared; the reference lives no longer than `region`.
    unsafe { &(*slot_ptr::<T>(region, index)).seq }
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
            let seq_atomic = slot_seq::<T>(&self.region, tail);
            // Acquire pairs with the consumer's Release store of seq in `try_pop`: if the
            // slot is free for this lap, the consumer's read of it has finished.
            let seq = seq_atomic.load(Ordering::Acquire);
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
                        let msg = slot_ptr::<T>(&self.region, tail);
                        // SAFETY: winning the CAS for `tail` while seq == tail gives us
                        // sole write access to the slot until we store seq = tail + 1; the
                        // pointer is in bounds and aligned (see slot_seq); T: Pod.
                        unsafe { std::ptr::addr_of_mut!((*msg).msg).write(value) };
                        // Release pairs with the Acquire load of seq in `try_pop`.
                        seq_atomic.store(tail.wrapping_add(1), Ordering::Release);
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
    region: Arc<Region>,
    head: u64,
    _msg: PhantomData<std::cell::Cell<T>>,
}

// SAFETY: the handle owns the consumer role; moving it moves the role. Not Sync.
unsafe impl<T: Pod> Send for ShmMpscConsumer<T> {}

impl<T: Pod> ShmMpscConsumer<T> {
    /// Copies the oldest message out, if any.
    #[inline]
    pub fn try_pop(&mut self) -> Option<T> {
        let seq_atomic = slot_seq::<T>(&self.region, self.head);
        // Acquire pairs with the producer's Release store of seq in `try_push`.
        if seq_atomic.load(Ordering::Acquire) != self.head.wrapping_add(1) {
            return None;
        }
        let msg = slot_ptr::<T>(&self.region, self.head);
        // SAFETY: seq == head + 1 means a producer published this slot and no producer
        // writes it until we store the next lap's seq; in bounds and aligned; T: Pod.
        let value = unsafe { std::ptr::addr_of!((*msg).msg).read() };
        let next_lap = self.head.wrapping_add(self.region.capacity());
        // Release pairs with the Acquire load of seq in `try_push`.
        seq_atomic.store(next_lap, Ordering::Release);
        self.head = self.head.wrapping_add(1);
        // Relaxed: head in the header is only read by a later consumer, ordered by the
        // claim flag's Release/Acquire.
        self.region
            .header()
            .head
            .store(self.head, Ordering::Relaxed);
        Some(value)
    }
}

impl<T: Pod> Drop for ShmMpscConsumer<T> {
    fn drop(&mut self) {
        unclaim(&self.region.header().consumer_claimed);
    }
}

#[cfg(all(test, not(miri)))]
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
        crate::test_util::with_timeout(120, || {
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
