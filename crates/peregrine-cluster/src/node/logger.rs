//! raft-rs logs through `slog`; its warnings and errors go to the `log` facade (the
//! binary's log backend, or a simulator's capture) with the node id, everything below
//! is dropped (the node reports role changes as events instead).

use slog::{Drain, Level, OwnedKVList, Record};

struct ToLog {
    id: u64,
}

impl Drain for ToLog {
    type Ok = ();
    type Err = slog::Never;

    fn log(&self, record: &Record<'_>, _values: &OwnedKVList) -> Result<(), slog::Never> {
        if record.level().is_at_least(Level::Warning) {
            log::warn!(
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
    slog::Logger::root(ToLog { id }.fuse(), slog::o!())
}
