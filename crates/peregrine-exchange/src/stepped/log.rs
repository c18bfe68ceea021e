//! The command log of a stepped venue: whichever the server would run for the config.

use peregrine_book::Command;
use peregrine_exchange_core::balances::AdminCommand;
use peregrine_exchange_core::codec::command::MassCancelRequest;
use peregrine_exchange_core::journal::JournalLog;
use peregrine_exchange_core::CommandLog;
use peregrine_journal::JournalStats;

use crate::durability::group_commit::GroupCommit;

/// The server's command logs, as one type.
#[derive(Debug)]
pub(crate) enum VenueLog {
    /// `fsync = "batch"` without commitments: the group commit, its sync stepped.
    Group(GroupCommit),
    /// Otherwise: the journal's own commit (synced per its policy).
    Sync(JournalLog),
    /// The negative control: results leave before the journal has them.
    #[cfg(feature = "sabotage")]
    Sabotaged(crate::durability::sabotage::ReleaseBeforeDurable),
}

impl VenueLog {
    fn log(&mut self) -> &mut dyn CommandLog {
        match self {
            VenueLog::Group(g) => g,
            VenueLog::Sync(l) => l,
            #[cfg(feature = "sabotage")]
            VenueLog::Sabotaged(s) => s,
        }
    }

    fn log_ref(&self) -> &dyn CommandLog {
        match self {
            VenueLog::Group(g) => g,
            VenueLog::Sync(l) => l,
            #[cfg(feature = "sabotage")]
            VenueLog::Sabotaged(s) => s,
        }
    }

    /// Whether a sync has written records to cover (group commit only).
    pub(crate) fn sync_wanted(&self) -> bool {
        match self {
            VenueLog::Group(g) => g.sync_wanted(),
            _ => false,
        }
    }

    /// The group commit's sync runs now; whether it synced.
    pub(crate) fn sync_now(&self) -> bool {
        match self {
            VenueLog::Group(g) => g.sync_now(),
            _ => false,
        }
    }
}

impl CommandLog for VenueLog {
    fn append(&mut self, seq: u64, cmd: &Command) -> std::io::Result<()> {
        self.log().append(seq, cmd)
    }
    fn append_admin(&mut self, seq: u64, cmd: &AdminCommand) -> std::io::Result<()> {
        self.log().append_admin(seq, cmd)
    }
    fn append_mass_cancel(&mut self, seq: u64, m: &MassCancelRequest) -> std::io::Result<()> {
        self.log().append_mass_cancel(seq, m)
    }
    fn commit(&mut self) -> std::io::Result<()> {
        self.log().commit()
    }
    fn housekeeping(&mut self) -> std::io::Result<()> {
        self.log().housekeeping()
    }
    fn durable_through(&self) -> u64 {
        self.log_ref().durable_through()
    }
    fn stats(&self) -> Option<JournalStats> {
        self.log_ref().stats()
    }
}
