//! The engine survives its own restart: what it must not forget is journaled
//! ([`record`], written by [`writer`] with `peregrine-journal`) and replayed at start
//! ([`mod@replay`]): orders sent, acknowledgements, fills, cancels, rejects, replaces,
//! risk-limit changes and kill switches. `docs/engine.md`, "Restart and recovery".

pub mod record;
pub mod replay;
#[cfg(test)]
mod replay_tests;
pub mod writer;

pub use record::{Rec, RecError, SentOrder};
pub use replay::{replay, Recovered, ReplayError, RestoredOrder, ORPHAN};
pub use writer::EngineJournal;
