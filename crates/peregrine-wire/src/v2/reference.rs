//! Reference data: instrument definitions, sent after `LoginAccepted` on order entry
//! and on request on the feed's recovery channel.

use peregrine_types::{InstrumentId, InstrumentStatus, Price, Qty, Timestamp};

use crate::field::{ReasonCode, Symbol};
use crate::message::wire_message;

wire_message! {
    /// Exchange → client (order entry, after `LoginAccepted`) and recovery server →
    /// subscriber (after `InstrumentList`). One tradable instrument and its rules.
    InstrumentDefinition = 0x9A, version 2;
    /// Per-session sequence number of this message (0 on the recovery channel).
    session_seq: u64,
    /// The matching engine's global sequence number at the time of this message.
    engine_seq: u64,
    /// Engine time of this message, nanoseconds since the Unix epoch.
    engine_time: Timestamp,
    /// Legal prices are multiples of this many price units.
    tick_size: Price,
    /// Legal quantities are multiples of this many quantity units.
    lot_size: Qty,
    /// Smallest order quantity.
    min_qty: Qty,
    /// Largest order quantity.
    max_qty: Qty,
    /// Centre of the price band.
    reference_price: Price,
    /// Half-width of the price band, in price units: limit prices must lie within
    /// `reference_price ± band`.
    band: Price,
    /// The symbol, ASCII, zero-padded.
    symbol: Symbol,
    /// The instrument id orders name.
    instrument: InstrumentId,
    /// Asset id of the base asset (what is bought and sold); 0 without balances.
    base_asset: u32,
    /// Asset id of the quote asset (what prices are paid in); 0 without balances.
    quote_asset: u32,
    /// Decimals of the price unit: a price of 10050 with 2 decimals is 100.50.
    price_decimals: u8,
    /// Decimals of the quantity unit.
    qty_decimals: u8,
    /// 0 Active, 1 Halted (new orders and replaces are refused; cancels work).
    status: InstrumentStatus,
}

wire_message! {
    /// Subscriber → recovery server. Send every instrument definition.
    InstrumentListRequest = 0x56, version 2;
    /// Subscriber's id for the request, echoed in the answer.
    request_id: u64,
}

wire_message! {
    /// Recovery server → subscriber. Answers an `InstrumentListRequest`; `count`
    /// `InstrumentDefinition`s follow.
    InstrumentList = 0x57, version 2;
    /// The request's id.
    request_id: u64,
    /// Number of `InstrumentDefinition` messages that follow.
    count: u32,
    /// 0 on success, else a recovery reason code (and `count` is 0).
    reason: ReasonCode,
}
