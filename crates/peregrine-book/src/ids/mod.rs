//! Order-id maps: exchange order id → arena slot of the resting order.
//!
//! The book is generic over [`OrderIds`] so that the map can be measured on the same
//! matching code (`peregrine bench book` runs both, see `docs/performance.md`):
//!
//! * [`IdWindow`] (the default): a direct-indexed table over a sliding window of the
//!   newest ids, with a hash map only for orders older than the window. Exchange ids
//!   are dense and increasing, so almost every lookup is one 4-byte read at
//!   `id & mask`, in a table a quarter the size of a hash map's buckets.
//! * [`OpenIds`]: one open-addressing table keyed by the full id, sized by the live
//!   count, for ids the venue did not assign (client-chosen, sparse, unordered): one
//!   cache line per lookup whatever the ids. The C ABI (`peregrine-capi`) uses it.
//! * [`HashIds`]: `hashbrown` with FxHash, the previous layout, kept as the baseline.
//!
//! Both are sized once for the arena's capacity and never allocate afterwards: the
//! number of live ids can never exceed the number of arena slots, and the book checks
//! the arena before it inserts.

mod hashed;
mod open;
mod window;

pub use hashed::HashIds;
pub use open::OpenIds;
pub use window::IdWindow;

/// A map from live order ids to arena slots.
pub trait OrderIds {
    /// A map for a book of `capacity` resting orders; all memory is allocated here.
    fn with_capacity(capacity: usize) -> Self;
    /// The name benchmark tables add to a book with this map.
    const BENCH_SUFFIX: &'static str;
    /// The slot of live order `id`.
    fn get(&self, id: u64) -> Option<u32>;
    /// Whether `id` is live.
    #[inline]
    fn contains(&self, id: u64) -> bool {
        self.get(id).is_some()
    }
    /// Records live order `id` at `slot`. The caller guarantees `id` is not live and
    /// that fewer than `capacity` ids are live.
    fn insert(&mut self, id: u64, slot: u32);
    /// Forgets `id`, returning its slot if it was live.
    fn remove(&mut self, id: u64) -> Option<u32>;
    /// Live ids.
    fn len(&self) -> usize;
    /// True when no id is live.
    #[inline]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A hint that `id` will be looked up soon: start loading the memory it lives in.
    /// Touches nothing else and changes nothing.
    #[inline]
    fn prefetch(&self, _id: u64) {}
}
