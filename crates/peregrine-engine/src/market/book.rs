//! One L2 book: price levels per side, kept sorted, bounded.
//!
//! Each side is a `Vec` sorted best first, with room for [`MAX_LEVELS`] reserved up
//! front: an update is a binary search and at most one `memmove` within the vector,
//! never an allocation. A side that is full keeps its best levels: a new level worse
//! than all of them is dropped (counted in `overflow`), a better one pushes out the
//! worst. The top of the book, which is all that is published, is always exact.

use peregrine_strategy::md::{BookView, Level};
use peregrine_types::{InstrumentId, Price, Qty, Side};

/// Levels kept per side.
pub const MAX_LEVELS: usize = 1_024;

/// One book.
#[derive(Debug, Clone)]
pub struct L2Book {
    /// Bids, highest first.
    bids: Vec<Level>,
    /// Asks, lowest first.
    asks: Vec<Level>,
    /// Levels dropped because a side was full.
    pub overflow: u64,
}

impl Default for L2Book {
    fn default() -> Self {
        L2Book {
            bids: Vec::with_capacity(MAX_LEVELS),
            asks: Vec::with_capacity(MAX_LEVELS),
            overflow: 0,
        }
    }
}

impl L2Book {
    /// Sets a level's aggregate; quantity 0 (or less) removes it.
    pub fn update(&mut self, side: Side, price: Price, qty: Qty, orders: u32) {
        /// Whether price `a` is better than `b` on the side.
        type Better = fn(i64, i64) -> bool;
        let (levels, better): (&mut Vec<Level>, Better) = match side {
            Side::Buy => (&mut self.bids, |a, b| a > b),
            Side::Sell => (&mut self.asks, |a, b| a < b),
        };
        let p = price.units();
        // Index of the first level not better than `p`.
        let at = levels.partition_point(|l| better(l.price.units(), p));
        let found = levels.get(at).is_some_and(|l| l.price.units() == p);
        if qty.lots() <= 0 {
            if found {
                levels.remove(at);
            }
            return;
        }
        let level = Level { price, qty, orders };
        if found {
            levels[at] = level;
        } else if levels.len() < MAX_LEVELS {
            levels.insert(at, level);
        } else if at < levels.len() {
            levels.pop();
            levels.insert(at, level);
            self.overflow += 1;
        } else {
            self.overflow += 1;
        }
    }

    /// Removes every level.
    pub fn clear(&mut self) {
        self.bids.clear();
        self.asks.clear();
    }

    /// Bids, best first.
    pub fn bids(&self) -> &[Level] {
        &self.bids
    }

    /// Asks, best first.
    pub fn asks(&self) -> &[Level] {
        &self.asks
    }

    /// The top levels as a [`BookView`] (without version or times).
    pub fn view(&self, venue: u32, instrument: InstrumentId) -> BookView {
        BookView::new(venue, instrument, &self.bids, &self.asks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn upd(b: &mut L2Book, side: Side, p: i64, q: i64) {
        b.update(side, Price::from_raw(p), Qty::from_raw(q), 1);
    }

    #[test]
    fn levels_stay_sorted_best_first() {
        let mut b = L2Book::default();
        upd(&mut b, Side::Buy, 99, 1);
        upd(&mut b, Side::Buy, 101, 2);
        upd(&mut b, Side::Buy, 100, 3);
        upd(&mut b, Side::Sell, 105, 1);
        upd(&mut b, Side::Sell, 103, 1);
        let bids: Vec<i64> = b.bids().iter().map(|l| l.price.units()).collect();
        assert_eq!(bids, vec![101, 100, 99]);
        assert_eq!(b.asks()[0].price.units(), 103);
        upd(&mut b, Side::Buy, 100, 0);
        upd(&mut b, Side::Buy, 50, 0); // absent: nothing happens
        assert_eq!(b.bids().len(), 2);
        upd(&mut b, Side::Buy, 101, 7);
        assert_eq!(b.bids()[0].qty.lots(), 7);
        let v = b.view(3, InstrumentId(1));
        assert_eq!(v.mid(), Some(Price::from_raw(102)));
        b.clear();
        assert!(b.view(3, InstrumentId(1)).is_empty());
    }

    #[test]
    fn a_full_side_keeps_its_best_levels() {
        let mut b = L2Book::default();
        for p in 0..MAX_LEVELS as i64 {
            upd(&mut b, Side::Buy, 1_000 + p, 1);
        }
        upd(&mut b, Side::Buy, 10, 1); // worse than all: dropped
        upd(&mut b, Side::Buy, 5_000, 1); // best: the worst goes
        assert_eq!(b.overflow, 2);
        assert_eq!(b.bids().len(), MAX_LEVELS);
        assert_eq!(b.bids()[0].price.units(), 5_000);
        assert_eq!(b.bids().last().unwrap().price.units(), 1_001);
    }

    proptest! {
        /// Against a `BTreeMap` model: same levels, same order, after any updates.
        #[test]
        fn prop_book_matches_a_map(ops in proptest::collection::vec((any::<bool>(), 1i64..60, 0i64..4), 0..300)) {
            let mut b = L2Book::default();
            let mut model: [BTreeMap<i64, i64>; 2] = Default::default();
            for (buy, p, q) in ops {
                let side = if buy { Side::Buy } else { Side::Sell };
                upd(&mut b, side, p, q);
                let m = &mut model[side.index()];
                if q == 0 { m.remove(&p); } else { m.insert(p, q); }
            }
            let bids: Vec<(i64, i64)> = b.bids().iter().map(|l| (l.price.units(), l.qty.lots())).collect();
            let asks: Vec<(i64, i64)> = b.asks().iter().map(|l| (l.price.units(), l.qty.lots())).collect();
            let want_bids: Vec<(i64, i64)> = model[0].iter().rev().map(|(p, q)| (*p, *q)).collect();
            let want_asks: Vec<(i64, i64)> = model[1].iter().map(|(p, q)| (*p, *q)).collect();
            prop_assert_eq!(bids, want_bids);
            prop_assert_eq!(asks, want_asks);
        }
    }
}
