//! The FIX 4.4 enumerations of the order-entry messages, each with its wire byte(s).

use peregrine_types::{Side as PSide, StpMode};

macro_rules! char_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $byte:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire value.
            pub const fn byte(self) -> u8 {
                match self {
                    $($name::$variant => $byte),+
                }
            }

            /// Decodes a one-character value.
            pub fn from_value(v: &[u8]) -> Option<$name> {
                match v {
                    $([$byte] => Some($name::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

char_enum!(
    /// Side (54).
    Side { /// 1
    Buy = b'1', /// 2
    Sell = b'2' }
);

impl Side {
    /// Peregrine's side.
    pub const fn to_peregrine(self) -> PSide {
        match self {
            Side::Buy => PSide::Buy,
            Side::Sell => PSide::Sell,
        }
    }

    /// From Peregrine's side.
    pub const fn from_peregrine(s: PSide) -> Side {
        match s {
            PSide::Buy => Side::Buy,
            PSide::Sell => Side::Sell,
        }
    }
}

char_enum!(
    /// OrdType (40). Peregrine takes market, limit, stop, stop-limit and
    /// market-if-touched (take-profit) orders.
    OrdType { /// 1: trades at the best prices, never beyond Price (44) if given.
    Market = b'1', /// 2
    Limit = b'2', /// 3: parked until the last trade reaches StopPx (99), then a market order.
    Stop = b'3', /// 4: parked until the last trade reaches StopPx (99), then a limit order.
    StopLimit = b'4', /// J (Market If Touched): a take-profit, parked until the last trade
    /// reaches StopPx (99) from the other side (a buy when it falls to it, a sell
    /// when it rises to it), then a market order.
    MarketIfTouched = b'J' }
);

char_enum!(
    /// TimeInForce (59).
    TimeInForce { /// 0 (refused: Peregrine has no trading day).
    Day = b'0', /// 1
    Gtc = b'1', /// 3
    Ioc = b'3', /// 4
    Fok = b'4', /// 6: with ExpireTime (126).
    Gtd = b'6' }
);

char_enum!(
    /// Peregrine's self-trade prevention instruction, tag 2964 (the tag FIX later
    /// named SelfMatchPreventionInstruction; value 4 is Peregrine's own).
    SelfMatchPrevention { /// 1: cancel the incoming (aggressive) order's rest.
    CancelAggressive = b'1', /// 2: cancel the resting (passive) order.
    CancelPassive = b'2', /// 3: cancel both.
    CancelBoth = b'3', /// 4: decrement both by the smaller quantity.
    Decrement = b'4', /// 0: none (trade with yourself).
    None = b'0' }
);

impl SelfMatchPrevention {
    /// Peregrine's mode.
    pub const fn to_peregrine(self) -> StpMode {
        match self {
            Self::None => StpMode::None,
            Self::CancelAggressive => StpMode::CancelNewest,
            Self::CancelPassive => StpMode::CancelOldest,
            Self::CancelBoth => StpMode::CancelBoth,
            Self::Decrement => StpMode::DecrementAndCancel,
        }
    }

    /// The instruction for Peregrine's mode.
    pub const fn from_peregrine(m: StpMode) -> SelfMatchPrevention {
        match m {
            StpMode::None => Self::None,
            StpMode::CancelNewest => Self::CancelAggressive,
            StpMode::CancelOldest => Self::CancelPassive,
            StpMode::CancelBoth => Self::CancelBoth,
            StpMode::DecrementAndCancel => Self::Decrement,
        }
    }
}

char_enum!(
    /// ExecType (150).
    ExecType { /// 0
    New = b'0', /// 4
    Canceled = b'4', /// 5
    Replaced = b'5', /// 8
    Rejected = b'8', /// C
    Expired = b'C', /// F
    Trade = b'F', /// I
    OrderStatus = b'I', /// D: a stop order triggered (with ExecRestatementReason 378).
    Restated = b'D' }
);

char_enum!(
    /// OrdStatus (39).
    OrdStatus { /// 0
    New = b'0', /// 1
    PartiallyFilled = b'1', /// 2
    Filled = b'2', /// 4
    Canceled = b'4', /// 8
    Rejected = b'8', /// C
    Expired = b'C' }
);

impl OrdStatus {
    /// Whether the order can still trade.
    pub const fn is_open(self) -> bool {
        matches!(self, OrdStatus::New | OrdStatus::PartiallyFilled)
    }
}

char_enum!(
    /// CxlRejResponseTo (434).
    CxlRejResponseTo { /// 1: an OrderCancelRequest.
    Cancel = b'1', /// 2: an OrderCancelReplaceRequest.
    Replace = b'2' }
);

char_enum!(
    /// MassCancelRequestType (530) and, for answers, MassCancelResponse (531).
    MassCancelScope { /// 1: every order in one Symbol.
    Security = b'1', /// 7: every order.
    All = b'7' }
);

/// OrdRejReason (103) values Peregrine sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum OrdRejReason {
    /// 0: Broker / exchange option.
    ExchangeOption = 0,
    /// 1: Unknown symbol.
    UnknownSymbol = 1,
    /// 2: Exchange closed (instrument halted).
    ExchangeClosed = 2,
    /// 3: Order exceeds limit.
    ExceedsLimit = 3,
    /// 5: Unknown order.
    UnknownOrder = 5,
    /// 6: Duplicate order.
    DuplicateOrder = 6,
    /// 11: Unsupported order characteristic.
    UnsupportedCharacteristic = 11,
    /// 13: Incorrect quantity.
    IncorrectQuantity = 13,
    /// 99: Other.
    Other = 99,
}

/// The name of an OrdRejReason (103) value as FIX 4.4 defines it (any a venue may
/// send, not only those Peregrine sends), for logs and summaries.
pub fn ord_rej_reason_name(code: u16) -> &'static str {
    match code {
        0 => "broker_option",
        1 => "unknown_symbol",
        2 => "exchange_closed",
        3 => "exceeds_limit",
        4 => "too_late_to_enter",
        5 => "unknown_order",
        6 => "duplicate_order",
        7 => "duplicate_verbal_order",
        8 => "stale_order",
        9 => "trade_along_required",
        10 => "invalid_investor_id",
        11 => "unsupported_characteristic",
        12 => "surveillance_option",
        13 => "incorrect_quantity",
        14 => "incorrect_allocated_quantity",
        15 => "unknown_account",
        18 => "invalid_price_increment",
        _ => "other",
    }
}

/// CxlRejReason (102) values Peregrine sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum CxlRejReason {
    /// 0: Too late to cancel (the order is done).
    TooLate = 0,
    /// 1: Unknown order.
    UnknownOrder = 1,
    /// 2: Broker / exchange option.
    ExchangeOption = 2,
    /// 6: Duplicate ClOrdID.
    DuplicateClOrdId = 6,
    /// 99: Other.
    Other = 99,
}

/// BusinessRejectReason (380) values Peregrine sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum BusinessRejectReason {
    /// 0: Other.
    Other = 0,
    /// 1: Unknown ID.
    UnknownId = 1,
    /// 2: Unknown security.
    UnknownSecurity = 2,
    /// 3: Unsupported message type.
    UnsupportedMessageType = 3,
    /// 4: Application not available (the exchange is unreachable).
    ApplicationNotAvailable = 4,
    /// 5: Conditionally required field missing.
    ConditionallyRequiredFieldMissing = 5,
    /// 8: Throttle limit exceeded.
    ThrottleLimitExceeded = 8,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_values_round_trip() {
        for s in Side::ALL {
            assert_eq!(Side::from_value(&[s.byte()]), Some(*s));
        }
        for e in ExecType::ALL {
            assert_eq!(ExecType::from_value(&[e.byte()]), Some(*e));
        }
        for o in OrdStatus::ALL {
            assert_eq!(OrdStatus::from_value(&[o.byte()]), Some(*o));
        }
        assert_eq!(TimeInForce::from_value(b"6"), Some(TimeInForce::Gtd));
        assert_eq!(TimeInForce::from_value(b"2"), None);
        assert_eq!(OrdType::from_value(b"22"), None);
        assert_eq!(
            SelfMatchPrevention::from_value(b"4").map(|s| s.to_peregrine()),
            Some(StpMode::DecrementAndCancel)
        );
    }
}
