//! Start-up with a `[journal]`: open the journal (truncating a torn tail), attach the
//! hasher, restore the newest snapshot and replay the journal after it, then attach
//! the snapshot thread. Anything but a torn tail refuses to start.

use peregrine_exchange_core::journal::{JournalLog, JournalSection};
use peregrine_exchange_core::replay::{open_journal_in, restore};
use peregrine_exchange_core::reports::{ReportStore, Retention};
use peregrine_exchange_core::{Clock, Core, NoLog, VenueSpec};
use peregrine_journal::{LossPolicy, SnapshotConfig, SnapshotStore, Storage};

use crate::config::Config;
use crate::durability::commitments;
use crate::durability::snapshots::{ReplicaFactory, Snapshotter};
use crate::error::{ExchangeError, IoContext};
use peregrine_exchange_core::balances::BalanceSetup;
use peregrine_exchange_core::journal::CommandLog;

/// Where a node runs: the server's threads and file system, or a deterministic
/// simulator's storage and clock with every helper stepped on the caller's thread.
#[derive(Debug, Clone)]
pub(crate) struct Host {
    /// The file system of the journal and snapshots.
    pub(crate) storage: Storage,
    /// The clock of the cores built here (the live core's is given with it).
    pub(crate) clock: Clock,
    /// No helper threads: the snapshot replica runs on the caller's thread.
    pub(crate) stepped: bool,
}

impl Host {
    /// The server's: `std::fs`, the monotonic clock, helper threads.
    pub(crate) fn os() -> Self {
        Host {
            storage: Storage::os(),
            clock: Clock::monotonic(),
            stepped: false,
        }
    }
}

/// Recovers `core` (built over the journal of `section`) to the state the journal
/// holds, with commitments and snapshots attached as the config asks. Returns it with
/// the report streams the replay rebuilt (what the sessions replay to clients that
/// reconnect).
pub(crate) fn recover(
    host: &Host,
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
            SnapshotStore::open_in(&host.storage, &dir, snapshot_config)
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
    core.commitments_floor();
    if let Some(store) = store {
        // The snapshot thread keeps a replica fed by the journaled records, so the
        // matching thread never encodes a snapshot (crate::durability::snapshots).
        let venue = venue.clone();
        let clock = host.clock.clone();
        // The replica regenerates the report streams too, so its snapshots save them.
        let make: ReplicaFactory = Box::new(move || {
            let capacity = venue.arena_capacity;
            let mut core = venue.core(NoLog, clock.clone(), capacity).ok()?;
            core.collect_reports(ReportStore::new(retention), 1);
            Some(core)
        });
        let snapshots = if host.stepped {
            Snapshotter::stepped_replica(store, section.snapshot_every, make)
        } else {
            Snapshotter::spawn_replica(store, section.snapshot_every, make)
                .doing(|| "spawning the snapshot thread".into())?
        };
        // Seeded with the state and the report streams' retained reports.
        core = core.with_snapshots(Box::new(snapshots));
    }
    // The initial balances of a venue with no history, while the streams are still
    // collected: their reports are numbered by the core, so the store must hold them
    // too (else the next report of a funded account jumps the store's count and its
    // session is cut off as behind the retention).
    fund(&mut core, venue.balances.as_ref())?;
    let reports = core.take_reports();
    Ok((core, reports))
}

/// Opens the journal of `section`, logging what recovery found; lost committed
/// records refuse to start unless `accept_loss`.
pub(crate) fn open(
    host: &Host,
    section: &JournalSection,
    accept_loss: bool,
) -> Result<JournalLog, ExchangeError> {
    let policy = if accept_loss {
        LossPolicy::Accept
    } else {
        LossPolicy::Refuse
    };
    let (journal, _report) = open_journal_in(&host.storage, section, policy).map_err(|source| {
        ExchangeError::OpenJournal {
            dir: section.dir.clone(),
            source,
        }
    })?;
    if section.fsync == peregrine_journal::FsyncPolicy::None {
        log::warn!(
            "journal {}: fsync = \"none\": nothing is synced, so a power loss or a crash \
             of the machine can lose acknowledged orders, and the high-water mark is \
             written only about once a millisecond (housekeeping): damage to the newest \
             records may be taken for a torn tail and truncated (docs/journal.md, \
             \"The guarded end\"). A killed process loses nothing.",
            section.dir.display()
        );
    }
    Ok(JournalLog::new(journal))
}

/// Applies `[[balances.initial]]` when the venue starts with no history.
pub(crate) fn fund<L: CommandLog>(
    core: &mut Core<L>,
    setup: Option<&BalanceSetup>,
) -> Result<(), ExchangeError> {
    let Some(s) = setup else {
        return Ok(());
    };
    let n = core
        .fund_initial(&s.initial)
        .doing(|| "journaling the initial balances".into())?;
    log::info!(
        "balances on: {} instrument(s) with assets, {} admin account(s), {n} initial deposit(s) applied",
        s.instruments.len(),
        s.policy.admins.len()
    );
    Ok(())
}
