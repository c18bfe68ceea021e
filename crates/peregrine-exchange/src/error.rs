//! Why the exchange could not start or stopped with an error.

use std::path::PathBuf;

use peregrine_commit::CommitLogError;
use peregrine_exchange_core::replay::ReplayError;

/// An error of [`crate::run`].
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// The config is invalid (every problem found).
    #[error("invalid config:\n  - {}", .0.join("\n  - "))]
    Config(Vec<String>),
    /// The matching engine could not be built from the config.
    #[error("building the matching engine: {0}")]
    Engine(#[from] peregrine_book::engine::EngineError),
    /// The journal could not be opened (a record damaged before its tail, an I/O
    /// error): start-up refuses rather than lose records.
    #[error(
        "recovering the journal in {}: refusing to start (the journal is damaged \
         before its tail; inspect or restore it, never delete records silently): {source}",
        dir.display()
    )]
    OpenJournal {
        /// The journal directory.
        dir: PathBuf,
        /// Why.
        source: ReplayError,
    },
    /// Replaying the journal (or loading a snapshot) failed.
    #[error("recovering from the journal in {}: refusing to start: {source}", dir.display())]
    Recovery {
        /// The journal directory.
        dir: PathBuf,
        /// Why.
        source: ReplayError,
    },
    /// The snapshot store could not be opened.
    #[error("opening {}: {source}", dir.display())]
    Snapshots {
        /// The snapshot directory.
        dir: PathBuf,
        /// Why.
        source: peregrine_journal::SnapshotError,
    },
    /// The commitment log could not be opened.
    #[error("opening the commitment log in {}: {source}", dir.display())]
    CommitLog {
        /// The log directory.
        dir: PathBuf,
        /// Why.
        source: CommitLogError,
    },
    /// A socket, a thread or the journal failed; `what` says which.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The cluster node failed (its log, its transport, its state machine).
    #[error("cluster: {0}")]
    Cluster(String),
    /// The matching thread panicked (split topology).
    #[error("matching thread panicked")]
    MatchingPanicked,
}

/// Attaches what was being done to an I/O error.
pub(crate) trait IoContext<T> {
    /// `Err(e)` becomes [`ExchangeError::Io`] with `what`.
    fn doing(self, what: impl FnOnce() -> String) -> Result<T, ExchangeError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T, ExchangeError> {
        self.map_err(|source| ExchangeError::Io {
            what: what(),
            source,
        })
    }
}
