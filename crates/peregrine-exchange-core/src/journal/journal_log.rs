//! [`JournalLog`]: the [`CommandLog`] that writes every command to a
//! `peregrine-journal` [`Journal`].

use peregrine_book::Command;
use peregrine_journal::{FsyncPolicy, Journal, JournalError, JournalStats, Timestamps};

use crate::balances::AdminCommand;
use crate::codec::command::{self as command_codec, MassCancelRequest, MAX_ENCODED};
use crate::journal::command_log::CommandLog;

/// Journal record kind of a [`command_codec`] payload.
pub const KIND_COMMAND: u8 = 1;

/// Writes each command as one journal record (kind [`KIND_COMMAND`]) with the engine
/// sequence number. Encodes into a reused stack buffer, and the journal copies into its
/// preallocated write buffer: no allocation per append.
#[derive(Debug)]
pub struct JournalLog {
    journal: Journal,
    buf: [u8; MAX_ENCODED],
}

impl JournalLog {
    /// Wraps an open journal (positioned after recovery).
    pub fn new(journal: Journal) -> Self {
        JournalLog {
            journal,
            buf: [0; MAX_ENCODED],
        }
    }

    /// The journal.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// The journal, mutably (recovery replays through it).
    pub fn journal_mut(&mut self) -> &mut Journal {
        &mut self.journal
    }

    /// Commits, syncs and closes the journal, reporting any error.
    pub fn close(self) -> Result<(), JournalError> {
        self.journal.close()
    }
}

impl CommandLog for JournalLog {
    #[inline]
    fn append(&mut self, seq: u64, cmd: &Command) -> std::io::Result<()> {
        let n = command_codec::encode(cmd, &mut self.buf);
        let ts = Timestamps {
            recv_ns: cmd.ts.0,
            engine_ns: cmd.ts.0,
        };
        self.journal
            .append(seq, ts, KIND_COMMAND, &self.buf[..n])
            .map_err(std::io::Error::other)
    }

    fn append_admin(&mut self, seq: u64, cmd: &AdminCommand) -> std::io::Result<()> {
        let n = command_codec::encode_admin(cmd, &mut self.buf);
        let ts = Timestamps {
            recv_ns: cmd.ts.0,
            engine_ns: cmd.ts.0,
        };
        self.journal
            .append(seq, ts, KIND_COMMAND, &self.buf[..n])
            .map_err(std::io::Error::other)
    }

    fn append_mass_cancel(&mut self, seq: u64, m: &MassCancelRequest) -> std::io::Result<()> {
        let n = command_codec::encode_mass_cancel(m, &mut self.buf);
        let ts = Timestamps {
            recv_ns: m.ts.0,
            engine_ns: m.ts.0,
        };
        self.journal
            .append(seq, ts, KIND_COMMAND, &self.buf[..n])
            .map_err(std::io::Error::other)
    }

    fn append_record(&mut self, seq: u64, rec: &command_codec::Record) -> std::io::Result<()> {
        let n = command_codec::encode_record(rec, &mut self.buf);
        let t = rec.ts().0;
        let ts = Timestamps {
            recv_ns: t,
            engine_ns: t,
        };
        self.journal
            .append(seq, ts, KIND_COMMAND, &self.buf[..n])
            .map_err(std::io::Error::other)
    }

    /// Under `fsync = "none"` a commit is one `write` of the batch to the page cache
    /// (which a killed process cannot lose) and nothing more: the high-water mark's
    /// `pwrite` waits for [`CommandLog::housekeeping`], so the mark may lag the last
    /// few batches (start-up keeps records past the mark). Under the other policies
    /// the journal's own commit writes, syncs and marks.
    #[inline]
    fn commit(&mut self) -> std::io::Result<()> {
        let r = if self.journal.config().fsync == FsyncPolicy::None {
            self.journal.write()
        } else {
            self.journal.commit()
        };
        r.map_err(std::io::Error::other)
    }

    fn housekeeping(&mut self) -> std::io::Result<()> {
        self.journal
            .write_mark(u64::MAX)
            .map_err(std::io::Error::other)
    }

    fn stats(&self) -> Option<JournalStats> {
        Some(*self.journal.stats())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_book::{Action, Cancel};
    use peregrine_journal::{hwm, JournalConfig};
    use peregrine_types::{AccountId, ClientOrderId, InstrumentId, OrderId, Timestamp};

    fn cmd(i: u64) -> Command {
        Command {
            ts: Timestamp(i),
            action: Action::Cancel(Cancel {
                instrument: InstrumentId(1),
                id: OrderId(i),
                account: AccountId(1),
                client_id: ClientOrderId(i),
            }),
        }
    }

    fn mark(dir: &std::path::Path) -> u64 {
        hwm::read(dir).unwrap().map_or(0, |m| m.committed_seq)
    }

    #[test]
    fn without_fsync_a_commit_writes_the_records_and_housekeeping_the_mark() {
        for (fsync, marked_by_commit) in [(FsyncPolicy::None, 0), (FsyncPolicy::Batch, 3)] {
            let dir = tempfile::tempdir().unwrap();
            let cfg = JournalConfig {
                fsync,
                ..JournalConfig::default()
            };
            let (journal, _) = Journal::open(dir.path(), cfg).unwrap();
            let mut log = JournalLog::new(journal);
            for i in 1..=3 {
                log.append(i, &cmd(i)).unwrap();
            }
            log.commit().unwrap();
            assert_eq!(mark(dir.path()), marked_by_commit, "{fsync:?}");
            // The records are in the file (what a killed process leaves) either way.
            let written = log.journal().stats().bytes_written;
            let on_disk: u64 = log
                .journal()
                .segments()
                .iter()
                .map(|s| std::fs::metadata(&s.path).unwrap().len())
                .sum();
            assert!(
                written > 0 && on_disk >= written,
                "{fsync:?}: {on_disk} {written}"
            );
            log.housekeeping().unwrap();
            assert_eq!(mark(dir.path()), 3, "{fsync:?}");
        }
    }
}
