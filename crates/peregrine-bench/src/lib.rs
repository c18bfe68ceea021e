//! Peregrine's benchmarks, run from `peregrine bench …`.
//!
//! * [`balances`]: the engine with balances and commitments on Olympus's shapes (issue 6).
//! * [`book`]: the order-book bench (issue 2).
//! * [`engine`]: the order engine's submit hand-off, journal and UDP floor benches.
//! * [`dispatch`]: the non-blocking dispatch bench of seed 000/001 (issue 5).
//! * [`handoff`]: two-thread hand-off latency/throughput per queue candidate (issue 5).
//! * [`http`]: the HTTP gateway (REST order round trip beside the native protocol and
//!   a TCP floor, WebSocket fan-out, history writer lag); also `peregrine gateway bench`.
//! * [`replay`]: recorded L3 data through the exchange core, beside the decode floor (issue 30).
#![deny(unsafe_code)]

pub mod balances;
pub mod book;
pub mod dispatch;
pub mod engine;
pub mod handoff;
pub mod http;
pub mod replay;
