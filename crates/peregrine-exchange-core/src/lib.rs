//! The Peregrine venue's sans-IO core.
//!
//! Everything here decides; nothing here owns a socket, a thread or a clock it was
//! not given. The server (`peregrine-exchange`) attaches the I/O: sessions, the UDP
//! feed, the journal's group commit, the snapshot and hasher threads, metrics. The
//! offline tools (`peregrine verify`, `peregrine journal replay`), the benchmarks and
//! the fuzz targets use this crate without the server.
//!
//! ```text
//!  Request ─▶ dispatch ─▶ core::execute ─▶ route ─▶ Outbox (reports)
//!  (seams)    continuous   seq, clock,      events →   └▶ feed::Feed ─▶ PacketSink
//!             or batch     CommandLog,      reports       (packets, retained)
//!             (sequencer)  engine+balances  + feed msgs
//!                              │
//!                              ├─▶ SnapshotSink (replica on the server's thread)
//!                              ├─▶ CommitSink  (hasher thread, peregrine-commit)
//!                              └─▶ telemetry   (counters, depth; debounced slots)
//! ```
//!
//! * [`core`]: the sequenced matching stage ([`Core`]).
//! * [`route`]: wire requests to commands, events to reports (and who gets them) and
//!   feed messages; pure functions.
//! * [`dispatch`]: continuous or batch matching ([`dispatch::Sequencer`]).
//! * [`balances`]: the ledger stage, admin commands and their config.
//! * [`journal`]: the [`CommandLog`] seam and its journal-backed implementation;
//!   [`codec`]: the journal record and snapshot formats; [`replay`]: journal →
//!   core on start; [`replica`]: the snapshot replica's state machine.
//! * [`feed`]: feed sequencing, packing and retention; [`telemetry`]: counters and
//!   depth for readers; [`clock`], [`mix`] (the deterministic order mix of the load
//!   generator, benches and tests); [`tools`]: the offline tools' logic. Idling
//!   (`busy-spin`, `spin-yield`, `park`) is `peregrine_queue::wait`'s, used by the
//!   I/O shells that poll.
#![deny(unsafe_code)]

pub mod balances;
pub mod clock;
pub mod codec;
pub mod core;
pub mod dispatch;
pub mod feed;
pub mod journal;
pub mod mix;
pub mod queries;
pub mod replay;
pub mod replica;
pub mod reports;
pub mod route;
pub mod seams;
pub mod telemetry;
pub mod tools;
pub mod venue;

pub use crate::core::Core;
pub use clock::Clock;
pub use journal::{CommandLog, MemoryLog, NoLog};
pub use seams::{Outbox, Request, SessionKey, SnapshotSink};
pub use venue::VenueSpec;
