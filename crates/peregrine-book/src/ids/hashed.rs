//! The baseline id map: `hashbrown` with FxHash.

use hashbrown::HashMap;
use rustc_hash::FxBuildHasher;

use super::OrderIds;

/// `hashbrown::HashMap<u64, u32>` with FxHash, reserved at twice the capacity so that
/// tombstones are always cleaned by an in-place rehash, never by growing.
#[derive(Debug)]
pub struct HashIds {
    map: HashMap<u64, u32, FxBuildHasher>,
}

impl HashIds {
    /// An empty map able to hold `capacity` ids without allocating. With `prefault`,
    /// every bucket is written once here so that steady state never takes a
    /// first-touch page fault (reserving maps memory; only writing it makes the pages
    /// resident); that costs ~2 inserts per id of capacity.
    pub(crate) fn reserved(capacity: usize, prefault: bool) -> HashIds {
        let mut map = HashMap::with_hasher(FxBuildHasher);
        map.reserve(capacity.saturating_mul(2).max(16));
        if prefault {
            for k in 0..map.capacity() as u64 {
                map.insert(k, 0);
            }
            map.clear();
        }
        HashIds { map }
    }
}

impl OrderIds for HashIds {
    fn with_capacity(capacity: usize) -> HashIds {
        HashIds::reserved(capacity, true)
    }

    const BENCH_SUFFIX: &'static str = "hashbrown ids";

    #[inline]
    fn get(&self, id: u64) -> Option<u32> {
        self.map.get(&id).copied()
    }

    #[inline]
    fn contains(&self, id: u64) -> bool {
        self.map.contains_key(&id)
    }

    #[inline]
    fn insert(&mut self, id: u64, slot: u32) {
        self.map.insert(id, slot);
    }

    #[inline]
    fn remove(&mut self, id: u64) -> Option<u32> {
        self.map.remove(&id)
    }

    #[inline]
    fn len(&self) -> usize {
        self.map.len()
    }
}
