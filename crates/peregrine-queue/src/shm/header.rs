//! The first bytes of a ring file: identity, layout, claims and the shared counters.

use crossbeam_utils::CachePadded;

use super::ShmError;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// `"PRGNRING"` in ASCII.
pub const MAGIC: u64 = u64::from_be_bytes(*b"PRGNRING");
/// Layout version; bump on any change to the header or slot layout. 2: the header
/// gained the producer's `full` counter.
pub const VERSION: u32 = 2;

/// Which algorithm a ring file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum RingKind {
    /// [`super::ShmSpsc`].
    Spsc = 1,
    /// [`super::ShmMpsc`].
    Mpsc = 2,
}

/// The first bytes of a ring file. Every field is atomic, so a misbehaving peer can
/// garble data but not make our reads of the header undefined; an all-zero header is a
/// valid (unpublished) one.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct Header {
    /// [`MAGIC`]; stored last by the creator (Release), loaded first by attachers
    /// (Acquire).
    pub(crate) magic: AtomicU64,
    pub(crate) version: AtomicU32,
    pub(crate) kind: AtomicU32,
    pub(crate) capacity: AtomicU64,
    pub(crate) msg_size: AtomicU64,
    pub(crate) msg_align: AtomicU64,
    /// Bytes from one slot to the next.
    pub(crate) slot_stride: AtomicU64,
    pub(crate) producer_claimed: AtomicU32,
    pub(crate) consumer_claimed: AtomicU32,
    /// Next index to read; written by the consumer.
    pub(crate) head: CachePadded<AtomicU64>,
    /// Next index to write (SPSC) or to claim (MPSC); written by producers.
    pub(crate) tail: CachePadded<AtomicU64>,
    /// Pushes refused because the ring was full; written by the SPSC producer only on
    /// that (cold) path, on its own cache line so the push fast path never touches it.
    pub(crate) full: CachePadded<AtomicU64>,
}

impl Header {
    /// An all-zero header, for memory that is not zero-filled by the OS (loom's atomics
    /// must be constructed, not found in zeroed bytes).
    #[cfg(loom)]
    pub(crate) fn zeroed() -> Self {
        Self {
            magic: AtomicU64::new(0),
            version: AtomicU32::new(0),
            kind: AtomicU32::new(0),
            capacity: AtomicU64::new(0),
            msg_size: AtomicU64::new(0),
            msg_align: AtomicU64::new(0),
            slot_stride: AtomicU64::new(0),
            producer_claimed: AtomicU32::new(0),
            consumer_claimed: AtomicU32::new(0),
            head: CachePadded::new(AtomicU64::new(0)),
            tail: CachePadded::new(AtomicU64::new(0)),
            full: CachePadded::new(AtomicU64::new(0)),
        }
    }

    /// Fills in the layout fields, then publishes the header by storing the magic.
    /// `before_publish` runs between the two (slot initialisation).
    pub(crate) fn publish(&self, layout: Layout, capacity: u64, before_publish: impl FnOnce()) {
        // Relaxed: these stores are published by the Release store of the magic below.
        self.version.store(VERSION, Ordering::Relaxed);
        self.kind.store(layout.kind as u32, Ordering::Relaxed);
        self.capacity.store(capacity, Ordering::Relaxed);
        self.msg_size.store(layout.msg_size, Ordering::Relaxed);
        self.msg_align.store(layout.msg_align, Ordering::Relaxed);
        self.slot_stride
            .store(layout.slot_stride, Ordering::Relaxed);
        before_publish();
        // Release pairs with the Acquire load of the magic in `validate`: an attacher
        // that sees the magic sees the header fields and initialised slots.
        self.magic.store(MAGIC, Ordering::Release);
    }

    /// Checks a published header against `layout` and a file of `len` bytes; returns
    /// the capacity.
    pub(crate) fn validate(&self, layout: Layout, len: u64) -> Result<u64, ShmError> {
        // Acquire pairs with the Release store of the magic in `publish`.
        let magic = self.magic.load(Ordering::Acquire);
        if magic != MAGIC {
            return Err(ShmError::BadMagic { found: magic });
        }
        // Relaxed (all loads below): published by the magic we just acquired.
        let version = self.version.load(Ordering::Relaxed);
        if version != VERSION {
            return Err(ShmError::BadVersion {
                found: version,
                expected: VERSION,
            });
        }
        let kind = self.kind.load(Ordering::Relaxed);
        if kind != layout.kind as u32 {
            return Err(ShmError::WrongKind {
                found: kind,
                expected: layout.kind as u32,
            });
        }
        let found = (
            self.msg_size.load(Ordering::Relaxed),
            self.msg_align.load(Ordering::Relaxed),
        );
        let stride = self.slot_stride.load(Ordering::Relaxed);
        if found != (layout.msg_size, layout.msg_align) || stride != layout.slot_stride {
            return Err(ShmError::WrongMessage {
                found,
                expected: (layout.msg_size, layout.msg_align),
            });
        }
        let capacity = self.capacity.load(Ordering::Relaxed);
        if !layout.capacity_ok(capacity) {
            return Err(ShmError::BadCapacity(capacity));
        }
        match layout.file_len(capacity) {
            Some(expected) if expected == len => Ok(capacity),
            Some(expected) => Err(ShmError::SizeMismatch { len, expected }),
            None => Err(ShmError::BadCapacity(capacity)),
        }
    }

    /// The traffic counters (see [`RingCounts`]).
    pub(crate) fn counts(&self) -> RingCounts {
        // Relaxed (all three): statistics only; nothing is read through these values.
        // Head first: tail never falls behind head, so a tail read after it is >= head
        // and the depth never underflows.
        let head = self.head.load(Ordering::Relaxed);
        RingCounts {
            tail: self.tail.load(Ordering::Relaxed),
            head,
            full: self.full.load(Ordering::Relaxed),
        }
    }
}

/// Byte offset of slot 0: the header rounded up to a cache-line pair.
pub(crate) const SLOTS_OFFSET: usize = std::mem::size_of::<Header>().next_multiple_of(128);

/// What a ring of one kind and message type looks like.
///
/// Public only inside a private module, so that the sealed [`super::Algorithm`] trait
/// can name it; not part of the crate's API.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub(crate) kind: RingKind,
    /// The algorithm's smallest correct capacity.
    pub(crate) min_capacity: u64,
    pub(crate) msg_size: u64,
    pub(crate) msg_align: u64,
    pub(crate) slot_stride: u64,
}

impl Layout {
    /// The layout of a ring of `kind` whose slots are `Slot`s carrying `T`s.
    pub(crate) fn of<T, Slot>(kind: RingKind, min_capacity: u64) -> Layout {
        Layout {
            kind,
            min_capacity,
            msg_size: std::mem::size_of::<T>() as u64,
            msg_align: std::mem::align_of::<T>() as u64,
            slot_stride: std::mem::size_of::<Slot>() as u64,
        }
    }

    /// Whether `capacity` is a power of two the algorithm works with.
    pub(crate) fn capacity_ok(&self, capacity: u64) -> bool {
        capacity.is_power_of_two() && capacity >= self.min_capacity
    }

    /// Bytes of a ring file with `capacity` slots, if that fits in a u64.
    pub(crate) fn file_len(&self, capacity: u64) -> Option<u64> {
        capacity
            .checked_mul(self.slot_stride)?
            .checked_add(SLOTS_OFFSET as u64)
    }
}

/// What a ring's header says about its traffic, read without stopping either side.
///
/// `head` and `tail` are free-running: `tail` counts every push since the ring was
/// created and `head` every pop, so `tail - head` is the depth. A reader on a third
/// thread sees each value as of some recent moment (they are read one after the other,
/// so under traffic they may be from slightly different moments).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingCounts {
    /// Pushes since creation (the producer's `tail`).
    pub tail: u64,
    /// Pops since creation (the consumer's `head`).
    pub head: u64,
    /// Pushes refused because the ring was full (SPSC producers count them).
    pub full: u64,
}

impl RingCounts {
    /// Messages in the ring.
    pub fn depth(&self) -> u64 {
        self.tail.wrapping_sub(self.head)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn header_layout() {
        assert_eq!(std::mem::align_of::<Header>(), 128);
        assert_eq!(SLOTS_OFFSET % 128, 0);
        assert_eq!(std::mem::offset_of!(Header, magic), 0);
        assert_eq!(std::mem::offset_of!(Header, head) % 128, 0);
        assert_eq!(std::mem::offset_of!(Header, tail) % 128, 0);
        assert_eq!(std::mem::offset_of!(Header, full) % 128, 0);
        assert_eq!(SLOTS_OFFSET, 512);
        assert_ne!(
            std::mem::offset_of!(Header, head) / 128,
            std::mem::offset_of!(Header, tail) / 128
        );
    }
}
