//! The exchange's reason codes in FIX terms: OrdRejReason (103) / CxlRejReason (102)
//! plus Text (58). The table is the exchange's own (`peregrine_book::RejectReason`),
//! so a new exchange reason shows up in the exhaustive test below; the session
//! layer's `busy` (the exchange at capacity) is an ExecutionReport reject with
//! OrdRejReason 99 (Other) and a Text that says to send again later.

use peregrine_book::{CancelReason, RejectReason};
use peregrine_fix::app::{CxlRejReason, OrdRejReason};
use peregrine_wire::reason::RejectCode;

/// Text of the exchange's `busy` refusal (reason 19): the exchange is at capacity.
pub const BUSY_TEXT: &str =
    "busy: the exchange is at capacity, nothing was entered; send again after 10 ms or more";

/// A NewOrder reject reason: OrdRejReason and Text.
pub fn order_reject(code: u16) -> (OrdRejReason, &'static str) {
    use OrdRejReason as O;
    use RejectReason as R;
    if code == RejectCode::Busy.code() {
        return (O::Other, BUSY_TEXT);
    }
    let Some(r) = RejectReason::from_code(code) else {
        return (O::Other, "rejected by the exchange (unknown reason code)");
    };
    let fix = match r {
        R::UnknownInstrument => O::UnknownSymbol,
        R::InstrumentHalted => O::ExchangeClosed,
        R::InvalidQty | R::QtyOffLot | R::QtyBelowMin | R::QtyAboveMax => O::IncorrectQuantity,
        R::InvalidPrice | R::PriceOffTick | R::PriceOutOfBand => O::ExchangeOption,
        R::UnknownOrder | R::NotOwner => O::UnknownOrder,
        R::DuplicateOrderId => O::DuplicateOrder,
        R::BookFull => O::ExchangeOption,
        R::PostOnlyWouldTake | R::InvalidTif | R::InvalidExpiry => O::UnsupportedCharacteristic,
        R::InsufficientBalance => O::ExceedsLimit,
        // The venue's order types (protocol version 3); FIX does not send them yet
        // but may see their reasons (a frozen account, an auction phase).
        R::InvalidTrigger
        | R::StopWouldTrigger
        | R::InvalidDisplayQty
        | R::InvalidList
        | R::InvalidMmp => O::UnsupportedCharacteristic,
        R::MmpFrozen => O::ExceedsLimit,
        R::AuctionPhase | R::InvalidPhase => O::ExchangeClosed,
        R::UnknownList | R::NotInBook => O::UnknownOrder,
    };
    (fix, text(r))
}

/// A Cancel/Replace reject reason: CxlRejReason and Text.
pub fn cancel_reject(code: u16) -> (CxlRejReason, &'static str) {
    use CxlRejReason as C;
    use RejectReason as R;
    if code == RejectCode::Busy.code() {
        return (C::Other, BUSY_TEXT);
    }
    let Some(r) = RejectReason::from_code(code) else {
        return (C::Other, "refused by the exchange (unknown reason code)");
    };
    let fix = match r {
        // The exchange answers unknown and foreign orders alike (no enumeration).
        R::UnknownOrder | R::NotOwner => C::UnknownOrder,
        R::DuplicateOrderId => C::DuplicateClOrdId,
        _ => C::ExchangeOption,
    };
    (fix, text(r))
}

fn text(r: RejectReason) -> &'static str {
    use RejectReason as R;
    match r {
        R::InvalidQty => "quantity must be positive",
        R::InvalidPrice => "price must be positive",
        R::PriceOffTick => "price not a multiple of the tick size",
        R::PriceOutOfBand => "price outside the instrument's band",
        R::QtyOffLot => "quantity not a multiple of the lot size",
        R::QtyBelowMin => "quantity below the instrument minimum",
        R::QtyAboveMax => "quantity above the instrument maximum",
        R::UnknownInstrument => "unknown instrument",
        R::InstrumentHalted => "instrument halted",
        R::UnknownOrder => "unknown order",
        R::NotOwner => "unknown order",
        R::DuplicateOrderId => "duplicate order id",
        R::BookFull => "book full",
        R::PostOnlyWouldTake => "post-only order would take liquidity",
        R::InvalidTif => "time in force not allowed for this order type",
        R::InvalidExpiry => "ExpireTime not in the future, or given without GTD",
        R::InsufficientBalance => "insufficient balance",
        R::InvalidTrigger => "invalid trigger",
        R::StopWouldTrigger => "stop would trigger at once",
        R::InvalidDisplayQty => "invalid display quantity",
        R::InvalidList => "invalid order list",
        R::MmpFrozen => "market-maker protection tripped",
        R::AuctionPhase => "not allowed in a call auction",
        R::UnknownList => "unknown order list",
        R::InvalidMmp => "invalid market-maker protection limits",
        R::InvalidPhase => "not allowed in this market phase",
        R::NotInBook => "order not in the book (parked): cancel it instead",
    }
}

/// An unsolicited or requested cancel: whether it is an expiry (ExecType C) and the
/// Text.
pub fn cancelled(code: u16) -> (bool, &'static str) {
    let reasons = [
        CancelReason::UserRequested,
        CancelReason::MassCancel,
        CancelReason::Unfilled,
        CancelReason::FokUnfillable,
        CancelReason::SelfTrade,
        CancelReason::Expired,
        CancelReason::ListCancelled,
        CancelReason::Mmp,
        CancelReason::BookFull,
        CancelReason::PostOnlyWouldTake,
        CancelReason::Refused,
    ];
    match reasons.into_iter().find(|r| *r as u16 == code) {
        Some(CancelReason::UserRequested) => (false, "cancelled on request"),
        Some(CancelReason::MassCancel) => (false, "cancelled by mass cancel"),
        Some(CancelReason::Unfilled) => (false, "immediate-or-cancel rest cancelled"),
        Some(CancelReason::FokUnfillable) => (false, "fill-or-kill could not fill"),
        Some(CancelReason::SelfTrade) => (false, "self-trade prevention"),
        Some(CancelReason::Expired) => (true, "GTD order expired"),
        Some(CancelReason::ListCancelled) => (false, "another leg of its order list"),
        Some(CancelReason::Mmp) => (false, "market-maker protection tripped"),
        Some(CancelReason::BookFull) => (false, "book full"),
        Some(CancelReason::PostOnlyWouldTake) => (false, "post-only order would take"),
        Some(CancelReason::Refused) => (false, "released order refused"),
        None => (false, "cancelled by the exchange"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exchange_reason_has_a_fix_mapping_and_text() {
        for r in RejectReason::ALL {
            let (_, t) = order_reject(r.code());
            assert!(!t.is_empty());
            let (_, t) = cancel_reject(r.code());
            assert!(!t.is_empty());
        }
        assert_eq!(order_reject(8).0, OrdRejReason::UnknownSymbol);
        assert_eq!(order_reject(9).0, OrdRejReason::ExchangeClosed);
        assert_eq!(order_reject(1).0, OrdRejReason::IncorrectQuantity);
        assert_eq!(cancel_reject(10).0, CxlRejReason::UnknownOrder);
        assert_eq!(
            cancel_reject(11),
            cancel_reject(10),
            "foreign and unknown look the same"
        );
        assert_eq!(order_reject(999).0, OrdRejReason::Other);
        // The exchange at capacity: refused with a reason a trader can act on.
        assert_eq!(order_reject(19), (OrdRejReason::Other, BUSY_TEXT));
        assert_eq!(cancel_reject(19), (CxlRejReason::Other, BUSY_TEXT));
        assert_eq!(cancelled(6), (true, "GTD order expired"));
        assert!(!cancelled(1).0);
    }
}
