//! Recovery on start: open the journal (truncating a torn tail), decode every record
//! and re-apply it, so the book, the engine sequence number and the next order id are
//! what they were before the stop or crash.

use std::time::Instant;

use crate::reports::{ReportStore, Retention};
use peregrine_book::{Command, StateHash};
use peregrine_journal::{
    Journal, JournalError, LossPolicy, RecoveryReport, Replay, SnapshotStore, Storage,
};
use peregrine_types::Timestamp;

use crate::codec::command::{self as command_codec, CodecError, Record};
use crate::codec::snapshot as snapshot_codec;
use crate::core::Core;
use crate::journal::{JournalLog, JournalSection, KIND_COMMAND};

/// Why the journal could not be replayed. Start-up stops on any of these.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// Opening, verifying or reading the journal failed (a corrupt record in the
    /// middle, a sequence gap, an I/O error...).
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// A verified record is not a command this exchange writes.
    #[error("journal record {seq}: unknown record kind {kind}")]
    BadKind {
        /// Its sequence number.
        seq: u64,
        /// Its kind byte.
        kind: u8,
    },
    /// A verified record's payload does not decode.
    #[error("journal record {seq}: {source}")]
    Codec {
        /// Its sequence number.
        seq: u64,
        /// The decode error.
        source: CodecError,
    },
    /// The journal does not hold the record after the starting point (sequence 1, or
    /// the loaded snapshot's last sequence + 1).
    #[error("journal starts at sequence {first}, but replay must start at {from}")]
    MissingPrefix {
        /// The journal's first sequence number.
        first: u64,
        /// Where the replay must start.
        from: u64,
    },
    /// The newest valid snapshot covers commands the journal does not hold.
    #[error("snapshot through seq {snapshot} is ahead of the journal's last seq {journal}")]
    SnapshotAhead {
        /// The snapshot's last sequence number.
        snapshot: u64,
        /// The journal's last sequence number.
        journal: u64,
    },
    /// The snapshot store failed.
    #[error(transparent)]
    Snapshot(#[from] peregrine_journal::SnapshotError),
    /// A verified snapshot does not decode.
    #[error("snapshot {path}: {source}")]
    SnapshotDecode {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: snapshot_codec::SnapshotDecodeError,
    },
    /// A decoded snapshot does not fit the configured engine.
    #[error("snapshot {path}: {reason}")]
    SnapshotRestore {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        reason: String,
    },
}

/// What a replay did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Replayed {
    /// Records applied.
    pub records: u64,
    /// Sequence number of the last one (0 if none).
    pub last_seq: u64,
    /// Command time of the last one.
    pub last_ts: Timestamp,
    /// Wall time the replay took, nanoseconds (decode + execute + read).
    pub elapsed_ns: u64,
}

impl Replayed {
    /// Records per second, for the log (0 when nothing was replayed).
    pub fn rate(&self) -> f64 {
        if self.elapsed_ns == 0 {
            0.0
        } else {
            self.records as f64 * 1e9 / self.elapsed_ns as f64
        }
    }
}

/// Decodes every record of `journal`, from the first, and hands each book command to
/// `apply` in sequence order. Admin records (deposits, withdrawals) are skipped: the
/// books never depend on them; use [`replay_records`] to see them too.
pub fn replay_commands(
    journal: &mut Journal,
    mut apply: impl FnMut(u64, &Command),
) -> Result<Replayed, ReplayError> {
    replay_records(journal, |seq, rec| {
        if let Record::Command(cmd) = rec {
            apply(seq, cmd);
        }
    })
}

/// Decodes every record of `journal`, from the first, and hands each (book or admin)
/// record to `apply` in sequence order.
pub fn replay_records(
    journal: &mut Journal,
    apply: impl FnMut(u64, &Record),
) -> Result<Replayed, ReplayError> {
    match start(journal, 1)? {
        Some(replay) => drive(replay, apply),
        None => Ok(Replayed::default()),
    }
}

/// A reader from sequence `from`; `None` when there is nothing to replay. The reader
/// owns its state, so the journal (and whatever holds it) is free again once this
/// returns.
fn start(journal: &mut Journal, from: u64) -> Result<Option<Replay>, ReplayError> {
    let (Some(first), Some(last)) = (journal.first_seq(), journal.last_seq()) else {
        return Ok(None);
    };
    if from > 1 && last < from - 1 {
        return Err(ReplayError::SnapshotAhead {
            snapshot: from - 1,
            journal: last,
        });
    }
    if first > from {
        return Err(ReplayError::MissingPrefix { first, from });
    }
    if from > last {
        return Ok(None);
    }
    Ok(Some(journal.replay_from(from)?))
}

fn drive(mut replay: Replay, mut apply: impl FnMut(u64, &Record)) -> Result<Replayed, ReplayError> {
    let t0 = Instant::now();
    let mut done = Replayed::default();
    while let Some(rec) = replay.next()? {
        if rec.kind != KIND_COMMAND {
            return Err(ReplayError::BadKind {
                seq: rec.seq,
                kind: rec.kind,
            });
        }
        let record =
            command_codec::decode_record(rec.payload).map_err(|source| ReplayError::Codec {
                seq: rec.seq,
                source,
            })?;
        apply(rec.seq, &record);
        done.records += 1;
        done.last_seq = rec.seq;
        done.last_ts = record.ts();
    }
    done.elapsed_ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
    Ok(done)
}

/// Opens the journal of `section` and logs what recovery found: a truncated torn
/// tail is reported and start-up continues; lost committed records refuse to start
/// ([`peregrine_journal::JournalError::CommittedRecordsLost`], with the count) unless
/// `policy` accepts the loss, which is then logged as an error.
pub fn open_journal(
    section: &JournalSection,
    policy: LossPolicy,
) -> Result<(Journal, RecoveryReport), ReplayError> {
    open_journal_in(&Storage::os(), section, policy)
}

/// [`open_journal`] on `storage`.
pub fn open_journal_in(
    storage: &Storage,
    section: &JournalSection,
    policy: LossPolicy,
) -> Result<(Journal, RecoveryReport), ReplayError> {
    let (journal, report) =
        Journal::open_in(storage, &section.dir, section.journal_config(), policy)?;
    if let Some(loss) = &report.accepted_loss {
        log::error!(
            "journal {}: loss ACCEPTED by the operator (--accept-loss): {loss:?}",
            section.dir.display()
        );
    }
    log::info!(
        "journal {}: {} segment(s), {} record(s), seq {:?}..={:?}, fsync {:?}",
        section.dir.display(),
        report.segments,
        report.records,
        report.first_seq,
        report.last_seq,
        section.fsync
    );
    if let Some(t) = &report.truncated {
        log::info!(
            "journal: torn tail truncated: {} at offset {}, {} byte(s) dropped ({:?}), last good seq {:?}",
            t.segment.display(),
            t.offset,
            t.bytes_dropped,
            t.defect,
            t.last_good_seq
        );
    }
    Ok((journal, report))
}

/// Loads the newest valid snapshot of `snapshots` (if any) into the core, then
/// replays the journal after it, and logs the count, rate and state hash. With
/// `retention`, the replayed reports are kept ([`Core::collect_reports`]) so the
/// sessions can replay them to clients: retention after a restart covers the journal
/// replayed since the snapshot, within `retention`'s bound.
pub fn restore(
    core: &mut Core<JournalLog>,
    snapshots: Option<&SnapshotStore>,
    retention: Option<Retention>,
) -> Result<(Replayed, StateHash), ReplayError> {
    let from = match snapshots {
        Some(store) => load_snapshot(core, store)? + 1,
        None => 1,
    };
    if let Some(r) = retention {
        core.collect_reports(ReportStore::new(r), from);
    }
    let mut orphans = 0u64;
    let done = match start(core.log_mut().journal_mut(), from)? {
        Some(replay) => drive(replay, |seq, rec| {
            if matches!(rec, Record::Admin(_)) && core.ledger().is_none() {
                orphans += 1;
            }
            core.replay_record(seq, rec)
        })?,
        None => Replayed::default(),
    };
    if orphans > 0 {
        log::info!(
            "journal: warning: {orphans} deposit/withdrawal record(s) replayed with balances \
             off (was the journal written with [balances] enabled = true?)"
        );
    }
    let hash = core.state_hash();
    log::info!(
        "journal: replayed {} record(s) to seq {} in {:.3} ms ({:.0} records/s); state hash {}",
        done.records,
        core.engine_seq(),
        done.elapsed_ns as f64 / 1e6,
        done.rate(),
        hash
    );
    Ok((done, hash))
}

/// Restores the newest valid snapshot; returns its last sequence number (0: none).
fn load_snapshot(core: &mut Core<JournalLog>, store: &SnapshotStore) -> Result<u64, ReplayError> {
    let latest = store.latest_valid()?;
    for s in &latest.skipped {
        log::info!("snapshot {} skipped: {:?}", s.path.display(), s.defect);
    }
    let Some(snap) = latest.snapshot else {
        log::info!(
            "snapshots {}: none valid, replaying from seq 1",
            store.dir().display()
        );
        return Ok(0);
    };
    let t0 = Instant::now();
    let decoded =
        snapshot_codec::decode(&snap.data).map_err(|source| ReplayError::SnapshotDecode {
            path: snap.path.clone(),
            source,
        })?;
    core.restore_snapshot(&decoded)
        .map_err(|reason| ReplayError::SnapshotRestore {
            path: snap.path.clone(),
            reason,
        })?;
    log::info!(
        "snapshot {} loaded: seq {}, {} resting order(s), {:.3} ms",
        snap.path.display(),
        snap.last_seq,
        decoded.books.iter().map(|b| b.orders.len()).sum::<usize>(),
        t0.elapsed().as_secs_f64() * 1e3
    );
    Ok(snap.last_seq)
}
