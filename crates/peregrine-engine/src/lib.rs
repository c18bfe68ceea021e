//! The order engine's decision logic: pre-trade risk and position keeping.
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
#![deny(unsafe_code)]

pub mod position;
pub mod risk;
pub mod venue;

pub use position::{Position, PositionBook};
pub use risk::{Breach, Fill, Limits, OrderRequest, RiskEngine, RiskReject, StrategyId};
