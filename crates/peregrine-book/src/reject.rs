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
    // Codes 18..=31 are the wire's own (a read-only session, ...); the venue's order
    // types start at 32.
    /// A trigger that cannot be used: a trailing take-profit, a post-only or FOK
    /// conditional order, a trailing offset that is not positive, a fixed trigger
    /// with an offset or a trailing one with a price.
    InvalidTrigger = 32,
    /// The stop would trigger at once: the last trade price is already at or beyond it.
    StopWouldTrigger = 33,
    /// An iceberg display quantity off the lot grid, below the minimum, not below
    /// the order quantity, or on an order that cannot rest.
    InvalidDisplayQty = 34,
    /// An order list whose legs do not fit its kind (count, sides, types, a leg that
    /// would trade or trigger on entry where that is not allowed).
    InvalidList = 35,
    /// Market-maker protection tripped for the account: new orders and replaces are
    /// refused until a reset.
    MmpFrozen = 36,
    /// Not allowed in a call auction: IOC, FOK and market orders.
    AuctionPhase = 37,
    /// No live order list with that id.
    UnknownList = 38,
    /// Market-maker protection limits out of range.
    InvalidMmp = 39,
    /// A market command that does not fit the phase (uncross outside an auction, ...).
    InvalidPhase = 40,
    /// A replace of a parked order (a stop waiting for its trigger, a pending list
    /// leg): cancel it and enter a new one.
    NotInBook = 41,
}

impl RejectReason {
    /// Every reason, for tables and exhaustive tests.
    pub const ALL: [RejectReason; 27] = [
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
        Self::InvalidTrigger,
        Self::StopWouldTrigger,
        Self::InvalidDisplayQty,
        Self::InvalidList,
        Self::MmpFrozen,
        Self::AuctionPhase,
        Self::UnknownList,
        Self::InvalidMmp,
        Self::InvalidPhase,
        Self::NotInBook,
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
            Self::InvalidTrigger => "invalid_trigger",
            Self::StopWouldTrigger => "stop_would_trigger",
            Self::InvalidDisplayQty => "invalid_display_qty",
            Self::InvalidList => "invalid_list",
            Self::MmpFrozen => "mmp_frozen",
            Self::AuctionPhase => "auction_phase",
            Self::UnknownList => "unknown_list",
            Self::InvalidMmp => "invalid_mmp",
            Self::InvalidPhase => "invalid_phase",
            Self::NotInBook => "not_in_book",
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

impl CancelReason {
    /// Every reason, for tables and exhaustive tests.
    pub const ALL: [CancelReason; 11] = [
        Self::UserRequested,
        Self::MassCancel,
        Self::Unfilled,
        Self::FokUnfillable,
        Self::SelfTrade,
        Self::Expired,
        Self::ListCancelled,
        Self::Mmp,
        Self::BookFull,
        Self::PostOnlyWouldTake,
        Self::Refused,
    ];
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
    /// Another leg of its order list traded, triggered or left (or the list was
    /// cancelled).
    ListCancelled = 7,
    /// Market-maker protection tripped for its account.
    Mmp = 8,
    /// A triggered or released order could not rest: the book was full.
    BookFull = 9,
    /// A released post-only order would have taken liquidity.
    PostOnlyWouldTake = 10,
    /// The pre-match stage refused a released order (e.g. insufficient balance).
    Refused = 11,
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
            Self::ListCancelled => "list_cancelled",
            Self::Mmp => "mmp",
            Self::BookFull => "book_full",
            Self::PostOnlyWouldTake => "post_only_would_take",
            Self::Refused => "refused",
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
