//! What Python callbacks receive: [`PyEvent`] (an answer about one of the strategy's
//! orders, the SDK's `Event`), [`PyBook`] (a book version, `BookView`) with its
//! [`PyLevel`]s, and [`PyTrade`]. Immutable (`frozen`) copies of the Rust values;
//! fields are read on access.

use peregrine_strategy::md::{BookView, Level, Trade};
use peregrine_strategy::msg::{Event, EventKind};
use peregrine_types::{stamp, Side};
use pyo3::prelude::*;

pub(crate) fn side_name(s: Side) -> &'static str {
    match s {
        Side::Buy => "buy",
        Side::Sell => "sell",
    }
}

/// An answer about one of the strategy's orders.
#[pyclass(name = "Event", module = "peregrine", frozen)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PyEvent(pub(crate) Event);

#[pymethods]
impl PyEvent {
    /// `ack`, `reject`, `fill`, `cancelled`, `cancel_reject`, `replaced`,
    /// `replace_reject`, `triggered`, `list_status` (or `unknown`).
    #[getter]
    fn kind(&self) -> &'static str {
        match self.0.kind() {
            Some(EventKind::Ack) => "ack",
            Some(EventKind::Reject) => "reject",
            Some(EventKind::Fill) => "fill",
            Some(EventKind::Cancelled) => "cancelled",
            Some(EventKind::CancelReject) => "cancel_reject",
            Some(EventKind::Replaced) => "replaced",
            Some(EventKind::ReplaceReject) => "replace_reject",
            Some(EventKind::Triggered) => "triggered",
            Some(EventKind::ListStatus) => "list_status",
            None => "unknown",
        }
    }
    /// The strategy's id of the order.
    #[getter]
    fn client_id(&self) -> u64 {
        self.0.client_id
    }
    /// `buy` or `sell`.
    #[getter]
    fn side(&self) -> &'static str {
        side_name(self.0.side())
    }
    /// Fill price (fills), else the order's limit price; price units.
    #[getter]
    fn price(&self) -> i64 {
        self.0.price
    }
    /// Fill quantity (fills), cancelled quantity (cancels), else the order's.
    #[getter]
    fn qty(&self) -> i64 {
        self.0.qty
    }
    /// Quantity still open after this event.
    #[getter]
    fn leaves(&self) -> i64 {
        self.0.leaves
    }
    /// Reject reason: risk 101..=110, engine 201.., venue 1000 + code (0 if none).
    #[getter]
    fn reason(&self) -> u16 {
        self.0.reason
    }
    /// Instrument id.
    #[getter]
    fn instrument(&self) -> u32 {
        self.0.instrument
    }
    /// Venue index.
    #[getter]
    fn venue(&self) -> u32 {
        self.0.venue
    }
    /// The order's eight timestamps t1..t8 (ns; 0 = not known).
    #[getter]
    fn timestamps(&self) -> [u64; stamp::COUNT] {
        self.0.ts
    }
    fn __repr__(&self) -> String {
        format!(
            "Event({}, client_id={}, side={}, price={}, qty={}, leaves={}, reason={})",
            self.kind(),
            self.0.client_id,
            self.side(),
            self.0.price,
            self.0.qty,
            self.0.leaves,
            self.0.reason
        )
    }
}

/// One price level: price, total quantity, orders.
#[pyclass(name = "Level", module = "peregrine", frozen)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PyLevel(pub(crate) Level);

#[pymethods]
impl PyLevel {
    /// Price, price units.
    #[getter]
    fn price(&self) -> i64 {
        self.0.price.units()
    }
    /// Total quantity at the price.
    #[getter]
    fn qty(&self) -> i64 {
        self.0.qty.lots()
    }
    /// Orders at the price (0 when the venue does not say).
    #[getter]
    fn orders(&self) -> u32 {
        self.0.orders
    }
    fn __repr__(&self) -> String {
        format!(
            "Level(price={}, qty={}, orders={})",
            self.price(),
            self.qty(),
            self.orders()
        )
    }
}

/// A book version: the top levels of each side.
#[pyclass(name = "Book", module = "peregrine", frozen)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PyBook(pub(crate) BookView);

#[pymethods]
impl PyBook {
    /// Venue index.
    #[getter]
    fn venue(&self) -> u32 {
        self.0.venue
    }
    /// Instrument id.
    #[getter]
    fn instrument(&self) -> u32 {
        self.0.instrument.0
    }
    /// Version.
    #[getter]
    fn seq(&self) -> u64 {
        self.0.seq
    }
    /// The venue's time of the last change, ns.
    #[getter]
    fn exchange_ts(&self) -> u64 {
        self.0.exchange_ts
    }
    /// Bids, best first.
    #[getter]
    fn bids(&self) -> Vec<PyLevel> {
        self.0.bids().iter().map(|l| PyLevel(*l)).collect()
    }
    /// Asks, best first.
    #[getter]
    fn asks(&self) -> Vec<PyLevel> {
        self.0.asks().iter().map(|l| PyLevel(*l)).collect()
    }
    /// Best bid, or None.
    #[getter]
    fn best_bid(&self) -> Option<PyLevel> {
        self.0.best_bid().map(PyLevel)
    }
    /// Best ask, or None.
    #[getter]
    fn best_ask(&self) -> Option<PyLevel> {
        self.0.best_ask().map(PyLevel)
    }
    /// Mid price (rounded down), or None.
    #[getter]
    fn mid(&self) -> Option<i64> {
        self.0.mid().map(|p| p.units())
    }
    /// Best ask minus best bid, or None.
    #[getter]
    fn spread(&self) -> Option<i64> {
        self.0.spread()
    }
    fn __repr__(&self) -> String {
        let px = |l: Option<Level>| {
            l.map_or("-".to_owned(), |l| {
                format!("{}x{}", l.qty.lots(), l.price.units())
            })
        };
        format!(
            "Book(venue={}, instrument={}, seq={}, bid={}, ask={})",
            self.0.venue,
            self.0.instrument.0,
            self.0.seq,
            px(self.0.best_bid()),
            px(self.0.best_ask())
        )
    }
}

/// A trade at a venue (anyone's).
#[pyclass(name = "Trade", module = "peregrine", frozen)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PyTrade(pub(crate) Trade);

#[pymethods]
impl PyTrade {
    /// Venue index.
    #[getter]
    fn venue(&self) -> u32 {
        self.0.venue
    }
    /// Instrument id.
    #[getter]
    fn instrument(&self) -> u32 {
        self.0.instrument.0
    }
    /// The venue's trade id.
    #[getter]
    fn trade_id(&self) -> u64 {
        self.0.trade_id
    }
    /// Price.
    #[getter]
    fn price(&self) -> i64 {
        self.0.price.units()
    }
    /// Quantity.
    #[getter]
    fn qty(&self) -> i64 {
        self.0.qty.lots()
    }
    /// The side that took liquidity.
    #[getter]
    fn aggressor(&self) -> &'static str {
        side_name(self.0.aggressor)
    }
    /// The venue's time, ns.
    #[getter]
    fn exchange_ts(&self) -> u64 {
        self.0.exchange_ts
    }
    fn __repr__(&self) -> String {
        format!(
            "Trade({} {}@{}, aggressor={})",
            self.0.instrument.0,
            self.qty(),
            self.price(),
            self.aggressor()
        )
    }
}
