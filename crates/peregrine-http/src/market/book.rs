//! One instrument's L2 book as the API publishes it, with Binance's update ids.
//!
//! Every level change the book applies takes the next **update id** (per symbol,
//! from 1, contiguous). `GET /api/v3/depth` returns `lastUpdateId` = the id of the
//! last change in the snapshot; a depth diff event carries `U` (its first change's
//! id) and `u` (its last) and, per changed level, the level's quantity after `u`.
//! A client that follows Binance's documented procedure (buffer events, fetch a
//! snapshot, drop events with `u <= lastUpdateId`, check the first has
//! `U <= lastUpdateId + 1 <= u`, then that each `U` is the previous `u + 1`) keeps
//! an exact copy; `tests::prop_documented_sync_reconstructs_the_book` proves it.
//!
//! A whole new book (from a snapshot after a feed gap or an exchange restart) is
//! applied as the changes that turn the old book into the new one, so the diff
//! stream stays continuous across it.

use std::collections::BTreeMap;

use peregrine_types::Side;

/// Level changes accumulated for one diff event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// First update id in it (0: empty).
    pub first: u64,
    /// Last update id in it.
    pub last: u64,
    /// Changed bids: price → quantity after `last` (0: gone).
    pub bids: BTreeMap<i64, i64>,
    /// Changed asks.
    pub asks: BTreeMap<i64, i64>,
}

impl Diff {
    /// Nothing accumulated?
    pub fn is_empty(&self) -> bool {
        self.first == 0
    }

    fn record(&mut self, id: u64, side: Side, price: i64, qty: i64) {
        if self.first == 0 {
            self.first = id;
        }
        self.last = id;
        match side {
            Side::Buy => self.bids.insert(price, qty),
            Side::Sell => self.asks.insert(price, qty),
        };
    }

    /// Takes the accumulated diff, leaving this one empty.
    pub fn take(&mut self) -> Diff {
        std::mem::take(self)
    }
}

/// A price level: (price, quantity) in units.
pub type Level = (i64, i64);
/// Best bid and best ask.
pub type Top = (Option<Level>, Option<Level>);
/// Bids and asks, best first.
pub type Sides = (Vec<Level>, Vec<Level>);

/// Update speeds of the diff streams.
pub const SPEEDS: usize = 3;

/// An L2 book with update ids and one diff accumulator per stream speed.
#[derive(Debug, Clone, Default)]
pub struct Book {
    bids: BTreeMap<i64, i64>,
    asks: BTreeMap<i64, i64>,
    update_id: u64,
    /// Accumulators, one per speed (real time, 100 ms, 1000 ms).
    pub diffs: [Diff; SPEEDS],
}

impl Book {
    /// Id of the last change applied (0: none yet).
    pub fn update_id(&self) -> u64 {
        self.update_id
    }

    /// Sets a level (0 removes it); a change takes the next update id. Setting a
    /// level to what it already is changes nothing.
    pub fn set(&mut self, side: Side, price: i64, qty: i64) {
        let levels = match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        };
        let old = levels.get(&price).copied().unwrap_or(0);
        if old == qty {
            return;
        }
        if qty == 0 {
            levels.remove(&price);
        } else {
            levels.insert(price, qty);
        }
        self.update_id += 1;
        for d in &mut self.diffs {
            d.record(self.update_id, side, price, qty);
        }
    }

    /// Replaces the whole book (bids and asks as (price, qty), any order), as the
    /// changes from the old book to the new one.
    pub fn replace(&mut self, bids: &[(i64, i64)], asks: &[(i64, i64)]) {
        for (side, new) in [(Side::Buy, bids), (Side::Sell, asks)] {
            let wanted: BTreeMap<i64, i64> = new.iter().copied().filter(|l| l.1 > 0).collect();
            let old: Vec<i64> = self.levels(side).keys().copied().collect();
            for p in old {
                if !wanted.contains_key(&p) {
                    self.set(side, p, 0);
                }
            }
            for (p, q) in wanted {
                self.set(side, p, q);
            }
        }
    }

    fn levels(&self, side: Side) -> &BTreeMap<i64, i64> {
        match side {
            Side::Buy => &self.bids,
            Side::Sell => &self.asks,
        }
    }

    /// The best `n` bids (highest first) and asks (lowest first).
    pub fn top(&self, n: usize) -> Sides {
        let bids = self
            .bids
            .iter()
            .rev()
            .take(n)
            .map(|(p, q)| (*p, *q))
            .collect();
        let asks = self.asks.iter().take(n).map(|(p, q)| (*p, *q)).collect();
        (bids, asks)
    }

    /// What a market order spending (a buy) or raising (a sell) `quote` (price
    /// units × quantity units) takes from this book: the quantity, in multiples of
    /// `lot`, whose cost at the levels it would meet is at most `quote`, and the
    /// worst price it reaches (`None`: not one lot).
    pub fn qty_for_quote(&self, side: Side, quote: i128, lot: i64) -> (i64, Option<i64>) {
        let lot = lot.max(1);
        let levels: Box<dyn Iterator<Item = (&i64, &i64)>> = match side {
            Side::Buy => Box::new(self.asks.iter()),
            Side::Sell => Box::new(self.bids.iter().rev()),
        };
        let (mut left, mut qty, mut worst) = (quote, 0i64, None);
        for (&p, &q) in levels {
            let cost = i128::from(p) * i128::from(q);
            let take = if cost <= left {
                q
            } else {
                let lots = left / (i128::from(p) * i128::from(lot));
                i64::try_from(lots).unwrap_or(0) * lot
            };
            if take == 0 {
                break;
            }
            left -= i128::from(p) * i128::from(take);
            qty += take;
            worst = Some(p);
            if take < q {
                break;
            }
        }
        (qty, worst)
    }

    /// Best bid and best ask.
    pub fn best(&self) -> Top {
        (
            self.bids.iter().next_back().map(|(p, q)| (*p, *q)),
            self.asks.iter().next().map(|(p, q)| (*p, *q)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_quote_amount_becomes_the_lots_it_buys_at_the_levels_it_meets() {
        let mut b = Book::default();
        b.set(Side::Sell, 100, 10);
        b.set(Side::Sell, 200, 10);
        b.set(Side::Buy, 90, 5);
        // 10 at 100 (1000), then 2 lots of 2 at 200 (800): 1800 of 2000.
        assert_eq!(b.qty_for_quote(Side::Buy, 2000, 2), (14, Some(200)));
        assert_eq!(b.qty_for_quote(Side::Buy, 1000, 1), (10, Some(100)));
        assert_eq!(b.qty_for_quote(Side::Buy, 99, 1), (0, None));
        assert_eq!(b.qty_for_quote(Side::Buy, 1_000_000, 1), (20, Some(200)));
        // A sell raises at most the quote: 3 at 90.
        assert_eq!(b.qty_for_quote(Side::Sell, 300, 1), (3, Some(90)));
    }

    proptest! {
        /// The quantity never costs more than the quote at the book's levels, and one
        /// more would (or the side is used up).
        #[test]
        fn prop_quote_quantity_is_the_most_the_quote_buys(
            asks in proptest::collection::btree_map(1i64..500, 1i64..20, 0..8),
            quote in 0i128..20_000,
        ) {
            let mut b = Book::default();
            for (&p, &q) in &asks {
                b.set(Side::Sell, p, q);
            }
            let (qty, worst) = b.qty_for_quote(Side::Buy, quote, 1);
            let cost = |n: i64| {
                let (mut left, mut c) = (n, 0i128);
                for (&p, &q) in &asks {
                    let t = left.min(q);
                    c += i128::from(p) * i128::from(t);
                    left -= t;
                }
                (c, left)
            };
            let (c, left) = cost(qty);
            prop_assert_eq!(left, 0);
            prop_assert!(c <= quote);
            let total: i64 = asks.values().sum();
            if qty < total {
                prop_assert!(cost(qty + 1).0 > quote);
            }
            prop_assert_eq!(worst.is_some(), qty > 0);
        }
    }

    #[test]
    fn changes_take_contiguous_ids() {
        let mut b = Book::default();
        b.set(Side::Buy, 100, 5);
        b.set(Side::Buy, 100, 5); // no change
        b.set(Side::Sell, 101, 2);
        assert_eq!(b.update_id(), 2);
        let d = b.diffs[0].take();
        assert_eq!((d.first, d.last), (1, 2));
        assert_eq!(d.bids.get(&100), Some(&5));
        b.set(Side::Buy, 100, 0);
        let d = b.diffs[0].take();
        assert_eq!((d.first, d.last), (3, 3));
        assert_eq!(d.bids.get(&100), Some(&0));
        assert_eq!(b.best(), (None, Some((101, 2))));
    }

    #[test]
    fn replace_emits_the_difference() {
        let mut b = Book::default();
        b.set(Side::Buy, 100, 5);
        b.set(Side::Buy, 99, 1);
        b.diffs[0].take();
        b.replace(&[(99, 1), (98, 7)], &[(103, 2)]);
        let d = b.diffs[0].take();
        assert_eq!(d.bids, BTreeMap::from([(100, 0), (98, 7)]));
        assert_eq!(d.asks, BTreeMap::from([(103, 2)]));
        assert_eq!(b.top(10), (vec![(99, 1), (98, 7)], vec![(103, 2)]));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Set(bool, i64, i64),
        Flush,
        Snapshot,
        Replace(Vec<(i64, i64)>),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => (any::<bool>(), 95i64..105, 0i64..4).prop_map(|(b, p, q)| Op::Set(b, p, q)),
            2 => Just(Op::Flush),
            1 => Just(Op::Snapshot),
            1 => proptest::collection::vec((95i64..105, 1i64..4), 0..6).prop_map(Op::Replace),
        ]
    }

    /// A client that follows Binance's "how to manage a local order book"
    /// procedure ends with the server's book, from any point it joins at.
    fn follow(ops: &[Op], join_at: usize) -> Result<(), TestCaseError> {
        let mut server = Book::default();
        let mut events: Vec<Diff> = Vec::new();
        let mut snapshot: Option<(u64, Vec<Level>, Vec<Level>)> = None;
        for (i, op) in ops.iter().enumerate() {
            match op {
                Op::Set(buy, p, q) => server.set(if *buy { Side::Buy } else { Side::Sell }, *p, *q),
                Op::Flush => {
                    let d = server.diffs[1].take();
                    if !d.is_empty() && i >= join_at {
                        events.push(d);
                    }
                }
                Op::Snapshot if i >= join_at && snapshot.is_none() => {
                    let (b, a) = server.top(usize::MAX);
                    snapshot = Some((server.update_id(), b, a));
                }
                Op::Snapshot => {}
                Op::Replace(levels) => {
                    let bids: Vec<_> = levels.iter().copied().filter(|l| l.0 < 100).collect();
                    let asks: Vec<_> = levels.iter().copied().filter(|l| l.0 >= 100).collect();
                    server.replace(&bids, &asks);
                }
            }
        }
        let last = server.diffs[1].take();
        if !last.is_empty() {
            events.push(last);
        }
        let Some((last_id, bids, asks)) = snapshot else {
            return Ok(());
        };
        let mut book = Book::default();
        book.replace(&bids, &asks);
        let mut prev_u: Option<u64> = None;
        for e in events.into_iter().filter(|e| e.last > last_id) {
            match prev_u {
                None => prop_assert!(e.first <= last_id + 1 && e.last > last_id),
                Some(u) => prop_assert_eq!(e.first, u + 1),
            }
            prev_u = Some(e.last);
            for (p, q) in e.bids {
                book.set(Side::Buy, p, q);
            }
            for (p, q) in e.asks {
                book.set(Side::Sell, p, q);
            }
        }
        prop_assert_eq!(book.top(usize::MAX), server.top(usize::MAX));
        Ok(())
    }

    proptest! {
        #[test]
        fn prop_documented_sync_reconstructs_the_book(
            ops in proptest::collection::vec(op(), 1..120),
            join in 0usize..120,
        ) {
            follow(&ops, join.min(ops.len()))?;
        }
    }
}
