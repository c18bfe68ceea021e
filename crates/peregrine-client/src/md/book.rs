//! An L2 book built from the feed: one instrument's price levels.

use std::collections::BTreeMap;

use peregrine_types::Side;

/// A price level as (price, quantity) in raw units.
pub type Level = (i64, i64);

/// An L2 book built from the feed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct L2Book {
    bids: BTreeMap<i64, i64>,
    asks: BTreeMap<i64, i64>,
}

impl L2Book {
    /// Applies a level update (quantity 0 removes the level).
    pub fn update(&mut self, side: Side, price: i64, qty: i64) {
        let levels = match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        };
        if qty == 0 {
            levels.remove(&price);
        } else {
            levels.insert(price, qty);
        }
    }

    /// Best bid and best ask as (price, qty).
    pub fn top(&self) -> (Option<Level>, Option<Level>) {
        let bid = self.bids.iter().next_back().map(|(p, q)| (*p, *q));
        let ask = self.asks.iter().next().map(|(p, q)| (*p, *q));
        (bid, ask)
    }

    /// Levels of one side, best first.
    pub fn levels(&self, side: Side) -> Vec<Level> {
        match side {
            Side::Buy => self.bids.iter().rev().map(|(p, q)| (*p, *q)).collect(),
            Side::Sell => self.asks.iter().map(|(p, q)| (*p, *q)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l2_book_tracks_the_top() {
        let mut b = L2Book::default();
        b.update(Side::Buy, 99, 5);
        b.update(Side::Buy, 100, 2);
        b.update(Side::Sell, 102, 1);
        assert_eq!(b.top(), (Some((100, 2)), Some((102, 1))));
        assert_eq!(b.levels(Side::Buy), vec![(100, 2), (99, 5)]);
        b.update(Side::Buy, 100, 0);
        assert_eq!(b.top().0, Some((99, 5)));
    }
}
