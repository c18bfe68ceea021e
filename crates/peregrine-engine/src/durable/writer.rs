//! The engine's journal writer: [`Rec`]s appended through `peregrine-journal`.
//!
//! The orchestrator appends records as state changes (an in-memory copy into the
//! journal's buffer, no syscall) and *commits* (one `write(2)` of everything
//! buffered) before it hands an order, cancel or replace to a gateway, and at the end
//! of every loop turn that appended something. So an order is on file before it can
//! reach a venue (write-ahead), and a report is on file within one loop turn of its
//! arrival. With `fsync = "none"` (the default) a commit reaches the page cache:
//! durable against the engine's own crash or `kill -9`, not against a power loss;
//! `fsync = "batch"` adds an `fdatasync` per commit (~0.2 ms here, on the
//! orchestrator thread).

use std::path::Path;

use peregrine_journal::{FsyncPolicy, Journal, JournalConfig, JournalError, Timestamps};

use peregrine_orchestrator::Rec;

/// The writer.
#[derive(Debug)]
pub struct EngineJournal {
    journal: Journal,
    next_seq: u64,
    buf: Vec<u8>,
    pending: bool,
    /// Records appended this run.
    pub appended: u64,
    /// Commits (writes) this run.
    pub commits: u64,
    /// The first error; once set, nothing more is written.
    pub failed: Option<String>,
}

impl EngineJournal {
    /// Wraps an open journal.
    pub fn new(journal: Journal) -> EngineJournal {
        let next_seq = journal.next_seq().unwrap_or(1);
        EngineJournal {
            journal,
            next_seq,
            buf: Vec::with_capacity(512),
            pending: false,
            appended: 0,
            commits: 0,
            failed: None,
        }
    }

    /// Opens (or creates) the journal in `dir`.
    pub fn open(dir: &Path, fsync: bool) -> Result<Journal, JournalError> {
        let cfg = JournalConfig {
            fsync: if fsync {
                FsyncPolicy::Batch
            } else {
                FsyncPolicy::None
            },
            ..JournalConfig::default()
        };
        Journal::open(dir, cfg).map(|(j, _)| j)
    }

    /// Appends one record (buffered). False once the journal has failed.
    pub fn append(&mut self, rec: &Rec, now_ns: u64) -> bool {
        if self.failed.is_some() {
            return false;
        }
        let kind = rec.encode(&mut self.buf);
        let ts = Timestamps {
            recv_ns: now_ns,
            engine_ns: now_ns,
        };
        match self.journal.append(self.next_seq, ts, kind, &self.buf) {
            Ok(()) => {
                self.next_seq += 1;
                self.appended += 1;
                self.pending = true;
                true
            }
            Err(e) => {
                self.failed = Some(e.to_string());
                false
            }
        }
    }

    /// Writes what was appended since the last commit. False once failed.
    pub fn commit(&mut self) -> bool {
        if self.failed.is_some() {
            return false;
        }
        if !self.pending {
            return true;
        }
        self.pending = false;
        self.commits += 1;
        match self.journal.commit() {
            Ok(()) => true,
            Err(e) => {
                self.failed = Some(e.to_string());
                false
            }
        }
    }

    /// Whether records wait for a commit.
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// The underlying journal (replay).
    pub fn journal_mut(&mut self) -> &mut Journal {
        &mut self.journal
    }
}
