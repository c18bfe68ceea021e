//! Typed journal errors. Every corruption error names the segment and offset.

use std::path::PathBuf;

use crate::record::RecordDefect;

/// What made the tail invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailDefect {
    /// The segment header itself was torn (file shorter than 16 bytes or zeros).
    SegmentHeader,
    /// A record failed verification.
    Record(RecordDefect),
}

/// Why the mark file could not be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkDefect {
    /// The file is not 32 bytes long.
    Length(u64),
    /// Wrong magic bytes.
    Magic,
    /// The CRC does not match.
    Crc,
    /// Non-zero reserved bytes.
    Reserved,
}

impl std::fmt::Display for MarkDefect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Length(n) => write!(f, "{n} bytes instead of 32"),
            Self::Magic => f.write_str("bad magic"),
            Self::Crc => f.write_str("CRC mismatch"),
            Self::Reserved => f.write_str("non-zero reserved bytes"),
        }
    }
}

/// Where committed records should have been, and what was there instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// Invalid bytes where the records should continue (a flipped byte, a cut
    /// record, zeros).
    Tail {
        /// The last segment.
        segment: PathBuf,
        /// Offset of the first invalid byte.
        offset: u64,
        /// What is wrong there.
        defect: TailDefect,
    },
    /// The segment that held the last committed record is gone.
    SegmentMissing {
        /// Its first sequence number.
        first_seq: u64,
        /// The file it was (`journal-<first_seq:020>.log` in the journal directory).
        path: PathBuf,
    },
    /// The last segment ends cleanly, at a record boundary, before the committed
    /// records (cut exactly between records).
    EndsEarly {
        /// The last segment, if any is left.
        segment: Option<PathBuf>,
    },
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Tail {
                segment,
                offset,
                defect,
            } => write!(
                f,
                "{} is damaged at offset {offset}: {defect:?}",
                segment.display()
            ),
            Self::SegmentMissing { path, .. } => {
                write!(f, "segment {} is missing", path.display())
            }
            Self::EndsEarly { segment: Some(s) } => {
                write!(f, "{} ends early, at a record boundary", s.display())
            }
            Self::EndsEarly { segment: None } => f.write_str("no segment is left"),
        }
    }
}

/// Errors from the journal writer, recovery and replay.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Another process (or another journal of this one) has the directory open: two
    /// writers on one journal would each believe its records were the journal.
    #[error("journal {}: {source}", .dir.display())]
    Locked {
        /// The journal directory.
        dir: PathBuf,
        /// Who holds it.
        source: crate::storage::LockError,
    },
    /// An operating-system call failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The operating system refused access: the process lacks permission on the
    /// journal directory or one of its files (check their owner and mode).
    #[error("permission denied: {op} {path}: {source}")]
    PermissionDenied {
        /// What was being done.
        op: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error (kind `PermissionDenied`).
        source: std::io::Error,
    },
    /// The segments end before the last acknowledged commit: records that were
    /// committed (and may have been acknowledged to clients) are gone — the last
    /// segment was truncated, damaged or deleted. Start-up refuses unless the
    /// operator accepts the loss ([`crate::LossPolicy::Accept`]); the files are left
    /// untouched.
    #[error("{missing} committed record(s) missing: the high-water mark says seq {committed_seq} \
        was committed, the segments end at {}{}; refusing to open (accept the loss explicitly \
        to truncate and continue)",
        .found_last.map_or("no record".to_string(), |s| format!("seq {s}")),
        format!(" ({})", .damage))]
    CommittedRecordsLost {
        /// Number of committed records the segments no longer hold.
        missing: u64,
        /// The last committed sequence number, from the high-water mark.
        committed_seq: u64,
        /// The last valid sequence number in the segments.
        found_last: Option<u64>,
        /// What the scan found where the records should be.
        damage: Damage,
    },
    /// The segments hold records but there is no high-water mark to check them
    /// against (it was deleted, or the journal predates it).
    #[error(
        "{records} record(s) in {} but no high-water mark {}; refusing to open \
        (accept the risk explicitly to rebuild it from the segments)",
        .dir.display(), .mark.display()
    )]
    MissingHighWaterMark {
        /// The journal directory.
        dir: PathBuf,
        /// Where the mark should be.
        mark: PathBuf,
        /// Records found in the segments.
        records: u64,
    },
    /// The high-water mark file is damaged.
    #[error("high-water mark {path}: {defect}")]
    BadHighWaterMark {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        defect: MarkDefect,
    },
    /// The configuration did not validate.
    #[error("invalid journal config: {}", .0.join("; "))]
    Config(Vec<String>),
    /// A segment does not start with the expected magic and version.
    #[error("segment {segment}: bad header (magic/version)")]
    BadSegmentHeader {
        /// The segment file.
        segment: PathBuf,
    },
    /// A record that is not the tail of the journal failed verification.
    #[error("segment {segment} offset {offset}: corrupt record ({defect}){}",
        .next_valid_at.map(|o| format!(", valid record follows at offset {o}")).unwrap_or_default())]
    CorruptRecord {
        /// The segment file.
        segment: PathBuf,
        /// Byte offset of the bad record inside the segment.
        offset: u64,
        /// What is wrong with it.
        defect: RecordDefect,
        /// Offset of a valid record found after it: in the last segment, the
        /// COMMIT record that made it "middle"; elsewhere any valid record.
        next_valid_at: Option<u64>,
    },
    /// A valid record does not carry the expected sequence number.
    #[error("segment {segment} offset {offset}: sequence gap, expected {expected}, found {found}")]
    SeqGap {
        /// The segment file.
        segment: PathBuf,
        /// Byte offset of the record.
        offset: u64,
        /// The sequence number continuity requires.
        expected: u64,
        /// The sequence number on disk.
        found: u64,
    },
    /// A segment other than the last one holds no record.
    #[error("segment {segment}: empty segment before the last one")]
    EmptySegment {
        /// The segment file.
        segment: PathBuf,
    },
    /// `append` got a payload above `MAX_PAYLOAD`.
    #[error("payload of {len} bytes exceeds the {max} byte cap")]
    PayloadTooLarge {
        /// Payload length given.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// `append` got a sequence number other than last + 1, or zero.
    #[error("append out of sequence: expected {expected}, got {got}")]
    OutOfSequence {
        /// The sequence number continuity requires (0: any non-zero).
        expected: u64,
        /// The sequence number given.
        got: u64,
    },
    /// A previous write or sync failed; the journal refuses further appends.
    #[error("journal poisoned by an earlier I/O failure; reopen to recover")]
    Poisoned,
    /// `replay_from` asked for a sequence number the journal does not hold.
    #[error("sequence {requested} not in journal (holds {first}..={last})")]
    SeqNotAvailable {
        /// The sequence number asked for.
        requested: u64,
        /// First sequence number held (0: empty).
        first: u64,
        /// Last sequence number held (0: empty).
        last: u64,
    },
}

impl JournalError {
    /// Wraps an OS error, typed as [`JournalError::PermissionDenied`] when that is
    /// what it is.
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        let path = path.into();
        if source.kind() == std::io::ErrorKind::PermissionDenied {
            Self::PermissionDenied { op, path, source }
        } else {
            Self::Io { op, path, source }
        }
    }

    /// True if this error reports lost or unverifiable committed records, the errors a
    /// [`crate::LossPolicy::Accept`] open gets past.
    pub fn is_loss(&self) -> bool {
        matches!(
            self,
            Self::CommittedRecordsLost { .. }
                | Self::MissingHighWaterMark { .. }
                | Self::BadHighWaterMark { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_errors_are_typed() {
        let e = JournalError::io(
            "open segment",
            "/x",
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        );
        assert!(matches!(e, JournalError::PermissionDenied { .. }));
        assert!(e
            .to_string()
            .starts_with("permission denied: open segment /x"));
        let e = JournalError::io("open segment", "/x", std::io::Error::other("boom"));
        assert!(matches!(e, JournalError::Io { .. }));
    }
}
