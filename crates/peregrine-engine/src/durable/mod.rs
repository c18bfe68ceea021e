//! The engine survives its own restart: what it must not forget is journaled (the
//! records, `peregrine_orchestrator::record`, written by [`writer`] with
//! `peregrine-journal` on the [`thread`], the only engine thread that touches the
//! journal's files) and replayed at start ([`mod@replay`]): orders sent,
//! acknowledgements, fills, cancels, rejects, replaces, risk-limit changes, kill
//! switches and how far each venue's report stream was processed.
//! `docs/engine.md`, "Restart and recovery".

pub mod replay;
#[cfg(test)]
mod replay_tests;
pub mod thread;
pub mod writer;

pub use peregrine_orchestrator::record::{self, Rec, RecError, SentOrder, ORPHAN};
pub use peregrine_orchestrator::Recovered;
pub use peregrine_venues::RestoredOrder;
pub use replay::{replay, ReplayError};
pub use thread::{JournalLink, JournalState};
pub use writer::EngineJournal;
