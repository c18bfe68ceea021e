//! The memory a ring lives in: a mapped file, or (for the loom models and Miri, which
//! cannot map files) a heap block laid out the same way.

use std::fs::{File, OpenOptions};
use std::path::Path;
use std::ptr::NonNull;

use memmap2::MmapRaw;

use super::header::{Header, Layout, RingCounts, SLOTS_OFFSET};
use super::ShmError;

/// A ring's memory: the header at byte 0, slot 0 at [`SLOTS_OFFSET`].
///
/// Public only inside a private module, so that the sealed [`super::Algorithm`] trait
/// can name it; not part of the crate's API.
#[derive(Debug)]
pub struct Region {
    /// Byte 0 of the mapping or heap block, fixed for the region's life.
    base: NonNull<u8>,
    capacity: u64,
    _backing: Backing,
}

#[derive(Debug)]
enum Backing {
    Map(#[allow(dead_code, reason = "owns the mapping that `base` points into")] MmapRaw),
    #[cfg(any(test, loom))]
    Heap(#[allow(dead_code, reason = "owns the block that `base` points into")] HeapBlock),
}

// SAFETY: the region is memory shared with other threads and processes by design; every
// access to it goes through atomics (the header, MPSC sequence numbers) or through the
// slot protocols whose Release/Acquire pairs hand a slot from one side to the other.
unsafe impl Send for Region {}
// SAFETY: as above; `&Region` exposes only the header (atomics) and raw slot pointers.
unsafe impl Sync for Region {}

impl Region {
    /// Creates `path` (it must not exist), sizes it, and publishes the header;
    /// `init_slots` runs before the magic is stored.
    pub(crate) fn create(
        path: &Path,
        capacity: usize,
        layout: Layout,
        init_slots: impl FnOnce(&Region),
    ) -> Result<Region, ShmError> {
        let (capacity, len) = checked_size(capacity, layout)?;
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
        let map = MmapRaw::map_raw(&file).map_err(io)?;
        let region = Region {
            base: NonNull::new(map.as_mut_ptr()).expect("a mapping is never at address 0"),
            capacity,
            _backing: Backing::Map(map),
        };
        region
            .header()
            .publish(layout, capacity, || init_slots(&region));
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
        let map = MmapRaw::map_raw(&file).map_err(io)?;
        let mut region = Region {
            base: NonNull::new(map.as_mut_ptr()).expect("a mapping is never at address 0"),
            capacity: 0,
            _backing: Backing::Map(map),
        };
        region.capacity = region.header().validate(layout, len)?;
        Ok(region)
    }

    /// A region on the heap with the file's layout, published like a created file.
    #[cfg(any(test, loom))]
    pub(crate) fn in_memory(
        capacity: usize,
        layout: Layout,
        init_slots: impl FnOnce(&Region),
    ) -> Result<Region, ShmError> {
        let (capacity, len) = checked_size(capacity, layout)?;
        let block = HeapBlock::zeroed(len as usize);
        let region = Region {
            base: block.ptr,
            capacity,
            _backing: Backing::Heap(block),
        };
        #[cfg(loom)]
        // SAFETY: the block is fresh, at least SLOTS_OFFSET bytes and 128-aligned, and
        // no other handle exists yet; loom's atomics must be constructed in place.
        unsafe {
            region.base.cast::<Header>().write(Header::zeroed());
        }
        region
            .header()
            .publish(layout, capacity, || init_slots(&region));
        Ok(region)
    }

    pub(crate) fn header(&self) -> &Header {
        // SAFETY: the memory is at least SLOTS_OFFSET >= size_of::<Header>() bytes
        // (checked in create/attach/in_memory), aligned to 128 >= align_of::<Header>()
        // (a page, or the heap block's layout), lives as long as `self`, and every
        // Header field is an atomic that is valid for any bit pattern (zero included)
        // and safe to share with other threads and processes.
        unsafe { self.base.cast::<Header>().as_ref() }
    }

    pub(crate) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The header's counters (see [`RingCounts`]).
    pub(crate) fn counts(&self) -> RingCounts {
        self.header().counts()
    }

    /// Pointer to byte 0 of slot `index & (capacity - 1)`, given the slot stride.
    #[inline]
    pub(crate) fn slot_ptr(&self, index: u64, stride: u64) -> *mut u8 {
        let offset = SLOTS_OFFSET + ((index & (self.capacity - 1)) * stride) as usize;
        // SAFETY: offset < SLOTS_OFFSET + capacity * stride = the region's length
        // (checked in create/attach/in_memory), so the result stays inside it.
        unsafe { self.base.as_ptr().add(offset) }
    }
}

/// Validates a requested capacity against `layout`; returns it with the byte length.
fn checked_size(capacity: usize, layout: Layout) -> Result<(u64, u64), ShmError> {
    let capacity = capacity as u64;
    if layout.msg_align > 128 {
        return Err(ShmError::AlignTooLarge(layout.msg_align));
    }
    if !layout.capacity_ok(capacity) {
        return Err(ShmError::BadCapacity(capacity));
    }
    let len = layout
        .file_len(capacity)
        .ok_or(ShmError::BadCapacity(capacity))?;
    Ok((capacity, len))
}

/// Zeroed, 128-aligned heap memory, freed on drop.
#[cfg(any(test, loom))]
#[derive(Debug)]
struct HeapBlock {
    ptr: NonNull<u8>,
    layout: std::alloc::Layout,
}

#[cfg(any(test, loom))]
impl HeapBlock {
    fn zeroed(len: usize) -> HeapBlock {
        let layout = std::alloc::Layout::from_size_align(len, 128).expect("ring size fits");
        // SAFETY: len >= SLOTS_OFFSET > 0, so the layout is not zero-sized.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        HeapBlock { ptr, layout }
    }
}

#[cfg(any(test, loom))]
impl Drop for HeapBlock {
    fn drop(&mut self) {
        #[cfg(loom)]
        // SAFETY: `in_memory` constructed a Header here, and no handle is left (the
        // region is being dropped).
        unsafe {
            std::ptr::drop_in_place(self.ptr.cast::<Header>().as_ptr());
        }
        // SAFETY: allocated in `zeroed` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}
