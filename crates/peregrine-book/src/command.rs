//! Commands the matching core accepts.
//!
//! Every command carries the time it is processed at (`ts`), stamped by whoever
//! sequences commands (the exchange's matching thread, a replay, a test). The core
//! never reads a clock: GTD expiry is driven by these timestamps alone, so replaying a
//! command stream reproduces every event bit for bit.

use peregrine_types::{
    AccountId, AuctionKind, ClientOrderId, InstrumentId, InstrumentStatus, ListKind, OrderId,
    OrderType, Price, Qty, Side, StpMode, TimeInForce, Timestamp, TrailUnit, TriggerKind,
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

/// What makes a conditional order trigger (see [`TriggerKind`]).
///
/// A fixed trigger has `price` and no trail. A trailing stop has `price` 0 and an
/// offset: it starts from the last trade price when it is entered and follows the
/// best price since (the highest for a sell, the lowest for a buy) at `trail` ticks or
/// basis points behind it. Only stop-loss orders trail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trigger {
    /// Stop-loss or take-profit ([`TriggerKind::None`]: not conditional).
    pub kind: TriggerKind,
    /// How `trail` is measured ([`TrailUnit::None`]: a fixed trigger).
    pub unit: TrailUnit,
    /// The trailing offset (positive), in `unit`s; 0 for a fixed trigger.
    pub trail: i32,
    /// The trigger (stop) price for a fixed trigger; 0 for a trailing one.
    pub price: Price,
}

impl Trigger {
    /// No trigger: an ordinary order.
    pub const NONE: Trigger = Trigger {
        kind: TriggerKind::None,
        unit: TrailUnit::None,
        trail: 0,
        price: Price::from_raw(0),
    };

    /// A fixed trigger of `kind` at `price`.
    pub const fn at(kind: TriggerKind, price: Price) -> Trigger {
        Trigger {
            kind,
            unit: TrailUnit::None,
            trail: 0,
            price,
        }
    }

    /// A trailing stop-loss `trail` units behind the best price.
    pub const fn trailing(unit: TrailUnit, trail: i32) -> Trigger {
        Trigger {
            kind: TriggerKind::StopLoss,
            unit,
            trail,
            price: Price::from_raw(0),
        }
    }

    /// Whether this is a conditional order at all.
    pub const fn is_some(&self) -> bool {
        !matches!(self.kind, TriggerKind::None)
    }
}

/// A new order with the venue's extended attributes: a trigger (stop, stop-limit,
/// take-profit, trailing stop) and/or an iceberg display quantity. The plain fields
/// are [`NewOrder`]'s, with the same rules; a stop's `order.price` is its limit price
/// (stop-limit) or protection price (stop-market).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtOrder {
    /// The order as it enters the book once active.
    pub order: NewOrder,
    /// Its trigger ([`Trigger::NONE`]: active at once).
    pub trigger: Trigger,
    /// Iceberg display quantity: the most the book shows at a time (0: not an
    /// iceberg). Must be on the lot grid, at least the minimum and below `order.qty`.
    pub display: Qty,
}

impl ExtOrder {
    /// An ordinary order with no extension.
    pub const fn plain(order: NewOrder) -> ExtOrder {
        ExtOrder {
            order,
            trigger: Trigger::NONE,
            display: Qty::ZERO,
        }
    }
}

/// An order list (OCO, OTO, OTOCO): its legs enter atomically, all or none.
///
/// Legs by kind (all on one instrument, one account):
/// * OCO: `legs[0]` and `legs[1]`, one side; one limit leg and one trigger leg, or two
///   trigger legs of opposite directions. Neither may trade or trigger on entry.
/// * OTO: `legs[0]` working (a limit or post-only order, may trade at once),
///   `legs[1]` pending until the working leg is completely filled.
/// * OTOCO: `legs[0]` working, `legs[1]` and `legs[2]` the pending OCO pair.
///
/// The legs' `instrument` and `account` must be the list's; their ids are assigned by
/// the [`crate::MatchingEngine`] (in leg order); the list's id is leg 0's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderList {
    /// Instrument of every leg.
    pub instrument: InstrumentId,
    /// Owner of every leg.
    pub account: AccountId,
    /// How the legs depend on each other.
    pub kind: ListKind,
    /// The client's id for the list, echoed on its list reports.
    pub client_id: ClientOrderId,
    /// The legs; only the first [`ListKind::legs`] are used.
    pub legs: [ExtOrder; 3],
}

/// Cancel a whole order list (every leg still live).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CancelList {
    /// Instrument of the list.
    pub instrument: InstrumentId,
    /// The list (its leg 0's order id).
    pub list_id: OrderId,
    /// The requesting account; must own the list.
    pub account: AccountId,
    /// The request's own client id.
    pub client_id: ClientOrderId,
}

/// Market-maker protection limits of one account on one instrument.
///
/// Each passive (maker) fill of the account counts; when, within the last `window_ns`,
/// the fills reach `max_fills` or their quantity reaches `max_qty`, the account's
/// resting orders on the instrument are cancelled and its new orders refused until
/// a reset (or, with `freeze_ns` > 0, until that long has passed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MmpParams {
    /// The sliding window, nanoseconds (at least 1).
    pub window_ns: u64,
    /// Quantity limit within the window (lots; at least 1).
    pub max_qty: i64,
    /// Fill-count limit within the window (1..=[`MMP_MAX_FILLS`]).
    pub max_fills: u32,
    /// How long a trip freezes the account (0: until a reset).
    pub freeze_ns: u64,
}

/// The largest `max_fills` a protection may use (the window keeps one entry per fill).
pub const MMP_MAX_FILLS: u32 = 4_096;

/// What to do with an account's market-maker protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmpOp {
    /// Set (or replace) the limits; clears the window and any freeze.
    Set(MmpParams),
    /// Lift a freeze and clear the window.
    Reset,
    /// Remove the protection.
    Clear,
}

/// A market-maker protection command of an account for itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmpCommand {
    /// Instrument.
    pub instrument: InstrumentId,
    /// The account protected.
    pub account: AccountId,
    /// What to do.
    pub op: MmpOp,
    /// The requester's id, echoed in the venue's answer (the book ignores it).
    pub request_id: u64,
}

/// An admin command on an instrument's trading phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarketOp {
    /// Halt: no new orders or replaces.
    Halt,
    /// Resume continuous trading (from a halt, or ending a call without an uncross).
    Resume,
    /// Start a call auction of `kind`, uncrossing after `duration_ns` (0: only on
    /// [`MarketOp::Uncross`] or the schedule).
    StartAuction {
        /// Which auction.
        kind: AuctionKind,
        /// How long the call lasts (0: open-ended).
        duration_ns: u64,
    },
    /// Uncross the current call auction now.
    Uncross,
}

/// An admin market command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarketCommand {
    /// Instrument.
    pub instrument: InstrumentId,
    /// What to do.
    pub op: MarketOp,
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
    /// Add an order with a trigger and/or an iceberg display quantity.
    NewExt(ExtOrder),
    /// Cancel an order.
    Cancel(Cancel),
    /// Cancel-replace an order.
    Replace(Replace),
    /// Cancel all of an account's orders.
    MassCancel(MassCancel),
    /// Halt or resume an instrument.
    SetStatus(SetStatus),
    /// Cancel an order list.
    CancelList(CancelList),
    /// Set, reset or clear an account's market-maker protection.
    Mmp(MmpCommand),
    /// Halt, resume, start or uncross an auction (admin).
    Market(MarketCommand),
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
    /// [`OrderList`].
    NewList = 5,
    /// [`CancelList`].
    CancelList = 6,
    /// [`MmpCommand`].
    Mmp = 7,
    /// [`MarketCommand`].
    Market = 8,
}

impl Action {
    /// The instrument the action is for (`None` for [`Action::Tick`]).
    pub fn instrument(&self) -> Option<InstrumentId> {
        Some(match self {
            Action::New(o) => o.instrument,
            Action::NewExt(e) => e.order.instrument,
            Action::Cancel(c) => c.instrument,
            Action::Replace(r) => r.instrument,
            Action::MassCancel(m) => m.instrument,
            Action::SetStatus(s) => s.instrument,
            Action::CancelList(c) => c.instrument,
            Action::Mmp(m) => m.instrument,
            Action::Market(m) => m.instrument,
            Action::Tick => return None,
        })
    }
}
