//! Commands the matching core accepts.
//!
//! Every command carries the time it is processed at (`ts`), stamped by whoever
//! sequences commands (the exchange's matching thread, a replay, a test). The core
//! never reads a clock: GTD expiry is driven by these timestamps alone, so replaying a
//! command stream reproduces every event bit for bit.

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentStatus, OrderId, OrderType, Price, Qty, Side,
    StpMode, TimeInForce, Timestamp,
};

/// A new order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewOrder {
    /// Instrument to trade.
    pub instrument: InstrumentId,
    /// Exchange order id. The [`crate::MatchingEngine`] assigns it (any value passed
    /// in is overwritten); a bare [`crate::OrderBook`] takes it as given and rejects a
    /// duplicate of a live order.
    pub id: OrderId,
    /// The client's id, echoed on every event about the order.
    pub client_id: ClientOrderId,
    /// Owner, for self-trade prevention and cancel rights.
    pub account: AccountId,
    /// Buy or sell.
    pub side: Side,
    /// Limit, market (price = protection price) or post-only.
    pub order_type: OrderType,
    /// Time in force.
    pub tif: TimeInForce,
    /// Self-trade prevention mode used when this order takes.
    pub stp: StpMode,
    /// Limit price, or protection price for a market order. Raw units; validated.
    pub price: Price,
    /// Quantity. Raw units; validated (positive, lot grid, min/max).
    pub qty: Qty,
    /// Expiry for GTD (must be later than `ts`); must be 0 otherwise.
    pub expire_at: Timestamp,
}

/// Cancel one order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancel {
    /// Instrument the order is on.
    pub instrument: InstrumentId,
    /// The order to cancel.
    pub id: OrderId,
    /// The requesting account; must own the order.
    pub account: AccountId,
    /// The request's own client id, echoed on a reject.
    pub client_id: ClientOrderId,
}

/// Cancel-replace: change price and/or open quantity of a resting order.
///
/// Same price with a smaller or equal open quantity keeps time priority; a price change
/// or a larger quantity loses it (the order goes to the back of its new level, and may
/// trade if the new price crosses). The order keeps its exchange id; its client id
/// becomes `client_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replace {
    /// Instrument the order is on.
    pub instrument: InstrumentId,
    /// The order to change.
    pub id: OrderId,
    /// The requesting account; must own the order.
    pub account: AccountId,
    /// New client id for the order.
    pub client_id: ClientOrderId,
    /// New limit price.
    pub price: Price,
    /// New open (leaves) quantity.
    pub qty: Qty,
}

/// Cancel every resting order of an account on one instrument, optionally one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MassCancel {
    /// Instrument.
    pub instrument: InstrumentId,
    /// Whose orders.
    pub account: AccountId,
    /// Only this side, or both.
    pub side: Option<Side>,
}

/// Change an instrument's trading status (admin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetStatus {
    /// Instrument.
    pub instrument: InstrumentId,
    /// New status.
    pub status: InstrumentStatus,
}

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Add an order.
    New(NewOrder),
    /// Cancel an order.
    Cancel(Cancel),
    /// Cancel-replace an order.
    Replace(Replace),
    /// Cancel all of an account's orders.
    MassCancel(MassCancel),
    /// Halt or resume an instrument.
    SetStatus(SetStatus),
    /// Only advance time (expires GTD orders).
    Tick,
}

/// A command: an action and the time it is processed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// Processing time, from the injected clock.
    pub ts: Timestamp,
    /// The action.
    pub action: Action,
}

/// Which kind of command an event answers (carried by rejects).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CommandKind {
    /// [`NewOrder`].
    New = 0,
    /// [`Cancel`].
    Cancel = 1,
    /// [`Replace`].
    Replace = 2,
    /// [`MassCancel`].
    MassCancel = 3,
    /// [`SetStatus`].
    SetStatus = 4,
}
