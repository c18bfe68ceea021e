//! Order attributes: type, time in force, self-trade prevention.

use serde::{Deserialize, Serialize};

/// How an order treats price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum OrderType {
    /// Trades at its limit price or better; any rest may rest (by time in force).
    Limit = 0,
    /// Trades immediately at the best prices available but never beyond its
    /// protection price (carried in the order's price field). Never rests: only IOC or
    /// FOK are accepted.
    Market = 1,
    /// A limit order that must add liquidity. If it would take on arrival it is
    /// rejected (not repriced, not cancelled after acceptance).
    PostOnly = 2,
}

impl OrderType {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Limit),
            1 => Some(Self::Market),
            2 => Some(Self::PostOnly),
            _ => None,
        }
    }
}

/// How long an order stays on the book.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum TimeInForce {
    /// Good till cancelled.
    Gtc = 0,
    /// Immediate or cancel: trade what is possible now, cancel the rest.
    Ioc = 1,
    /// Fill or kill: fill the whole quantity now or do nothing at all.
    Fok = 2,
    /// Good till date: rests until the injected clock reaches its expiry time.
    Gtd = 3,
}

impl TimeInForce {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Gtc),
            1 => Some(Self::Ioc),
            2 => Some(Self::Fok),
            3 => Some(Self::Gtd),
            _ => None,
        }
    }

    /// Whether an unfilled remainder may rest on the book.
    pub const fn can_rest(self) -> bool {
        matches!(self, Self::Gtc | Self::Gtd)
    }
}

/// Self-trade prevention: what happens when an incoming order would trade with a
/// resting order of the same account. The incoming (taker) order's mode decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum StpMode {
    /// No prevention: the account may trade with itself.
    None = 0,
    /// Cancel the incoming order's remaining quantity; the resting order stays.
    CancelNewest = 1,
    /// Cancel the resting order and keep matching the incoming one.
    CancelOldest = 2,
    /// Cancel both the resting order and the incoming order's remainder.
    CancelBoth = 3,
    /// Decrement both by the smaller of the two quantities, cancelling whichever
    /// reaches zero (both when equal). No trade is printed.
    DecrementAndCancel = 4,
}

impl StpMode {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::None),
            1 => Some(Self::CancelNewest),
            2 => Some(Self::CancelOldest),
            3 => Some(Self::CancelBoth),
            4 => Some(Self::DecrementAndCancel),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_bytes_round_trip() {
        for v in 0..=255u8 {
            if let Some(t) = OrderType::from_u8(v) {
                assert_eq!(t as u8, v);
            }
            if let Some(t) = TimeInForce::from_u8(v) {
                assert_eq!(t as u8, v);
            }
            if let Some(t) = StpMode::from_u8(v) {
                assert_eq!(t as u8, v);
            }
        }
        assert_eq!(OrderType::from_u8(3), None);
        assert_eq!(TimeInForce::from_u8(4), None);
        assert_eq!(StpMode::from_u8(5), None);
        assert!(TimeInForce::Gtd.can_rest() && !TimeInForce::Ioc.can_rest());
    }
}
