//! A trade as committed: the record every leaf hashes.

use peregrine_book::event::Fill;

/// A trade as committed (see the crate docs for the exact bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TradeRecord {
    /// Per-instrument trade id.
    pub trade_id: u64,
    /// Instrument.
    pub instrument: u32,
    /// Price units.
    pub price: i64,
    /// Quantity units.
    pub qty: i64,
    /// Resting order.
    pub maker_order: u64,
    /// Incoming order.
    pub taker_order: u64,
    /// Resting order's account.
    pub maker_account: u32,
    /// Incoming order's account.
    pub taker_account: u32,
    /// 0 buy, 1 sell.
    pub taker_side: u8,
    /// Engine time of the command that traded.
    pub timestamp: u64,
}

impl TradeRecord {
    /// Encoded size.
    pub const SIZE: usize = 61;

    /// From a book fill at `timestamp`.
    pub fn from_fill(f: &Fill, timestamp: u64) -> TradeRecord {
        TradeRecord {
            trade_id: f.trade_id,
            instrument: f.instrument.0,
            price: f.price.units(),
            qty: f.qty.lots(),
            maker_order: f.maker_id.0,
            taker_order: f.taker_id.0,
            maker_account: f.maker_account.0,
            taker_account: f.taker_account.0,
            taker_side: f.taker_side as u8,
            timestamp,
        }
    }

    /// The exact bytes hashed.
    pub fn encode(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        b[0..8].copy_from_slice(&self.trade_id.to_le_bytes());
        b[8..12].copy_from_slice(&self.instrument.to_le_bytes());
        b[12..20].copy_from_slice(&self.price.to_le_bytes());
        b[20..28].copy_from_slice(&self.qty.to_le_bytes());
        b[28..36].copy_from_slice(&self.maker_order.to_le_bytes());
        b[36..44].copy_from_slice(&self.taker_order.to_le_bytes());
        b[44..48].copy_from_slice(&self.maker_account.to_le_bytes());
        b[48..52].copy_from_slice(&self.taker_account.to_le_bytes());
        b[52] = self.taker_side;
        b[53..61].copy_from_slice(&self.timestamp.to_le_bytes());
        b
    }
}
