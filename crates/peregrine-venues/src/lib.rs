//! Venue adapters of the order engine, and their sessions: what a gateway thread
//! drives.
//!
//! A gateway owns one adapter for one (venue, credential). It submits and cancels
//! orders and polls for reports; the adapter never blocks the caller (a slow or broken
//! venue only delays its own reports), so one gateway's venue cannot stall another.
//! Three adapters: [`sim::SimVenue`] (seed 000's simulated venue),
//! [`exchange::ExchangeVenue`], the Peregrine exchange over its binary TCP protocol, and
//! [`fix::FixVenue`], any FIX 4.4 venue.

#![deny(unsafe_code)]

pub mod exchange;
pub mod feed;
pub mod fix;
pub mod log;
pub mod sim;

use peregrine_types::{
    InstrumentId, ListKind, OrderExt, OrderType, Price, Qty, Side, StpMode, TimeInForce,
};

use crate::feed::MarketFeed;

/// The reason an adapter gives for an order or replace it lost with its connection
/// (the orchestrator shows it as `venue_down`, engine reason 207).
pub const REASON_DISCONNECTED: u16 = u16::MAX;

/// An order as sent to a venue. `engine_id` is the engine's id for it; the venue
/// answers with its own id, which the gateway maps back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VenueOrder {
    /// The engine's order id.
    pub engine_id: u64,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Side.
    pub side: Side,
    /// Limit price (a market order's protection price).
    pub price: Price,
    /// Quantity.
    pub qty: Qty,
    /// Limit, market or post-only.
    pub order_type: OrderType,
    /// Time in force.
    pub tif: TimeInForce,
    /// Self-trade prevention at the venue.
    pub stp: StpMode,
    /// GTD expiry, ns since the Unix epoch (0 otherwise).
    pub expire_at: u64,
    /// Trigger (stop, take-profit, trailing) and iceberg display quantity. An adapter
    /// whose venue lacks them refuses the order with [`VenueError::Unsupported`],
    /// never sends it as a plain order.
    pub ext: OrderExt,
}

impl VenueOrder {
    /// A GTC limit order without self-trade prevention.
    pub fn limit(
        engine_id: u64,
        instrument: InstrumentId,
        side: Side,
        price: Price,
        qty: Qty,
    ) -> VenueOrder {
        VenueOrder {
            engine_id,
            instrument,
            side,
            price,
            qty,
            order_type: OrderType::Limit,
            tif: TimeInForce::Gtc,
            stp: StpMode::None,
            expire_at: 0,
            ext: OrderExt::NONE,
        }
    }
}

/// What a venue reports about an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// Accepted; the venue's id for the order.
    Ack { engine_id: u64, venue_id: u64 },
    /// Refused by the venue.
    Rejected { engine_id: u64, reason: u16 },
    /// A fill.
    Fill {
        engine_id: u64,
        price: Price,
        qty: Qty,
        leaves: Qty,
    },
    /// Quantity left the order without trading: `qty` cancelled, `leaves` still open
    /// (0: the order is done; more only after a self-trade decrement).
    Cancelled {
        engine_id: u64,
        qty: Qty,
        leaves: Qty,
    },
    /// A replace took effect: the order's new limit price and new open quantity.
    Replaced {
        engine_id: u64,
        price: Price,
        qty: Qty,
    },
    /// The venue refused a cancel; the order is unchanged.
    CancelRejected { engine_id: u64, reason: u16 },
    /// The venue refused a replace; the order is unchanged.
    ReplaceRejected { engine_id: u64, reason: u16 },
    /// A conditional order's trigger was reached: it is now a live order with the same
    /// id (`trigger_price` reached, the venue's `last_price` then).
    Triggered {
        engine_id: u64,
        trigger_price: Price,
        last_price: Price,
    },
    /// An order list's status (`engine_id` is its leg 0's): accepted (its legs' acks
    /// follow), rejected (`reason`; each leg is also reported `Rejected`) or done (no
    /// leg depends on another any more).
    ListStatus {
        engine_id: u64,
        status: ListState,
        reason: u16,
    },
}

/// Where an order list stands ([`Report::ListStatus`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListState {
    /// Every leg entered.
    Accepted = 0,
    /// Nothing entered.
    Rejected = 1,
    /// The list resolved: a leg traded, triggered or left, and its siblings were
    /// released or cancelled.
    Done = 2,
}

impl Report {
    /// The engine id the report is about.
    pub fn engine_id(&self) -> u64 {
        match *self {
            Report::Ack { engine_id, .. }
            | Report::Rejected { engine_id, .. }
            | Report::Fill { engine_id, .. }
            | Report::Cancelled { engine_id, .. }
            | Report::Replaced { engine_id, .. }
            | Report::CancelRejected { engine_id, .. }
            | Report::ReplaceRejected { engine_id, .. }
            | Report::Triggered { engine_id, .. }
            | Report::ListStatus { engine_id, .. } => engine_id,
        }
    }
}

/// An order open when the engine stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoredOrder {
    /// Engine order id.
    pub engine_id: u64,
    /// Strategy index in the current config.
    pub strategy: u16,
    /// Its risk key: the client id with `durable::ORPHAN` set.
    pub client_key: u64,
    /// Venue index in the current config.
    pub venue: u32,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Side.
    pub side: Side,
    /// Limit price.
    pub price: Price,
    /// Quantity.
    pub qty: Qty,
    /// Open quantity.
    pub leaves: Qty,
    /// The venue's id (0: never acknowledged).
    pub venue_id: u64,
}

/// Why a venue refused a request synchronously.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VenueError {
    /// The adapter's outbound buffer is full (back-pressure).
    #[error("venue busy")]
    Busy,
    /// Not connected.
    #[error("venue disconnected")]
    Disconnected,
    /// Unknown order.
    #[error("unknown order {0}")]
    UnknownOrder(u64),
    /// The venue has no such order type (a stop, a trailing stop or an iceberg sent
    /// to an adapter whose venue lacks it): refused, never downgraded.
    #[error("order type not supported by this venue")]
    Unsupported,
}

/// Names a venue's reject reason codes ([`Venue::reason_name`]).
pub type ReasonNames = fn(u16) -> &'static str;

/// A venue connection, driven by one gateway thread.
pub trait Venue {
    /// The name of this venue's reason `code` in a [`Report::Rejected`], for the
    /// summary. Default: the exchange's and the simulator's codes
    /// (`peregrine_book::RejectReason`).
    fn reason_name(code: u16) -> &'static str
    where
        Self: Sized,
    {
        peregrine_book::RejectReason::from_code(code).map_or("other", |r| r.as_str())
    }

    /// The venue's market data, if it has any: called once before the gateway thread
    /// starts; the feed runs on the engine's market-data thread.
    fn market_feed(&mut self) -> Option<Box<dyn MarketFeed>> {
        None
    }
    /// An order that was open at this venue when the engine stopped (replayed from the
    /// engine's journal), handed over before the gateway starts. Returns the report
    /// that settles it at once, or `None` when the adapter reconciles it with the
    /// venue and reports later. The default: the venue has forgotten it (a simulated
    /// venue restarts with the engine), so it is cancelled with what was open.
    fn restore(&mut self, order: &RestoredOrder) -> Option<Report> {
        Some(Report::Cancelled {
            engine_id: order.engine_id,
            qty: order.leaves,
            leaves: Qty::ZERO,
        })
    }
    /// Sends a new order.
    fn submit(&mut self, order: VenueOrder, now_ns: u64) -> Result<(), VenueError>;
    /// Sends an order list of `kind`: `legs` (exactly `kind.legs()`, one instrument,
    /// consecutive engine ids) are entered together or not at all, answered by
    /// [`Report::ListStatus`] and each leg's own reports. The default: the venue has
    /// no lists ([`VenueError::Unsupported`]), never sent as separate orders.
    fn submit_list(
        &mut self,
        _kind: ListKind,
        _legs: &[VenueOrder],
        _now_ns: u64,
    ) -> Result<(), VenueError> {
        Err(VenueError::Unsupported)
    }
    /// Asks to cancel an order.
    fn cancel(&mut self, engine_id: u64, now_ns: u64) -> Result<(), VenueError>;
    /// Asks to change an open order's limit price and open quantity (what is still to
    /// be filled). Answered by [`Report::Replaced`] or [`Report::ReplaceRejected`].
    fn replace(
        &mut self,
        engine_id: u64,
        price: Price,
        qty: Qty,
        now_ns: u64,
    ) -> Result<(), VenueError>;
    /// Hands every report due by `now_ns` to `out`; returns how many.
    fn poll(&mut self, now_ns: u64, out: &mut dyn FnMut(Report)) -> usize;
    /// The venue delay scheduled for the last submitted order, when the adapter knows
    /// it (the simulated venue does; a real venue does not).
    fn last_scheduled_delay_ns(&self) -> Option<u64> {
        None
    }
    /// How far the venue's report stream has been processed: the next report sequence
    /// number to ask for after a restart (`None`: the venue has no such stream). The
    /// gateway hands each new value to the orchestrator, which journals it after the
    /// reports it covers.
    fn report_cursor(&self) -> Option<u64> {
        None
    }
    /// Hands the log lines the adapter produced to `out` (the adapter never writes to
    /// stderr itself: see [`log`]).
    fn drain_log(&mut self, _out: &mut dyn FnMut(String)) {}
    /// Orders whose state at the venue is unknown right now (the connection dropped
    /// while they were on their way or open): held, with their risk, until the
    /// venue's replay or an order-status query settles them.
    fn in_doubt(&self) -> usize {
        0
    }
}
