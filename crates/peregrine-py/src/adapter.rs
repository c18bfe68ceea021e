//! A Python strategy object behind the SDK's [`Strategy`] trait, in one of two modes:
//!
//! * **per event**: every callback attaches to the interpreter (takes the GIL), calls
//!   the Python method and detaches;
//! * **batched**: order events and market data are copied into a buffer as the runner
//!   hands them over, and at the end of the runner's turn
//!   ([`Strategy::on_batch_end`]) one attachment calls the Python methods for the
//!   whole batch, in order. Timers and `on_start` are called at once.
//!
//! Callbacks the Python class does not override are never called (the base class's
//! are empty). The first exception a callback raises is printed with its traceback
//! and kept; the strategy then reports [`Strategy::finished`], so the runner (or the
//! replay) stops it, and the caller re-raises the exception.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use peregrine_strategy::md::{BookView, Trade};
use peregrine_strategy::msg::{Event, EventKind};
use peregrine_strategy::{Api, Strategy};
use peregrine_types::InstrumentId;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::api::{lend, PyApi};
use crate::types::{PyBook, PyEvent, PyTrade};

/// How callbacks reach Python.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// One GIL acquisition per callback.
    PerEvent,
    /// One GIL acquisition per runner turn.
    Batched,
}

/// The callbacks, indexes into [`PyStrategy::methods`].
const NAMES: [&str; 13] = [
    "on_start",
    "on_ack",
    "on_reject",
    "on_fill",
    "on_cancelled",
    "on_cancel_reject",
    "on_replaced",
    "on_replace_reject",
    "on_book",
    "on_trade",
    "on_timer",
    "on_triggered",
    "on_list_status",
];
const START: usize = 0;
const BOOK: usize = 8;
const TRADE: usize = 9;
const TIMER: usize = 10;

fn index_of(kind: Option<EventKind>) -> Option<usize> {
    Some(match kind? {
        EventKind::Ack => 1,
        EventKind::Reject => 2,
        EventKind::Fill => 3,
        EventKind::Cancelled => 4,
        EventKind::CancelReject => 5,
        EventKind::Replaced => 6,
        EventKind::ReplaceReject => 7,
        EventKind::Triggered => 11,
        EventKind::ListStatus => 12,
    })
}

/// Something waiting for the end of the batch.
#[derive(Debug, Clone, Copy)]
#[allow(
    clippy::large_enum_variant,
    reason = "a reused buffer of copies: boxing would allocate per book version"
)]
enum Pending {
    Event(Event),
    Book(BookView),
    Trade(Trade),
}

/// A Python strategy as a Rust [`Strategy`].
#[derive(Debug)]
pub(crate) struct PyStrategy {
    /// The bound methods the class overrides (`None`: not overridden, not called).
    methods: [Option<Py<PyAny>>; 13],
    api: Py<PyApi>,
    /// Set by the Python side's `api.stop()`.
    stopped: Arc<AtomicBool>,
    mode: Mode,
    pending: Vec<Pending>,
    timer_ns: u64,
    /// The first exception a callback raised.
    pub(crate) error: Option<PyErr>,
    /// Callbacks made into Python.
    pub(crate) calls: u64,
    /// GIL acquisitions made for them.
    pub(crate) attaches: u64,
}

impl PyStrategy {
    /// Wraps `obj` (an instance of a `peregrine.Strategy` subclass).
    pub(crate) fn new(py: Python<'_>, obj: Py<PyAny>, mode: Mode) -> PyResult<PyStrategy> {
        let base = py.import("peregrine")?.getattr("Strategy")?;
        let bound = obj.bind(py);
        let class = bound.get_type();
        let mut methods: [Option<Py<PyAny>>; 13] = Default::default();
        for (i, name) in NAMES.iter().enumerate() {
            let mine = class.getattr(*name)?;
            let theirs = base.getattr(*name)?;
            if !mine.is(&theirs) {
                methods[i] = Some(bound.getattr(*name)?.unbind());
            }
        }
        let timer_ns = match bound.getattr("timer_interval_ns") {
            Ok(v) => v.extract::<u64>().unwrap_or(1_000_000),
            Err(_) => 1_000_000,
        };
        let stopped = Arc::new(AtomicBool::new(false));
        Ok(PyStrategy {
            methods,
            api: Py::new(py, PyApi::new(Arc::clone(&stopped)))?,
            stopped,
            mode,
            pending: Vec::with_capacity(256),
            timer_ns: timer_ns.max(1),
            error: None,
            calls: 0,
            attaches: 0,
        })
    }

    /// Whether the class overrides `on_timer`.
    pub(crate) fn has_timer(&self) -> bool {
        self.methods[TIMER].is_some()
    }

    /// Calls method `i` with the api and `arg` (if any), the GIL held.
    fn call(&mut self, py: Python<'_>, api: &mut Api, i: usize, arg: Option<Bound<'_, PyAny>>) {
        if self.error.is_some() {
            return;
        }
        let Some(m) = self.methods[i].as_ref() else {
            return;
        };
        self.calls += 1;
        let api_obj = self.api.bind(py).clone();
        let result = lend(&api_obj, api, || {
            let args = match arg {
                Some(a) => PyTuple::new(py, [api_obj.as_any().clone(), a]),
                None => PyTuple::new(py, [api_obj.as_any().clone()]),
            };
            args.and_then(|args| m.call1(py, args))
        });
        if let Err(e) = result {
            e.print(py);
            self.error = Some(e);
        }
    }

    fn deliver(&mut self, py: Python<'_>, api: &mut Api, p: Pending) {
        let made = match p {
            Pending::Event(ev) => index_of(ev.kind())
                .filter(|&i| self.methods[i].is_some())
                .map(|i| (i, Bound::new(py, PyEvent(ev)).map(Bound::into_any))),
            Pending::Book(b) => self.methods[BOOK]
                .is_some()
                .then(|| (BOOK, Bound::new(py, PyBook(b)).map(Bound::into_any))),
            Pending::Trade(t) => self.methods[TRADE]
                .is_some()
                .then(|| (TRADE, Bound::new(py, PyTrade(t)).map(Bound::into_any))),
        };
        match made {
            Some((i, Ok(arg))) => self.call(py, api, i, Some(arg)),
            Some((_, Err(e))) => self.error = Some(e),
            None => {}
        }
    }

    fn wanted(&self, p: &Pending) -> bool {
        match p {
            Pending::Event(ev) => index_of(ev.kind()).is_some_and(|i| self.methods[i].is_some()),
            Pending::Book(_) => self.methods[BOOK].is_some(),
            Pending::Trade(_) => self.methods[TRADE].is_some(),
        }
    }

    /// Hands `p` over now (per event) or at the end of the batch.
    fn handle(&mut self, api: &mut Api, p: Pending) {
        if !self.wanted(&p) || self.error.is_some() {
            return;
        }
        match self.mode {
            Mode::Batched => self.pending.push(p),
            Mode::PerEvent => {
                self.attaches += 1;
                Python::attach(|py| self.deliver(py, api, p));
            }
        }
    }
}

impl Strategy for PyStrategy {
    fn on_start(&mut self, api: &mut Api) {
        if self.methods[START].is_some() {
            self.attaches += 1;
            Python::attach(|py| self.call(py, api, START, None));
        }
    }

    fn on_event(&mut self, api: &mut Api, ev: &Event) {
        self.handle(api, Pending::Event(*ev));
    }

    fn on_book(&mut self, api: &mut Api, _: InstrumentId, book: &BookView) {
        self.handle(api, Pending::Book(*book));
    }

    fn on_trade(&mut self, api: &mut Api, trade: &Trade) {
        self.handle(api, Pending::Trade(*trade));
    }

    fn on_timer(&mut self, api: &mut Api, now_ns: u64) {
        if self.methods[TIMER].is_some() && self.error.is_none() {
            self.attaches += 1;
            Python::attach(|py| match now_ns.into_pyobject(py) {
                Ok(n) => self.call(py, api, TIMER, Some(n.into_any())),
                Err(e) => self.error = Some(e.into()),
            });
        }
    }

    fn timer_interval_ns(&self) -> u64 {
        self.timer_ns
    }

    fn finished(&self) -> bool {
        // Relaxed: set by this thread inside a callback.
        self.error.is_some() || self.stopped.load(Ordering::Relaxed)
    }

    fn on_batch_end(&mut self, api: &mut Api) {
        if self.pending.is_empty() {
            return;
        }
        self.attaches += 1;
        let mut batch = std::mem::take(&mut self.pending);
        Python::attach(|py| {
            for p in batch.drain(..) {
                self.deliver(py, api, p);
            }
        });
        self.pending = batch;
    }
}
