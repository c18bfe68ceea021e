//! Why creating or attaching a ring failed.

use std::path::PathBuf;

/// Why creating or attaching a ring failed.
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    /// Opening, sizing or mapping the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The ring file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is smaller than a header.
    #[error("file is {len} bytes, smaller than the {header} byte header")]
    TooSmall {
        /// File length.
        len: u64,
        /// Header size.
        header: u64,
    },
    /// The magic is wrong (or the creator has not finished).
    #[error("bad magic {found:#018x} (not a ring file, or not initialised yet)")]
    BadMagic {
        /// What the file holds.
        found: u64,
    },
    /// The layout version differs.
    #[error("layout version {found}, expected {expected}")]
    BadVersion {
        /// What the file holds.
        found: u32,
        /// What this build writes.
        expected: u32,
    },
    /// SPSC file attached as MPSC or the other way round.
    #[error("ring kind {found}, expected {expected}")]
    WrongKind {
        /// What the file holds.
        found: u32,
        /// What was asked for.
        expected: u32,
    },
    /// The message type's size or alignment differs from the file's.
    #[error("message size/align {found:?}, expected {expected:?}")]
    WrongMessage {
        /// (size, align) in the file.
        found: (u64, u64),
        /// (size, align) of `T`.
        expected: (u64, u64),
    },
    /// Capacity zero, not a power of two, below the algorithm's minimum, or too large.
    #[error("bad capacity {0}")]
    BadCapacity(u64),
    /// The file length does not match the header.
    #[error("file is {len} bytes, header implies {expected}")]
    SizeMismatch {
        /// File length.
        len: u64,
        /// Length the header implies.
        expected: u64,
    },
    /// The message type needs more than the 128-byte alignment slots get.
    #[error("message alignment {0} is above 128")]
    AlignTooLarge(u64),
    /// Another handle holds this role.
    #[error("the {0} role is already claimed")]
    AlreadyClaimed(&'static str),
}
