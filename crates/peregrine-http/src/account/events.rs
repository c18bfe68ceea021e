//! The user-data stream's JSON: `executionReport` and `outboundAccountPosition`,
//! with Binance's field names.

use serde::Serialize;

use super::lists::OrderList;
use super::order::{side_name, stp_name, tif_name, Order, Status};
use super::state::Change;
use crate::market::symbols::Symbol;

/// `executionReport`.
#[derive(Debug, Serialize)]
pub struct ExecutionReport<'a> {
    /// `"executionReport"`.
    pub e: &'static str,
    /// Event time, ms.
    #[serde(rename = "E")]
    pub event_time: u64,
    /// Symbol.
    pub s: &'a str,
    /// Client order id (for a cancel: the cancel's id).
    pub c: &'a str,
    /// Side.
    #[serde(rename = "S")]
    pub side: &'static str,
    /// Order type.
    pub o: &'static str,
    /// Time in force.
    pub f: &'static str,
    /// Quantity.
    pub q: String,
    /// Price.
    pub p: String,
    /// Stop price.
    #[serde(rename = "P")]
    pub stop_price: String,
    /// Iceberg quantity.
    #[serde(rename = "F")]
    pub iceberg: String,
    /// Order list id.
    pub g: i64,
    /// Original client order id (of the cancelled order), else empty.
    #[serde(rename = "C")]
    pub orig_client_id: &'a str,
    /// Execution type.
    pub x: &'static str,
    /// Order status.
    #[serde(rename = "X")]
    pub status: &'static str,
    /// Reject reason.
    pub r: &'static str,
    /// Order id.
    pub i: u64,
    /// Last executed quantity.
    pub l: String,
    /// Cumulative filled quantity.
    pub z: String,
    /// Last executed price.
    #[serde(rename = "L")]
    pub last_price: String,
    /// Commission (of this fill; negative: a rebate).
    pub n: String,
    /// Commission asset.
    #[serde(rename = "N")]
    pub commission_asset: Option<&'a str>,
    /// Transaction time, ms.
    #[serde(rename = "T")]
    pub transaction_time: u64,
    /// Trade id (-1 unless a trade).
    pub t: i64,
    /// Ignore.
    #[serde(rename = "I")]
    pub ignore: u64,
    /// Is the order on the book?
    pub w: bool,
    /// Was this trade the maker side?
    pub m: bool,
    /// Ignore.
    #[serde(rename = "M")]
    pub ignore2: bool,
    /// Order creation time.
    #[serde(rename = "O")]
    pub created: u64,
    /// Cumulative quote quantity.
    #[serde(rename = "Z")]
    pub cum_quote: String,
    /// Last quote quantity.
    #[serde(rename = "Y")]
    pub last_quote: String,
    /// Quote order quantity.
    #[serde(rename = "Q")]
    pub quote_order_qty: String,
    /// Working time (-1 while a stop waits for its trigger).
    #[serde(rename = "W")]
    pub working_time: i64,
    /// Trailing delta, bips (only for trailing stops).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub d: Option<u32>,
    /// Trailing time (-1: not activated; only for trailing stops).
    #[serde(rename = "D", skip_serializing_if = "Option::is_none")]
    pub trailing_time: Option<i64>,
    /// Self-trade prevention mode.
    #[serde(rename = "V")]
    pub stp: &'static str,
}

/// The `executionReport` of one change.
pub fn execution_report(sym: &Symbol, ch: &Change, now_ms: u64) -> String {
    let o = &ch.order;
    let (l, lp, lq, t, m, n, asset) = match ch.fill {
        Some(f) => (
            sym.qty(f.qty),
            sym.price(f.price),
            sym.quote_amount(i128::from(f.price) * i128::from(f.qty)),
            f.trade_id as i64,
            f.maker,
            sym.quote_amount(i128::from(f.fee)),
            Some(sym.quote.as_str()),
        ),
        None => (
            sym.qty(0),
            sym.price(0),
            sym.quote_amount(0),
            -1,
            false,
            "0".to_owned(),
            None,
        ),
    };
    let (c, orig) = match &ch.cancel_client_id {
        Some(cancel_id) => (cancel_id.as_str(), o.client_order_id.as_str()),
        None => (o.client_order_id.as_str(), ""),
    };
    let ev = ExecutionReport {
        e: "executionReport",
        event_time: now_ms,
        s: &sym.spec.symbol,
        c,
        side: side_name(o.side),
        o: o.kind.name(),
        f: tif_name(o.tif),
        q: sym.qty(o.orig_qty),
        p: sym.price(o.price),
        stop_price: sym.price(o.ext.stop_price),
        iceberg: sym.qty(o.ext.display_qty),
        g: o.list_id,
        orig_client_id: orig,
        x: ch.exec.name(),
        status: o.status.name(),
        r: "NONE",
        i: o.order_id,
        l,
        z: sym.qty(o.executed),
        last_price: lp,
        n,
        commission_asset: asset,
        transaction_time: ch.time_ns / 1_000_000,
        t,
        ignore: 0,
        w: o.status.is_open() && o.working_ms.is_some(),
        m,
        ignore2: false,
        created: o.time_ms,
        cum_quote: sym.quote_amount(o.cum_quote),
        last_quote: lq,
        quote_order_qty: sym.quote_amount(0),
        working_time: o.working_ms.map_or(-1, |w| w as i64),
        d: (o.ext.trail_bps != 0).then_some(o.ext.trail_bps),
        trailing_time: (o.ext.trail_bps != 0).then(|| o.working_ms.map_or(-1, |w| w as i64)),
        stp: stp_name(o.stp),
    };
    debug_assert!(o.status != Status::Rejected);
    serde_json::to_string(&ev).unwrap_or_default()
}

/// One balance in `outboundAccountPosition`.
#[derive(Debug, Serialize)]
pub struct PositionBalance {
    /// Asset.
    pub a: String,
    /// Free.
    pub f: String,
    /// Locked.
    pub l: String,
}

/// `outboundAccountPosition`.
#[derive(Debug, Serialize)]
pub struct AccountPosition {
    /// `"outboundAccountPosition"`.
    pub e: &'static str,
    /// Event time.
    #[serde(rename = "E")]
    pub event_time: u64,
    /// Time of the last account update.
    pub u: u64,
    /// Balances that changed.
    #[serde(rename = "B")]
    pub balances: Vec<PositionBalance>,
}

/// One order of a `listStatus` event.
#[derive(Debug, Serialize)]
pub struct ListLegEvent {
    /// Symbol.
    pub s: String,
    /// Order id.
    pub i: u64,
    /// Client order id.
    pub c: String,
}

/// `listStatus`.
#[derive(Debug, Serialize)]
pub struct ListStatusEvent<'a> {
    /// `"listStatus"`.
    pub e: &'static str,
    /// Event time, ms.
    #[serde(rename = "E")]
    pub event_time: u64,
    /// Symbol.
    pub s: &'a str,
    /// Order list id.
    pub g: u64,
    /// Contingency type.
    pub c: &'static str,
    /// List status type.
    pub l: &'static str,
    /// List order status.
    #[serde(rename = "L")]
    pub order_status: &'static str,
    /// Reject reason.
    pub r: &'static str,
    /// List client order id.
    #[serde(rename = "C")]
    pub client_list_id: &'a str,
    /// Transaction time, ms.
    #[serde(rename = "T")]
    pub transaction_time: u64,
    /// The legs.
    #[serde(rename = "O")]
    pub orders: Vec<ListLegEvent>,
}

/// The `listStatus` event of a list; `order` looks its legs up.
pub fn list_status(
    sym: &Symbol,
    l: &OrderList,
    order: impl Fn(u64) -> Option<Order>,
    now_ms: u64,
) -> String {
    let ev = ListStatusEvent {
        e: "listStatus",
        event_time: now_ms,
        s: &sym.spec.symbol,
        g: l.list_id,
        c: l.contingency_type(),
        l: l.status_type(),
        order_status: l.order_status(),
        r: "NONE",
        client_list_id: &l.client_list_id,
        transaction_time: l.update_ms,
        orders: l
            .legs
            .iter()
            .map(|&i| ListLegEvent {
                s: sym.spec.symbol.clone(),
                i,
                c: order(i).map(|o| o.client_order_id).unwrap_or_default(),
            })
            .collect(),
    };
    serde_json::to_string(&ev).unwrap_or_default()
}
