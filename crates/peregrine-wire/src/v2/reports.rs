//! Version-2 execution reports: the version-1 layouts with the account and its
//! report sequence number appended (after zero padding that keeps them aligned), and
//! `MassCancelDone`, the one answer a mass cancel always gets.
//!
//! Every report of an account's stream carries `report_seq`: 1, 2, 3, ... per
//! account, for the account's life, across sessions and restarts (the stream is
//! derived from the journal). An answer that changes nothing and is not journaled (a
//! refusal before sequencing, such as a request on a read-only session) carries
//! `report_seq` 0 and is not replayed.

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};

use crate::field::{LiquidityRole, Pad, ReasonCode, RequestKind};
use crate::message::wire_message;

wire_message! {
    /// Exchange → client. A `NewOrder` was accepted; it may already have traded
    /// (fills follow) or rest on the book.
    Accepted = 0x90, version 2;
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
    /// The account's report sequence number of this report.
    report_seq: u64,
    /// The account the report is about.
    account: AccountId,
}

wire_message! {
    /// Exchange → client. A `NewOrder` was refused; nothing was entered.
    Rejected = 0x91, version 2;
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
    /// Why: a reject reason code (protocol document, reason-code tables).
    reason: ReasonCode,
    /// Must be zero.
    reserved: Pad<2>,
    /// The account's report sequence number of this report (0: not journaled, not
    /// replayed).
    report_seq: u64,
    /// The account the report is about.
    account: AccountId,
}

wire_message! {
    /// Exchange → client. The order traded. Version 3 appends the fee.
    Fill = 0x92, version 3;
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
    /// 0 Maker (was resting), 1 Taker (traded on arrival), 2 Auction (an uncross).
    role: LiquidityRole,
    /// Must be zero.
    reserved: Pad<2>,
    /// The account's report sequence number of this report.
    report_seq: u64,
    /// The account the report is about.
    account: AccountId,
    /// Must be zero (appended by version 3).
    reserved3: Pad<4>,
    /// This order's fee for the fill, in the instrument's quote units (price unit ×
    /// quantity unit); negative: a rebate (appended by version 3).
    fee: i64,
}

wire_message! {
    /// Exchange → client. The order left the book, or its unfilled rest was cancelled
    /// (on request, by mass cancel, IOC/FOK rest, self-trade prevention, expiry, ...).
    Cancelled = 0x93, version 2;
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
    /// Why: a cancel reason code (protocol document, reason-code tables).
    reason: ReasonCode,
    /// The order's side: 0 Buy, 1 Sell.
    side: Side,
    /// Must be zero.
    reserved: Pad<1>,
    /// The account's report sequence number of this report.
    report_seq: u64,
    /// The account the report is about.
    account: AccountId,
}

wire_message! {
    /// Exchange → client. A `Replace` took effect.
    Replaced = 0x94, version 2;
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
    /// Must be zero.
    reserved: Pad<3>,
    /// The account's report sequence number of this report.
    report_seq: u64,
    /// The account the report is about.
    account: AccountId,
}

wire_message! {
    /// Exchange → client. A `Cancel`, `Replace` or `MassCancel` was refused; the order
    /// (if any) is unchanged. An order of another account is refused exactly like an
    /// unknown one (reason 10).
    CancelRejected = 0x95, version 2;
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
    /// Why: a reject reason code (protocol document, reason-code tables).
    reason: ReasonCode,
    /// Which request: 0 Cancel, 1 Replace, 2 MassCancel.
    request_kind: RequestKind,
    /// Must be zero.
    reserved: Pad<1>,
    /// The account's report sequence number of this report (0: not journaled, not
    /// replayed).
    report_seq: u64,
    /// The account the report is about.
    account: AccountId,
}

wire_message! {
    /// Exchange → client. The one terminal answer to a `MassCancel`: how many orders
    /// it cancelled (0 included), after the `Cancelled` report of each.
    MassCancelDone = 0x96, version 2;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event (the last
    /// instrument's, for an all-instrument mass cancel).
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The `MassCancel`'s client order id.
    request_id: ClientOrderId,
    /// The account's report sequence number of this report.
    report_seq: u64,
    /// Orders cancelled.
    cancelled: u32,
    /// The request's instrument, or 0xFFFF_FFFF for every instrument.
    instrument: Option<InstrumentId>,
    /// The account the report is about.
    account: AccountId,
    /// The request's side filter: 0 Buy, 1 Sell, 2 both sides.
    side: Option<Side>,
}
