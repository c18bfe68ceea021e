//! Buy or sell.

use serde::{Deserialize, Serialize};

/// The side of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum Side {
    /// Bid.
    Buy = 0,
    /// Ask / offer.
    Sell = 1,
}

impl Side {
    /// The other side.
    #[inline]
    pub const fn opposite(self) -> Side {
        match self {
            Side::Buy => Side::Sell,
            Side::Sell => Side::Buy,
        }
    }

    /// Index into two-element per-side tables: Buy = 0, Sell = 1.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Decode from the wire byte.
    #[inline]
    pub const fn from_u8(v: u8) -> Option<Side> {
        match v {
            0 => Some(Side::Buy),
            1 => Some(Side::Sell),
            _ => None,
        }
    }

    /// True when an order on this side at `limit` may trade against a resting order
    /// at `resting` on the other side.
    #[inline]
    pub fn crosses(self, limit: crate::Price, resting: crate::Price) -> bool {
        match self {
            Side::Buy => limit >= resting,
            Side::Sell => limit <= resting,
        }
    }

    /// True when `a` is a better price than `b` for a resting order on this side
    /// (higher for bids, lower for asks).
    #[inline]
    pub fn is_better(self, a: crate::Price, b: crate::Price) -> bool {
        match self {
            Side::Buy => a > b,
            Side::Sell => a < b,
        }
    }
}

impl core::fmt::Display for Side {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Side::Buy => "buy",
            Side::Sell => "sell",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Price;

    #[test]
    fn crossing_rules() {
        let p = |v| Price::new(v).unwrap();
        assert!(Side::Buy.crosses(p(101), p(100)));
        assert!(Side::Buy.crosses(p(100), p(100)));
        assert!(!Side::Buy.crosses(p(99), p(100)));
        assert!(Side::Sell.crosses(p(99), p(100)));
        assert!(!Side::Sell.crosses(p(101), p(100)));
        assert!(Side::Buy.is_better(p(101), p(100)));
        assert!(Side::Sell.is_better(p(99), p(100)));
        assert_eq!(Side::Buy.opposite(), Side::Sell);
        assert_eq!(Side::from_u8(2), None);
    }
}
