//! `peregrine.Api`: the order API a Python callback gets, over the SDK's [`Api`].
//!
//! The runner (or a replay) owns the `Api` and lends it to each callback as `&mut Api`;
//! the Python object holds a pointer to it only while a callback runs
//! ([`Lend`]), and refuses to be used outside one (a strategy that keeps the object
//! and calls it from elsewhere gets a `RuntimeError`, never a dangling pointer).

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use peregrine_strategy::msg::NewOrder;
use peregrine_strategy::{Api, KillSwitch};
use peregrine_types::{InstrumentId, ListKind, OrderType, Price, Qty, Side, StpMode, TimeInForce};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::types::PyBook;

/// An order built by `Api.order(...)`, not sent: a leg of `Api.send_list`.
#[pyclass(name = "Order", module = "peregrine", frozen)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PyOrder(NewOrder);

/// The order API of a running strategy.
#[pyclass(name = "Api", module = "peregrine", unsendable)]
#[derive(Debug, Default)]
pub(crate) struct PyApi {
    /// The runner's `Api` while a callback runs, else `None`.
    api: Option<NonNull<Api>>,
    /// Set by `stop()`: the strategy is finished.
    stopped: Arc<AtomicBool>,
}

impl PyApi {
    /// An api whose `stop()` sets `stopped`.
    pub(crate) fn new(stopped: Arc<AtomicBool>) -> PyApi {
        PyApi { api: None, stopped }
    }
}

/// Lends `api` to `obj` for the duration of `f`.
pub(crate) fn lend<R>(obj: &Bound<'_, PyApi>, api: &mut Api, f: impl FnOnce() -> R) -> R {
    obj.borrow_mut().api = Some(NonNull::from(api));
    let _lend = Lend(obj);
    f()
}

/// Takes the pointer back when the callback ends, however it ends.
struct Lend<'a, 'py>(&'a Bound<'py, PyApi>);

impl Drop for Lend<'_, '_> {
    fn drop(&mut self) {
        if let Ok(mut a) = self.0.try_borrow_mut() {
            a.api = None;
        }
    }
}

fn parse_side(s: &str) -> PyResult<Side> {
    match s {
        "buy" | "BUY" | "b" => Ok(Side::Buy),
        "sell" | "SELL" | "s" => Ok(Side::Sell),
        other => Err(PyValueError::new_err(format!(
            "side {other:?}: buy or sell"
        ))),
    }
}

fn parse_type(s: &str) -> PyResult<OrderType> {
    match s {
        "limit" => Ok(OrderType::Limit),
        "market" => Ok(OrderType::Market),
        "post_only" => Ok(OrderType::PostOnly),
        other => Err(PyValueError::new_err(format!(
            "order type {other:?}: limit, market or post_only"
        ))),
    }
}

fn parse_tif(s: &str) -> PyResult<TimeInForce> {
    match s {
        "gtc" => Ok(TimeInForce::Gtc),
        "ioc" => Ok(TimeInForce::Ioc),
        "fok" => Ok(TimeInForce::Fok),
        "gtd" => Ok(TimeInForce::Gtd),
        other => Err(PyValueError::new_err(format!(
            "time in force {other:?}: gtc, ioc, fok or gtd"
        ))),
    }
}

fn parse_stp(s: &str) -> PyResult<StpMode> {
    match s {
        "none" => Ok(StpMode::None),
        "cancel_newest" => Ok(StpMode::CancelNewest),
        "cancel_oldest" => Ok(StpMode::CancelOldest),
        "cancel_both" => Ok(StpMode::CancelBoth),
        "decrement_and_cancel" => Ok(StpMode::DecrementAndCancel),
        other => Err(PyValueError::new_err(format!(
            "stp {other:?}: none, cancel_newest, cancel_oldest, cancel_both or decrement_and_cancel"
        ))),
    }
}

impl PyApi {
    fn with<R>(&mut self, f: impl FnOnce(&mut Api) -> R) -> PyResult<R> {
        match self.api {
            // SAFETY: `api` is set only by `lend`, from a `&mut Api` that outlives the
            // callback it is lent for, and cleared (by `Lend`'s drop) before `lend`
            // returns; the object is `unsendable` (only this thread touches it) and
            // `&mut self` excludes a second access while `f` runs.
            Some(mut p) => Ok(f(unsafe { p.as_mut() })),
            None => Err(PyRuntimeError::new_err(
                "the Api is usable only inside a callback",
            )),
        }
    }
}

#[pymethods]
impl PyApi {
    /// Sends a new order; returns its client order id, or None if the submit ring is
    /// full (the engine is behind: try later).
    ///
    /// `side`: "buy" or "sell"; `price`, `qty` in the instrument's units; `type`:
    /// "limit", "market" (`price` is the protection price) or "post_only"; `tif`:
    /// "gtc", "ioc", "fok" or "gtd" (with `expire_at`, ns since the Unix epoch);
    /// `stp`: "none", "cancel_newest", "cancel_oldest", "cancel_both",
    /// "decrement_and_cancel". Conditional orders (at most one of): `stop_price` (a
    /// stop-loss: a stop-limit, or a stop-market with `type="market"`),
    /// `take_profit` (its trigger price), `trail_ticks` or `trail_bps` (a trailing
    /// stop-loss); `display_qty`: an iceberg. A venue without them refuses the order
    /// (`reject`, reason 209), the engine never sends it as a plain order.
    #[pyo3(signature = (venue, instrument, side, price, qty, *, r#type = "limit", tif = None, stp = "none", expire_at = 0, stop_price = None, take_profit = None, trail_ticks = None, trail_bps = None, display_qty = None))]
    #[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn send(
        &mut self,
        venue: u32,
        instrument: u32,
        side: &str,
        price: i64,
        qty: i64,
        r#type: &str,
        tif: Option<&str>,
        stp: &str,
        expire_at: u64,
        stop_price: Option<i64>,
        take_profit: Option<i64>,
        trail_ticks: Option<u32>,
        trail_bps: Option<u32>,
        display_qty: Option<i64>,
    ) -> PyResult<Option<u64>> {
        let order = self
            .order(
                venue,
                instrument,
                side,
                price,
                qty,
                r#type,
                tif,
                stp,
                expire_at,
                stop_price,
                take_profit,
                trail_ticks,
                trail_bps,
                display_qty,
            )?
            .0;
        self.with(|api| api.send(order).ok())
    }

    /// An order as `send` takes it (same arguments), not sent: a leg for
    /// `send_list`.
    #[pyo3(signature = (venue, instrument, side, price, qty, *, r#type = "limit", tif = None, stp = "none", expire_at = 0, stop_price = None, take_profit = None, trail_ticks = None, trail_bps = None, display_qty = None))]
    #[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn order(
        &self,
        venue: u32,
        instrument: u32,
        side: &str,
        price: i64,
        qty: i64,
        r#type: &str,
        tif: Option<&str>,
        stp: &str,
        expire_at: u64,
        stop_price: Option<i64>,
        take_profit: Option<i64>,
        trail_ticks: Option<u32>,
        trail_bps: Option<u32>,
        display_qty: Option<i64>,
    ) -> PyResult<PyOrder> {
        let order_type = parse_type(r#type)?;
        let triggers = [stop_price.is_some(), take_profit.is_some()]
            .into_iter()
            .chain([trail_ticks.is_some(), trail_bps.is_some()])
            .filter(|x| *x)
            .count();
        if triggers > 1 {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "at most one of stop_price, take_profit, trail_ticks, trail_bps",
            ));
        }
        let tif = match (tif, order_type) {
            (Some(t), _) => parse_tif(t)?,
            (None, OrderType::Market) => TimeInForce::Ioc,
            (None, _) => TimeInForce::Gtc,
        };
        let order = NewOrder {
            order_type,
            tif,
            stp: parse_stp(stp)?,
            expire_at,
            ..NewOrder::limit(
                venue,
                InstrumentId(instrument),
                parse_side(side)?,
                Price::from_raw(price),
                Qty::from_raw(qty),
            )
        };
        let mut order = match (stop_price, take_profit, trail_ticks, trail_bps) {
            (Some(p), ..) => order.stop(Price::from_raw(p)),
            (_, Some(p), ..) => order.take_profit(Price::from_raw(p)),
            (_, _, Some(t), _) => order.trailing_ticks(t),
            (_, _, _, Some(t)) => order.trailing_bps(t),
            _ => order,
        };
        if let Some(d) = display_qty {
            order = order.iceberg(Qty::from_raw(d));
        }
        Ok(PyOrder(order))
    }

    /// Sends an order list: `kind` "oco" (two legs: either trading, triggering or
    /// leaving cancels the other), "oto" (a working leg, then a pending leg entered
    /// once it fills) or "otoco" (a working leg, then two pending legs as an OCO);
    /// `legs` made by `order(...)`, all on one venue and instrument. Returns the legs'
    /// client order ids (the first is the list's: its `on_list_status` events carry
    /// it), or None if the submit ring is full (nothing sent). A venue without lists
    /// refuses every leg (`on_reject`, reason 209).
    fn send_list(
        &mut self,
        kind: &str,
        legs: Vec<PyRef<'_, PyOrder>>,
    ) -> PyResult<Option<Vec<u64>>> {
        let kind = match kind {
            "oco" => ListKind::Oco,
            "oto" => ListKind::Oto,
            "otoco" => ListKind::Otoco,
            other => {
                return Err(PyValueError::new_err(format!(
                    "list kind {other:?}: oco, oto or otoco"
                )))
            }
        };
        if legs.len() != kind.legs() {
            return Err(PyValueError::new_err(format!(
                "a list of this kind has {} legs, not {}",
                kind.legs(),
                legs.len()
            )));
        }
        let mut orders = [legs[0].0; 3];
        for (o, l) in orders.iter_mut().zip(&legs) {
            *o = l.0;
        }
        self.with(|api| {
            api.send_list(kind, &orders[..kind.legs()])
                .ok()
                .map(|ids| ids.collect())
        })
    }

    /// A limit buy (keywords as `send`).
    #[pyo3(signature = (venue, instrument, price, qty, *, tif = "gtc", post_only = false, stp = "none"))]
    #[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn buy(
        &mut self,
        venue: u32,
        instrument: u32,
        price: i64,
        qty: i64,
        tif: &str,
        post_only: bool,
        stp: &str,
    ) -> PyResult<Option<u64>> {
        let t = if post_only { "post_only" } else { "limit" };
        self.send(
            venue,
            instrument,
            "buy",
            price,
            qty,
            t,
            Some(tif),
            stp,
            0,
            None,
            None,
            None,
            None,
            None,
        )
    }

    /// A limit sell (keywords as `send`).
    #[pyo3(signature = (venue, instrument, price, qty, *, tif = "gtc", post_only = false, stp = "none"))]
    #[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn sell(
        &mut self,
        venue: u32,
        instrument: u32,
        price: i64,
        qty: i64,
        tif: &str,
        post_only: bool,
        stp: &str,
    ) -> PyResult<Option<u64>> {
        let t = if post_only { "post_only" } else { "limit" };
        self.send(
            venue,
            instrument,
            "sell",
            price,
            qty,
            t,
            Some(tif),
            stp,
            0,
            None,
            None,
            None,
            None,
            None,
        )
    }

    /// Asks to cancel an open order; False if the ring is full.
    fn cancel(&mut self, client_id: u64) -> PyResult<bool> {
        self.with(|api| api.cancel(client_id).is_ok())
    }

    /// Asks to change an open order's price and open quantity (it keeps its client
    /// id); False if the ring is full.
    fn replace(&mut self, client_id: u64, price: i64, qty: i64) -> PyResult<bool> {
        self.with(|api| {
            api.replace(client_id, Price::from_raw(price), Qty::from_raw(qty))
                .is_ok()
        })
    }

    /// The current book of (venue, instrument) from the engine's board, or None.
    fn book(&mut self, venue: u32, instrument: u32) -> PyResult<Option<PyBook>> {
        self.with(|api| api.book(venue, InstrumentId(instrument)).map(PyBook))
    }

    /// Now, ns: `CLOCK_MONOTONIC` live, simulated time in a replay.
    fn now_ns(&mut self) -> PyResult<u64> {
        self.with(|api| api.now_ns())
    }

    /// The kill switch as the answers to this strategy's orders show it: "unknown",
    /// "off" or "on".
    #[getter]
    fn kill_switch(&mut self) -> PyResult<&'static str> {
        self.with(|api| match api.kill_switch() {
            KillSwitch::Unknown => "unknown",
            KillSwitch::Off => "off",
            KillSwitch::On => "on",
        })
    }

    /// Ends the run after this callback (the Rust SDK's `Strategy::finished`).
    fn stop(&self) {
        // Relaxed: a flag the same thread reads after the callback returns.
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// Requests pushed so far.
    #[getter]
    fn sent(&mut self) -> PyResult<u64> {
        self.with(|api| api.sent())
    }

    /// Pushes refused because the ring was full.
    #[getter]
    fn full(&mut self) -> PyResult<u64> {
        self.with(|api| api.full())
    }
}
