//! Execution reports, exchange → client.
//!
//! Every report starts with the same three fields after the header: the per-session
//! sequence number, the engine's global sequence number, and the engine timestamp.
//! Reason codes are exchange-defined `u16`s ([`ReasonCode`]); 0 means unspecified.

use peregrine_types::{
    ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode, TimeInForce,
    Timestamp,
};

use crate::field::{LiquidityRole, ReasonCode, RequestKind};
use crate::message::wire_message;

wire_message! {
    /// Exchange → client. A `NewOrder` was accepted; it may already have traded
    /// (fills follow) or rest on the book.
    Accepted = 0x90;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Exchange id assigned to the order.
    order_id: OrderId,
    /// The `NewOrder`'s client order id.
    client_order_id: ClientOrderId,
    /// Limit price as accepted.
    price: Price,
    /// Quantity as accepted.
    qty: Qty,
    /// Expiry as accepted (0 unless Gtd).
    expire_at: Timestamp,
    /// Instrument.
    instrument: InstrumentId,
    /// 0 Buy, 1 Sell.
    side: Side,
    /// Order type as accepted.
    order_type: OrderType,
    /// Time in force as accepted.
    tif: TimeInForce,
    /// Self-trade prevention mode as accepted.
    stp: StpMode,
}

wire_message! {
    /// Exchange → client. A `NewOrder` was refused; nothing was entered.
    Rejected = 0x91;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The `NewOrder`'s client order id.
    client_order_id: ClientOrderId,
    /// The `NewOrder`'s instrument.
    instrument: InstrumentId,
    /// Why, as an exchange-defined reason code.
    reason: ReasonCode,
}

wire_message! {
    /// Exchange → client. The order traded.
    Fill = 0x92;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Exchange id of the order that traded.
    order_id: OrderId,
    /// The order's client order id.
    client_order_id: ClientOrderId,
    /// Trade (match) id, shared by both sides of the trade and the public trade.
    trade_id: u64,
    /// Trade price in price units.
    price: Price,
    /// Quantity traded in this fill.
    qty: Qty,
    /// Quantity still open after this fill; 0 means the order is done.
    leaves_qty: Qty,
    /// Instrument.
    instrument: InstrumentId,
    /// The order's side: 0 Buy, 1 Sell.
    side: Side,
    /// 0 Maker (was resting), 1 Taker (traded on arrival).
    role: LiquidityRole,
}

wire_message! {
    /// Exchange → client. The order left the book, or its unfilled rest was cancelled
    /// (on request, by mass cancel, IOC/FOK rest, self-trade prevention, expiry, ...).
    Cancelled = 0x93;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Exchange id of the cancelled order.
    order_id: OrderId,
    /// The cancelled order's client order id.
    client_order_id: ClientOrderId,
    /// Client order id of the `Cancel` or `MassCancel` that caused this; 0 when the
    /// exchange cancelled on its own.
    request_id: ClientOrderId,
    /// Quantity removed from the book by this cancel.
    cancelled_qty: Qty,
    /// Instrument.
    instrument: InstrumentId,
    /// Why, as an exchange-defined reason code.
    reason: ReasonCode,
    /// The order's side: 0 Buy, 1 Sell.
    side: Side,
}

wire_message! {
    /// Exchange → client. A `Replace` took effect.
    Replaced = 0x94;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Exchange id of the order (unchanged by a replace).
    order_id: OrderId,
    /// The `Replace`'s client order id, now the order's.
    client_order_id: ClientOrderId,
    /// The order's client order id before the replace.
    orig_client_order_id: ClientOrderId,
    /// New limit price.
    new_price: Price,
    /// New open quantity.
    new_qty: Qty,
    /// Instrument.
    instrument: InstrumentId,
    /// 1 if the order kept its time priority, 0 if it went to the back of the queue.
    priority_kept: bool,
}

wire_message! {
    /// Exchange → client. A `Cancel`, `Replace` or `MassCancel` was refused; the order
    /// (if any) is unchanged.
    CancelRejected = 0x95;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The refused request's client order id.
    client_order_id: ClientOrderId,
    /// The exchange order id the request named (0 for a mass cancel).
    order_id: OrderId,
    /// The request's instrument, or 0xFFFF_FFFF for an all-instrument mass cancel.
    instrument: Option<InstrumentId>,
    /// Why, as an exchange-defined reason code.
    reason: ReasonCode,
    /// Which request: 0 Cancel, 1 Replace, 2 MassCancel.
    request_kind: RequestKind,
}
