//! Recovery on start: open the journal (truncating a torn tail), decode every record
//! and re-apply it, so the book, the engine sequence number and the next order id are
//! what they were before the stop or crash.

use std::time::Instant;

use peregrine_book::{Command, StateHash};
use peregrine_journal::{Journal, JournalError, RecoveryReport, Replay};
use peregrine_types::Timestamp;

use crate::command_codec::{self, CodecError};
use crate::core::Core;
use crate::journal_log::{JournalLog, JournalSection, KIND_COMMAND};

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
    /// The journal does not start at sequence 1 and there is no snapshot to start from.
    #[error("journal starts at sequence {0}, not 1, and snapshots are not supported yet")]
    MissingPrefix(u64),
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

/// Decodes every record of `journal`, from the first, and hands each command to
/// `apply` in sequence order.
pub fn replay_commands(
    journal: &mut Journal,
    apply: impl FnMut(u64, &Command),
) -> Result<Replayed, ReplayError> {
    match start(journal)? {
        Some(replay) => drive(replay, apply),
        None => Ok(Replayed::default()),
    }
}

/// A reader from sequence 1; `None` for an empty journal. The reader owns its state,
/// so the journal (and whatever holds it) is free again once this returns.
fn start(journal: &mut Journal) -> Result<Option<Replay>, ReplayError> {
    let Some(first) = journal.first_seq() else {
        return Ok(None);
    };
    if first != 1 {
        return Err(ReplayError::MissingPrefix(first));
    }
    Ok(Some(journal.replay_from(first)?))
}

fn drive(
    mut replay: Replay,
    mut apply: impl FnMut(u64, &Command),
) -> Result<Replayed, ReplayError> {
    let t0 = Instant::now();
    let mut done = Replayed::default();
    while let Some(rec) = replay.next()? {
        if rec.kind != KIND_COMMAND {
            return Err(ReplayError::BadKind {
                seq: rec.seq,
                kind: rec.kind,
            });
        }
        let cmd = command_codec::decode(rec.payload).map_err(|source| ReplayError::Codec {
            seq: rec.seq,
            source,
        })?;
        apply(rec.seq, &cmd);
        done.records += 1;
        done.last_seq = rec.seq;
        done.last_ts = cmd.ts;
    }
    done.elapsed_ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX);
    Ok(done)
}

/// Opens the journal of `section` and logs what recovery found: a truncated torn
/// tail is reported and start-up continues; anything else is an error.
pub fn open_journal(section: &JournalSection) -> Result<(Journal, RecoveryReport), ReplayError> {
    let (journal, report) = Journal::open(&section.dir, section.journal_config())?;
    crate::log!(
        "journal {}: {} segment(s), {} record(s), seq {:?}..={:?}, fsync {:?}",
        section.dir.display(),
        report.segments,
        report.records,
        report.first_seq,
        report.last_seq,
        section.fsync
    );
    if let Some(t) = &report.truncated {
        crate::log!(
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

/// Replays the core's journal into it and logs the count, rate and state hash.
pub fn restore(core: &mut Core<JournalLog>) -> Result<(Replayed, StateHash), ReplayError> {
    let done = match start(core.log_mut().journal_mut())? {
        Some(replay) => drive(replay, |seq, cmd| core.replay(seq, cmd))?,
        None => Replayed::default(),
    };
    let hash = core.engine().state_hash();
    crate::log!(
        "journal: replayed {} record(s) to seq {} in {:.3} ms ({:.0} records/s); state hash {}",
        done.records,
        done.last_seq,
        done.elapsed_ns as f64 / 1e6,
        done.rate(),
        hash
    );
    Ok((done, hash))
}
