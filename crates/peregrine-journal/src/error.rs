//! Typed journal errors. Every corruption error names the segment and offset.

use std::path::PathBuf;

use crate::record::RecordDefect;

/// Errors from the journal writer, recovery and replay.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
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
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }
}
