//! The book under the C ABI: what the adapter needs from a book, implemented by the
//! fast [`OrderBook`] (what the library ships) and by the naive [`ReferenceBook`]
//! (what the tests compare it with).

use peregrine_book::{
    Book, Command, EventSink, LevelIndex, OrderBook, OrderIds, ReferenceBook, Stage,
};
use peregrine_types::{Price, Side};

/// A book the adapter can drive and query. Prices passed to [`Matcher::depth`] are
/// inside the instrument's band (the adapter checks first).
pub trait Matcher {
    /// Applies one command.
    fn execute<S: EventSink>(&mut self, cmd: &Command, sink: &mut S);
    /// The best price on `side`, if any order rests there.
    fn best(&self, side: Side) -> Option<i64>;
    /// Total resting quantity at `price` on `side` (0: none).
    fn depth(&self, side: Side, price: i64) -> u64;
    /// A hint that `cmd` will run soon (see [`OrderBook::prefetch`]); changes nothing.
    #[inline]
    fn prefetch(&self, _cmd: &Command, _stage: Stage) {}
}

impl<L: LevelIndex, I: OrderIds> Matcher for OrderBook<L, I> {
    #[inline]
    fn execute<S: EventSink>(&mut self, cmd: &Command, sink: &mut S) {
        OrderBook::execute(self, cmd, sink);
    }

    #[inline]
    fn best(&self, side: Side) -> Option<i64> {
        OrderBook::best(self, side).map(|(p, _, _)| p.units())
    }

    #[inline]
    fn prefetch(&self, cmd: &Command, stage: Stage) {
        OrderBook::prefetch(self, cmd, stage);
    }

    #[inline]
    fn depth(&self, side: Side, price: i64) -> u64 {
        self.level_at(side, Price::from_raw(price))
            .map_or(0, |(q, _)| q.lots().unsigned_abs())
    }
}

/// Answers from the reference book's full order list (linear: for tests).
impl Matcher for ReferenceBook {
    fn execute<S: EventSink>(&mut self, cmd: &Command, sink: &mut S) {
        Book::execute(self, cmd, sink);
    }

    fn best(&self, side: Side) -> Option<i64> {
        // Orders come bids best first, then asks best first.
        let mut best = None;
        self.for_each_order(&mut |o| {
            if o.side == side && best.is_none() {
                best = Some(o.price.units());
            }
        });
        best
    }

    fn depth(&self, side: Side, price: i64) -> u64 {
        let mut total = 0u64;
        self.for_each_order(&mut |o| {
            if o.side == side && o.price.units() == price {
                total += o.shown.lots().unsigned_abs();
            }
        });
        total
    }
}
