//! The order engine: its decision logic (risk, positions) and the engine process.
//!
//! Issue 4 builds the order engine of seed 000: strategies as processes, one orchestrator
//! thread that every order passes through, one gateway thread per venue connection. This
//! crate holds what the orchestrator decides with, as plain single-threaded state that
//! takes time as an argument (so it is deterministic and testable without threads):
//!
//! * [`position`]: net position, average cost, realized and unrealized PnL per strategy
//!   and instrument, from fills, in exact integer fixed point.
//! * [`risk`]: per-strategy and global limits checked before an order leaves the engine
//!   (max order qty and notional, price collar, max open orders, max position including
//!   open orders, order-rate token bucket, duplicate client order id, kill switch), each
//!   changeable at run time; every reject has a reason code and is counted.
//! * [`venue`]: the venue adapter trait gateways drive, and seed 000's simulated venue.
//!
//! And the engine process built on them (`peregrine engine --config engine.toml`):
//!
//! * [`config`]: `engine.toml`, validated.
//! * [`orchestrator`]: the central thread. Submit hand-off: one shared-memory SPSC ring
//!   per strategy, scanned round-robin (N→1 without a shared atomic between
//!   producers); return hand-off: one shared-memory SPSC ring per strategy.
//! * [`gateway`]: one thread per venue. Inbox hand-off: an in-process SPSC ring per
//!   gateway; completion hand-off (M→1): crossbeam's `ArrayQueue`, the fastest
//!   contended queue in seed 000's measurements.
//! * [`latency`]: the 7-segment HdrHistograms over the 8 timestamps of every order.
//! * [`control`]: the Unix-socket control channel (`stats`, `summary`, `kill`,
//!   `limits`, `shutdown`).
//! * [`summary`]: the stats numbers as a struct (control command `summary`).
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
pub mod market;
pub mod metrics;
pub mod orchestrator;
pub mod rings;
pub mod runtime;
pub mod summary;
pub mod units;

pub use peregrine_risk::{
    Breach, Fill, Limits, OrderRequest, OrderShape, Position, PositionBook, RiskEngine, RiskReject,
    StrategyId,
};
