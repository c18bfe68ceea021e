//! Rings in a memory-mapped file, for hand-offs between processes.
//!
//! A ring file (usually under `/dev/shm`) starts with a `Header` and is followed by
//! the slots. The creator sizes the file, fills in the header and stores the magic last
//! (Release); an attacher loads the magic first (Acquire) and then checks every field
//! against what it expects: wrong magic, version, kind, message size or alignment,
//! capacity or file length is a typed [`ShmError`], never undefined behaviour. Every
//! header field is an atomic, so a misbehaving peer can garble data but not make our
//! reads of the header undefined.
//!
//! Messages are plain old data ([`Pod`]): they are copied bytewise in and out of the
//! slots, have no pointers and every bit pattern is a valid value.
//!
//! Roles are claimed: [`spsc::ShmSpsc::producer`] and `consumer` (and
//! [`mpsc::ShmMpsc::consumer`]) set a claim flag in the header with a CAS and fail with
//! [`ShmError::AlreadyClaimed`] if another handle holds it; dropping the handle releases
//! the claim. A process that dies holding a claim leaves the ring unusable: re-create it.
//!
//! The creator does not remove the file; remove it (`std::fs::remove_file`) when every
//! process has attached or is done.

pub mod mpsc;
pub mod spsc;

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crossbeam_utils::CachePadded;
use memmap2::MmapRaw;

pub use mpsc::{ShmMpsc, ShmMpscConsumer, ShmMpscProducer};
pub use spsc::{ShmSpsc, ShmSpscConsumer, ShmSpscProducer};

/// Plain old data that may be copied bytewise through shared memory.
///
/// # Safety
///
/// The implementing type must be `#[repr(C)]` or `#[repr(transparent)]` (or a primitive
/// integer or an array of `Pod`), contain no padding bytes, no pointers or references,
/// and every bit pattern of its size must be a valid value (so no `bool`, `char` or
/// enums).
pub unsafe trait Pod: Copy + Send + 'static {}

macro_rules! pod_primitives {
    ($($t:ty),*) => {$(
        // SAFETY: primitive integers have no padding and every bit pattern is valid.
        unsafe impl Pod for $t {}
    )*};
}
pod_primitives!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

// SAFETY: an array of Pod has no padding between elements and every bit pattern of each
// element is valid.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// `"PRGNRING"` in ASCII.
pub const MAGIC: u64 = u64::from_be_bytes(*b"PRGNRING");
/// Layout version; bump on any change to the header or slot layout. 2: the header
/// gained the producer's `full` counter.
pub const VERSION: u32 = 2;

/// Which algorithm a ring file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum RingKind {
    /// [`spsc::ShmSpsc`].
    Spsc = 1,
    /// [`mpsc::ShmMpsc`].
    Mpsc = 2,
}

/// Why creating or attaching a ring failed.
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    /// Opening, sizing or mapping the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The ring file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is smaller than a header.
    #[error("file is {len} bytes, smaller than the {header} byte header")]
    TooSmall {
        /// File length.
        len: u64,
        /// Header size.
        header: u64,
    },
    /// The magic is wrong (or the creator has not finished).
    #[error("bad magic {found:#018x} (not a ring file, or not initialised yet)")]
    BadMagic {
        /// What the file holds.
        found: u64,
    },
    /// The layout version differs.
    #[error("layout version {found}, expected {expected}")]
    BadVersion {
        /// What the file holds.
        found: u32,
        /// What this build writes.
        expected: u32,
    },
    /// SPSC file attached as MPSC or the other way round.
    #[error("ring kind {found}, expected {expected}")]
    WrongKind {
        /// What the file holds.
        found: u32,
        /// What was asked for.
        expected: u32,
    },
    /// The message type's size or alignment differs from the file's.
    #[error("message size/align {found:?}, expected {expected:?}")]
    WrongMessage {
        /// (size, align) in the file.
        found: (u64, u64),
        /// (size, align) of `T`.
        expected: (u64, u64),
    },
    /// Capacity zero, not a power of two, or too large.
    #[error("bad capacity {0}")]
    BadCapacity(u64),
    /// The file length does not match the header.
    #[error("file is {len} bytes, header implies {expected}")]
    SizeMismatch {
        /// File length.
        len: u64,
        /// Length the header implies.
        expected: u64,
    },
    /// The message type needs more than the 128-byte alignment slots get.
    #[error("message alignment {0} is above 128")]
    AlignTooLarge(u64),
    /// Another handle holds this role.
    #[error("the {0} role is already claimed")]
    AlreadyClaimed(&'static str),
}

/// The first bytes of a ring file. Every field is atomic (see the module docs).
#[repr(C)]
pub(crate) struct Header {
    /// [`MAGIC`]; stored last by the creator (Release), loaded first by attachers
    /// (Acquire).
    magic: AtomicU64,
    version: AtomicU32,
    kind: AtomicU32,
    capacity: AtomicU64,
    msg_size: AtomicU64,
    msg_align: AtomicU64,
    /// Bytes from one slot to the next.
    slot_stride: AtomicU64,
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

/// Byte offset of slot 0: the header rounded up to a cache-line pair.
pub(crate) const SLOTS_OFFSET: usize = std::mem::size_of::<Header>().next_multiple_of(128);

/// What a ring of one kind and message type looks like.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub(crate) kind: RingKind,
    pub(crate) msg_size: u64,
    pub(crate) msg_align: u64,
    pub(crate) slot_stride: u64,
}

impl Layout {
    fn file_len(&self, capacity: u64) -> Option<u64> {
        capacity
            .checked_mul(self.slot_stride)?
            .checked_add(SLOTS_OFFSET as u64)
    }
}

/// A mapped ring file.
#[derive(Debug)]
pub(crate) struct Region {
    map: MmapRaw,
    capacity: u64,
}

impl Region {
    /// Creates `path` (it must not exist), sizes it, and writes the header; `init_slots`
    /// runs before the magic is published.
    pub(crate) fn create(
        path: &Path,
        capacity: usize,
        layout: Layout,
        init_slots: impl FnOnce(&Region),
    ) -> Result<Region, ShmError> {
        let capacity = capacity as u64;
        if layout.msg_align > 128 {
            return Err(ShmError::AlignTooLarge(layout.msg_align));
        }
        if !capacity.is_power_of_two() {
            return Err(ShmError::BadCapacity(capacity));
        }
        let len = layout
            .file_len(capacity)
            .ok_or(ShmError::BadCapacity(capacity))?;
        let io = |source| ShmError::Io {
            path: path.to_owned(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(io)?;
        file.set_len(len).map_err(io)?;
        let region = Region {
            map: MmapRaw::map_raw(&file).map_err(io)?,
            capacity,
        };
        let header = region.header();
        // Relaxed: these stores are published by the Release store of the magic below.
        header.version.store(VERSION, Ordering::Relaxed);
        header.kind.store(layout.kind as u32, Ordering::Relaxed);
        header.capacity.store(capacity, Ordering::Relaxed);
        header.msg_size.store(layout.msg_size, Ordering::Relaxed);
        header.msg_align.store(layout.msg_align, Ordering::Relaxed);
        header
            .slot_stride
            .store(layout.slot_stride, Ordering::Relaxed);
        init_slots(&region);
        // Release pairs with the Acquire load of the magic in `attach`: an attacher that
        // sees the magic sees the header fields and initialised slots.
        header.magic.store(MAGIC, Ordering::Release);
        Ok(region)
    }

    /// Maps an existing ring file and validates its header against `layout`.
    pub(crate) fn attach(path: &Path, layout: Layout) -> Result<Region, ShmError> {
        let io = |source| ShmError::Io {
            path: path.to_owned(),
            source,
        };
        let file = File::options()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len < SLOTS_OFFSET as u64 {
            return Err(ShmError::TooSmall {
                len,
                header: SLOTS_OFFSET as u64,
            });
        }
        let mut region = Region {
            map: MmapRaw::map_raw(&file).map_err(io)?,
            capacity: 0,
        };
        region.capacity = validate(region.header(), layout, len)?;
        Ok(region)
    }

    pub(crate) fn header(&self) -> &Header {
        // SAFETY: the map is at least SLOTS_OFFSET >= size_of::<Header>() bytes (checked
        // in create/attach), page aligned (so aligned for Header), lives as long as
        // `self`, and every Header field is an atomic, valid for any bit pattern and
        // safe to share with other threads and processes.
        unsafe { &*self.map.as_ptr().cast::<Header>() }
    }

    pub(crate) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The header's counters (see [`RingCounts`]).
    pub(crate) fn counts(&self) -> RingCounts {
        let h = self.header();
        // Relaxed (all three): statistics only; nothing is read through these values.
        // Head first: tail never falls behind head, so a tail read after it is >= head
        // and the depth never underflows.
        let head = h.head.load(Ordering::Relaxed);
        RingCounts {
            tail: h.tail.load(Ordering::Relaxed),
            head,
            full: h.full.load(Ordering::Relaxed),
        }
    }

    /// Pointer to byte 0 of slot `index & (capacity - 1)`, given the slot stride.
    #[inline]
    pub(crate) fn slot_ptr(&self, index: u64, stride: u64) -> *mut u8 {
        let offset = SLOTS_OFFSET + ((index & (self.capacity - 1)) * stride) as usize;
        // SAFETY: offset < SLOTS_OFFSET + capacity * stride = the file length (checked
        // in create/attach), so the result stays inside the mapping.
        unsafe { self.map.as_mut_ptr().add(offset) }
    }
}

fn validate(header: &Header, layout: Layout, len: u64) -> Result<u64, ShmError> {
    // Acquire pairs with the Release store of the magic in `Region::create`.
    let magic = header.magic.load(Ordering::Acquire);
    if magic != MAGIC {
        return Err(ShmError::BadMagic { found: magic });
    }
    // Relaxed (all loads below): published by the magic we just acquired.
    let version = header.version.load(Ordering::Relaxed);
    if version != VERSION {
        return Err(ShmError::BadVersion {
            found: version,
            expected: VERSION,
        });
    }
    let kind = header.kind.load(Ordering::Relaxed);
    if kind != layout.kind as u32 {
        return Err(ShmError::WrongKind {
            found: kind,
            expected: layout.kind as u32,
        });
    }
    let found = (
        header.msg_size.load(Ordering::Relaxed),
        header.msg_align.load(Ordering::Relaxed),
    );
    let stride = header.slot_stride.load(Ordering::Relaxed);
    if found != (layout.msg_size, layout.msg_align) || stride != layout.slot_stride {
        return Err(ShmError::WrongMessage {
            found,
            expected: (layout.msg_size, layout.msg_align),
        });
    }
    let capacity = header.capacity.load(Ordering::Relaxed);
    if !capacity.is_power_of_two() {
        return Err(ShmError::BadCapacity(capacity));
    }
    match layout.file_len(capacity) {
        Some(expected) if expected == len => Ok(capacity),
        Some(expected) => Err(ShmError::SizeMismatch { len, expected }),
        None => Err(ShmError::BadCapacity(capacity)),
    }
}

/// Sets a claim flag, or fails if it is set.
pub(crate) fn claim(flag: &AtomicU32, role: &'static str) -> Result<(), ShmError> {
    // Acquire on success pairs with the Release store in `unclaim`: we see everything
    // the previous holder wrote (e.g. its last head/tail). Relaxed on failure: we touch
    // nothing.
    flag.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .map(drop)
        .map_err(|_| ShmError::AlreadyClaimed(role))
}

/// Clears a claim flag.
pub(crate) fn unclaim(flag: &AtomicU32) {
    // Release pairs with the Acquire CAS in `claim`.
    flag.store(0, Ordering::Release);
}

#[cfg(test)]
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
