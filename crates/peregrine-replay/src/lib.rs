//! Replay of recorded markets through Peregrine's exchange core, in simulated time,
//! with strategies attached as they are live.
//!
//! ```text
//!  data/ (decoders) ──▶ profile ──▶ session ──▶ sim (driver) ──▶ venue (exchange core)
//!                                     │           ├─ l3 / l2 (recorded market → orders; queue models)
//!                                     │           ├─ attach (strategy, SDK Api) + sim::gateway
//!                                     │           └─ check (rebuild, snapshots)
//!                                     └─▶ report (JSON, text) + report::plot (SVG)
//! ```
//!
//! * [`data`]: ITCH 5.0, LOBSTER, Binance raw streams, Tardis CSV, latency rows.
//! * [`venue`]: the exchange core ([`peregrine_exchange_core::Core`]) on a manual clock.
//! * [`l3`]: recorded orders become real orders; [`l2`]: recorded levels become
//!   orders, and a queue model places the cancels the data does not attribute.
//! * [`sim`]: the event loop; [`attach`]: strategies (the SDK's `Strategy` and `Api`).
//! * [`check`]: the replay rebuilds the recorded book, at every step.
//! * [`synth`]: seeded synthetic days in the exact ITCH and LOBSTER formats.
//! * [`compare`]: each L2 queue model's fills against the exact L3 fills.
#![deny(unsafe_code)]

pub mod attach;
pub mod builtin;
pub mod check;
pub mod compare;
pub mod config;
pub mod data;
pub mod joiner;
pub mod l2;
pub mod l3;
pub mod latency;
pub mod lobster_seed;
pub mod outcome;
pub mod profile;
pub mod recorded;
pub mod report;
pub mod session;
pub mod sim;
pub mod synth;
pub mod venue;
