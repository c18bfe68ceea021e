//! Protocol version 3's order-entry messages: conditional and iceberg orders, order
//! lists, market-maker protection, and the admin market commands; their reports.
//! Every report here belongs to an account's report stream (`report_seq`, `account`),
//! like version 2's. Version 3 is additive: these types are new, and the version-2
//! `Fill` gains its fee (`docs/protocol.md`, "Changes in version 3").

use peregrine_types::{
    AccountId, AuctionKind, ClientOrderId, InstrumentId, ListKind, OrderId, OrderType, Price, Qty,
    Side, StpMode, TimeInForce, Timestamp, TrailUnit, TriggerKind,
};

use crate::field::{
    ListLeg, ListState, MarketAction, MmpAction, OrderStage, Pad, ReasonCode, TriggerCause,
};
use crate::message::wire_message;

wire_message! {
    /// Client → exchange. Enter an order with a trigger (stop, stop-limit,
    /// take-profit, trailing stop) and/or an iceberg display quantity. Answered like a
    /// `NewOrder`, with `AcceptedExt` instead of `Accepted`.
    NewOrderExt = 0x16, version 3;
    /// Client's id for the order, echoed in every report about it.
    client_order_id: ClientOrderId,
    /// Limit price; for a market order (stop-market) its protection price.
    price: Price,
    /// Quantity.
    qty: Qty,
    /// Expiry for Gtd, 0 otherwise (it covers the time the order waits for its
    /// trigger too).
    expire_at: Timestamp,
    /// The trigger price of a fixed stop or take-profit; 0 for a trailing stop or
    /// an order without a trigger.
    stop_price: Price,
    /// The most an iceberg shows at a time (0: not an iceberg).
    display_qty: Qty,
    /// Instrument.
    instrument: InstrumentId,
    /// A trailing stop's offset in `trail_unit`s (0: not trailing).
    trail: u32,
    /// 0 Buy, 1 Sell.
    side: Side,
    /// 0 Limit, 1 Market, 2 PostOnly.
    order_type: OrderType,
    /// 0 Gtc, 1 Ioc, 2 Fok, 3 Gtd.
    tif: TimeInForce,
    /// Self-trade prevention mode.
    stp: StpMode,
    /// 0 none, 1 stop-loss, 2 take-profit.
    trigger: TriggerKind,
    /// 0 none (a fixed trigger), 1 ticks, 2 basis points.
    trail_unit: TrailUnit,
    /// Must be zero.
    reserved: Pad<2>,
}

wire_message! {
    /// Client → exchange. Enter an order list (OCO: legs 0 and 1; OTO: working leg
    /// 0, pending leg 1; OTOCO: working leg 0, pending OCO pair 1 and 2), all legs or
    /// none. Answered by `ListStatus` (accepted, then each leg's `AcceptedExt`; or
    /// rejected).
    NewOrderList = 0x17, version 3;
    /// Client's id for the list, echoed in its `ListStatus` reports.
    client_list_id: ClientOrderId,
    /// Instrument of every leg.
    instrument: InstrumentId,
    /// 0 OCO, 1 OTO, 2 OTOCO.
    kind: ListKind,
    /// Must be zero.
    reserved: Pad<3>,
    /// Leg 0.
    leg0: ListLeg,
    /// Leg 1.
    leg1: ListLeg,
    /// Leg 2 (OTOCO only; all zero otherwise).
    leg2: ListLeg,
}

wire_message! {
    /// Client → exchange. Cancel every live leg of an order list (cancelling one leg
    /// with `Cancel` cancels the list too).
    CancelList = 0x18, version 3;
    /// Client's id for this request, echoed in the `Cancelled` reports it causes.
    client_order_id: ClientOrderId,
    /// The list's id (its leg 0's order id).
    list_id: OrderId,
    /// Instrument of the list.
    instrument: InstrumentId,
}

wire_message! {
    /// Client → exchange. Set, reset or clear the session account's market-maker
    /// protection on one instrument. Answered by `MmpStatus` (or `CancelRejected`).
    MmpRequest = 0x19, version 3;
    /// Client's id for this request, echoed in the answer.
    request_id: u64,
    /// The sliding window, nanoseconds (Set).
    window_ns: u64,
    /// Quantity limit within the window (Set).
    max_qty: Qty,
    /// How long a trip freezes the account, nanoseconds (0: until a reset) (Set).
    freeze_ns: u64,
    /// Instrument.
    instrument: InstrumentId,
    /// Fill-count limit within the window, 1..=4096 (Set).
    max_fills: u32,
    /// 0 Set, 1 Reset, 2 Clear.
    action: MmpAction,
    /// Must be zero.
    reserved: Pad<7>,
}

wire_message! {
    /// Client → exchange, admin sessions only. Halt, resume, start a call auction or
    /// uncross one now. The phase change is published on the feed (`MarketStatus`);
    /// the requester gets `MarketControlDone` or `CancelRejected`.
    MarketControl = 0x1A, version 3;
    /// Client's id for this request, echoed in the answer.
    request_id: u64,
    /// How long the auction's call lasts, nanoseconds (StartAuction; 0: until
    /// `Uncross` or the schedule).
    duration_ns: u64,
    /// Instrument.
    instrument: InstrumentId,
    /// 0 Halt, 1 Resume, 2 StartAuction, 3 Uncross.
    action: MarketAction,
    /// The auction to start (StartAuction): 0 opening, 1 closing, 3 manual.
    auction_kind: AuctionKind,
    /// Must be zero.
    reserved: Pad<2>,
}

wire_message! {
    /// Exchange → client. A `NewOrderExt`, or a leg of a `NewOrderList`, was
    /// accepted: echoes the order with its extended fields and where it stands.
    AcceptedExt = 0x9B, version 3;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Exchange id assigned to the order (kept when it triggers).
    order_id: OrderId,
    /// The order's client order id.
    client_order_id: ClientOrderId,
    /// Limit (or protection) price as accepted.
    price: Price,
    /// Quantity as accepted.
    qty: Qty,
    /// Expiry as accepted (0 unless Gtd).
    expire_at: Timestamp,
    /// Trigger price (0: none, or trailing).
    stop_price: Price,
    /// Iceberg display quantity (0: not an iceberg).
    display_qty: Qty,
    /// The order list it is a leg of (0: none).
    list_id: OrderId,
    /// The account's report sequence number of this report.
    report_seq: u64,
    /// Instrument.
    instrument: InstrumentId,
    /// The account the report is about.
    account: AccountId,
    /// Trailing offset (0: none).
    trail: u32,
    /// 0 Buy, 1 Sell.
    side: Side,
    /// Order type as accepted.
    order_type: OrderType,
    /// Time in force as accepted.
    tif: TimeInForce,
    /// Self-trade prevention mode as accepted.
    stp: StpMode,
    /// 0 none, 1 stop-loss, 2 take-profit.
    trigger: TriggerKind,
    /// 0 none, 1 ticks, 2 basis points.
    trail_unit: TrailUnit,
    /// 0 active, 1 waiting for its trigger, 2 pending its list's working leg.
    stage: OrderStage,
    /// Must be zero.
    reserved: Pad<1>,
}

wire_message! {
    /// Exchange → client. A parked order became active with its original id: its
    /// trigger price was reached (a stop), or its list released it (an OTO pending
    /// leg). Its normal life follows (fills, resting, cancellation).
    Triggered = 0x9C, version 3;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The order.
    order_id: OrderId,
    /// Its client order id.
    client_order_id: ClientOrderId,
    /// The trigger price reached (0 for a release).
    trigger_price: Price,
    /// The last trade price at that moment.
    last_price: Price,
    /// The account's report sequence number of this report.
    report_seq: u64,
    /// Instrument.
    instrument: InstrumentId,
    /// The account the report is about.
    account: AccountId,
    /// 0 Buy, 1 Sell.
    side: Side,
    /// 0 trigger price reached, 1 released by its list.
    cause: TriggerCause,
    /// Must be zero.
    reserved: Pad<6>,
}

wire_message! {
    /// Exchange → client. An order list was accepted, rejected (nothing entered), or
    /// is done (no leg depends on another any more).
    ListStatus = 0x9D, version 3;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The list's id (its leg 0's order id).
    list_id: OrderId,
    /// The client's list id.
    client_list_id: ClientOrderId,
    /// The request this answers: the list's own id (accepted, rejected), a
    /// `CancelList`'s client order id (done); 0 when the list resolved by itself.
    request_id: ClientOrderId,
    /// Leg 0's order id.
    leg0: OrderId,
    /// Leg 1's order id.
    leg1: OrderId,
    /// Leg 2's order id (0 unless OTOCO).
    leg2: OrderId,
    /// The account's report sequence number of this report.
    report_seq: u64,
    /// Instrument.
    instrument: InstrumentId,
    /// The account the report is about.
    account: AccountId,
    /// Why it was rejected: a reject reason code (0 otherwise).
    reason: ReasonCode,
    /// 0 OCO, 1 OTO, 2 OTOCO.
    kind: ListKind,
    /// 0 accepted, 1 rejected, 2 done.
    status: ListState,
    /// For a rejection: the leg that failed (0-based).
    leg: u8,
    /// Must be zero.
    reserved: Pad<3>,
}

wire_message! {
    /// Exchange → client. Market-maker protection changed for the account: limits
    /// set, reset, cleared, or triggered (quotes cancelled, new orders refused).
    MmpStatus = 0x9E, version 3;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The request's id (0 when the exchange reports on its own).
    request_id: u64,
    /// The window in force, nanoseconds.
    window_ns: u64,
    /// Quantity limit in force.
    max_qty: Qty,
    /// Freeze time in force, nanoseconds.
    freeze_ns: u64,
    /// When triggered: the quantity filled within the window.
    window_qty: Qty,
    /// The account's report sequence number of this report.
    report_seq: u64,
    /// Instrument.
    instrument: InstrumentId,
    /// The account the report is about.
    account: AccountId,
    /// Fill-count limit in force.
    max_fills: u32,
    /// When triggered: the fills within the window.
    window_fills: u32,
    /// 0 set, 1 reset, 2 cleared, 3 triggered.
    action: MmpAction,
    /// Must be zero.
    reserved: Pad<7>,
}

wire_message! {
    /// Exchange → client. A `MarketControl` took effect (the phase it led to is on
    /// the feed too). Not part of a report stream (`report_seq` 0).
    MarketControlDone = 0x9F, version 3;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number of this event.
    engine_seq: u64,
    /// Engine time of this event, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The request's id.
    request_id: u64,
    /// When the call auction started uncrosses by itself (0: not timed).
    ends_at: Timestamp,
    /// Instrument.
    instrument: InstrumentId,
    /// The phase now: 0 continuous, 1 halted, 2.. a call auction.
    phase: peregrine_types::TradingPhase,
    /// Must be zero.
    reserved: Pad<3>,
}
