//! The synchronisation primitives every ring is built from: std's in a normal build,
//! [loom]'s under `RUSTFLAGS="--cfg loom"`, so the loom models in `loom_models` check
//! the rings' real code, not a copy of it (the facade tokio and crossbeam use).
//!
//! [`UnsafeCell`] has loom's closure API (`with`, `with_mut`) in both builds, so loom
//! can see every slot access and report one that races with the other side.
//!
//! [loom]: https://docs.rs/loom

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::Arc;

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;

/// `std::cell::UnsafeCell` with loom's access API. `repr(transparent)`: the same size
/// and layout as `T`, so a shared-memory slot of `UnsafeCell<T>` is laid out as a `T`.
#[cfg(not(loom))]
#[derive(Debug)]
#[repr(transparent)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a pointer for reading; the caller makes sure no write overlaps.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` with a pointer for writing; the caller makes sure no access overlaps.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
