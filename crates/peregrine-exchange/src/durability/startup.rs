//! Start-up with a `[journal]`: open the journal (truncating a torn tail), attach the
//! hasher, restore the newest snapshot and replay the journal after it, then attach
//! the snapshot thread. Anything but a torn tail refuses to start.

use peregrine_exchange_core::journal::{JournalLog, JournalSection};
use peregrine_exchange_core::replay::{open_journal, restore};
use peregrine_exchange_core::reports::{ReportStore, Retention};
use peregrine_exchange_core::{Clock, Core, NoLog, VenueSpec};
use peregrine_journal::{LossPolicy, SnapshotConfig, SnapshotStore};

use crate::config::Config;
use crate::durability::commitments;
use crate::durability::snapshots::{ReplicaFactory, Snapshotter};
use crate::error::{ExchangeError, IoContext};

/// Recovers `core` (built over the journal of `section`) to the state the journal
/// holds, with commitments and snapshots attached as the config asks. Returns it with
/// the report streams the replay rebuilt (what the sessions replay to clients that
/// reconnect).
pub(crate) fn recover(
    config: &Config,
    section: &JournalSection,
    venue: &VenueSpec,
    mut core: Core<JournalLog>,
) -> Result<(Core<JournalLog>, Option<ReportStore>), ExchangeError> {
    if config.commitments.enabled {
        core = core.with_commitments(Box::new(commitments::spawn_for(config, section)?));
    }
    let store = if section.snapshot_every > 0 {
        let dir = section.snapshot_dir();
        let snapshot_config = SnapshotConfig {
            prune_journal_dir: section.prune.then(|| section.dir.clone()),
            ..SnapshotConfig::default()
        };
        Some(
            SnapshotStore::open(&dir, snapshot_config)
                .map_err(|source| ExchangeError::Snapshots { dir, source })?,
        )
    } else {
        None
    };
    // With commitments, recovery replays the whole journal: the open window may have
    // started before the newest snapshot (docs/commitments.md).
    let restore_from = if config.commitments.enabled {
        None
    } else {
        store.as_ref()
    };
    let retention = Retention {
        per_account: config.reports.retain_per_account,
    };
    restore(&mut core, restore_from, Some(retention)).map_err(|source| {
        ExchangeError::Recovery {
            dir: section.dir.clone(),
            source,
        }
    })?;
    let reports = core.take_reports();
    core.commitments_floor();
    if let Some(store) = store {
        // The snapshot thread keeps a replica fed by the journaled records, so the
        // matching thread never encodes a snapshot (crate::durability::snapshots).
        let venue = venue.clone();
        let make: ReplicaFactory = Box::new(move || {
            let capacity = venue.arena_capacity;
            venue.core(NoLog, Clock::monotonic(), capacity).ok()
        });
        let snapshots = Snapshotter::spawn_replica(store, section.snapshot_every, make)
            .doing(|| "spawning the snapshot thread".into())?;
        core = core.with_snapshots(Box::new(snapshots));
    }
    Ok((core, reports))
}

/// Opens the journal of `section`, logging what recovery found; lost committed
/// records refuse to start unless `accept_loss`.
pub(crate) fn open(
    section: &JournalSection,
    accept_loss: bool,
) -> Result<JournalLog, ExchangeError> {
    let policy = if accept_loss {
        LossPolicy::Accept
    } else {
        LossPolicy::Refuse
    };
    let (journal, _report) =
        open_journal(section, policy).map_err(|source| ExchangeError::OpenJournal {
            dir: section.dir.clone(),
            source,
        })?;
    Ok(JournalLog::new(journal))
}
