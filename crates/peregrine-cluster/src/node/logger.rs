//! raft-rs logs through `slog`; its warnings and errors go to stderr with the node id,
//! everything below is dropped (the node reports role changes as events instead).

use slog::{Drain, Level, OwnedKVList, Record};

struct Stderr {
    id: u64,
}

impl Drain for Stderr {
    type Ok = ();
    type Err = slog::Never;

    fn log(&self, record: &Record<'_>, _values: &OwnedKVList) -> Result<(), slog::Never> {
        if record.level().is_at_least(Level::Warning) {
            eprintln!(
                "raft[{}] {}: {}",
                self.id,
                record.level().as_short_str(),
                record.msg()
            );
        }
        Ok(())
    }
}

/// The logger handed to raft-rs.
pub(crate) fn logger(id: u64) -> slog::Logger {
    slog::Logger::root(Stderr { id }.fuse(), slog::o!())
}
