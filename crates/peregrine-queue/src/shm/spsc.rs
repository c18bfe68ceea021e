//! The SPSC ring of [`crate::spsc`] in a mapped file, for [`Pod`] messages.
//!
//! Same algorithm: free-running `head`/`tail` in the header on separate cache lines,
//! each handle caches the other side's counter. Slots are bare `T`s.

use std::marker::PhantomData;

use super::{Algorithm, Claim, Layout, Pod, Region, RingCounts, RingKind, Role, ShmError, ShmRing};
use crate::spsc::PushError;
use crate::sync::{Ordering, UnsafeCell};

/// The SPSC algorithm (the type parameter of [`ShmSpsc`]).
#[derive(Debug)]
pub enum Spsc {}

impl super::sealed::Sealed for Spsc {}

impl Algorithm for Spsc {
    const KIND: RingKind = RingKind::Spsc;
    const MIN_CAPACITY: u64 = 1;

    fn layout<T: Pod>() -> Layout {
        Layout::of::<T, UnsafeCell<T>>(Self::KIND, Self::MIN_CAPACITY)
    }

    fn init_slots<T: Pod>(_region: &Region) {
        // A zero-filled file is a ring of zero `T`s already (T: Pod, so Zeroable); loom's
        // cells must be constructed.
        #[cfg(loom)]
        for index in 0.._region.capacity() {
            // SAFETY: in bounds and aligned (see `slot`); the region is not published
            // yet, so nobody else touches it.
            unsafe { slot_ptr::<T>(_region, index).write(UnsafeCell::new(T::zeroed())) };
        }
    }
}

/// A mapped SPSC ring file; hands out one producer and one consumer.
pub type ShmSpsc<T> = ShmRing<T, Spsc>;

impl<T: Pod> ShmRing<T, Spsc> {
    /// Claims the producer role.
    pub fn producer(&self) -> Result<ShmSpscProducer<T>, ShmError> {
        let claim = Claim::take(&self.region, Role::Producer)?;
        let header = self.region.header();
        // Relaxed: we are the only writer of tail; the claim's Acquire ordered us after
        // the previous producer's last store. Acquire on head pairs with the consumer's
        // Release store of head.
        let tail = header.tail.load(Ordering::Relaxed);
        let cached_head = header.head.load(Ordering::Acquire);
        Ok(ShmSpscProducer {
            claim,
            tail,
            cached_head,
            mask: self.region.capacity() - 1,
            _msg: PhantomData,
        })
    }

    /// Claims the consumer role.
    pub fn consumer(&self) -> Result<ShmSpscConsumer<T>, ShmError> {
        let claim = Claim::take(&self.region, Role::Consumer)?;
        let header = self.region.header();
        // Relaxed: we are the only writer of head (see `producer`). Acquire on tail pairs
        // with the producer's Release store of tail.
        let head = header.head.load(Ordering::Relaxed);
        let cached_tail = header.tail.load(Ordering::Acquire);
        Ok(ShmSpscConsumer {
            claim,
            head,
            cached_tail,
            _msg: PhantomData,
        })
    }
}

fn slot_ptr<T: Pod>(region: &Region, index: u64) -> *mut UnsafeCell<T> {
    region
        .slot_ptr(index, size_of::<UnsafeCell<T>>() as u64)
        .cast::<UnsafeCell<T>>()
}

/// Slot `index`'s cell.
#[inline]
fn slot<T: Pod>(region: &Region, index: u64) -> &UnsafeCell<T> {
    // SAFETY: slot_ptr is in bounds and aligned for UnsafeCell<T> (stride = its size,
    // slot 0 at a multiple of 128 >= its alignment, validated at attach); the bytes are
    // a valid UnsafeCell<T> (T: Pod, any bits are a T; under loom `init_slots` built
    // the cells); the reference lives no longer than `region`.
    unsafe { &*slot_ptr::<T>(region, index) }
}

/// The writing end of a [`ShmSpsc`]. `Send`, not `Sync`.
#[derive(Debug)]
pub struct ShmSpscProducer<T: Pod> {
    claim: Claim,
    tail: u64,
    cached_head: u64,
    mask: u64,
    _msg: PhantomData<std::cell::Cell<T>>,
}

// SAFETY: the handle owns its claim on the producer role; moving it to another thread
// moves that role. It is not Sync (PhantomData<Cell<T>>), so only one thread pushes.
unsafe impl<T: Pod> Send for ShmSpscProducer<T> {}

impl<T: Pod> ShmSpscProducer<T> {
    /// Copies `value` into the ring, or hands it back if the ring is full.
    #[inline]
    pub fn try_push(&mut self, value: T) -> Result<(), PushError<T>> {
        let region = self.claim.region();
        let header = region.header();
        if self.tail.wrapping_sub(self.cached_head) > self.mask {
            // Acquire pairs with the Release store of head in `ShmSpscConsumer::try_pop`.
            self.cached_head = header.head.load(Ordering::Acquire);
            if self.tail.wrapping_sub(self.cached_head) > self.mask {
                let full = &header.full;
                // Relaxed: this producer is the only writer (a load and a store, not a
                // locked add); readers only want a statistic.
                full.store(full.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                return Err(PushError::Full(value));
            }
        }
        // SAFETY: tail - head < capacity so the consumer is not reading this slot; T: Pod
        // so a bytewise write is a valid T.
        slot::<T>(region, self.tail).with_mut(|slot| unsafe { slot.write(value) });
        self.tail = self.tail.wrapping_add(1);
        // Release pairs with the Acquire load of tail in `ShmSpscConsumer::try_pop`.
        header.tail.store(self.tail, Ordering::Release);
        Ok(())
    }

    /// Whether `n` more messages fit now (so a group of `n` pushed next cannot be cut
    /// in two by a full ring: only this producer adds messages).
    #[inline]
    pub fn has_room(&mut self, n: u64) -> bool {
        if self.tail.wrapping_sub(self.cached_head) + n <= self.mask + 1 {
            return true;
        }
        // Acquire pairs with the Release store of head in `ShmSpscConsumer::try_pop`.
        self.cached_head = self.claim.region().header().head.load(Ordering::Acquire);
        self.tail.wrapping_sub(self.cached_head) + n <= self.mask + 1
    }

    /// The ring's traffic counters as the shared header holds them.
    pub fn counts(&self) -> RingCounts {
        self.claim.region().counts()
    }
}

/// The reading end of a [`ShmSpsc`]. `Send`, not `Sync`.
#[derive(Debug)]
pub struct ShmSpscConsumer<T: Pod> {
    claim: Claim,
    head: u64,
    cached_tail: u64,
    _msg: PhantomData<std::cell::Cell<T>>,
}

// SAFETY: as for the producer: the handle owns the consumer role and is not Sync.
unsafe impl<T: Pod> Send for ShmSpscConsumer<T> {}

impl<T: Pod> ShmSpscConsumer<T> {
    /// Copies the oldest message out, if any.
    #[inline]
    pub fn try_pop(&mut self) -> Option<T> {
        let region = self.claim.region();
        let header = region.header();
        if self.head == self.cached_tail {
            // Acquire pairs with the Release store of tail in `ShmSpscProducer::try_push`.
            self.cached_tail = header.tail.load(Ordering::Acquire);
            if self.head == self.cached_tail {
                return None;
            }
        }
        // SAFETY: head < tail so the producer has published this slot and will not
        // overwrite it until we advance head; T: Pod.
        let value = slot::<T>(region, self.head).with(|slot| unsafe { slot.read() });
        self.head = self.head.wrapping_add(1);
        // Release pairs with the Acquire load of head in `ShmSpscProducer::try_push`.
        header.head.store(self.head, Ordering::Release);
        Some(value)
    }

    /// The ring's traffic counters as the shared header holds them.
    pub fn counts(&self) -> RingCounts {
        self.claim.region().counts()
    }
}

#[cfg(all(test, not(loom)))]
mod heap_tests {
    use super::*;

    /// The same code over heap memory: runs under Miri, which cannot map files.
    #[test]
    fn in_memory_fifo_full_and_claims() {
        let ring = ShmSpsc::<[u32; 3]>::in_memory(4).unwrap();
        let mut tx = ring.producer().unwrap();
        let mut rx = ring.consumer().unwrap();
        assert!(matches!(
            ring.consumer(),
            Err(ShmError::AlreadyClaimed("consumer"))
        ));
        for lap in 0..3u32 {
            for i in 0..4 {
                tx.try_push([lap, i, !i]).unwrap();
            }
            assert_eq!(tx.try_push([9; 3]), Err(PushError::Full([9; 3])));
            for i in 0..4 {
                assert_eq!(rx.try_pop(), Some([lap, i, !i]));
            }
            assert_eq!(rx.try_pop(), None);
        }
        assert_eq!(ring.counts().full, 3);
    }
}

#[cfg(all(test, not(miri), not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn push_pop_and_claims() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ring");
        let ring = ShmSpsc::<u64>::create(&path, 4).unwrap();
        let mut tx = ring.producer().unwrap();
        assert!(matches!(
            ring.producer(),
            Err(ShmError::AlreadyClaimed("producer"))
        ));
        let other = ShmSpsc::<u64>::attach(&path).unwrap();
        let mut rx = other.consumer().unwrap();
        for i in 0..4 {
            tx.try_push(i).unwrap();
        }
        assert_eq!(tx.try_push(9), Err(PushError::Full(9)));
        assert_eq!(tx.try_push(9), Err(PushError::Full(9)));
        assert_eq!(rx.try_pop(), Some(0));
        let c = rx.counts();
        assert_eq!((c.tail, c.head, c.full, c.depth()), (4, 1, 2, 3));
        assert_eq!(tx.counts(), c);
        drop(rx);
        let mut rx = ring.consumer().unwrap();
        assert_eq!(rx.try_pop(), Some(1));
    }

    #[test]
    fn attach_rejects_mismatches() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ring");
        ShmSpsc::<u64>::create(&path, 8).unwrap();
        assert!(matches!(
            ShmSpsc::<u32>::attach(&path),
            Err(ShmError::WrongMessage { .. })
        ));
        assert!(matches!(
            super::super::ShmMpsc::<u64>::attach(&path),
            Err(ShmError::WrongKind { .. })
        ));
        assert!(matches!(
            ShmSpsc::<u64>::create(&path, 8),
            Err(ShmError::Io { .. })
        ));
        let junk = dir.path().join("junk");
        std::fs::write(&junk, vec![7u8; 4096]).unwrap();
        assert!(matches!(
            ShmSpsc::<u64>::attach(&junk),
            Err(ShmError::BadMagic { .. })
        ));
        std::fs::write(&junk, b"short").unwrap();
        assert!(matches!(
            ShmSpsc::<u64>::attach(&junk),
            Err(ShmError::TooSmall { .. })
        ));
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(8192).unwrap();
        assert!(matches!(
            ShmSpsc::<u64>::attach(&path),
            Err(ShmError::SizeMismatch { .. })
        ));
        assert!(matches!(
            ShmSpsc::<u64>::create(&dir.path().join("x"), 3),
            Err(ShmError::BadCapacity(3))
        ));
    }

    #[test]
    fn stress_two_threads() {
        peregrine_testkit::with_timeout(120, || {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("ring");
            let ring = ShmSpsc::<[u64; 2]>::create(&path, 64).unwrap();
            let mut tx = ring.producer().unwrap();
            let count = 300_000u64;
            let producer = std::thread::spawn(move || {
                for i in 0..count {
                    while tx.try_push([i, !i]).is_err() {
                        std::thread::yield_now();
                    }
                }
            });
            let mut rx = ShmSpsc::<[u64; 2]>::attach(&path)
                .unwrap()
                .consumer()
                .unwrap();
            let mut expected = 0;
            while expected < count {
                match rx.try_pop() {
                    Some(v) => {
                        assert_eq!(v, [expected, !expected]);
                        expected += 1;
                    }
                    None => std::thread::yield_now(),
                }
            }
            producer.join().unwrap();
        });
    }
}
