//! [`JournalLog`]: the [`CommandLog`] that writes every command to a
//! `peregrine-journal` [`Journal`].

use peregrine_book::Command;
use peregrine_journal::{Journal, JournalError, JournalStats, Timestamps};

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

    #[inline]
    fn commit(&mut self) -> std::io::Result<()> {
        self.journal.commit().map_err(std::io::Error::other)
    }

    fn stats(&self) -> Option<JournalStats> {
        Some(*self.journal.stats())
    }
}
