//! The seam for the write-ahead journal (the `peregrine-journal` crate plugs in here).
//!
//! The matching loop calls [`CommandLog::append`] for every command *before* executing
//! it, and [`CommandLog::commit`] once per poll iteration. No result of a batch leaves
//! (a report to a socket, a feed message) before [`CommandLog::durable_through`] has
//! reached the batch's last sequence number. A log whose `commit` syncs returns
//! `u64::MAX` there (everything committed is durable); a log that syncs on another
//! thread (the server's group commit) returns how far its syncs have come, so
//! matching goes on while a batch's results wait for their `fdatasync`: "nothing
//! acknowledged is lost", with one sync per batch of commands, off the matching thread.

use peregrine_book::Command;
use peregrine_journal::JournalStats;

use crate::balances::AdminCommand;
use crate::codec::command::{MassCancelRequest, Record};

/// Where sequenced commands are recorded.
pub trait CommandLog {
    /// Records command number `seq` (the engine sequence number, from 1).
    fn append(&mut self, seq: u64, cmd: &Command) -> std::io::Result<()>;
    /// Records admin command number `seq` (a deposit or withdrawal; same sequence as
    /// [`CommandLog::append`]). The default refuses, so a log that cannot record it
    /// never silently loses money movements.
    fn append_admin(&mut self, seq: u64, cmd: &AdminCommand) -> std::io::Result<()> {
        let _ = (seq, cmd);
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "this command log cannot record admin commands",
        ))
    }
    /// Records mass cancel number `seq` (a whole `MassCancel` request; same sequence
    /// as [`CommandLog::append`]). The default refuses, like admin commands.
    fn append_mass_cancel(&mut self, seq: u64, m: &MassCancelRequest) -> std::io::Result<()> {
        let _ = (seq, m);
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "this command log cannot record mass cancel requests",
        ))
    }
    /// Records record `seq` of any kind (same sequence as [`CommandLog::append`]). The
    /// default hands the kinds that have their own method to it and refuses the rest
    /// (an order list), so a log that cannot record a kind never loses it silently.
    fn append_record(&mut self, seq: u64, rec: &Record) -> std::io::Result<()> {
        match rec {
            Record::Command(c) => self.append(seq, c),
            Record::Admin(a) => self.append_admin(seq, a),
            Record::MassCancel(m) => self.append_mass_cancel(seq, m),
            Record::List(_) => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "this command log cannot record order lists",
            )),
        }
    }
    /// Ends a batch: everything appended so far reaches the log, and becomes durable
    /// (per the journal's policy) now or, for an asynchronous log, later.
    fn commit(&mut self) -> std::io::Result<()>;
    /// Work kept off the order path, called by the loop's housekeeping (after a
    /// park, and about once a millisecond while busy): a journal that defers
    /// rewriting its high-water mark does it here. An error here has also poisoned the log: the next `commit`
    /// returns it.
    fn housekeeping(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    /// The highest sequence number that is durable; `u64::MAX` (the default) when
    /// everything committed is. Results of a batch are released only once this has
    /// reached its last sequence number.
    fn durable_through(&self) -> u64 {
        u64::MAX
    }
    /// The journal's write and sync counters, for metrics (`None`: not a journal).
    fn stats(&self) -> Option<JournalStats> {
        None
    }
}

/// Records nothing (the default until the journal crate lands).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoLog;

impl CommandLog for NoLog {
    #[inline]
    fn append(&mut self, _: u64, _: &Command) -> std::io::Result<()> {
        Ok(())
    }
    #[inline]
    fn append_admin(&mut self, _: u64, _: &AdminCommand) -> std::io::Result<()> {
        Ok(())
    }
    #[inline]
    fn append_mass_cancel(&mut self, _: u64, _: &MassCancelRequest) -> std::io::Result<()> {
        Ok(())
    }
    #[inline]
    fn append_record(&mut self, _: u64, _: &Record) -> std::io::Result<()> {
        Ok(())
    }
    #[inline]
    fn commit(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Keeps every command in memory, for tests.
#[derive(Debug, Default, Clone)]
pub struct MemoryLog {
    /// Appended commands with their sequence numbers.
    pub records: Vec<(u64, Command)>,
    /// How many records were committed.
    pub committed: usize,
    /// Appended admin commands with their sequence numbers (interleave with
    /// `records` by sequence number).
    pub admin: Vec<(u64, AdminCommand)>,
    /// Appended mass cancel requests with their sequence numbers.
    pub mass_cancels: Vec<(u64, MassCancelRequest)>,
    /// Appended order lists with their sequence numbers.
    pub lists: Vec<(u64, crate::codec::command::ListRecord)>,
}

impl CommandLog for MemoryLog {
    fn append(&mut self, seq: u64, cmd: &Command) -> std::io::Result<()> {
        self.records.push((seq, *cmd));
        Ok(())
    }
    fn append_admin(&mut self, seq: u64, cmd: &AdminCommand) -> std::io::Result<()> {
        self.admin.push((seq, *cmd));
        Ok(())
    }
    fn append_mass_cancel(&mut self, seq: u64, m: &MassCancelRequest) -> std::io::Result<()> {
        self.mass_cancels.push((seq, *m));
        Ok(())
    }
    fn append_record(&mut self, seq: u64, rec: &Record) -> std::io::Result<()> {
        match rec {
            Record::List(l) => {
                self.lists.push((seq, *l));
                Ok(())
            }
            Record::Command(c) => self.append(seq, c),
            Record::Admin(a) => self.append_admin(seq, a),
            Record::MassCancel(m) => self.append_mass_cancel(seq, m),
        }
    }
    fn commit(&mut self) -> std::io::Result<()> {
        self.committed = self.records.len();
        Ok(())
    }
}
