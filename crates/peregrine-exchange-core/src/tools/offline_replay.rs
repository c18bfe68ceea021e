//! The logic of `peregrine journal replay`: replays a journal offline into a fresh
//! core and reports the record count, the last sequence number and the state hash
//! (the CLI in the `peregrine` binary prints them).

use std::time::{Duration, Instant};

use peregrine_book::engine::EngineError;
use peregrine_journal::{Journal, SnapshotConfig, SnapshotError, SnapshotStore};

use crate::clock::Clock;
use crate::journal::{JournalLog, JournalSection, NoLog};
use crate::replay::{open_journal, replay_records, restore, ReplayError, Replayed};
use crate::venue::VenueSpec;

/// The result of an offline replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaySummary {
    /// Records replayed.
    pub records: u64,
    /// Last sequence number (0 for an empty journal).
    pub last_seq: u64,
    /// The venue state hash after the replay (`Core::state_hash`: the engine's, with
    /// the balances when they are on), hex.
    pub state_hash: String,
    /// The journal was pruned: the newest snapshot was loaded and only the records
    /// after it replayed.
    pub from_snapshot: bool,
    /// Time to open the journal (which verifies every record).
    pub opened: Duration,
    /// The replay's counts and timing.
    pub replayed: Replayed,
}

/// Why an offline replay failed.
#[derive(Debug, thiserror::Error)]
pub enum OfflineReplayError {
    /// The fresh engine could not be built.
    #[error("building the matching engine: {0}")]
    Engine(#[from] EngineError),
    /// Opening the snapshot store failed.
    #[error("opening the snapshots: {0}")]
    Snapshots(#[from] SnapshotError),
    /// Opening or replaying the journal failed.
    #[error("replaying the journal in {dir}: {source}")]
    Journal {
        /// The journal directory.
        dir: std::path::PathBuf,
        /// Why.
        source: ReplayError,
    },
}

/// Replays the journal of `section` into a fresh core for `venue`. A pruned journal
/// (its first segments deleted after snapshots) starts from the newest valid
/// snapshot, as the server's start-up does.
pub fn replay_journal(
    venue: &VenueSpec,
    section: &JournalSection,
) -> Result<ReplaySummary, OfflineReplayError> {
    let journal_err = |source| OfflineReplayError::Journal {
        dir: section.dir.clone(),
        source,
    };
    let t0 = Instant::now();
    let (mut journal, _) =
        open_journal(section, peregrine_journal::LossPolicy::Refuse).map_err(journal_err)?;
    let opened = t0.elapsed();
    if journal.first_seq().is_some_and(|first| first > 1) {
        return from_snapshot(venue, section, journal, opened);
    }
    let mut core = venue.core(NoLog, Clock::monotonic(), 1 << 16)?;
    let done = replay_records(&mut journal, |seq, rec| core.replay_record(seq, rec))
        .map_err(journal_err)?;
    Ok(ReplaySummary {
        records: done.records,
        last_seq: done.last_seq,
        state_hash: core.state_hash().to_string(),
        from_snapshot: false,
        opened,
        replayed: done,
    })
}

fn from_snapshot(
    venue: &VenueSpec,
    section: &JournalSection,
    journal: Journal,
    opened: Duration,
) -> Result<ReplaySummary, OfflineReplayError> {
    let mut core = venue.core(JournalLog::new(journal), Clock::monotonic(), 1 << 16)?;
    let store = SnapshotStore::open(section.snapshot_dir(), SnapshotConfig::default())?;
    let (done, hash) =
        restore(&mut core, Some(&store), None).map_err(|source| OfflineReplayError::Journal {
            dir: section.dir.clone(),
            source,
        })?;
    Ok(ReplaySummary {
        records: done.records,
        last_seq: core.engine_seq(),
        state_hash: hash.to_string(),
        from_snapshot: true,
        opened,
        replayed: done,
    })
}
