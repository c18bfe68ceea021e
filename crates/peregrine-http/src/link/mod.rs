//! The exchange link: the one seam between the gateway and the exchange's native
//! protocol.
//!
//! Everything above this module speaks [`Request`], [`Report`] and [`FeedEvent`],
//! plain gateway types with no wire layout in them; only [`session`] (order entry),
//! [`feed`] (the UDP feed) and [`recovery`] (snapshots and replay) know
//! `peregrine-wire`. They speak protocol v2 (with v3's conditional orders, order
//! lists and fees on the order-entry session): one order-entry session per account,
//! logged in with the account's key and resuming the account's report stream where
//! the history store left it; the feed; and the recovery service.

pub mod feed;
pub mod recovery;
pub mod session;

use peregrine_types::{AccountId, InstrumentId, ListKind, Side, TriggerKind};

/// What an order is, in exchange terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Limit order.
    Limit,
    /// Market order (the price is a protection price).
    Market,
    /// Post-only (rejected if it would take): Binance's `LIMIT_MAKER`.
    PostOnly,
}

/// Time in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tif {
    /// Good till cancelled.
    Gtc,
    /// Immediate or cancel.
    Ioc,
    /// Fill or kill.
    Fok,
}

/// Self-trade prevention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stp {
    /// Off.
    None,
    /// Cancel the incoming order (Binance `EXPIRE_TAKER`).
    CancelNewest,
    /// Cancel the resting order (`EXPIRE_MAKER`).
    CancelOldest,
    /// Cancel both (`EXPIRE_BOTH`).
    CancelBoth,
    /// Decrement both (`DECREMENT`).
    Decrement,
}

/// A new order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewOrder {
    /// The gateway's id for it on the exchange session.
    pub coid: u64,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Side.
    pub side: Side,
    /// Kind.
    pub kind: Kind,
    /// Time in force.
    pub tif: Tif,
    /// Price units (limit, or protection price of a market order).
    pub price: i64,
    /// Quantity units.
    pub qty: i64,
    /// Self-trade prevention.
    pub stp: Stp,
    /// Trigger and iceberg (all zero: a plain order, sent as `NewOrder`; else
    /// `NewOrderExt`).
    pub ext: Ext,
}

/// An order's trigger and iceberg display (protocol v3, `docs/orders.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ext {
    /// Stop-loss, take-profit or none.
    pub trigger: TriggerKind,
    /// A fixed trigger price (0: none, or trailing).
    pub stop_price: i64,
    /// A trailing stop's offset in basis points (0: not trailing).
    pub trail_bps: u32,
    /// An iceberg's display quantity (0: not an iceberg).
    pub display_qty: i64,
}

impl Ext {
    /// No trigger, no iceberg.
    pub const NONE: Ext = Ext {
        trigger: TriggerKind::None,
        stop_price: 0,
        trail_bps: 0,
        display_qty: 0,
    };

    /// A plain order?
    pub fn is_none(&self) -> bool {
        *self == Ext::NONE
    }
}

impl Default for Ext {
    fn default() -> Ext {
        Ext::NONE
    }
}

/// A new order list (OCO, OTO, OTOCO): legs in the exchange's order (`docs/orders.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewList {
    /// The gateway's id for the list on the session.
    pub coid: u64,
    /// Instrument of every leg.
    pub instrument: InstrumentId,
    /// Kind.
    pub kind: ListKind,
    /// Legs (`coid` of each: the leg's session id); OCO and OTO use two.
    pub legs: [NewOrder; 3],
    /// Legs used (2 or 3).
    pub len: usize,
}

/// A request to the exchange for one account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// Enter an order.
    New(NewOrder),
    /// Cancel one order; `coid` is the request's own id.
    Cancel {
        /// Request id.
        coid: u64,
        /// Exchange order id.
        order_id: u64,
        /// Its instrument.
        instrument: InstrumentId,
    },
    /// Enter an order list.
    NewList(NewList),
    /// Cancel every live leg of a list.
    CancelList {
        /// Request id.
        coid: u64,
        /// The list's id.
        list_id: u64,
        /// Its instrument.
        instrument: InstrumentId,
    },
    /// Ask for one asset's balance.
    Balance {
        /// Request id.
        request_id: u64,
        /// Asset id.
        asset: u32,
    },
}

impl Request {
    /// The request's id on the session.
    pub fn id(&self) -> u64 {
        match self {
            Request::New(n) => n.coid,
            Request::Cancel { coid, .. } => *coid,
            Request::NewList(l) => l.coid,
            Request::CancelList { coid, .. } => *coid,
            Request::Balance { request_id, .. } => *request_id,
        }
    }
}

/// Why the exchange cancelled (part of) an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CancelCause {
    /// A cancel request.
    Requested,
    /// A mass cancel.
    Mass,
    /// IOC or market remainder.
    Unfilled,
    /// FOK that could not fill.
    FokUnfillable,
    /// Self-trade prevention.
    SelfTrade,
    /// GTD expiry.
    Expired,
    /// Another leg of its order list traded, triggered or left, or the list was
    /// cancelled.
    ListCancelled,
    /// A code this gateway does not know.
    Other(u16),
}

impl CancelCause {
    /// From the exchange's cancel reason code.
    pub fn from_code(code: u16) -> CancelCause {
        use peregrine_book::CancelReason as R;
        match code {
            c if c == R::UserRequested as u16 => CancelCause::Requested,
            c if c == R::MassCancel as u16 => CancelCause::Mass,
            c if c == R::Unfilled as u16 => CancelCause::Unfilled,
            c if c == R::FokUnfillable as u16 => CancelCause::FokUnfillable,
            c if c == R::SelfTrade as u16 => CancelCause::SelfTrade,
            c if c == R::Expired as u16 => CancelCause::Expired,
            c if c == R::ListCancelled as u16 => CancelCause::ListCancelled,
            other => CancelCause::Other(other),
        }
    }
}

/// A report from the exchange about one account's order or balance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// An order was accepted.
    Accepted {
        /// Exchange order id.
        order_id: u64,
        /// Session id of the order.
        coid: u64,
        /// Instrument.
        instrument: InstrumentId,
        /// Side.
        side: Side,
        /// Kind.
        kind: Kind,
        /// Time in force.
        tif: Tif,
        /// Self-trade prevention.
        stp: Stp,
        /// Price as accepted.
        price: i64,
        /// Quantity as accepted.
        qty: i64,
        /// Trigger and iceberg as accepted.
        ext: Ext,
        /// Parked: waiting for its trigger or its list's release.
        parked: bool,
        /// The order list it is a leg of (0: none).
        list_id: u64,
        /// Engine time, ns.
        time_ns: u64,
    },
    /// A parked order became active (its trigger was reached, or its list released
    /// it), keeping its id.
    Triggered {
        /// Exchange order id.
        order_id: u64,
        /// Engine time, ns.
        time_ns: u64,
    },
    /// An order list was accepted, rejected, or is done.
    List(ListReport),
    /// An order was refused.
    Rejected {
        /// Session id of the order.
        coid: u64,
        /// Exchange reject reason.
        reason: u16,
        /// Engine time, ns.
        time_ns: u64,
    },
    /// An order traded.
    Fill {
        /// Exchange order id.
        order_id: u64,
        /// Session id of the order.
        coid: u64,
        /// Trade id (shared with the public trade).
        trade_id: u64,
        /// Trade price.
        price: i64,
        /// Traded quantity.
        qty: i64,
        /// Quantity still open.
        leaves: i64,
        /// Instrument.
        instrument: InstrumentId,
        /// The order's side.
        side: Side,
        /// The order was resting.
        maker: bool,
        /// The order's fee for this fill in the quote asset's smallest unit (price
        /// unit × quantity unit); negative: a rebate.
        fee: i64,
        /// Engine time, ns.
        time_ns: u64,
    },
    /// (The rest of) an order left the book.
    Cancelled {
        /// Exchange order id.
        order_id: u64,
        /// Session id of the order.
        coid: u64,
        /// The cancel request that caused it (0: the exchange on its own).
        request_id: u64,
        /// Quantity removed.
        qty: i64,
        /// Instrument.
        instrument: InstrumentId,
        /// Why.
        cause: CancelCause,
        /// Engine time, ns.
        time_ns: u64,
    },
    /// A cancel request was refused.
    CancelRejected {
        /// The request's id.
        request_id: u64,
        /// The order it named.
        order_id: u64,
        /// Exchange reason.
        reason: u16,
    },
    /// An order's price or quantity changed (a replace).
    Replaced {
        /// Exchange order id.
        order_id: u64,
        /// New session id of the order.
        coid: u64,
        /// New price.
        price: i64,
        /// New open quantity.
        qty: i64,
        /// Engine time, ns.
        time_ns: u64,
    },
    /// One asset's balance.
    Balance {
        /// The request's id.
        request_id: u64,
        /// Asset.
        asset: u32,
        /// Free.
        available: i64,
        /// Held by open orders.
        reserved: i64,
        /// Engine time, ns.
        time_ns: u64,
    },
    /// A balance request was refused.
    BalanceRejected {
        /// The request's id.
        request_id: u64,
        /// Exchange reason.
        reason: u16,
    },
    /// An open order the exchange listed (the answer to the open-orders query sent
    /// when there is no report stream position to resume from, or the snapshot that
    /// replaces a replay the exchange no longer holds).
    Open(OpenOrder),
}

/// What happened to an order list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListState {
    /// Every leg was entered (their `Accepted` follow).
    Accepted,
    /// Refused as a whole (`reason`): nothing was entered.
    Rejected,
    /// No leg depends on another any more.
    Done,
}

/// An order list's status report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListReport {
    /// The list's id (its leg 0's order id; 0 when rejected).
    pub list_id: u64,
    /// The request it answers (the list's own session id, a `CancelList`'s), 0 when
    /// the list resolved by itself.
    pub request_id: u64,
    /// The list's session id.
    pub coid: u64,
    /// Legs' order ids (0: unused).
    pub legs: [u64; 3],
    /// Instrument.
    pub instrument: InstrumentId,
    /// Kind.
    pub kind: ListKind,
    /// State.
    pub state: ListState,
    /// Reject reason (0 otherwise).
    pub reason: u16,
    /// Engine time, ns.
    pub time_ns: u64,
}

/// An order resting on the exchange, as the exchange lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOrder {
    /// Exchange order id.
    pub order_id: u64,
    /// Session id of the order.
    pub coid: u64,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Side.
    pub side: Side,
    /// Kind.
    pub kind: Kind,
    /// Time in force.
    pub tif: Tif,
    /// Price units.
    pub price: i64,
    /// Quantity still open.
    pub open_qty: i64,
    /// Engine time of the answer, ns.
    pub time_ns: u64,
}

/// Where an order-entry session delivers what it learns. Called from the session's
/// task; implementations must not block for long.
pub trait ReportSink: Send + Sync + 'static {
    /// Reports read from the exchange for `account`, in order; `next_report_seq` is
    /// the account's report stream position once they are applied (what a later
    /// session resumes from, so it is persisted with the changes they make).
    fn deliver(&self, account: AccountId, reports: &[Report], next_report_seq: u64);
    /// The end of one read from the socket: every report the exchange wrote for the
    /// commands answered so far has arrived (see [`session`] for why).
    fn end_of_read(&self, account: AccountId);
    /// The session is up (`true`) or down (`false`). Down: every request sent and
    /// unanswered has an unknown outcome.
    fn connected(&self, account: AccountId, up: bool);
    /// A request could not be sent (no session): it never reached the exchange.
    fn not_sent(&self, account: AccountId, request_id: u64);
}

/// One market-data event, with its feed position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedEvent {
    /// A trade.
    Trade {
        /// Instrument.
        instrument: InstrumentId,
        /// Trade id.
        trade_id: u64,
        /// Price units.
        price: i64,
        /// Quantity units.
        qty: i64,
        /// Side of the incoming order.
        aggressor: Side,
        /// Engine time, ns.
        time_ns: u64,
    },
    /// A price level's new total (0 removes it).
    Level {
        /// Instrument.
        instrument: InstrumentId,
        /// Book side.
        side: Side,
        /// Price units.
        price: i64,
        /// Quantity units.
        qty: i64,
        /// Engine time, ns.
        time_ns: u64,
    },
    /// A whole book (after start, a gap that replay could not heal, or an exchange
    /// restart): replaces what was known.
    Book {
        /// Instrument.
        instrument: InstrumentId,
        /// Bids, best first: (price, qty).
        bids: Vec<(i64, i64)>,
        /// Asks, best first.
        asks: Vec<(i64, i64)>,
    },
}

/// A feed event's place in the feed: session and sequence number (0 for books from
/// snapshots, which sit between sequence numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FeedPos {
    /// Feed session id.
    pub session: u64,
    /// Sequence number.
    pub seq: u64,
}
