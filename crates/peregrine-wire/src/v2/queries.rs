//! Version-2 order queries: the status of one order, and every open order of an
//! account. Both are read-only and not journaled: their answers carry the account's
//! report sequence number at the time of the answer (`report_seq`), so a client can
//! place them in its report stream, and are never replayed.
//!
//! An order of another account is answered exactly like an unknown one
//! ([`OrderState::Unknown`]), so order ids cannot be probed.

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, TimeInForce,
    Timestamp,
};

use crate::field::OrderState;
use crate::message::wire_message;

wire_message! {
    /// Client → exchange. Ask for the state of one order of the session's scope, by
    /// exchange order id, or (order id 0) by client order id. Answered by one
    /// `OrderStatus`.
    OrderStatusRequest = 0x14, version 2;
    /// Client's id for this request, echoed in the answer.
    request_id: u64,
    /// The exchange order id, or 0 to look the order up by `client_order_id`.
    order_id: OrderId,
    /// The client order id (used when `order_id` is 0).
    client_order_id: ClientOrderId,
    /// Instrument of the order.
    instrument: InstrumentId,
}

wire_message! {
    /// Exchange → client. The one answer to an `OrderStatusRequest`.
    OrderStatus = 0x97, version 2;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this answer.
    engine_seq: u64,
    /// Engine time of this answer, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The request's id.
    request_id: u64,
    /// The order's exchange id (as requested, when unknown).
    order_id: OrderId,
    /// The order's current client order id (as requested, when unknown).
    client_order_id: ClientOrderId,
    /// Limit price (0 when unknown).
    price: Price,
    /// Quantity still open (0 when unknown).
    open_qty: Qty,
    /// Expiry (0 unless Gtd, or unknown).
    expire_at: Timestamp,
    /// The account's report sequence number this answer reflects: every report up to
    /// it is included in the state.
    report_seq: u64,
    /// The order's account (the session's, when unknown).
    account: AccountId,
    /// Instrument.
    instrument: InstrumentId,
    /// Side (0 when unknown).
    side: Side,
    /// Order type (0 when unknown).
    order_type: OrderType,
    /// Time in force (0 when unknown).
    tif: TimeInForce,
    /// 0 Unknown (never existed, another account's, or done), 1 New, 2 PartiallyFilled.
    state: OrderState,
}

wire_message! {
    /// Client → exchange. Ask for every open order of an account (the session's own;
    /// on an operator's drop copy of every account, any account or all). Answered by
    /// one `OpenOrder` per order, then one `OpenOrdersEnd`.
    OpenOrdersRequest = 0x15, version 2;
    /// Client's id for this request, echoed in the answers.
    request_id: u64,
    /// The account, or 0xFFFF_FFFF for every account of the session's scope.
    account: Option<AccountId>,
    /// An instrument, or 0xFFFF_FFFF for every instrument.
    instrument: Option<InstrumentId>,
}

wire_message! {
    /// Exchange → client. One open order, in the answer to an `OpenOrdersRequest` or
    /// in the snapshot that replaces a replay older than retention (`request_id` 0).
    OpenOrder = 0x98, version 2;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this answer.
    engine_seq: u64,
    /// Engine time of this answer, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The request's id (0 in a login snapshot).
    request_id: u64,
    /// The order's exchange id.
    order_id: OrderId,
    /// The order's current client order id.
    client_order_id: ClientOrderId,
    /// Limit price.
    price: Price,
    /// Quantity still open.
    open_qty: Qty,
    /// Expiry (0 unless Gtd).
    expire_at: Timestamp,
    /// The order's account.
    account: AccountId,
    /// Instrument.
    instrument: InstrumentId,
    /// Side: 0 Buy, 1 Sell.
    side: Side,
    /// Order type.
    order_type: OrderType,
    /// Time in force.
    tif: TimeInForce,
}

wire_message! {
    /// Exchange → client. Ends an open-orders answer.
    OpenOrdersEnd = 0x99, version 2;
    /// Per-session sequence number of this message.
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this answer.
    engine_seq: u64,
    /// Engine time of this answer, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// The request's id (0 in a login snapshot).
    request_id: u64,
    /// The report sequence number the list reflects (for a drop copy of every
    /// account: the engine sequence number).
    report_seq: u64,
    /// Number of `OpenOrder` messages sent.
    count: u32,
}
