//! A direct-indexed id table over a sliding window of the newest ids, with a hash map
//! for the few orders older than the window.
//!
//! ```text
//!  ids:     … older than base │ base ……………………………… base + W − 1 │ newer
//!  where:     overflow map    │ table[id & (W − 1)] (u32 slot)  │ not live yet
//! ```
//!
//! Exchange ids are assigned densely and in increasing order, so the live orders of a
//! book sit mostly in a band just below the newest id. The table covers `W` ids
//! (a power of two, at least twice the arena capacity); an id in the window is one
//! 4-byte read at `id & (W − 1)`, with no hashing and no probing, and the table is
//! a quarter of the size of a hash map's buckets, so more of it stays in cache.
//!
//! When an id at or beyond `base + W` arrives, the window slides forward to end at
//! it: every live id that falls off the back moves to the overflow map. A long-lived
//! order far behind the newest id therefore costs one hash lookup, as every order did
//! with the hash map alone. The overflow map is reserved for the arena's capacity (it
//! can never hold more ids than there are live orders), so sliding never allocates.
//! Ids may arrive in any order (a bare book takes them as given): an id below `base`
//! goes straight to the overflow map; an id far ahead slides the window by at most
//! `W` slots of work.

use super::{HashIds, OrderIds};

/// An empty table entry.
const EMPTY: u32 = u32::MAX;

/// The smallest window (tests with tiny arenas still slide it often).
const MIN_WINDOW: usize = 64;

/// Direct-indexed window of the newest ids plus an overflow map for older ones.
#[derive(Debug)]
pub struct IdWindow {
    /// `table[id & mask]` = slot of live id `id`, for `base <= id < base + W`.
    table: Vec<u32>,
    mask: u64,
    /// Lowest id the window covers; only grows.
    base: u64,
    /// Live ids in the table.
    in_table: usize,
    /// Live ids below `base`.
    overflow: HashIds,
}

impl IdWindow {
    /// A window of at least `window` ids (rounded up to a power of two) for a book of
    /// `capacity` resting orders. Every table entry is written here, so no table page
    /// is first touched on the order path. The overflow map is reserved but not
    /// written (doing so costs ~2 hash inserts per order of capacity at start-up):
    /// the first orders to outlive the window fault its pages in.
    pub fn with_window(capacity: usize, window: usize) -> IdWindow {
        let w = window.max(MIN_WINDOW).next_power_of_two();
        IdWindow {
            table: crate::memory::filled_vec(w, EMPTY),
            mask: w as u64 - 1,
            base: 0,
            in_table: 0,
            overflow: HashIds::reserved(capacity, false),
        }
    }

    /// Ids the window covers.
    pub fn window(&self) -> usize {
        self.table.len()
    }

    /// Live ids held in the overflow map (older than the window).
    pub fn overflowed(&self) -> usize {
        self.overflow.len()
    }

    /// Whether `id` falls in the window `[base, base + W)`.
    #[inline]
    fn in_window(&self, id: u64) -> bool {
        id >= self.base && id - self.base <= self.mask
    }

    /// Slides the window forward so that it ends at `id`, moving every live id that
    /// falls off the back into the overflow map. At most `W` entries are visited.
    #[cold]
    fn slide_to(&mut self, id: u64) {
        let new_base = id - self.mask;
        let span = (new_base - self.base).min(self.table.len() as u64);
        for k in 0..span {
            let old = self.base + k;
            let e = &mut self.table[(old & self.mask) as usize];
            if *e != EMPTY {
                self.overflow.insert(old, *e);
                *e = EMPTY;
                self.in_table -= 1;
            }
        }
        self.base = new_base;
    }
}

impl OrderIds for IdWindow {
    fn with_capacity(capacity: usize) -> IdWindow {
        IdWindow::with_window(capacity, capacity.saturating_mul(2))
    }

    const BENCH_SUFFIX: &'static str = "id window";

    #[inline]
    fn get(&self, id: u64) -> Option<u32> {
        if self.in_window(id) {
            let s = self.table[(id & self.mask) as usize];
            (s != EMPTY).then_some(s)
        } else if id < self.base && !self.overflow.is_empty() {
            self.overflow.get(id)
        } else {
            None
        }
    }

    #[inline]
    fn insert(&mut self, id: u64, slot: u32) {
        debug_assert!(slot != EMPTY && !self.contains(id));
        if id < self.base {
            self.overflow.insert(id, slot);
            return;
        }
        if !self.in_window(id) {
            self.slide_to(id);
        }
        self.table[(id & self.mask) as usize] = slot;
        self.in_table += 1;
    }

    #[inline]
    fn remove(&mut self, id: u64) -> Option<u32> {
        if self.in_window(id) {
            let e = &mut self.table[(id & self.mask) as usize];
            let s = *e;
            if s == EMPTY {
                return None;
            }
            *e = EMPTY;
            self.in_table -= 1;
            Some(s)
        } else if id < self.base {
            self.overflow.remove(id)
        } else {
            None
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.in_table + self.overflow.len()
    }

    #[inline]
    fn prefetch(&self, id: u64) {
        if self.in_window(id) {
            crate::prefetch::prefetch(&self.table[(id & self.mask) as usize]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn dense_ids_stay_in_the_table() {
        let mut w = IdWindow::with_window(1_000, 1_000);
        assert_eq!(w.window(), 1_024);
        for id in 1..=1_000 {
            w.insert(id, id as u32);
        }
        assert_eq!((w.len(), w.overflowed()), (1_000, 0));
        assert_eq!(w.get(500), Some(500));
        assert_eq!(w.remove(500), Some(500));
        assert_eq!(w.get(500), None);
        assert_eq!(w.remove(500), None);
        // Reuse of a freed slot under a new id.
        w.insert(1_001, 500);
        assert_eq!(w.get(1_001), Some(500));
        assert_eq!(w.len(), 1_000);
    }

    #[test]
    fn an_old_order_survives_the_window_sliding_past_it() {
        let mut w = IdWindow::with_window(4, 64);
        w.insert(1, 7);
        for id in 2..10_000u64 {
            w.insert(id, 1);
            assert_eq!(w.remove(id), Some(1));
        }
        assert_eq!(w.overflowed(), 1, "id 1 moved to the overflow map");
        assert_eq!(w.get(1), Some(7));
        assert_eq!(w.remove(1), Some(7));
        assert!(w.is_empty());
    }

    #[test]
    fn ids_far_apart_and_out_of_order() {
        let mut w = IdWindow::with_window(8, 64);
        let ids = [
            5,
            u64::MAX,
            3,
            1 << 40,
            (1 << 40) + 63,
            0,
            u64::MAX - 64,
            17,
        ];
        for (i, &id) in ids.iter().enumerate() {
            w.insert(id, i as u32);
        }
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(w.get(id), Some(i as u32), "id {id}");
        }
        assert_eq!(w.get(4), None);
        assert_eq!(w.get(u64::MAX - 1), None);
        assert_eq!(w.len(), ids.len());
    }

    #[test]
    fn full_overflow_needs_no_growth() {
        // Every id in its own window generation: all but the newest overflow.
        let cap = 256;
        let mut w = IdWindow::with_window(cap, 64);
        for i in 0..cap as u64 {
            w.insert(i * 1_000, i as u32);
        }
        assert_eq!((w.len(), w.overflowed()), (cap, cap - 1));
        for i in 0..cap as u64 {
            assert_eq!(w.get(i * 1_000), Some(i as u32));
        }
    }

    proptest! {
        /// The window behaves as a plain map, whatever the ids: dense runs, jumps,
        /// ids behind the window, reuse after removal.
        #[test]
        fn prop_matches_a_btreemap(
            window in 1usize..200,
            ops in proptest::collection::vec((0u8..4, 0u64..400, any::<u64>()), 1..600),
        ) {
            let cap = 64;
            let mut w = IdWindow::with_window(cap, window);
            let mut model: BTreeMap<u64, u32> = BTreeMap::new();
            let mut next = 0u64;
            for (i, (kind, small, big)) in ops.into_iter().enumerate() {
                let id = match kind {
                    0 => { next += 1 + small % 3; next }          // dense, increasing
                    1 => small,                                    // anywhere near the start
                    2 => big,                                      // anywhere at all
                    _ => *model.keys().nth(small as usize % model.len().max(1)).unwrap_or(&small),
                };
                if kind == 3 || (model.contains_key(&id) && i % 2 == 0) {
                    prop_assert_eq!(w.remove(id), model.remove(&id));
                } else if !model.contains_key(&id) && model.len() < cap {
                    w.insert(id, i as u32);
                    model.insert(id, i as u32);
                }
                prop_assert_eq!(w.len(), model.len());
                prop_assert_eq!(w.get(id), model.get(&id).copied());
            }
            for (&id, &slot) in &model {
                prop_assert_eq!(w.get(id), Some(slot));
            }
        }
    }
}
