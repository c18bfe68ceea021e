//! A bounded single-producer single-consumer ring.
//!
//! Layout: `capacity` slots allocated once (a power of two, so `index & mask` picks a
//! slot), a `head` counter written only by the consumer and a `tail` counter written
//! only by the producer. Both counters run freely (they are never wrapped); the ring
//! holds `tail - head` values. Each counter has its own cache line, and each side keeps a
//! private cached copy of the other side's counter, refreshed only when the copy says the
//! ring is full (producer) or empty (consumer).
//!
//! ```
//! let (mut tx, mut rx) = peregrine_queue::spsc::ring::<u64>(4);
//! tx.try_push(7).unwrap();
//! assert_eq!(rx.try_pop(), Some(7));
//! ```

use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use crossbeam_utils::CachePadded;

use crate::sync::{Arc, AtomicUsize, Ordering, UnsafeCell};

/// Why a push failed; hands the value back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushError<T> {
    /// The ring holds `capacity` values.
    Full(T),
}

impl<T> PushError<T> {
    /// The value that was not pushed.
    pub fn into_inner(self) -> T {
        match self {
            PushError::Full(value) => value,
        }
    }
}

/// The state both handles share.
struct Shared<T> {
    /// Next slot to read; written by the consumer only.
    head: CachePadded<AtomicUsize>,
    /// Next slot to write; written by the producer only.
    tail: CachePadded<AtomicUsize>,
    mask: usize,
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
}

// SAFETY: a slot is accessed by one side at a time (the producer owns slots in
// `tail..head + capacity`, the consumer those in `head..tail`), ownership moves through
// the Release/Acquire pairs on `head` and `tail`, so sharing needs only `T: Send`.
unsafe impl<T: Send> Sync for Shared<T> {}
// SAFETY: as above: values move between threads, never shared by reference.
unsafe impl<T: Send> Send for Shared<T> {}

impl<T> Shared<T> {
    #[inline]
    fn slot(&self, index: usize) -> &UnsafeCell<MaybeUninit<T>> {
        &self.slots[index & self.mask]
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // Relaxed: both handles are gone; the Arc's last drop synchronised with their
        // final stores.
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Relaxed);
        for index in head..tail {
            // SAFETY: slots in head..tail hold initialised values that no handle owns any
            // more (both handles are gone, or we would not be dropping).
            self.slot(index)
                .with_mut(|slot| unsafe { (*slot).assume_init_drop() });
        }
    }
}

/// Creates a ring with room for `capacity` values, rounded up to a power of two (at
/// least 1).
pub fn ring<T>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    let capacity = capacity.max(1).next_power_of_two();
    let slots = (0..capacity)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect();
    let shared = Arc::new(Shared {
        head: CachePadded::new(AtomicUsize::new(0)),
        tail: CachePadded::new(AtomicUsize::new(0)),
        mask: capacity - 1,
        slots,
    });
    let producer = Producer {
        shared: Arc::clone(&shared),
        tail: 0,
        cached_head: 0,
        _not_sync: PhantomData,
    };
    let consumer = Consumer {
        shared,
        head: 0,
        cached_tail: 0,
        _not_sync: PhantomData,
    };
    (producer, consumer)
}

/// The writing end. `Send`, not `Sync`: one thread pushes at a time.
pub struct Producer<T> {
    shared: Arc<Shared<T>>,
    /// Our copy of `shared.tail` (we are its only writer).
    tail: usize,
    /// Last value of `shared.head` we read; the consumer may be ahead of it.
    cached_head: usize,
    _not_sync: PhantomData<Cell<()>>,
}

impl<T> std::fmt::Debug for Producer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("capacity", &self.capacity())
            .field("tail", &self.tail)
            .finish()
    }
}

impl<T> Producer<T> {
    /// The number of slots.
    pub fn capacity(&self) -> usize {
        self.shared.mask + 1
    }

    /// Pushes `value`, or hands it back if the ring is full. Never blocks or allocates.
    #[inline]
    pub fn try_push(&mut self, value: T) -> Result<(), PushError<T>> {
        if self.tail.wrapping_sub(self.cached_head) > self.shared.mask {
            // Acquire pairs with the Release store of `head` in `Consumer::advance`: the
            // consumer has finished reading every slot below the head we see.
            self.cached_head = self.shared.head.load(Ordering::Acquire);
            if self.tail.wrapping_sub(self.cached_head) > self.shared.mask {
                return Err(PushError::Full(value));
            }
        }
        // SAFETY: tail - head < capacity, so this slot is outside head..tail: the consumer
        // does not read it until we publish the new tail below.
        self.shared
            .slot(self.tail)
            .with_mut(|slot| unsafe { (*slot).write(value) });
        self.tail = self.tail.wrapping_add(1);
        // Release pairs with the Acquire load of `tail` in `Consumer::available`: the slot
        // write above is visible before the consumer sees the new tail.
        self.shared.tail.store(self.tail, Ordering::Release);
        Ok(())
    }

    /// Free slots as last seen; the true number may be larger.
    pub fn free_slots(&mut self) -> usize {
        // Acquire pairs with the Release store of `head` in `Consumer::advance`.
        self.cached_head = self.shared.head.load(Ordering::Acquire);
        self.capacity() - self.tail.wrapping_sub(self.cached_head)
    }
}

/// Advances the consumer's head past the values a [`Consumer::pop_batch`] moved out,
/// on return and on unwind alike (a panicking sink must not leave moved-out values
/// inside `head..tail`, where they would be read and dropped a second time).
struct Batch<'a, T> {
    consumer: &'a mut Consumer<T>,
    taken: usize,
}

impl<T> Drop for Batch<'_, T> {
    fn drop(&mut self) {
        if self.taken > 0 {
            self.consumer.advance(self.taken);
        }
    }
}

/// The reading end. `Send`, not `Sync`: one thread pops at a time.
pub struct Consumer<T> {
    shared: Arc<Shared<T>>,
    /// Our copy of `shared.head` (we are its only writer).
    head: usize,
    /// Last value of `shared.tail` we read; the producer may be ahead of it.
    cached_tail: usize,
    _not_sync: PhantomData<Cell<()>>,
}

impl<T> std::fmt::Debug for Consumer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("capacity", &(self.shared.mask + 1))
            .field("head", &self.head)
            .finish()
    }
}

impl<T> Consumer<T> {
    /// Number of readable values, refreshing the cached tail only when the cache says
    /// fewer than `want` are available.
    #[inline]
    fn available(&mut self, want: usize) -> usize {
        let cached = self.cached_tail.wrapping_sub(self.head);
        if cached >= want {
            return cached;
        }
        // Acquire pairs with the Release store of `tail` in `Producer::try_push`: every
        // slot below the tail we see has been written.
        self.cached_tail = self.shared.tail.load(Ordering::Acquire);
        self.cached_tail.wrapping_sub(self.head)
    }

    #[inline]
    fn advance(&mut self, count: usize) {
        self.head = self.head.wrapping_add(count);
        // Release pairs with the Acquire load of `head` in `Producer::try_push`: our reads
        // of the slots finish before the producer may overwrite them.
        self.shared.head.store(self.head, Ordering::Release);
    }

    /// Pops the oldest value, if any. Never blocks or allocates.
    #[inline]
    pub fn try_pop(&mut self) -> Option<T> {
        if self.available(1) == 0 {
            return None;
        }
        // SAFETY: head < tail, so the slot holds a value the producer published (see
        // `available`); we move it out and then release the slot.
        let value = self
            .shared
            .slot(self.head)
            .with(|slot| unsafe { (*slot).assume_init_read() });
        self.advance(1);
        Some(value)
    }

    /// A reference to the oldest value without removing it.
    pub fn peek(&mut self) -> Option<&T> {
        if self.available(1) == 0 {
            return None;
        }
        let slot = self.shared.slot(self.head).with(|slot| slot);
        // SAFETY: head < tail, so the slot is initialised, and the producer does not touch
        // it until we advance the head, which needs `&mut self` (ending this borrow).
        Some(unsafe { (*slot).assume_init_ref() })
    }

    /// Pops up to `max` values into `sink`, publishing the new head once. Returns how
    /// many were popped.
    ///
    /// If `sink` panics, the values it already received (including the one it panicked
    /// on) count as popped: the head is advanced past them while unwinding, so no value
    /// is read or dropped twice, and the rest stay in the ring.
    pub fn pop_batch(&mut self, max: usize, mut sink: impl FnMut(T)) -> usize {
        let count = self.available(max).min(max);
        let mut batch = Batch {
            consumer: self,
            taken: 0,
        };
        while batch.taken < count {
            let index = batch.consumer.head.wrapping_add(batch.taken);
            // SAFETY: index is in head..tail (taken < count <= available), so the slot
            // holds a published value. `taken` counts it before `sink` runs, so the
            // guard's drop advances the head past it even if `sink` unwinds: it is read
            // exactly once.
            let value = batch
                .consumer
                .shared
                .slot(index)
                .with(|slot| unsafe { (*slot).assume_init_read() });
            batch.taken += 1;
            sink(value);
        }
        count
    }

    /// Readable values as last seen; the true number may be larger.
    pub fn len(&mut self) -> usize {
        self.available(usize::MAX)
    }

    /// Whether the ring looks empty now.
    pub fn is_empty(&mut self) -> bool {
        self.available(1) == 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fifo_and_full() {
        let (mut tx, mut rx) = ring::<u32>(4);
        assert_eq!(tx.capacity(), 4);
        for i in 0..4 {
            tx.try_push(i).unwrap();
        }
        assert_eq!(tx.try_push(9), Err(PushError::Full(9)));
        assert_eq!(rx.peek(), Some(&0));
        assert_eq!(rx.try_pop(), Some(0));
        tx.try_push(4).unwrap();
        let mut got = Vec::new();
        assert_eq!(rx.pop_batch(10, |v| got.push(v)), 4);
        assert_eq!(got, vec![1, 2, 3, 4]);
        assert_eq!(rx.try_pop(), None);
        assert!(rx.is_empty());
    }

    #[test]
    fn capacity_rounds_up() {
        let (tx, _rx) = ring::<u8>(5);
        assert_eq!(tx.capacity(), 8);
        let (tx, _rx) = ring::<u8>(0);
        assert_eq!(tx.capacity(), 1);
    }

    #[test]
    fn drops_leftovers_once() {
        let marker = Arc::new(());
        let (mut tx, mut rx) = ring(8);
        for _ in 0..5 {
            tx.try_push(Arc::clone(&marker)).unwrap();
        }
        drop(rx.try_pop());
        drop(tx);
        drop(rx);
        assert_eq!(Arc::strong_count(&marker), 1);
    }

    /// Counts its drops, so a double drop shows as a count above the number of values
    /// made; the box makes a double drop a double free that valgrind and ASan report.
    struct Counted<'a>(
        &'a std::sync::atomic::AtomicUsize,
        #[allow(dead_code)] Box<u64>,
    );

    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn pop_batch_panic_drops_each_value_once() {
        let drops = std::sync::atomic::AtomicUsize::new(0);
        let (mut tx, mut rx) = ring(8);
        for _ in 0..5 {
            assert!(tx.try_push(Counted(&drops, Box::new(7))).is_ok());
        }
        let mut seen = 0;
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rx.pop_batch(8, |value| {
                seen += 1;
                drop(value);
                if seen == 2 {
                    panic!("sink fails on the second value");
                }
            })
        }));
        assert!(outcome.is_err());
        // Two values went to the sink (and were dropped there); the ring must not hand
        // them out again nor drop them again.
        assert_eq!(drops.load(Ordering::Relaxed), 2);
        assert_eq!(rx.len(), 3);
        drop(rx.try_pop());
        assert_eq!(drops.load(Ordering::Relaxed), 3);
        drop(tx);
        drop(rx);
        assert_eq!(
            drops.load(Ordering::Relaxed),
            5,
            "every value dropped exactly once"
        );
    }

    #[test]
    fn wraps_many_times() {
        let (mut tx, mut rx) = ring::<usize>(2);
        for i in 0..1000 {
            tx.try_push(i).unwrap();
            assert_eq!(rx.len(), 1);
            assert_eq!(rx.try_pop(), Some(i));
        }
        assert_eq!(tx.free_slots(), 2);
    }

    #[test]
    fn stress_two_threads() {
        peregrine_testkit::with_timeout(120, || {
            let count: u64 = if cfg!(miri) { 200 } else { 1_000_000 };
            let (mut tx, mut rx) = ring::<u64>(if cfg!(miri) { 4 } else { 64 });
            let producer = std::thread::spawn(move || {
                for i in 0..count {
                    let mut value = i;
                    while let Err(PushError::Full(v)) = tx.try_push(value) {
                        value = v;
                        std::thread::yield_now();
                    }
                }
            });
            let mut expected = 0;
            while expected < count {
                match rx.try_pop() {
                    Some(v) => {
                        assert_eq!(v, expected);
                        expected += 1;
                    }
                    None => std::thread::yield_now(),
                }
            }
            producer.join().unwrap();
            assert_eq!(rx.try_pop(), None);
        });
    }
}
