//! What the feed thread hands the history writer: public trades, and the batch of
//! one delivery (its sequence range, its trades, whether it carried book snapshots).

use crate::link::{FeedEvent, FeedPos};

/// One public trade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TradeRow {
    /// Instrument id.
    pub instrument: u32,
    /// Trade id.
    pub trade_id: u64,
    /// Price units.
    pub price: i64,
    /// Quantity units.
    pub qty: i64,
    /// The buyer was the maker (the aggressor sold).
    pub buyer_maker: bool,
    /// Time, ms.
    pub time_ms: u64,
    /// Feed session.
    pub session: u64,
    /// Feed sequence number.
    pub seq: u64,
}

/// A feed batch for the writer: the sequence range it covers and its trades.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedBatch {
    /// Feed session.
    pub session: u64,
    /// First sequence number covered.
    pub from: u64,
    /// Last sequence number covered.
    pub to: u64,
    /// A snapshot of the books as of `to` (trades before it are not in the batch).
    pub books: bool,
    /// Trades, in order.
    pub trades: Vec<TradeRow>,
}

impl TradeRow {
    /// The row of a feed event, if it is a trade.
    pub fn from_event(pos: FeedPos, ev: &FeedEvent) -> Option<TradeRow> {
        let FeedEvent::Trade {
            instrument,
            trade_id,
            price,
            qty,
            aggressor,
            time_ns,
        } = ev
        else {
            return None;
        };
        Some(TradeRow {
            instrument: instrument.0,
            trade_id: *trade_id,
            price: *price,
            qty: *qty,
            buyer_maker: *aggressor == peregrine_types::Side::Sell,
            time_ms: time_ns / 1_000_000,
            session: pos.session,
            seq: pos.seq,
        })
    }
}

impl FeedBatch {
    /// From one delivery of the feed thread.
    pub fn from_events(events: &[(FeedPos, FeedEvent)]) -> FeedBatch {
        let mut b = FeedBatch {
            session: events.first().map_or(0, |(p, _)| p.session),
            from: u64::MAX,
            to: 0,
            books: false,
            trades: Vec::new(),
        };
        for (pos, ev) in events {
            b.from = b.from.min(pos.seq);
            b.to = b.to.max(pos.seq);
            match ev {
                FeedEvent::Trade { .. } => b.trades.extend(TradeRow::from_event(*pos, ev)),
                FeedEvent::Book { .. } => b.books = true,
                FeedEvent::Level { .. } => {}
            }
        }
        if b.from == u64::MAX {
            b.from = 0;
        }
        b
    }

    /// No events at all?
    pub fn is_empty(&self) -> bool {
        self.to == 0 && self.trades.is_empty() && !self.books
    }
}
