//! Market data to the strategy: the book as the venue's public feed shows it (every
//! order, the strategy's own included) and the trades, delivered after the feed
//! latency. Book versions due at the same moment collapse into the last one, as the
//! engine's market-data ring conflates a strategy that is behind; trades are never
//! dropped.

use std::collections::VecDeque;

use peregrine_book::{Ladder, OrderBook};
use peregrine_strategy::md::{BookView, Level, Trade, DEPTH};
use peregrine_types::{InstrumentId, Price, Qty, Side};

/// One market-data item.
#[derive(Debug, Clone, Copy)]
#[allow(
    clippy::large_enum_variant,
    reason = "items are few and short-lived; boxing would allocate per book version"
)]
pub enum MdItem {
    /// A book version.
    Book(BookView),
    /// A trade.
    Trade(Trade),
}

/// The book of `book` as a strategy sees it: the top [`DEPTH`] levels per side.
pub fn view(book: &OrderBook<Ladder>, venue: u32, instrument: InstrumentId) -> BookView {
    let mut bids = [Level::default(); DEPTH];
    let mut asks = [Level::default(); DEPTH];
    let (mut nb, mut na) = (0, 0);
    book.visit_depth(Side::Buy, DEPTH, &mut |price, qty, orders| {
        bids[nb] = Level { price, qty, orders };
        nb += 1;
    });
    book.visit_depth(Side::Sell, DEPTH, &mut |price, qty, orders| {
        asks[na] = Level { price, qty, orders };
        na += 1;
    });
    BookView::new(venue, instrument, &bids[..nb], &asks[..na])
}

/// Items waiting for their delivery time (non-decreasing: the feed latency is
/// constant).
#[derive(Debug, Default)]
pub struct MdQueue {
    items: VecDeque<(u64, MdItem)>,
    seq: u64,
    /// Book versions that replaced an undelivered one due at the same time.
    pub conflated: u64,
}

impl MdQueue {
    /// Queues a book version due at `at`, made at `exch_ts`.
    pub fn book(&mut self, at: u64, exch_ts: u64, mut v: BookView) {
        self.seq += 1;
        v.seq = self.seq;
        v.exchange_ts = exch_ts;
        v.recv_ts = at;
        if let Some((t, MdItem::Book(last))) = self.items.back_mut() {
            if *t == at {
                *last = v;
                self.conflated += 1;
                return;
            }
        }
        self.items.push_back((at, MdItem::Book(v)));
    }

    /// Queues a trade due at `at`.
    #[allow(clippy::too_many_arguments, reason = "a trade's fields")]
    pub fn trade(
        &mut self,
        at: u64,
        exch_ts: u64,
        venue: u32,
        instrument: InstrumentId,
        trade_id: u64,
        aggressor: Side,
        price: i64,
        qty: i64,
    ) {
        self.items.push_back((
            at,
            MdItem::Trade(Trade {
                venue,
                instrument,
                trade_id,
                price: Price::from_raw(price),
                qty: Qty::from_raw(qty),
                aggressor,
                exchange_ts: exch_ts,
            }),
        ));
    }

    /// When the next item is due.
    pub fn next_at(&self) -> Option<u64> {
        self.items.front().map(|(t, _)| *t)
    }

    /// The next item.
    pub fn pop(&mut self) -> Option<(u64, MdItem)> {
        self.items.pop_front()
    }
}
