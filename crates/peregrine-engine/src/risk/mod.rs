//! Pre-trade risk: per-strategy and global limits, positions, kill switch.
//!
//! [`RiskEngine::check_new`] runs every rule in a fixed order and, when all pass,
//! reserves what the order uses (an open-order slot, open quantity on its side, a rate
//! token, its client order id). The orchestrator then reports what the venue did
//! ([`RiskEngine::on_fill`], [`RiskEngine::on_done`]) and the reservation follows the
//! order until it is done. Time is passed in (nanoseconds), never read.

mod limits;
mod state;

pub use limits::{LimitError, Limits, TokenBucket};
pub use state::{RiskEngine, MAX_SANE};

pub use crate::ids::StrategyId;

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

/// A fill of one of a strategy's orders, as the venue reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill {
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
