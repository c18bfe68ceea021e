//! The per-strategy market-data ring's message: a top-of-book change or a trade.

use peregrine_types::{InstrumentId, Price, Qty, Side};

/// What an [`MdEvent`] reports (the `kind` byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum MdKind {
    /// The book of (`venue`, `instrument`) changed: read it from the board. The
    /// `bid_*`/`ask_*` fields carry the top of book of that version.
    Book = 1,
    /// A trade printed at the venue: `price`, `qty`, `side` (the aggressor).
    Trade = 2,
}

/// Engine → strategy, 128 bytes. Plain old data like [`crate::msg::Event`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct MdEvent {
    /// [`MdKind`] as a byte.
    pub kind: u8,
    /// Trade: the aggressor's side as a byte.
    pub side: u8,
    /// Zero.
    pub pad0: u16,
    /// Index of the book in the board (see [`super::board`]).
    pub slot: u32,
    /// Venue index.
    pub venue: u32,
    /// Instrument.
    pub instrument: u32,
    /// Book: its version; Trade: the venue's trade id.
    pub seq: u64,
    /// The venue's timestamp (`CLOCK_MONOTONIC` ns).
    pub exchange_ts: u64,
    /// When the engine received it.
    pub recv_ts: u64,
    /// When the engine pushed this event.
    pub publish_ts: u64,
    /// Book: best bid price (0: none).
    pub bid_px: i64,
    /// Book: best bid quantity.
    pub bid_qty: i64,
    /// Book: best ask price (0: none).
    pub ask_px: i64,
    /// Book: best ask quantity.
    pub ask_qty: i64,
    /// Trade price.
    pub price: i64,
    /// Trade quantity.
    pub qty: i64,
    /// Events the engine could not deliver to this strategy so far (its ring was full:
    /// book changes conflated into a later one, trades dropped); cumulative.
    pub skipped: u64,
    /// Zero.
    pub pad1: [u64; 3],
}

// SAFETY: repr(C), integer fields only, no implicit padding (layout test), so every bit
// pattern is a valid MdEvent.
unsafe impl peregrine_queue::shm::Pod for MdEvent {}

impl MdEvent {
    /// The decoded kind, `None` for an unknown byte.
    pub fn kind(&self) -> Option<MdKind> {
        match self.kind {
            1 => Some(MdKind::Book),
            2 => Some(MdKind::Trade),
            _ => None,
        }
    }

    /// The trade's aggressor side (buy for an unknown byte).
    pub fn side(&self) -> Side {
        Side::from_u8(self.side).unwrap_or(Side::Buy)
    }

    /// The trade as a strategy sees it.
    pub fn trade(&self) -> Trade {
        Trade {
            venue: self.venue,
            instrument: InstrumentId(self.instrument),
            trade_id: self.seq,
            price: Price::from_raw(self.price),
            qty: Qty::from_raw(self.qty),
            aggressor: self.side(),
            exchange_ts: self.exchange_ts,
        }
    }
}

/// A trade at a venue (anyone's, not only the strategy's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trade {
    /// Venue index.
    pub venue: u32,
    /// Instrument.
    pub instrument: InstrumentId,
    /// The venue's trade id.
    pub trade_id: u64,
    /// Price.
    pub price: Price,
    /// Quantity.
    pub qty: Qty,
    /// Side of the order that took liquidity.
    pub aggressor: Side,
    /// The venue's timestamp (`CLOCK_MONOTONIC` ns).
    pub exchange_ts: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layout() {
        assert_eq!(size_of::<MdEvent>(), 128);
        assert_eq!(offset_of!(MdEvent, slot), 4);
        assert_eq!(offset_of!(MdEvent, seq), 16);
        assert_eq!(offset_of!(MdEvent, publish_ts), 40);
        assert_eq!(offset_of!(MdEvent, bid_px), 48);
        assert_eq!(offset_of!(MdEvent, skipped), 96);
        assert_eq!(MdEvent::default().kind(), None);
    }
}
