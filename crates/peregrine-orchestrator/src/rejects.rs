//! Counts of the engine's own reject reasons and of the venues' reasons, in storage
//! reserved up front (no allocation when a reason is first seen).

use rustc_hash::FxHashMap;

/// The engine's reasons are 201..; this many are counted one by one.
const ENGINE_CODES: usize = 32;
/// Distinct (venue, venue reason) pairs counted one by one; beyond, they add up under
/// reason `u16::MAX` of their venue.
const VENUE_PAIRS: usize = 512;

/// Reject counters.
#[derive(Debug, Clone)]
pub(crate) struct RejectCounts {
    engine: [u64; ENGINE_CODES],
    /// Codes above the table (counted together).
    engine_other: u64,
    venue: FxHashMap<(u32, u16), u64>,
}

impl RejectCounts {
    pub(crate) fn new() -> RejectCounts {
        RejectCounts {
            engine: [0; ENGINE_CODES],
            engine_other: 0,
            // Twice the pairs: never grows (see the order table in `state.rs`).
            venue: FxHashMap::with_capacity_and_hasher(VENUE_PAIRS * 2, Default::default()),
        }
    }

    /// Counts engine reason `code` (201..).
    #[inline]
    pub(crate) fn count_engine(&mut self, code: u16) {
        match (code as usize).checked_sub(201) {
            Some(i) if i < ENGINE_CODES => self.engine[i] += 1,
            _ => self.engine_other += 1,
        }
    }

    /// How often engine reason `code` was given.
    pub(crate) fn engine(&self, code: u16) -> u64 {
        (code as usize)
            .checked_sub(201)
            .and_then(|i| self.engine.get(i))
            .copied()
            .unwrap_or(0)
    }

    /// Every engine reason given, with its count, by code.
    pub(crate) fn engine_counts(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.engine
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| (201 + i as u16, *n))
            .chain((self.engine_other > 0).then_some((0, self.engine_other)))
    }

    /// Counts a new order venue `venue` rejected for its reason `code`.
    #[inline]
    pub(crate) fn count_venue(&mut self, venue: u32, code: u16) {
        let key = if self.venue.len() < VENUE_PAIRS || self.venue.contains_key(&(venue, code)) {
            (venue, code)
        } else {
            (venue, u16::MAX)
        };
        *self.venue.entry(key).or_insert(0) += 1;
    }

    /// Every (venue, reason) with its count, sorted.
    pub(crate) fn venue_counts(&self) -> Vec<((u32, u16), u64)> {
        let mut v: Vec<_> = self.venue.iter().map(|(k, n)| (*k, *n)).collect();
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_codes_count_in_place_and_beyond() {
        let mut r = RejectCounts::new();
        r.count_engine(201);
        r.count_engine(207);
        r.count_engine(207);
        r.count_engine(999);
        assert_eq!((r.engine(201), r.engine(207), r.engine(208)), (1, 2, 0));
        let all: Vec<_> = r.engine_counts().collect();
        assert_eq!(all, vec![(201, 1), (207, 2), (0, 1)]);
    }

    #[test]
    fn venue_pairs_beyond_the_table_add_up() {
        let mut r = RejectCounts::new();
        for code in 0..(VENUE_PAIRS as u16 + 10) {
            r.count_venue(0, code);
        }
        r.count_venue(0, 3);
        let v = r.venue_counts();
        assert_eq!(v.len(), VENUE_PAIRS + 1);
        assert!(v.contains(&((0, 3), 2)));
        assert!(v.contains(&((0, u16::MAX), 10)));
    }
}
