//! An open-addressing id table for ids the venue did not assign: client-chosen,
//! sparse, in any order (FIX `ClOrdID`-style numbering, the public matching-engine
//! challenge's shuffled ids).
//!
//! ```text
//!  bucket = (id · φ) >> (64 − bits)          φ = 2⁶⁴ / golden ratio
//!  entry  = { id: u64, slot: u32 }           16 bytes, 4 per cache line
//!  probe  = linear, from the bucket on; removal shifts the chain back (no tombstones)
//! ```
//!
//! One lookup is one cache line in the common case: the entry holds the full id, so
//! a hit needs no second read to confirm it and a miss stops at the first empty
//! entry, usually in the same line.
//!
//! **Sized by the live count, not the capacity.** All memory is allocated at
//! construction (a table of twice the capacity, so the load stays at or under one
//! half), but only the first `active` entries are used: `active` starts small and
//! doubles, rehashing in place through a preallocated staging area, whenever the
//! live count passes half of it. A book sized for 256k orders that holds 40k uses a
//! table of 128k entries (2 MiB) rather than 512k (8 MiB), so its hot lines fit in a
//! core's L2. The table never shrinks: it stays at the book's peak.

use super::OrderIds;

/// An empty entry's slot.
const EMPTY: u32 = u32::MAX;

/// The smallest active table.
const MIN_ACTIVE: usize = 1 << 10;

/// Fibonacci hashing's multiplier.
const PHI: u64 = 0x9E37_79B9_7F4A_7C15;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(16))]
struct Entry {
    id: u64,
    slot: u32,
}

const VACANT: Entry = Entry { id: 0, slot: EMPTY };

/// Open-addressing map from order id to arena slot (see the module docs).
#[derive(Debug)]
pub struct OpenIds {
    /// `max` entries; only `[0, mask + 1)` is in use.
    table: Vec<Entry>,
    /// `active - 1` (`active` a power of two).
    mask: usize,
    /// `64 - log2(active)`.
    shift: u32,
    len: usize,
    /// Where live entries wait while the table doubles (`max / 4` entries: at most
    /// half of a half-size table).
    staging: Vec<Entry>,
}

impl OpenIds {
    /// An empty table for `capacity` live ids, starting at `MIN_ACTIVE` entries.
    pub fn new(capacity: usize) -> OpenIds {
        let max = capacity
            .max(1)
            .saturating_mul(2)
            .next_power_of_two()
            .max(MIN_ACTIVE);
        let active = MIN_ACTIVE.min(max);
        OpenIds {
            table: crate::memory::filled_vec(max, VACANT),
            mask: active - 1,
            shift: 64 - active.trailing_zeros(),
            len: 0,
            staging: crate::memory::filled_vec((max / 4).max(1), VACANT),
        }
    }

    /// Entries in use (a power of two; grows with the live count).
    pub fn active(&self) -> usize {
        self.mask + 1
    }

    #[inline]
    fn home(&self, id: u64) -> usize {
        (id.wrapping_mul(PHI) >> self.shift) as usize
    }

    /// The index of `id`'s entry, or of the empty entry that ends its chain.
    #[inline]
    fn find(&self, id: u64) -> (usize, bool) {
        let mut i = self.home(id);
        loop {
            let e = self.table[i];
            if e.slot == EMPTY {
                return (i, false);
            }
            if e.id == id {
                return (i, true);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Doubles the active table, rehashing every live entry.
    #[cold]
    fn grow(&mut self) {
        let active = self.mask + 1;
        let mut n = 0;
        for e in &mut self.table[..active] {
            if e.slot != EMPTY {
                self.staging[n] = *e;
                n += 1;
                *e = VACANT;
            }
        }
        let active = active * 2;
        self.mask = active - 1;
        self.shift = 64 - active.trailing_zeros();
        for k in 0..n {
            let e = self.staging[k];
            let (i, _) = self.find(e.id);
            self.table[i] = e;
        }
    }
}

impl OrderIds for OpenIds {
    fn with_capacity(capacity: usize) -> OpenIds {
        OpenIds::new(capacity)
    }

    const BENCH_SUFFIX: &'static str = "open ids";

    #[inline]
    fn get(&self, id: u64) -> Option<u32> {
        match self.find(id) {
            (i, true) => Some(self.table[i].slot),
            _ => None,
        }
    }

    #[inline]
    fn insert(&mut self, id: u64, slot: u32) {
        debug_assert!(slot != EMPTY && !self.contains(id));
        // Load at most one half; the table's full size keeps that true at capacity.
        if (self.len + 1) * 2 > self.mask + 1 && self.mask + 1 < self.table.len() {
            self.grow();
        }
        let (i, found) = self.find(id);
        debug_assert!(!found);
        self.table[i] = Entry { id, slot };
        self.len += 1;
    }

    #[inline]
    fn remove(&mut self, id: u64) -> Option<u32> {
        let (mut hole, found) = self.find(id);
        if !found {
            return None;
        }
        let slot = self.table[hole].slot;
        // Backward-shift deletion: pull later entries of the chain into the hole
        // when their home is not strictly between the hole and them (cyclically).
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let e = self.table[j];
            if e.slot == EMPTY {
                break;
            }
            let home = self.home(e.id);
            // Distance from home to j and from hole to j, both cyclic.
            if (j.wrapping_sub(home) & self.mask) >= (j.wrapping_sub(hole) & self.mask) {
                self.table[hole] = e;
                hole = j;
            }
        }
        self.table[hole] = VACANT;
        self.len -= 1;
        Some(slot)
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn prefetch(&self, id: u64) {
        crate::prefetch::prefetch(&self.table[self.home(id)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn grows_with_the_live_count_up_to_its_capacity() {
        let cap = 10_000;
        let mut t = OpenIds::new(cap);
        assert_eq!(t.active(), MIN_ACTIVE);
        // Shuffled, sparse ids (a multiplicative permutation of 0..cap, spread out).
        let ids: Vec<u64> = (0..cap as u64)
            .map(|i| (i * 7_919 % cap as u64) * 1_000_003 + 17)
            .collect();
        for (s, &id) in ids.iter().enumerate() {
            t.insert(id, s as u32);
        }
        assert_eq!(t.len(), cap);
        assert!(t.active() >= 2 * cap && t.active() <= 4 * cap);
        for (s, &id) in ids.iter().enumerate() {
            assert_eq!(t.get(id), Some(s as u32));
        }
        assert_eq!(t.get(18), None);
        for &id in &ids[..cap / 2] {
            assert!(t.remove(id).is_some());
        }
        assert_eq!(t.len(), cap / 2);
        for (s, &id) in ids.iter().enumerate().skip(cap / 2) {
            assert_eq!(t.get(id), Some(s as u32), "id {id} lost by a removal");
        }
    }

    #[test]
    fn colliding_chains_survive_removal_across_the_wrap() {
        // Ids whose home is the last bucket: their chain wraps to the start.
        let mut t = OpenIds::new(64);
        let last = t.mask;
        let ids: Vec<u64> = (0u64..).filter(|&id| t.home(id) == last).take(4).collect();
        for (s, &id) in ids.iter().enumerate() {
            t.insert(id, s as u32);
        }
        assert_eq!(t.remove(ids[0]), Some(0));
        assert_eq!(t.remove(ids[2]), Some(2));
        assert_eq!((t.get(ids[1]), t.get(ids[3])), (Some(1), Some(3)));
        assert_eq!(t.get(ids[0]), None);
    }

    proptest! {
        /// The table behaves as a plain map whatever the ids, through growth and
        /// backward-shift removals.
        #[test]
        fn prop_matches_a_btreemap(
            ops in proptest::collection::vec((0u8..4, 0u64..3_000, any::<u64>()), 1..3_000),
        ) {
            let cap = 1_500;
            let mut t = OpenIds::new(cap);
            let mut model: BTreeMap<u64, u32> = BTreeMap::new();
            for (i, (kind, small, big)) in ops.into_iter().enumerate() {
                let id = match kind {
                    0 | 1 => small,
                    2 => big,
                    _ => *model.keys().nth(small as usize % model.len().max(1)).unwrap_or(&small),
                };
                if kind == 3 || (model.contains_key(&id) && i % 3 == 0) {
                    prop_assert_eq!(t.remove(id), model.remove(&id));
                } else if !model.contains_key(&id) && model.len() < cap {
                    t.insert(id, i as u32);
                    model.insert(id, i as u32);
                }
                prop_assert_eq!(t.len(), model.len());
                prop_assert_eq!(t.get(id), model.get(&id).copied());
            }
            for (&id, &slot) in &model {
                prop_assert_eq!(t.get(id), Some(slot));
            }
        }
    }
}
