//! The SPSC ring of [`crate::spsc`] in a mapped file, for [`Pod`] messages.
//!
//! Same algorithm: free-running `head`/`tail` in the header on separate cache lines,
//! each handle caches the other side's counter. Slots are bare `T`s.

use std::marker::PhantomData;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{claim, unclaim, Layout, Pod, Region, RingCounts, RingKind, ShmError};
use crate::spsc::PushError;

fn layout<T: Pod>() -> Layout {
    Layout {
        kind: RingKind::Spsc,
        msg_size: std::mem::size_of::<T>() as u64,
        msg_align: std::mem::align_of::<T>() as u64,
        slot_stride: std::mem::size_of::<T>() as u64,
    }
}

/// A mapped SPSC ring file; hands out one producer and one consumer.
#[derive(Debug)]
pub struct ShmSpsc<T: Pod> {
    region: Arc<Region>,
    _msg: PhantomData<T>,
}

impl<T: Pod> ShmSpsc<T> {
    /// Creates the ring file at `path` (which must not exist) with `capacity` slots (a
    /// power of two).
    pub fn create(path: &Path, capacity: usize) -> Result<Self, ShmError> {
        let region = Region::create(path, capacity, layout::<T>(), |_| {})?;
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

    /// Claims the producer role.
    pub fn producer(&self) -> Result<ShmSpscProducer<T>, ShmError> {
        let header = self.region.header();
        claim(&header.producer_claimed, "producer")?;
        // Relaxed: we are the only writer of tail; the claim's Acquire ordered us after
        // the previous producer's last store. Acquire on head pairs with the consumer's
        // Release store of head.
        let tail = header.tail.load(Ordering::Relaxed);
        let cached_head = header.head.load(Ordering::Acquire);
        Ok(ShmSpscProducer {
            region: Arc::clone(&self.region),
            tail,
            cached_head,
            mask: self.region.capacity() - 1,
            _msg: PhantomData,
        })
    }

    /// Claims the consumer role.
    pub fn consumer(&self) -> Result<ShmSpscConsumer<T>, ShmError> {
        let header = self.region.header();
        claim(&header.consumer_claimed, "consumer")?;
        // Relaxed: we are the only writer of head (see `producer`). Acquire on tail pairs
        // with the producer's Release store of tail.
        let head = header.head.load(Ordering::Relaxed);
        let cached_tail = header.tail.load(Ordering::Acquire);
        Ok(ShmSpscConsumer {
            region: Arc::clone(&self.region),
            head,
            cached_tail,
            _msg: PhantomData,
        })
    }
}

/// The writing end of a [`ShmSpsc`]. `Send`, not `Sync`.
#[derive(Debug)]
pub struct ShmSpscProducer<T: Pod> {
    region: Arc<Region>,
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
        let header = self.region.header();
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
        let slot = self
            .region
            .slot_ptr(self.tail, size_of::<T>() as u64)
            .cast::<T>();
        // SAFETY: the slot is inside the mapping and aligned for T (stride = size_of::<T>,
        // offset a multiple of 128 >= align); tail - head < capacity so the consumer is
        // not reading it; T: Pod so a bytewise write is a valid T.
        unsafe { slot.write(value) };
        self.tail = self.tail.wrapping_add(1);
        // Release pairs with the Acquire load of tail in `ShmSpscConsumer::try_pop`.
        header.tail.store(self.tail, Ordering::Release);
        Ok(())
    }
}

impl<T: Pod> ShmSpscProducer<T> {
    /// The ring's traffic counters as the shared header holds them.
    pub fn counts(&self) -> RingCounts {
        self.region.counts()
    }
}

impl<T: Pod> Drop for ShmSpscProducer<T> {
    fn drop(&mut self) {
        unclaim(&self.region.header().producer_claimed);
    }
}

/// The reading end of a [`ShmSpsc`]. `Send`, not `Sync`.
#[derive(Debug)]
pub struct ShmSpscConsumer<T: Pod> {
    region: Arc<Region>,
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
        let header = self.region.header();
        if self.head == self.cached_tail {
            // Acquire pairs with the Release store of tail in `ShmSpscProducer::try_push`.
            self.cached_tail = header.tail.load(Ordering::Acquire);
            if self.head == self.cached_tail {
                return None;
            }
        }
        let slot = self
            .region
            .slot_ptr(self.head, size_of::<T>() as u64)
            .cast::<T>();
        // SAFETY: in bounds and aligned (see try_push); head < tail so the producer has
        // published this slot and will not overwrite it until we advance head; T: Pod.
        let value = unsafe { slot.read() };
        self.head = self.head.wrapping_add(1);
        // Release pairs with the Acquire load of head in `ShmSpscProducer::try_push`.
        header.head.store(self.head, Ordering::Release);
        Some(value)
    }
}

impl<T: Pod> ShmSpscConsumer<T> {
    /// The ring's traffic counters as the shared header holds them.
    pub fn counts(&self) -> RingCounts {
        self.region.counts()
    }
}

impl<T: Pod> Drop for ShmSpscConsumer<T> {
    fn drop(&mut self) {
        unclaim(&self.region.header().consumer_claimed);
    }
}

#[cfg(all(test, not(miri)))]
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
        crate::test_util::with_timeout(120, || {
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
