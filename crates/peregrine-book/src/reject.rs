//! Reasons a command is rejected or an order is cancelled.
//!
//! Business outcomes are reason codes carried in events, not `Err` values: a reject is
//! a normal answer and leaves the book exactly as it was.

use peregrine_types::SpecError;

/// Why a command was refused. The numeric value is stable and goes on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum RejectReason {
    /// Quantity zero or negative.
    InvalidQty = 1,
    /// Price zero or negative.
    InvalidPrice = 2,
    /// Price not a multiple of the tick size.
    PriceOffTick = 3,
    /// Price outside the instrument's band.
    PriceOutOfBand = 4,
    /// Quantity not a multiple of the lot size.
    QtyOffLot = 5,
    /// Quantity below the instrument minimum.
    QtyBelowMin = 6,
    /// Quantity above the instrument maximum.
    QtyAboveMax = 7,
    /// No such instrument.
    UnknownInstrument = 8,
    /// The instrument is halted.
    InstrumentHalted = 9,
    /// No live order with that id.
    UnknownOrder = 10,
    /// The order belongs to another account.
    NotOwner = 11,
    /// A live order already has this exchange id.
    DuplicateOrderId = 12,
    /// The order arena is full: the book cannot hold another resting order.
    BookFull = 13,
    /// A post-only order (or a replace of one) would take liquidity.
    PostOnlyWouldTake = 14,
    /// Time in force not allowed for the order type (market GTC, post-only IOC, …).
    InvalidTif = 15,
    /// GTD expiry not after the command time, or an expiry on a non-GTD order.
    InvalidExpiry = 16,
    /// The account's available balance cannot cover the order (pre-match ledger).
    InsufficientBalance = 17,
}

impl RejectReason {
    /// Every reason, for tables and exhaustive tests.
    pub const ALL: [RejectReason; 17] = [
        Self::InvalidQty,
        Self::InvalidPrice,
        Self::PriceOffTick,
        Self::PriceOutOfBand,
        Self::QtyOffLot,
        Self::QtyBelowMin,
        Self::QtyAboveMax,
        Self::UnknownInstrument,
        Self::InstrumentHalted,
        Self::UnknownOrder,
        Self::NotOwner,
        Self::DuplicateOrderId,
        Self::BookFull,
        Self::PostOnlyWouldTake,
        Self::InvalidTif,
        Self::InvalidExpiry,
        Self::InsufficientBalance,
    ];

    /// The wire code.
    pub const fn code(self) -> u16 {
        self as u16
    }

    /// Decodes a wire code.
    pub fn from_code(code: u16) -> Option<RejectReason> {
        Self::ALL.iter().copied().find(|r| r.code() == code)
    }

    /// A short name for logs and metrics labels.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidQty => "invalid_qty",
            Self::InvalidPrice => "invalid_price",
            Self::PriceOffTick => "price_off_tick",
            Self::PriceOutOfBand => "price_out_of_band",
            Self::QtyOffLot => "qty_off_lot",
            Self::QtyBelowMin => "qty_below_min",
            Self::QtyAboveMax => "qty_above_max",
            Self::UnknownInstrument => "unknown_instrument",
            Self::InstrumentHalted => "instrument_halted",
            Self::UnknownOrder => "unknown_order",
            Self::NotOwner => "not_owner",
            Self::DuplicateOrderId => "duplicate_order_id",
            Self::BookFull => "book_full",
            Self::PostOnlyWouldTake => "post_only_would_take",
            Self::InvalidTif => "invalid_tif",
            Self::InvalidExpiry => "invalid_expiry",
            Self::InsufficientBalance => "insufficient_balance",
        }
    }
}

impl From<SpecError> for RejectReason {
    fn from(e: SpecError) -> Self {
        match e {
            SpecError::PriceOffTick => Self::PriceOffTick,
            SpecError::PriceOutOfBand => Self::PriceOutOfBand,
            SpecError::QtyOffLot => Self::QtyOffLot,
            SpecError::QtyBelowMin => Self::QtyBelowMin,
            SpecError::QtyAboveMax => Self::QtyAboveMax,
            SpecError::Decimal(_) | SpecError::Invalid(_) => Self::InvalidPrice,
        }
    }
}

/// Why an order (or part of it) left the book without trading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CancelReason {
    /// The owner asked.
    UserRequested = 1,
    /// A mass cancel.
    MassCancel = 2,
    /// IOC or market remainder that could not trade immediately.
    Unfilled = 3,
    /// FOK that could not fill completely: nothing traded.
    FokUnfillable = 4,
    /// Self-trade prevention.
    SelfTrade = 5,
    /// GTD expiry reached.
    Expired = 6,
}

impl CancelReason {
    /// A short name for logs and metrics labels.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::UserRequested => "user_requested",
            Self::MassCancel => "mass_cancel",
            Self::Unfilled => "unfilled",
            Self::FokUnfillable => "fok_unfillable",
            Self::SelfTrade => "self_trade",
            Self::Expired => "expired",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_unique() {
        for r in RejectReason::ALL {
            assert_eq!(RejectReason::from_code(r.code()), Some(r));
        }
        assert_eq!(RejectReason::from_code(0), None);
        let mut names: Vec<_> = RejectReason::ALL.iter().map(|r| r.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RejectReason::ALL.len());
    }
}
