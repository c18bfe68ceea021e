//! Attributes of conditional orders and order lists: what triggers a stop, how a
//! trailing stop trails, and how the legs of a list depend on each other.
//!
//! The rules themselves (when a stop triggers, in which order a cascade runs, what a
//! leg's fill does to its siblings) are the matching core's; `docs/orders.md`
//! explains them with examples.

use serde::{Deserialize, Serialize};

use crate::Side;

/// What makes a conditional order trigger, relative to its side.
///
/// A **stop-loss** buy triggers when the last trade price rises to its stop price or
/// above, a stop-loss sell when it falls to it or below (it protects against the
/// market moving away). A **take-profit** order triggers the other way round: a sell
/// when the price rises to its trigger, a buy when it falls to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum TriggerKind {
    /// Not a conditional order.
    None = 0,
    /// Stop (stop-market when the order is a market order, stop-limit when a limit).
    StopLoss = 1,
    /// Take-profit (market or limit).
    TakeProfit = 2,
}

impl TriggerKind {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::None),
            1 => Some(Self::StopLoss),
            2 => Some(Self::TakeProfit),
            _ => None,
        }
    }

    /// Whether a `side` order of this kind triggers on a rising price (last trade at
    /// or above its trigger price); `false`: on a falling one (at or below). `None`
    /// never triggers (answers `false`).
    pub const fn rises(self, side: Side) -> bool {
        matches!(
            (self, side),
            (Self::StopLoss, Side::Buy) | (Self::TakeProfit, Side::Sell)
        )
    }
}

/// The unit of a trailing stop's offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum TrailUnit {
    /// Not trailing: the trigger price is fixed.
    None = 0,
    /// The offset is a number of price ticks.
    Ticks = 1,
    /// The offset is in basis points (1/100 of a percent) of the watermark price.
    Bps = 2,
}

impl TrailUnit {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::None),
            1 => Some(Self::Ticks),
            2 => Some(Self::Bps),
            _ => None,
        }
    }
}

/// The conditional and iceberg attributes of one order, as an order engine carries
/// them from a strategy to a venue (the native protocol's `NewOrderExt` fields).
/// [`OrderExt::NONE`] is a plain order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OrderExt {
    /// Stop-loss, take-profit, or none.
    pub trigger: TriggerKind,
    /// A fixed trigger's price (0 for a trailing stop or no trigger).
    pub stop_price: crate::Price,
    /// A trailing stop's offset in `trail_unit`s (0: not trailing).
    pub trail: u32,
    /// Ticks or basis points (none: a fixed trigger).
    pub trail_unit: TrailUnit,
    /// An iceberg's display quantity (0: not an iceberg).
    pub display_qty: crate::Qty,
}

impl OrderExt {
    /// A plain order: no trigger, not an iceberg.
    pub const NONE: OrderExt = OrderExt {
        trigger: TriggerKind::None,
        stop_price: crate::Price::from_raw(0),
        trail: 0,
        trail_unit: TrailUnit::None,
        display_qty: crate::Qty::ZERO,
    };

    /// No trigger and no display quantity.
    pub fn is_plain(&self) -> bool {
        *self == OrderExt::NONE
    }

    /// Has a trigger (parked at the venue until the last trade price reaches it).
    pub fn is_conditional(&self) -> bool {
        self.trigger != TriggerKind::None
    }
}

impl Default for OrderExt {
    fn default() -> Self {
        OrderExt::NONE
    }
}

/// How the legs of an order list depend on each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum ListKind {
    /// One-cancels-the-other: two legs; when either trades, triggers or leaves the
    /// book, the other is cancelled.
    Oco = 0,
    /// One-triggers-the-other: a working leg and a pending leg that is entered only
    /// once the working leg is completely filled.
    Oto = 1,
    /// One-triggers-a-one-cancels-the-other: a working leg and two pending legs that
    /// are entered as an OCO once the working leg is completely filled.
    Otoco = 2,
}

impl ListKind {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Oco),
            1 => Some(Self::Oto),
            2 => Some(Self::Otoco),
            _ => None,
        }
    }

    /// The number of legs a list of this kind has.
    pub const fn legs(self) -> usize {
        match self {
            Self::Oco | Self::Oto => 2,
            Self::Otoco => 3,
        }
    }
}

/// Which kind of call auction an instrument is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum AuctionKind {
    /// The opening auction (by the instrument's schedule); continuous trading follows.
    Opening = 0,
    /// The closing auction (by schedule); the instrument is closed (halted) after it.
    Closing = 1,
    /// A volatility auction: a trade would have printed outside the dynamic band.
    /// Continuous trading resumes after the uncross.
    Volatility = 2,
    /// Started by an admin command; continuous trading follows the uncross.
    Manual = 3,
}

impl AuctionKind {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Opening),
            1 => Some(Self::Closing),
            2 => Some(Self::Volatility),
            3 => Some(Self::Manual),
            _ => None,
        }
    }
}

/// An instrument's trading phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TradingPhase {
    /// Continuous price-time matching.
    Continuous,
    /// No new orders or replaces; cancels still work. An admin halt, or closed after
    /// the closing auction.
    Halted,
    /// A call auction: orders are collected without matching and the book may cross;
    /// the uncross executes at one price.
    Auction(AuctionKind),
}

impl TradingPhase {
    /// The phase byte on the wire and in snapshots: 0 continuous, 1 halted, 2 + kind
    /// for an auction (2 opening, 3 closing, 4 volatility, 5 manual).
    pub const fn to_u8(self) -> u8 {
        match self {
            Self::Continuous => 0,
            Self::Halted => 1,
            Self::Auction(k) => 2 + k as u8,
        }
    }

    /// Decodes [`TradingPhase::to_u8`].
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Continuous),
            1 => Some(Self::Halted),
            _ => match AuctionKind::from_u8(v.wrapping_sub(2)) {
                Some(k) => Some(Self::Auction(k)),
                None => None,
            },
        }
    }

    /// Whether orders match on arrival.
    pub const fn is_continuous(self) -> bool {
        matches!(self, Self::Continuous)
    }

    /// Whether this is a call auction.
    pub const fn is_auction(self) -> bool {
        matches!(self, Self::Auction(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_bytes_round_trip() {
        for v in 0..=255u8 {
            if let Some(t) = TriggerKind::from_u8(v) {
                assert_eq!(t as u8, v);
            }
            if let Some(t) = TrailUnit::from_u8(v) {
                assert_eq!(t as u8, v);
            }
            if let Some(t) = ListKind::from_u8(v) {
                assert_eq!(t as u8, v);
            }
            if let Some(t) = AuctionKind::from_u8(v) {
                assert_eq!(t as u8, v);
            }
            if let Some(p) = TradingPhase::from_u8(v) {
                assert_eq!(p.to_u8(), v);
            }
        }
        assert_eq!(TradingPhase::from_u8(6), None);
        assert_eq!(TriggerKind::from_u8(3), None);
    }

    #[test]
    fn trigger_direction_follows_side_and_kind() {
        assert!(TriggerKind::StopLoss.rises(Side::Buy));
        assert!(!TriggerKind::StopLoss.rises(Side::Sell));
        assert!(TriggerKind::TakeProfit.rises(Side::Sell));
        assert!(!TriggerKind::TakeProfit.rises(Side::Buy));
        assert!(!TriggerKind::None.rises(Side::Buy));
        assert_eq!(ListKind::Otoco.legs(), 3);
    }
}
