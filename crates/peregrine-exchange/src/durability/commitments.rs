//! Starting the hasher thread for the config: opens the commitment log next to the
//! journal (`<dir>/commitments`, the journal's fsync policy) and spawns
//! [`Committer`] with the config's window.

use peregrine_commit::commit_log::{dir_of, CommitLog};
use peregrine_commit::Committer;
use peregrine_exchange_core::journal::JournalSection;

use crate::config::Config;
use crate::error::{ExchangeError, IoContext};

/// Opens the commitment log of `section` and starts the hasher for `config`'s window.
pub(crate) fn spawn_for(
    config: &Config,
    section: &JournalSection,
) -> Result<Committer, ExchangeError> {
    let dir = dir_of(&section.dir);
    let (log, last) =
        CommitLog::open(&dir, section.fsync).map_err(|source| ExchangeError::CommitLog {
            dir: dir.clone(),
            source,
        })?;
    log::info!(
        "commitments: window {} ns ({:?} mode), log {}, last logged tick {:?}",
        config.commit_window_ns(),
        config.mode,
        dir.display(),
        last.map(|l| l.commitment.tick_seq)
    );
    Committer::spawn(
        config.commit_window_ns(),
        config.commitments.chunk_trades,
        Some(log),
        last,
    )
    .doing(|| "spawning the hasher thread".into())
}
