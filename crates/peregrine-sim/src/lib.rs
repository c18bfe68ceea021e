//! `peregrine sim`: a deterministic simulator of the Peregrine venue.
//!
//! One process, one thread, one seed. The production exchange (its core, session
//! table, journal with group commit and snapshots, start-up recovery; for a cluster
//! the Raft node and the replicated state machine) runs over a simulated disk
//! ([`disk`]: a page cache whose unsynced bytes a power loss drops, torn and short
//! writes, a full disk, failed syncs, flipped bits), a simulated network
//! ([`world`]: per-connection delay, disconnects; between nodes loss, duplication,
//! reordering and partitions) and a simulated clock, driven by clients that keep an
//! oracle ([`client`], [`oracle`]), watched by market-data subscribers that rebuild
//! the books from the feed and its recovery (`md`). Everything derives from the seed, so a failing
//! run replays exactly from it, and every failure it found is kept as a regression
//! seed.
//!
//! Invariants (`docs/testing.md` has the list and the fault model): report streams
//! gap-free, exactly once and unchanged across every fault (so no acknowledged order
//! is lost); retention as configured at every login; books never crossed; once the
//! faults stop, everything answered within a bounded time; then the whole history
//! replayed through the reference book gives the same reports and the same books.
#![deny(unsafe_code)]

pub mod client;
pub mod disk;
mod faults;
pub mod knobs;
mod md;
pub mod oracle;
pub mod regressions;
mod run;
pub mod trace;
pub mod venue;
pub mod world;

pub use knobs::{Faults, SimConfig};
pub use run::{Outcome, RunStats, Violation};

/// The commit this simulator was built from (`git describe`, or `unknown`).
pub const COMMIT: &str = env!("PEREGRINE_SIM_COMMIT");

/// Runs one seed to its end.
pub fn run(config: SimConfig) -> Outcome {
    trace::capture_logs();
    let outcome = run::Sim::new(config).run();
    let _ = trace::take_logs();
    outcome
}
