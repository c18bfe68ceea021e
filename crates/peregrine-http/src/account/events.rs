//! The user-data stream's JSON: `executionReport` and `outboundAccountPosition`,
//! with Binance's field names.

use serde::Serialize;

use super::order::{side_name, stp_name, tif_name, Status};
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
    /// Commission.
    pub n: &'static str,
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
    /// Working time.
    #[serde(rename = "W")]
    pub working_time: u64,
    /// Self-trade prevention mode.
    #[serde(rename = "V")]
    pub stp: &'static str,
}

/// The `executionReport` of one change.
pub fn execution_report(sym: &Symbol, ch: &Change, now_ms: u64) -> String {
    let o = &ch.order;
    let (l, lp, lq, t, m) = match ch.fill {
        Some(f) => (
            sym.qty(f.qty),
            sym.price(f.price),
            sym.quote_amount(i128::from(f.price) * i128::from(f.qty)),
            f.trade_id as i64,
            f.maker,
        ),
        None => (sym.qty(0), sym.price(0), sym.quote_amount(0), -1, false),
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
        stop_price: sym.price(0),
        iceberg: sym.qty(0),
        g: -1,
        orig_client_id: orig,
        x: ch.exec.name(),
        status: o.status.name(),
        r: "NONE",
        i: o.order_id,
        l,
        z: sym.qty(o.executed),
        last_price: lp,
        n: "0",
        commission_asset: None,
        transaction_time: ch.time_ns / 1_000_000,
        t,
        ignore: 0,
        w: o.status.is_open(),
        m,
        ignore2: false,
        created: o.time_ms,
        cum_quote: sym.quote_amount(o.cum_quote),
        last_quote: lq,
        quote_order_qty: sym.quote_amount(0),
        working_time: o.time_ms,
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
