//! A deliberately broken command log, for the crash test's negative control only:
//! with `PEREGRINE_SABOTAGE=release-before-durable` in the environment the exchange
//! claims every batch durable at once while it writes the journal only every
//! 200 ms, so a `kill -9` loses orders it already acknowledged. The crash test runs
//! it to prove that it would catch that bug (the test of the real path must fail
//! with it). Logged loudly at start; never set it otherwise.

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
    #[cfg(feature = "sabotage")]
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
