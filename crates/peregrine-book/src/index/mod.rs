//! Price-level indexes: where the levels of each side live and how the best is found.
//!
//! The book is generic over [`LevelIndex`] so two layouts can be measured on the same
//! matching code (see `docs/performance.md`):
//!
//! * [`Ladder`]: one slot per tick across the instrument's price band, with a
//!   hierarchical occupancy bitmap per side. O(1) lookup, O(1) best, next-best by a few
//!   word scans, zero allocation ever. Needs a bounded band (the instrument spec has one).
//! * [`BTreeLevels`]: a `BTreeMap<price, handle>` per side over a slab of levels, the
//!   layout of Ferrox phase 3. Unbounded prices, but O(log n) and the map allocates a
//!   tree node whenever it grows, so it is kept as a baseline only.

mod bitmap;
mod btree;
mod ladder;

pub use bitmap::Bitmap;
pub use btree::BTreeLevels;
pub use ladder::Ladder;

use peregrine_types::{InstrumentSpec, Side};

use crate::level::Level;

/// A per-side collection of price levels addressed by `u32` handles.
pub trait LevelIndex {
    /// Builds an empty index for `spec`, able to hold `max_orders` resting orders.
    fn new(spec: &InstrumentSpec, max_orders: usize) -> Self;
    /// A short name for reports.
    fn name() -> &'static str;
    /// The name benchmark tables use for a book with this index.
    const BENCH_NAME: &'static str;
    /// Handle of the level at `price` on `side`, if it has orders.
    fn find(&self, side: Side, price: i64) -> Option<u32>;
    /// Handle of the level at `price`, creating an empty one if needed. The caller
    /// must push an order into it before calling anything else.
    fn get_or_insert(&mut self, side: Side, price: i64) -> u32;
    /// Marks the level behind `handle` as occupied after its first order was pushed.
    fn occupied(&mut self, side: Side, handle: u32);
    /// Forgets a level that became empty.
    fn remove(&mut self, side: Side, handle: u32);
    /// The best (highest bid / lowest ask) non-empty level.
    fn best(&self, side: Side) -> Option<u32>;
    /// The next non-empty level after `handle`, going away from the best.
    fn next_worse(&self, side: Side, handle: u32) -> Option<u32>;
    /// The next non-empty level after `handle`, going towards the best.
    fn next_better(&self, side: Side, handle: u32) -> Option<u32>;
    /// The level behind a handle.
    fn level(&self, handle: u32) -> &Level;
    /// The level behind a handle, mutably.
    fn level_mut(&mut self, handle: u32) -> &mut Level;
    /// A hint that the level at `price` on `side` will be touched soon (it may be
    /// empty, and `price` may even be invalid: a hint never fails). Default: nothing.
    #[inline]
    fn prefetch(&self, _side: Side, _price: i64) {}
}
