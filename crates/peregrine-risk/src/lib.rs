//! Pre-trade risk and positions of the order engine: per-strategy and global limits,
//! the kill switch, positions and PnL.
//!
//! [`RiskEngine::check_new`] runs every rule in a fixed order and, when all pass,
//! reserves what the order uses (an open-order slot, open quantity on its side, a rate
//! token, its client order id). The orchestrator then reports what the venue did
//! ([`RiskEngine::on_fill`], [`RiskEngine::on_done`]) and the reservation follows the
//! order until it is done. Time is passed in (nanoseconds), never read: everything
//! here is plain single-threaded state, deterministic and testable without threads.
//!
//! * [`position`]: net position, average cost, realized and unrealized PnL per strategy
//!   and instrument, from fills, in exact integer fixed point.
//! * [`Limits`]: the limits, parsed and changed at run time (`key=value`).
#![deny(unsafe_code)]

mod ids;
mod limits;
pub mod position;
mod state;

pub use limits::{LimitError, Limits, TokenBucket};
pub use state::{RiskEngine, MAX_SANE};

pub use ids::StrategyId;
pub use position::{Position, PositionBook};

/// Why the engine refused an order. The value goes back to the strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum RiskReject {
    /// Quantity or price not positive, or absurdly large (above `MAX_SANE`, 2^40).
    InvalidOrder = 101,
    /// The strategy is not registered.
    UnknownStrategy = 102,
    /// The kill switch (global or this strategy's) is on.
    KillSwitch = 103,
    /// The client order id is already used by an open order of this strategy.
    DuplicateClientOrderId = 104,
    /// Above the order quantity limit.
    MaxOrderQty = 105,
    /// Above the order notional limit.
    MaxOrderNotional = 106,
    /// Outside the price collar around the reference price.
    PriceCollar = 107,
    /// Too many open orders.
    MaxOpenOrders = 108,
    /// The position limit, counting open orders on that side, would be exceeded.
    MaxPosition = 109,
    /// The order-rate limit is exhausted.
    RateLimited = 110,
}

impl RiskReject {
    /// Every reason.
    pub const ALL: [RiskReject; 10] = [
        Self::InvalidOrder,
        Self::UnknownStrategy,
        Self::KillSwitch,
        Self::DuplicateClientOrderId,
        Self::MaxOrderQty,
        Self::MaxOrderNotional,
        Self::PriceCollar,
        Self::MaxOpenOrders,
        Self::MaxPosition,
        Self::RateLimited,
    ];

    /// Stable code.
    pub const fn code(self) -> u16 {
        self as u16
    }

    /// Index into counters.
    pub const fn index(self) -> usize {
        (self as u16 - 101) as usize
    }

    /// Short name for reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidOrder => "invalid_order",
            Self::UnknownStrategy => "unknown_strategy",
            Self::KillSwitch => "kill_switch",
            Self::DuplicateClientOrderId => "duplicate_client_order_id",
            Self::MaxOrderQty => "max_order_qty",
            Self::MaxOrderNotional => "max_order_notional",
            Self::PriceCollar => "price_collar",
            Self::MaxOpenOrders => "max_open_orders",
            Self::MaxPosition => "max_position",
            Self::RateLimited => "rate_limited",
        }
    }
}

/// What the risk engine needs to know about an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderRequest {
    /// The venue it goes to (the engine's index of the venue): the price collar is
    /// checked against the reference price of this venue's market.
    pub venue: u32,
    /// Instrument.
    pub instrument: peregrine_types::InstrumentId,
    /// The strategy's id for the order.
    pub client_id: u64,
    /// Side.
    pub side: peregrine_types::Side,
    /// Limit (or protection) price.
    pub price: peregrine_types::Price,
    /// Quantity.
    pub qty: peregrine_types::Qty,
}

/// An order's type, time in force and expiry, checked for a combination the venue
/// accepts (the exchange's rules, `docs/architecture.md`): a market order is IOC or
/// FOK; a post-only order GTC or GTD; GTD carries an expiry and nothing else does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderShape {
    /// Limit, market or post-only.
    pub order_type: peregrine_types::OrderType,
    /// Time in force.
    pub tif: peregrine_types::TimeInForce,
    /// GTD expiry (ns since the Unix epoch), 0 otherwise.
    pub expire_at: u64,
}

impl OrderShape {
    /// Whether the combination is one a venue accepts.
    pub fn is_valid(&self) -> bool {
        use peregrine_types::{OrderType as T, TimeInForce as F};
        let tif_ok = match self.order_type {
            T::Limit => true,
            T::Market => matches!(self.tif, F::Ioc | F::Fok),
            T::PostOnly => matches!(self.tif, F::Gtc | F::Gtd),
        };
        let expiry_ok = (self.tif == F::Gtd) == (self.expire_at != 0);
        tif_ok && expiry_ok
    }
}

/// A fill of one of a strategy's orders, as the venue reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill {
    /// The venue that traded (the engine's index of the venue).
    pub venue: u32,
    /// Instrument.
    pub instrument: peregrine_types::InstrumentId,
    /// The strategy's side.
    pub side: peregrine_types::Side,
    /// Trade price.
    pub price: peregrine_types::Price,
    /// Traded quantity.
    pub qty: peregrine_types::Qty,
}

/// A fill pushed the strategy over a limit: the engine has switched its kill switch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breach {
    /// Total PnL below `-max_loss`.
    Loss(StrategyId),
    /// Position beyond `max_position` (possible when limits are lowered at run time).
    Position(StrategyId),
}

#[cfg(test)]
mod tests;
