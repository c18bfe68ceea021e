//! Recorded market data: the decoders, and the two normalized forms the replay runs.
//!
//! * **Order by order (L3)**, [`L3`]: ITCH 5.0 ([`itch`], [`itch_l3`]) and LOBSTER
//!   ([`lobster`]). Every recorded order is known by its reference; the replay turns
//!   each message into real orders in the exchange core.
//! * **Price levels (L2)**, [`L2`]: Binance raw streams ([`binance`]) and Tardis CSV
//!   ([`tardis`]). Only the aggregate at each price is known; queue-position models
//!   decide where the unseen cancels happened.
//!
//! Prices and quantities are integers in the units of the instrument the replay
//! builds (decimals from the format, or from [`crate::data::Units`] for text formats).
//! Every decoder returns a typed [`DataError`] for bad input, with the line or byte
//! offset, and never panics (each has a fuzz target).

pub mod binance;
pub mod itch;
pub mod itch_l3;
pub mod latency;
pub mod lobster;
pub mod stream;
pub mod tardis;
pub mod text;

use peregrine_types::Side;

/// One order-by-order message, normalized. References are the recorded order
/// references (ITCH order reference numbers, LOBSTER order ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L3 {
    /// A displayed order joins the book.
    Add {
        /// Recorded reference.
        order_ref: u64,
        /// Side.
        side: Side,
        /// Limit price (units).
        price: i64,
        /// Quantity (units).
        qty: i64,
    },
    /// Part of a resting order is cancelled.
    Cancel {
        /// The order.
        order_ref: u64,
        /// Quantity removed.
        qty: i64,
    },
    /// A resting order is removed.
    Delete {
        /// The order.
        order_ref: u64,
    },
    /// A resting order trades at its own price against an incoming order that the
    /// feed does not show (the aggressor).
    Execute {
        /// The resting order.
        order_ref: u64,
        /// Quantity traded.
        qty: i64,
    },
    /// A resting order trades at another price (crosses): its quantity leaves the book
    /// without a trade against the visible book.
    ExecuteAt {
        /// The resting order.
        order_ref: u64,
        /// Quantity.
        qty: i64,
        /// The execution price.
        price: i64,
    },
    /// Cancel-replace: the old order is gone; a new one with a new reference rests
    /// at the back of its level.
    Replace {
        /// The order replaced.
        old_ref: u64,
        /// The new reference.
        new_ref: u64,
        /// New price.
        price: i64,
        /// New quantity.
        qty: i64,
    },
    /// A trade the visible book does not show (hidden orders, crosses): reported to
    /// strategies as a trade, changes nothing in the book.
    Trade {
        /// The aggressor's side, when known (ITCH gives the resting hidden order's
        /// side; the aggressor is the other one).
        aggressor: Side,
        /// Price.
        price: i64,
        /// Quantity.
        qty: i64,
    },
    /// Trading halted (`true`) or resumed (`false`).
    Halt(bool),
}

/// One price-level message, normalized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2 {
    /// A snapshot starts: forget every level (the levels of the snapshot follow).
    Clear,
    /// The total quantity at a price is now `qty` (0: the level is gone).
    Level {
        /// Side.
        side: Side,
        /// Price (units).
        price: i64,
        /// New total (units).
        qty: i64,
    },
    /// A trade.
    Trade {
        /// Side of the order that took liquidity.
        aggressor: Side,
        /// Price.
        price: i64,
        /// Quantity.
        qty: i64,
    },
}

/// A recorded message with its times: when the venue stamped it (`exch_ts`) and when
/// the recorder received it (`local_ts`; equal to `exch_ts` for formats without a
/// receive time). Nanoseconds; since midnight for ITCH and LOBSTER, since the Unix
/// epoch for Binance and Tardis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded<M> {
    /// Venue timestamp.
    pub exch_ts: u64,
    /// Receive timestamp.
    pub local_ts: u64,
    /// The message.
    pub msg: M,
}

/// A stream of recorded messages in file order.
pub trait Source {
    /// The message type ([`L3`] or [`L2`]).
    type Msg;
    /// The next message, `None` at the end.
    fn next_msg(&mut self) -> Result<Option<Recorded<Self::Msg>>, DataError>;
}

/// Decimals of the price and quantity units of a text format's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Units {
    /// Price decimals.
    pub price_decimals: u32,
    /// Quantity decimals.
    pub qty_decimals: u32,
}

/// Why recorded data could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// Reading the file failed.
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// An ITCH message is malformed.
    #[error("ITCH message at byte {offset}: {source}")]
    Itch {
        /// Byte offset of the message's length prefix.
        offset: u64,
        /// Why.
        source: itch::ItchError,
    },
    /// A line of a text format is malformed.
    #[error("{format} line {line}: {why}")]
    Line {
        /// Which format.
        format: &'static str,
        /// Line number, from 1.
        line: u64,
        /// What is wrong.
        why: String,
    },
    /// The data contradicts itself (a sequence gap, an unknown symbol).
    #[error("{0}")]
    Inconsistent(String),
}

impl DataError {
    pub(crate) fn line(format: &'static str, line: u64, why: impl Into<String>) -> DataError {
        DataError::Line {
            format,
            line,
            why: why.into(),
        }
    }
}
