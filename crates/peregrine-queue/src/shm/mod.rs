//! Rings in a memory-mapped file, for hand-offs between processes.
//!
//! A ring file (usually under `/dev/shm`) starts with a header and is followed by the
//! slots. The creator sizes the file, fills in the header and stores the magic last
//! (Release); an attacher loads the magic first (Acquire) and then checks every field
//! against what it expects: wrong magic, version, kind, message size or alignment,
//! capacity or file length is a typed [`ShmError`], never undefined behaviour. Every
//! header field is an atomic, so a misbehaving peer can garble data but not make our
//! reads of the header undefined.
//!
//! One type, [`ShmRing`], creates and attaches both algorithms ([`ShmSpsc`] and
//! [`ShmMpsc`] are its two instances); the algorithm decides the slot layout and the
//! producer/consumer handles.
//!
//! Messages are plain old data ([`Pod`], from `bytemuck`: derive it with
//! `#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]` on a `#[repr(C)]` struct
//! with explicit padding fields): they are copied bytewise in and out of the slots, have
//! no pointers and every bit pattern is a valid value. The derive checks the absence of
//! padding at compile time.
//!
//! Roles are claimed: [`ShmSpsc::producer`] and `consumer` (and [`ShmMpsc::consumer`])
//! set a claim flag in the header with a CAS and fail with
//! [`ShmError::AlreadyClaimed`] if another handle holds it; dropping the handle releases
//! the claim. A process that dies holding a claim leaves the ring unusable: re-create it.
//!
//! The creator does not remove the file; remove it (`std::fs::remove_file`) when every
//! process has attached or is done.

mod error;
mod header;
pub mod mpsc;
mod region;
pub mod spsc;

use std::marker::PhantomData;
use std::path::Path;

pub use bytemuck::{Pod, Zeroable};

pub use error::ShmError;
pub use header::{RingCounts, RingKind, MAGIC, VERSION};
pub use mpsc::{Mpsc, ShmMpsc, ShmMpscConsumer, ShmMpscProducer};
pub use spsc::{ShmSpsc, ShmSpscConsumer, ShmSpscProducer, Spsc};

use crate::sync::{Arc, AtomicU32, Ordering};
use header::Layout;
use region::Region;

mod sealed {
    pub trait Sealed {}
}

/// A ring algorithm: how slots are laid out and initialised. Implemented by [`Spsc`]
/// and [`Mpsc`] only.
pub trait Algorithm: sealed::Sealed + 'static {
    /// What the header's `kind` field says.
    const KIND: RingKind;

    /// The smallest capacity the algorithm is correct for.
    const MIN_CAPACITY: u64;

    /// The layout of a ring of `T`s.
    #[doc(hidden)]
    fn layout<T: Pod>() -> Layout;

    /// Prepares every slot of a fresh region, before the header is published.
    #[doc(hidden)]
    fn init_slots<T: Pod>(region: &Region);
}

/// A mapped ring file of `T`s run by algorithm `A`; hands out that algorithm's
/// producer and consumer handles (see [`ShmSpsc`] and [`ShmMpsc`]).
pub struct ShmRing<T: Pod, A: Algorithm> {
    region: Arc<Region>,
    _msg: PhantomData<(T, A)>,
}

impl<T: Pod, A: Algorithm> std::fmt::Debug for ShmRing<T, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShmRing")
            .field("kind", &A::KIND)
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl<T: Pod, A: Algorithm> ShmRing<T, A> {
    /// Creates the ring file at `path` (which must not exist) with `capacity` slots (a
    /// power of two).
    pub fn create(path: &Path, capacity: usize) -> Result<Self, ShmError> {
        Region::create(path, capacity, A::layout::<T>(), A::init_slots::<T>).map(Self::new)
    }

    /// Maps an existing ring file, validating its header against `T` and `A`.
    pub fn attach(path: &Path) -> Result<Self, ShmError> {
        Region::attach(path, A::layout::<T>()).map(Self::new)
    }

    /// A ring with the same layout on the heap, for the loom models and for tests under
    /// Miri (neither can map a file).
    #[cfg(any(test, loom))]
    pub(crate) fn in_memory(capacity: usize) -> Result<Self, ShmError> {
        Region::in_memory(capacity, A::layout::<T>(), A::init_slots::<T>).map(Self::new)
    }

    fn new(region: Region) -> Self {
        Self {
            region: Arc::new(region),
            _msg: PhantomData,
        }
    }

    /// Slots in the ring.
    pub fn capacity(&self) -> usize {
        self.region.capacity() as usize
    }

    /// The ring's traffic counters as the shared header holds them.
    pub fn counts(&self) -> RingCounts {
        self.region.counts()
    }
}

/// Which claim flag of the header a [`Claim`] holds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Role {
    Producer,
    Consumer,
}

impl Role {
    fn flag(self, region: &Region) -> &AtomicU32 {
        let header = region.header();
        match self {
            Role::Producer => &header.producer_claimed,
            Role::Consumer => &header.consumer_claimed,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Role::Producer => "producer",
            Role::Consumer => "consumer",
        }
    }
}

/// A claimed role on a region; releases the claim on drop.
#[derive(Debug)]
pub(crate) struct Claim {
    region: Arc<Region>,
    role: Role,
}

impl Claim {
    /// Sets the role's claim flag, or fails if it is set.
    pub(crate) fn take(region: &Arc<Region>, role: Role) -> Result<Claim, ShmError> {
        // Acquire on success pairs with the Release store in `drop`: we see everything
        // the previous holder wrote (e.g. its last head/tail). Relaxed on failure: we
        // touch nothing.
        role.flag(region)
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .map_err(|_| ShmError::AlreadyClaimed(role.name()))?;
        Ok(Claim {
            region: Arc::clone(region),
            role,
        })
    }

    pub(crate) fn region(&self) -> &Region {
        &self.region
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        // Release pairs with the Acquire CAS in `take`.
        self.role.flag(&self.region).store(0, Ordering::Release);
    }
}
