//! The TCP transport between nodes (polled by the node's thread) and its counters.

pub mod stats;
pub mod tcp;

pub use stats::TransportStats;
pub use tcp::{TcpTransport, TransportOptions, Waker};
