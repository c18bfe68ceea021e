//! Market data from the engine to a strategy, through shared memory.
//!
//! * [`board`]: the current book of every (venue, instrument), top [`DEPTH`] levels per
//!   side, each behind a [`seqlock`]: readable at any time without locks or torn reads
//!   (`Api::book`).
//! * [`event`]: the per-strategy ring of book changes and trades
//!   (`<dir>/<strategy>.md`), for the instruments the strategy subscribes to. A slow
//!   strategy never slows the engine: when its ring is full, book changes are
//!   conflated into one later event carrying the latest state and trades are
//!   dropped; [`MdEvent::skipped`] counts both.
//! * [`view`]: [`BookView`] and [`Level`], what `Strategy::on_book` receives.

#[allow(
    unsafe_code,
    reason = "the board maps shared memory: atomics for the writer, volatile reads for readers"
)]
pub mod board;
pub mod event;
#[allow(
    unsafe_code,
    reason = "the reader's volatile reads of a read-only shared mapping"
)]
pub mod seqlock;
pub mod view;

pub use board::{BoardError, BoardReader, BoardWriter};
pub use event::{MdEvent, MdKind, Trade};
pub use view::{BookView, Level, BOOK_WORDS, DEPTH};

use std::path::{Path, PathBuf};

/// The market-data ring of `strategy`.
pub fn ring_path(dir: &Path, strategy: &str) -> PathBuf {
    dir.join(format!("{strategy}.md"))
}
