//! Peregrine's strategy SDK.
//!
//! A strategy is a separate OS process. It talks to the order engine through two
//! shared-memory rings that the engine creates per configured strategy (see
//! [`paths`]): it pushes [`Request`]s (new order, cancel, heartbeat) into its *submit*
//! ring and pops [`Event`]s (ack, reject, fill, cancelled) from its *return* ring. Both
//! rings are the single-producer single-consumer ring of `peregrine-queue` laid out in
//! a file under `/dev/shm`, so a hand-off is a copy into a slot and one Release store;
//! nothing blocks and nothing allocates.
//!
//! * [`msg`]: the fixed-size `#[repr(C)]` messages, their typed decoding, and the 8
//!   timestamps t1..t8 of seed 000 every order carries.
//! * [`Strategy`]: the callbacks; [`Api`]: what a strategy calls.
//! * [`runner`]: attach, heartbeat, event loop with a configurable wait strategy, and a
//!   latency summary.
//! * [`examples`]: a market maker, a taker, a mean-reversion taker, a latency probe.
//!
//! * [`md`]: market data: the book board ([`Api::book`]), the per-strategy ring behind
//!   [`Strategy::on_book`] and [`Strategy::on_trade`].
//!
//! # A strategy that reads the book
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use peregrine_strategy::md::BookView;
//! use peregrine_strategy::msg::{Event, NewOrder};
//! use peregrine_strategy::{run, Api, RunnerConfig, Strategy};
//! use peregrine_types::{InstrumentId, Qty, Side};
//!
//! /// Trades back towards a moving average of the mid.
//! struct Reverter { avg: i64, position: i64 }
//!
//! impl Strategy for Reverter {
//!     // Every new version of a subscribed book (engine config:
//!     // `subscribe = [{ venue = "sim", instrument = 1 }]`).
//!     fn on_book(&mut self, api: &mut Api, instrument: InstrumentId, book: &BookView) {
//!         let Some(mid) = book.mid() else { return };
//!         let mid = mid.units();
//!         if self.avg == 0 { self.avg = mid; return; }
//!         self.avg += (mid - self.avg) / 64;
//!         let (side, touch) = if mid > self.avg + 2 {
//!             (Side::Sell, book.best_bid())
//!         } else if mid < self.avg - 2 {
//!             (Side::Buy, book.best_ask())
//!         } else {
//!             return;
//!         };
//!         let Some(touch) = touch else { return };
//!         let order = NewOrder::limit(book.venue, instrument, side, touch.price, Qty::from_raw(1)).ioc();
//!         let _ = api.send(order); // Err(Full): the engine is behind; skip this one
//!     }
//!     fn on_fill(&mut self, _api: &mut Api, ev: &Event) {
//!         self.position += if ev.side() == Side::Buy { ev.qty } else { -ev.qty };
//!     }
//! }
//!
//! let cfg = RunnerConfig::new("/dev/shm/peregrine-main".into(), "reverter");
//! let summary = run(&mut Reverter { avg: 0, position: 0 }, &cfg, &AtomicBool::new(false)).unwrap();
//! println!("{}", summary.render());
//! ```
#![deny(unsafe_code)]

pub mod api;
#[allow(
    unsafe_code,
    reason = "the doorbell's two words live in a shared mapping, reached as atomics"
)]
pub mod doorbell;
pub mod examples;
pub mod md;
pub mod msg;
pub mod paths;
pub mod runner;
pub mod strategy;

pub use api::{Api, ApiError, KillSwitch};
pub use msg::{Command, Event, EventKind, NewOrder, Request};
pub use runner::{run, RunSummary, RunnerConfig, RunnerError};
pub use strategy::Strategy;
