//! Events the matching core emits, and the sink they go to.
//!
//! Events are small `Copy` values pushed into a caller-provided [`EventSink`]; the core
//! never allocates a collection per command. The order of events for one command is
//! part of the contract (see `docs/architecture.md`): the reference book and the fast
//! book must produce identical streams.

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, ListKind, OrderId, Price, Qty, Side, Timestamp,
    TradingPhase,
};

use crate::command::{CommandKind, MmpParams, NewOrder};
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
    /// An auction uncross printed it: no aggressor; the sell order is reported as
    /// the maker, the buy order as the taker (`taker_side` Buy).
    pub auction: bool,
    /// The maker's fee in quote units (negative: a rebate). The book leaves it 0; the
    /// venue's fee stage sets it before the event is settled and reported.
    pub maker_fee: i64,
    /// The taker's fee in quote units, set like `maker_fee`.
    pub taker_fee: i64,
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

/// Why a parked order became active.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TriggerCause {
    /// The last trade price reached its trigger (stop, take-profit, trailing stop).
    Price = 0,
    /// Its list's working leg was completely filled (an OTO / OTOCO pending leg).
    Released = 1,
}

/// A parked order became active: it now enters the book as an incoming order (a
/// released conditional leg is parked again, waiting for its own trigger).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Triggered {
    /// Instrument.
    pub instrument: InstrumentId,
    /// The order (the id it was accepted with).
    pub id: OrderId,
    /// Its client id.
    pub client_id: ClientOrderId,
    /// Owner.
    pub account: AccountId,
    /// Side.
    pub side: Side,
    /// The trigger price reached (0 for a release).
    pub trigger_price: Price,
    /// The last trade price when it became active.
    pub last_price: Price,
    /// Why.
    pub cause: TriggerCause,
}

/// Where an order list stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ListStatus {
    /// Accepted: its legs' `Accepted` events follow.
    Accepted = 0,
    /// Refused as a whole: nothing was entered (`reason`, `leg`).
    Rejected = 1,
    /// Resolved: no leg depends on another any more (an OCO leg traded, triggered or
    /// left; an OTO's pending legs were released or cancelled).
    Done = 2,
}

/// An order list changed state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListUpdate {
    /// Instrument.
    pub instrument: InstrumentId,
    /// The list's id (its leg 0's order id).
    pub list_id: OrderId,
    /// The list's client id.
    pub client_id: ClientOrderId,
    /// Owner.
    pub account: AccountId,
    /// Kind.
    pub kind: ListKind,
    /// New state.
    pub status: ListStatus,
    /// The legs' order ids (unused legs 0).
    pub legs: [OrderId; 3],
    /// For a rejected list: why.
    pub reason: Option<RejectReason>,
    /// For a rejected list: which leg failed (0-based; 0 also for the list itself).
    pub leg: u8,
}

/// What happened to an account's market-maker protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MmpStatus {
    /// Limits set.
    Set = 0,
    /// Limits reached: quotes cancelled, new orders refused.
    Triggered = 1,
    /// Freeze lifted and window cleared by the account's reset.
    Reset = 2,
    /// Protection removed.
    Cleared = 3,
    /// Freeze lifted by its freeze time running out.
    Thawed = 4,
}

/// Market-maker protection changed for an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmpUpdate {
    /// Instrument.
    pub instrument: InstrumentId,
    /// Account.
    pub account: AccountId,
    /// What happened.
    pub status: MmpStatus,
    /// The limits in force (zeros when cleared).
    pub params: MmpParams,
    /// Quantity filled within the window when it tripped (0 otherwise).
    pub window_qty: i64,
    /// Fills within the window when it tripped (0 otherwise).
    pub window_fills: u32,
}

/// An instrument's trading phase changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseChanged {
    /// Instrument.
    pub instrument: InstrumentId,
    /// The new phase.
    pub phase: TradingPhase,
    /// When a call auction uncrosses by itself (0: on command or by the schedule).
    pub ends_at: Timestamp,
}

/// The indicative uncross of a call auction, published whenever it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Indicative {
    /// Instrument.
    pub instrument: InstrumentId,
    /// The price the book would uncross at now (0: it does not cross).
    pub price: Price,
    /// The quantity that would trade.
    pub volume: Qty,
    /// The quantity left unmatched at that price on the larger side.
    pub surplus: Qty,
    /// The side with the surplus (`None`: balanced, or no cross).
    pub surplus_side: Option<Side>,
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
    /// A parked order became active. See [`Triggered`].
    Triggered(Triggered),
    /// An order list changed state. See [`ListUpdate`].
    List(ListUpdate),
    /// Market-maker protection changed. See [`MmpUpdate`].
    Mmp(MmpUpdate),
    /// An instrument's trading phase changed. See [`PhaseChanged`].
    PhaseChanged(PhaseChanged),
    /// A call auction's indicative uncross changed. See [`Indicative`].
    Indicative(Indicative),
}

/// Where the core writes events. Implemented by the post-match stage (journal,
/// publisher, settlement) or by a plain buffer.
pub trait EventSink {
    /// Receives one event.
    fn push(&mut self, event: Event);

    /// The pre-match check of an order the book activates on its own, mid-command:
    /// an OTO pending leg when its working leg fills. (Orders from commands are checked
    /// by the engine's [`crate::PreMatch`] before they reach the book.) Events pushed
    /// so far in the command have been seen by the sink, so funds a fill just
    /// delivered count. The default admits everything.
    #[inline]
    fn admit(
        &mut self,
        order: &NewOrder,
        spec: &peregrine_types::InstrumentSpec,
    ) -> Result<(), RejectReason> {
        let _ = (order, spec);
        Ok(())
    }
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
