//! The order engine process (`peregrine engine --config engine.toml`): the runtime
//! shell around the orchestrator core.
//!
//! The engine's decisions live in lower crates, as plain state that takes time as an
//! argument: pre-trade risk and positions in `peregrine-risk`, the orchestrator core
//! (`handle(input, now) -> outputs`) in `peregrine-orchestrator`, the venue adapters
//! and their sessions in `peregrine-venues`. This crate owns the threads, rings,
//! sockets and files around them:
//!
//! * [`config`]: `engine.toml`, validated (and turned into the core's config).
//! * [`orchestrator`]: the orchestrator thread, the thin shell around the core.
//!   Submit hand-off: one shared-memory SPSC ring per strategy, scanned round-robin
//!   (N→1 without a shared atomic between producers); return hand-off: one
//!   shared-memory SPSC ring per strategy.
//! * [`gateway`]: one thread per venue. Inbox hand-off: an in-process SPSC ring per
//!   gateway (commands wait there for the journal: write-ahead); completion hand-off
//!   (M→1): crossbeam's `ArrayQueue`, the fastest contended queue in seed 000's
//!   measurements.
//! * [`durable`]: the journal: its file writer, the journal thread (the only thread
//!   that writes it), and recovery.
//! * [`market`]: the market-data thread: L2 books, the book board, per-strategy md
//!   rings.
//! * [`latency`]: the 7-segment HdrHistograms over the 8 timestamps of every order.
//! * [`control`]: the Unix-socket control channel (`stats`, `summary`, `kill`,
//!   `limits`, `shutdown`).
//! * [`summary`]: the stats numbers as a struct (control command `summary`).
//! * [`log`]: the log thread: no order-path thread ever writes to stderr.
//! * [`rings`]: a strategy's ring pair: created fresh per incarnation, unlinked when
//!   the strategy is declared dead.
//! * [`runtime`]: creating the rings, pinning and starting the threads, shutdown.
#![deny(unsafe_code)]

pub mod config;
pub mod control;
pub mod counters;
pub mod durable;
pub mod gateway;
pub mod latency;
pub mod log;
pub mod market;
pub mod metrics;
pub mod orchestrator;
pub mod rings;
pub mod runtime;
pub mod summary;

pub use peregrine_orchestrator::units;

pub use peregrine_risk::{
    Breach, Fill, Limits, OrderRequest, OrderShape, Position, PositionBook, RiskEngine, RiskReject,
    StrategyId,
};
