//! Events the matching core emits, and the sink they go to.
//!
//! Events are small `Copy` values pushed into a caller-provided [`EventSink`]; the core
//! never allocates a collection per command. The order of events for one command is
//! part of the contract (see `docs/architecture.md`): the reference book and the fast
//! book must produce identical streams.

use peregrine_types::{AccountId, ClientOrderId, InstrumentId, OrderId, Price, Qty, Side};

use crate::command::CommandKind;
use crate::reject::{CancelReason, RejectReason};

/// An order was accepted (it may trade and rest in the events that follow).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    /// Instrument.
    pub instrument: InstrumentId,
    /// Exchange id.
    pub id: OrderId,
    /// Client id.
    pub client_id: ClientOrderId,
    /// Owner.
    pub account: AccountId,
    /// Side.
    pub side: Side,
    /// Limit or protection price.
    pub price: Price,
    /// Quantity.
    pub qty: Qty,
}

/// A command was refused; nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejected {
    /// Instrument named in the command.
    pub instrument: InstrumentId,
    /// Which command.
    pub command: CommandKind,
    /// The order named (or assigned, for a new order).
    pub id: OrderId,
    /// The command's client id.
    pub client_id: ClientOrderId,
    /// Requesting account.
    pub account: AccountId,
    /// Why.
    pub reason: RejectReason,
}

/// A trade between a resting (maker) and an incoming (taker) order, at the maker's price.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill {
    /// Instrument.
    pub instrument: InstrumentId,
    /// Per-instrument trade sequence, from 1.
    pub trade_id: u64,
    /// Resting order.
    pub maker_id: OrderId,
    /// Incoming order.
    pub taker_id: OrderId,
    /// Resting order's client id.
    pub maker_client_id: ClientOrderId,
    /// Incoming order's client id.
    pub taker_client_id: ClientOrderId,
    /// Resting order's account.
    pub maker_account: AccountId,
    /// Incoming order's account.
    pub taker_account: AccountId,
    /// The taker's side (the aggressor).
    pub taker_side: Side,
    /// Trade price: always the resting order's price.
    pub price: Price,
    /// Traded quantity.
    pub qty: Qty,
    /// Maker's open quantity after the trade (0 = done).
    pub maker_leaves: Qty,
    /// Taker's open quantity after the trade.
    pub taker_leaves: Qty,
}

/// Quantity left an order without trading (all of it when `leaves` is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled {
    /// Instrument.
    pub instrument: InstrumentId,
    /// Order.
    pub id: OrderId,
    /// Order's client id.
    pub client_id: ClientOrderId,
    /// Owner.
    pub account: AccountId,
    /// Side.
    pub side: Side,
    /// Order's price.
    pub price: Price,
    /// Quantity cancelled by this event.
    pub qty: Qty,
    /// Open quantity left (non-zero only for a self-trade decrement).
    pub leaves: Qty,
    /// Why.
    pub reason: CancelReason,
}

/// A cancel-replace took effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replaced {
    /// Instrument.
    pub instrument: InstrumentId,
    /// Order (id unchanged).
    pub id: OrderId,
    /// New client id.
    pub client_id: ClientOrderId,
    /// Owner.
    pub account: AccountId,
    /// Side.
    pub side: Side,
    /// New price.
    pub price: Price,
    /// New open quantity.
    pub qty: Qty,
    /// Whether time priority was kept.
    pub priority_kept: bool,
}

/// The aggregate at a price level changed (L2 incremental update). `qty` 0 means the
/// level is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelChanged {
    /// Instrument.
    pub instrument: InstrumentId,
    /// Side of the level.
    pub side: Side,
    /// Level price.
    pub price: Price,
    /// New total open quantity.
    pub qty: Qty,
    /// New number of orders.
    pub count: u32,
}

/// A mass cancel finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MassCancelled {
    /// Instrument.
    pub instrument: InstrumentId,
    /// Account.
    pub account: AccountId,
    /// Side filter.
    pub side: Option<Side>,
    /// Orders cancelled.
    pub count: u32,
}

/// Everything the core reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// See [`Accepted`].
    Accepted(Accepted),
    /// See [`Rejected`].
    Rejected(Rejected),
    /// See [`Fill`].
    Fill(Fill),
    /// See [`Cancelled`].
    Cancelled(Cancelled),
    /// See [`Replaced`].
    Replaced(Replaced),
    /// See [`LevelChanged`].
    LevelChanged(LevelChanged),
    /// See [`MassCancelled`].
    MassCancelled(MassCancelled),
    /// An instrument's status changed.
    StatusChanged(crate::command::SetStatus),
}

/// Where the core writes events. Implemented by the post-match stage (journal,
/// publisher, settlement) or by a plain buffer.
pub trait EventSink {
    /// Receives one event.
    fn push(&mut self, event: Event);
}

/// A `Vec` is a sink; reuse it with `clear()` and give it enough capacity up front so
/// that pushing never reallocates.
impl EventSink for Vec<Event> {
    #[inline]
    fn push(&mut self, event: Event) {
        Vec::push(self, event);
    }
}

/// Counts events by kind and drops them (for benches).
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingSink {
    /// Events seen.
    pub events: u64,
    /// Fills seen.
    pub fills: u64,
    /// Rejects seen.
    pub rejects: u64,
}

impl EventSink for CountingSink {
    #[inline]
    fn push(&mut self, event: Event) {
        self.events += 1;
        match event {
            Event::Fill(_) => self.fills += 1,
            Event::Rejected(_) => self.rejects += 1,
            _ => {}
        }
    }
}
