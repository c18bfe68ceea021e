//! Peregrine's client tools as a library, depending on the wire protocol and the
//! exchange core, never on the server:
//!
//! * [`order_entry`]: a logged-in order-entry connection (protocol version 2:
//!   challenge-response login, report-stream resume, one terminal answer per
//!   request), what the gateways and the order engine build on.
//! * [`keys`]: account key files (`peregrine keygen`).
//! * [`loadgen`]: the load generator (many sessions, open or closed loop,
//!   HdrHistogram latencies without coordinated omission).
//! * [`md`]: the market-data subscriber (book building, gap detection, replay and
//!   snapshot recovery).
//! * [`admin`]: deposits, withdrawals and balance queries.
//!
//! The `peregrine` binary gives each a command line (`loadgen`, `md`, `admin`).
#![deny(unsafe_code)]

pub mod admin;
mod error;
pub mod keys;
pub mod loadgen;
pub mod md;
pub mod order_entry;

pub use error::ClientError;
