//! What a strategy sees of a book: the top [`DEPTH`] levels per side of one (venue,
//! instrument), copied out of shared memory as one whole version.

use peregrine_types::{InstrumentId, Price, Qty};

/// Levels per side the engine publishes.
pub const DEPTH: usize = 10;

/// Words of one published book (see [`BookView::to_words`]).
pub const BOOK_WORDS: usize = 4 + 2 * 3 * DEPTH;

/// One price level: the total quantity resting at `price` and how many orders.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Level {
    /// Price.
    pub price: Price,
    /// Total quantity at the price.
    pub qty: Qty,
    /// Orders at the price (0 when the venue does not say).
    pub orders: u32,
}

/// A book as published by the engine's market-data thread.
///
/// Times are `CLOCK_MONOTONIC` nanoseconds (the clock of [`crate::clock::now_ns`]);
/// an exchange's own timestamps are converted when the engine receives them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BookView {
    /// Venue index (order of `[[venues]]` in the engine config).
    pub venue: u32,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Version: how many updates the engine has applied to this book (0: nothing yet).
    pub seq: u64,
    /// When the venue made the last change in this version (its timestamp).
    pub exchange_ts: u64,
    /// When the engine received the last change.
    pub recv_ts: u64,
    bids: [Level; DEPTH],
    asks: [Level; DEPTH],
    bid_count: u8,
    ask_count: u8,
}

impl BookView {
    /// A book with the given levels (best first; at most [`DEPTH`] of each are kept).
    pub fn new(venue: u32, instrument: InstrumentId, bids: &[Level], asks: &[Level]) -> BookView {
        let mut v = BookView {
            venue,
            instrument,
            ..BookView::default()
        };
        v.bid_count = bids.len().min(DEPTH) as u8;
        v.ask_count = asks.len().min(DEPTH) as u8;
        v.bids[..v.bid_count as usize].copy_from_slice(&bids[..v.bid_count as usize]);
        v.asks[..v.ask_count as usize].copy_from_slice(&asks[..v.ask_count as usize]);
        v
    }

    /// Bids, best (highest) first.
    pub fn bids(&self) -> &[Level] {
        &self.bids[..self.bid_count as usize]
    }

    /// Asks, best (lowest) first.
    pub fn asks(&self) -> &[Level] {
        &self.asks[..self.ask_count as usize]
    }

    /// Best bid.
    pub fn best_bid(&self) -> Option<Level> {
        self.bids().first().copied()
    }

    /// Best ask.
    pub fn best_ask(&self) -> Option<Level> {
        self.asks().first().copied()
    }

    /// Mid price, rounded down to a price unit, when both sides have a level.
    pub fn mid(&self) -> Option<Price> {
        let (b, a) = (self.best_bid()?, self.best_ask()?);
        Some(Price::from_raw(
            (b.price.units() + a.price.units()).div_euclid(2),
        ))
    }

    /// Best ask minus best bid, price units.
    pub fn spread(&self) -> Option<i64> {
        Some(self.best_ask()?.price.units() - self.best_bid()?.price.units())
    }

    /// No level on either side.
    pub fn is_empty(&self) -> bool {
        self.bid_count == 0 && self.ask_count == 0
    }

    /// The shared-memory encoding (venue and instrument are the slot's, not stored).
    pub fn to_words(&self, out: &mut [u64; BOOK_WORDS]) {
        out[0] = self.seq;
        out[1] = self.exchange_ts;
        out[2] = self.recv_ts;
        out[3] = u64::from(self.bid_count) | (u64::from(self.ask_count) << 8);
        for (i, l) in self.bids.iter().chain(self.asks.iter()).enumerate() {
            out[4 + 3 * i] = l.price.units() as u64;
            out[5 + 3 * i] = l.qty.lots() as u64;
            out[6 + 3 * i] = u64::from(l.orders);
        }
    }

    /// Decodes [`BookView::to_words`]; level counts above [`DEPTH`] are clamped, so a
    /// garbled slot gives a garbled book, never a panic.
    pub fn from_words(venue: u32, instrument: InstrumentId, w: &[u64; BOOK_WORDS]) -> BookView {
        let mut v = BookView {
            venue,
            instrument,
            seq: w[0],
            exchange_ts: w[1],
            recv_ts: w[2],
            bid_count: ((w[3] & 0xff) as usize).min(DEPTH) as u8,
            ask_count: (((w[3] >> 8) & 0xff) as usize).min(DEPTH) as u8,
            ..BookView::default()
        };
        for i in 0..2 * DEPTH {
            let l = Level {
                price: Price::from_raw(w[4 + 3 * i] as i64),
                qty: Qty::from_raw(w[5 + 3 * i] as i64),
                orders: w[6 + 3 * i] as u32,
            };
            if i < DEPTH {
                v.bids[i] = l;
            } else {
                v.asks[i - DEPTH] = l;
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lvl(p: i64, q: i64) -> Level {
        Level {
            price: Price::from_raw(p),
            qty: Qty::from_raw(q),
            orders: 1,
        }
    }

    #[test]
    fn words_round_trip_and_accessors() {
        let mut v = BookView::new(
            2,
            InstrumentId(7),
            &[lvl(99, 3), lvl(98, 1)],
            &[lvl(101, 2)],
        );
        v.seq = 5;
        v.exchange_ts = 11;
        v.recv_ts = 12;
        let mut w = [0u64; BOOK_WORDS];
        v.to_words(&mut w);
        assert_eq!(BookView::from_words(2, InstrumentId(7), &w), v);
        assert_eq!(v.mid(), Some(Price::from_raw(100)));
        assert_eq!(v.spread(), Some(2));
        assert_eq!(v.bids().len(), 2);
        assert_eq!(v.best_ask(), Some(lvl(101, 2)));
        w[3] = u64::MAX;
        assert_eq!(
            BookView::from_words(0, InstrumentId(1), &w).bids().len(),
            DEPTH
        );
        assert!(BookView::default().is_empty());
        assert_eq!(BookView::default().mid(), None);
    }
}
