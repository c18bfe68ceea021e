//! A deliberately broken command log, for the negative controls only, compiled only
//! with the `sabotage` cargo feature (never in what users run: the release binary
//! has no such code, and ignores the variable): with
//! `PEREGRINE_SABOTAGE=release-before-durable` in the environment a sabotaged build
//! claims every batch durable at once while it writes the journal only every 200 ms,
//! so a `kill -9` loses orders it already acknowledged. The crash and cluster tests
//! run such a build to prove that they would catch that bug, and the simulator runs
//! the same log (`stepped`, every 16 commits instead of by the clock).

use std::time::{Duration, Instant};

use peregrine_book::Command;
use peregrine_exchange_core::balances::AdminCommand;
use peregrine_exchange_core::codec::command::MassCancelRequest;
use peregrine_exchange_core::journal::JournalLog;
use peregrine_exchange_core::CommandLog;
use peregrine_journal::JournalStats;

/// The environment variable, and the value that turns the sabotage on.
pub(crate) const VAR: &str = "PEREGRINE_SABOTAGE";
/// See [`VAR`].
pub(crate) const RELEASE_BEFORE_DURABLE: &str = "release-before-durable";

/// Whether the environment asks for the sabotage.
pub(crate) fn requested() -> bool {
    std::env::var(VAR).is_ok_and(|v| v == RELEASE_BEFORE_DURABLE)
}

/// Releases results before their records reach the journal file.
#[derive(Debug)]
pub(crate) struct ReleaseBeforeDurable {
    log: JournalLog,
    last_write: Instant,
    /// Write every this many commits instead of by the clock (a simulator's
    /// deterministic run); 0: every 200 ms.
    every: u32,
    commits: u32,
}

impl ReleaseBeforeDurable {
    /// Wraps `log`.
    pub(crate) fn new(log: JournalLog) -> Self {
        log::warn!(
            "SABOTAGE ({VAR}={RELEASE_BEFORE_DURABLE}): results leave before the journal \
             has them; a crash loses acknowledged orders. For the crash test's negative \
             control only."
        );
        ReleaseBeforeDurable {
            log,
            last_write: Instant::now(),
            every: 0,
            commits: 0,
        }
    }

    /// Wraps `log`, writing it every `every` commits.
    pub(crate) fn every_commits(log: JournalLog, every: u32) -> Self {
        ReleaseBeforeDurable {
            every: every.max(1),
            ..Self::new(log)
        }
    }
}

impl CommandLog for ReleaseBeforeDurable {
    fn append(&mut self, seq: u64, cmd: &Command) -> std::io::Result<()> {
        self.log.append(seq, cmd)
    }
    fn append_admin(&mut self, seq: u64, cmd: &AdminCommand) -> std::io::Result<()> {
        self.log.append_admin(seq, cmd)
    }
    fn append_mass_cancel(&mut self, seq: u64, m: &MassCancelRequest) -> std::io::Result<()> {
        self.log.append_mass_cancel(seq, m)
    }
    fn append_record(
        &mut self,
        seq: u64,
        rec: &peregrine_exchange_core::codec::command::Record,
    ) -> std::io::Result<()> {
        self.log.append_record(seq, rec)
    }
    fn commit(&mut self) -> std::io::Result<()> {
        self.commits = self.commits.wrapping_add(1);
        let due = match self.every {
            0 => self.last_write.elapsed() >= Duration::from_millis(200),
            n => self.commits.is_multiple_of(n),
        };
        if due {
            self.last_write = Instant::now();
            self.log
                .journal_mut()
                .write()
                .map_err(std::io::Error::other)?;
        }
        Ok(())
    }
    fn stats(&self) -> Option<JournalStats> {
        self.log.stats()
    }
}
