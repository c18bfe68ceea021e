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
//! * [`examples`]: a market maker and a taker.
//!
//! Market data is a stub for now: [`Strategy::on_market_data`] is fed by the
//! strategy's own fills.
#![deny(unsafe_code)]

pub mod api;
pub mod examples;
pub mod msg;
pub mod paths;
pub mod runner;
pub mod strategy;

pub use api::{Api, ApiError};
pub use msg::{Command, Event, EventKind, NewOrder, Request};
pub use runner::{run, RunSummary, RunnerConfig, RunnerError};
pub use strategy::Strategy;
