//! Order-entry requests, client → exchange.
//!
//! Every request carries a client order id chosen by the client; the exchange echoes it
//! in every report about the request. The codec checks only the wire domain (enum
//! bytes); business rules (positive quantity, tick grid, expiry required for GTD) are
//! the exchange's, answered with reason codes in reports.

use peregrine_types::{
    ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode, TimeInForce,
    Timestamp,
};

use crate::message::wire_message;

wire_message! {
    /// Client → exchange. Enter a new order.
    NewOrder = 0x10;
    /// Client's id for the order, echoed in every report about it.
    client_order_id: ClientOrderId,
    /// Limit price in price units (for `Market`: the protection price).
    price: Price,
    /// Quantity in quantity units.
    qty: Qty,
    /// Expiry, nanoseconds since the Unix epoch, for `Gtd`; 0 otherwise.
    expire_at: Timestamp,
    /// Instrument to trade.
    instrument: InstrumentId,
    /// 0 Buy, 1 Sell.
    side: Side,
    /// 0 Limit, 1 Market, 2 PostOnly.
    order_type: OrderType,
    /// 0 Gtc, 1 Ioc, 2 Fok, 3 Gtd.
    tif: TimeInForce,
    /// Self-trade prevention: 0 None, 1 CancelNewest, 2 CancelOldest, 3 CancelBoth,
    /// 4 DecrementAndCancel.
    stp: StpMode,
}

wire_message! {
    /// Client → exchange. Cancel one resting order.
    Cancel = 0x11;
    /// Client's id for this cancel request, echoed in the `Cancelled` or
    /// `CancelRejected` it causes.
    client_order_id: ClientOrderId,
    /// Exchange id of the order to cancel.
    order_id: OrderId,
    /// Instrument of the order.
    instrument: InstrumentId,
}

wire_message! {
    /// Client → exchange. Change the price and/or open quantity of a resting order.
    /// The exchange order id stays; the order's client order id becomes this
    /// request's. Priority is kept only when the price is unchanged and the quantity
    /// does not grow (reported in `Replaced`).
    Replace = 0x12;
    /// Client's id for this request; the order's client order id from now on.
    client_order_id: ClientOrderId,
    /// Exchange id of the order to change.
    order_id: OrderId,
    /// New limit price in price units.
    new_price: Price,
    /// New open (unfilled) quantity in quantity units.
    new_qty: Qty,
    /// Instrument of the order.
    instrument: InstrumentId,
}

wire_message! {
    /// Client → exchange. Cancel every resting order of the session's account in one
    /// instrument or in all, on one side or both.
    MassCancel = 0x13;
    /// Client's id for this request, echoed in each `Cancelled` it causes.
    client_order_id: ClientOrderId,
    /// Instrument id, or 0xFFFF_FFFF for every instrument.
    instrument: Option<InstrumentId>,
    /// 0 Buy, 1 Sell, 2 both sides.
    side: Option<Side>,
}
