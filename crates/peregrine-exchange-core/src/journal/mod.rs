//! The journal seam: the [`CommandLog`] the core appends every command to before it
//! executes (and commits before any result leaves), its journal-backed
//! implementation [`JournalLog`], and the `[journal]` config section.

mod command_log;
mod journal_log;
mod section;

pub use command_log::{CommandLog, MemoryLog, NoLog};
pub use journal_log::{JournalLog, KIND_COMMAND};
pub use section::JournalSection;
