//! The committed high-water mark: a small file beside the segments that records the
//! sequence number of the last acknowledged commit.
//!
//! A segment cannot vouch for records that are no longer in it: a truncated, deleted
//! or damaged last segment looks exactly like a torn, never-acknowledged tail. The
//! mark lives outside the segments (`journal.hwm`), is rewritten in place by every
//! [`Journal::commit`](crate::Journal::commit) after the records it covers are written
//! (and synced, under `Batch` and `EveryCommand`), so start-up can compare what the
//! segments hold with what was acknowledged.
//!
//! ```text
//! offset size field
//!      0    8 magic           "PGJNLHWM"
//!      8    8 committed_seq   last sequence number covered by an acknowledged commit
//!                             (0: nothing committed yet)
//!     16    8 segment_first   first sequence number of the segment holding it
//!     24    4 crc             CRC-32C of bytes 0 .. 24
//!     28    4 reserved        zero
//! ```
//!
//! The 32 bytes are one `pwrite` at offset 0: inside one disk sector, so a power loss
//! leaves the old or the new mark, and the CRC catches anything else.

use std::path::{Path, PathBuf};

use crate::error::JournalError;
use crate::storage::{FileHandle, Open, Storage};

/// File name of the mark inside the journal directory.
pub const FILE_NAME: &str = "journal.hwm";
/// Size of the mark in bytes.
pub const LEN: usize = 32;
const MAGIC: &[u8; 8] = b"PGJNLHWM";

/// What a mark says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mark {
    /// Last sequence number covered by an acknowledged commit (0: none).
    pub committed_seq: u64,
    /// First sequence number of the segment that held `committed_seq` when it was
    /// written (0 when nothing was committed).
    pub segment_first: u64,
}

pub use crate::error::MarkDefect;

/// Encodes a mark.
pub fn encode(mark: Mark) -> [u8; LEN] {
    let mut b = [0u8; LEN];
    b[..8].copy_from_slice(MAGIC);
    b[8..16].copy_from_slice(&mark.committed_seq.to_le_bytes());
    b[16..24].copy_from_slice(&mark.segment_first.to_le_bytes());
    let crc = crc32c::crc32c(&b[..24]);
    b[24..28].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Decodes and verifies a mark.
pub fn decode(bytes: &[u8]) -> Result<Mark, MarkDefect> {
    let b: &[u8; LEN] = bytes
        .try_into()
        .map_err(|_| MarkDefect::Length(bytes.len() as u64))?;
    if &b[..8] != MAGIC {
        return Err(MarkDefect::Magic);
    }
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let crc = u32::from_le_bytes([b[24], b[25], b[26], b[27]]);
    if crc != crc32c::crc32c(&b[..24]) {
        return Err(MarkDefect::Crc);
    }
    if b[28..] != [0, 0, 0, 0] {
        return Err(MarkDefect::Reserved);
    }
    Ok(Mark {
        committed_seq: word(8),
        segment_first: word(16),
    })
}

/// Path of the mark in `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// Reads the mark of `dir`: `Ok(None)` if there is no mark file.
pub fn read(dir: &Path) -> Result<Option<Mark>, JournalError> {
    read_in(&Storage::os(), dir)
}

/// [`read`] on `storage`.
pub fn read_in(storage: &Storage, dir: &Path) -> Result<Option<Mark>, JournalError> {
    let path = path(dir);
    let file = match storage.open(&path, Open::Read) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(JournalError::io("open high-water mark", &path, e)),
    };
    let len = file
        .len()
        .map_err(|e| JournalError::io("read high-water mark", &path, e))?;
    if len != LEN as u64 {
        // Not read: a huge file is not slurped.
        return Err(JournalError::BadHighWaterMark {
            path,
            defect: MarkDefect::Length(len),
        });
    }
    let mut bytes = Vec::with_capacity(LEN);
    file.read_to_end(&mut bytes)
        .map_err(|e| JournalError::io("read high-water mark", &path, e))?;
    decode(&bytes)
        .map(Some)
        .map_err(|defect| JournalError::BadHighWaterMark { path, defect })
}

/// The open mark file of a live journal.
#[derive(Debug)]
pub(crate) struct MarkFile {
    file: FileHandle,
    path: PathBuf,
    last: Mark,
}

impl MarkFile {
    /// Opens (creating if needed) the mark of `dir` and writes `mark` into it, synced,
    /// with the directory entry made durable.
    pub(crate) fn create(storage: &Storage, dir: &Path, mark: Mark) -> Result<Self, JournalError> {
        let path = path(dir);
        let existed = storage.exists(&path);
        let file = storage
            .open(&path, Open::ReadWriteCreate)
            .map_err(|e| JournalError::io("open high-water mark", &path, e))?;
        // A longer file (damage the operator accepted) would otherwise keep its tail.
        file.set_len(LEN as u64)
            .map_err(|e| JournalError::io("write high-water mark", &path, e))?;
        let mut m = MarkFile {
            file,
            path,
            last: Mark::default(),
        };
        m.write(mark)?;
        m.sync()?;
        if !existed {
            crate::segment::sync_dir_in(storage, dir)?;
        }
        Ok(m)
    }

    /// Opens the existing, verified mark of `dir` for later commits, without
    /// rewriting it (a tool opening a live journal must not move it backwards).
    pub(crate) fn open(storage: &Storage, dir: &Path, mark: Mark) -> Result<Self, JournalError> {
        let path = path(dir);
        let file = storage
            .open(&path, Open::ReadWrite)
            .map_err(|e| JournalError::io("open high-water mark", &path, e))?;
        Ok(MarkFile {
            file,
            path,
            last: mark,
        })
    }

    /// The last mark written.
    pub(crate) fn last(&self) -> Mark {
        self.last
    }

    /// Overwrites the mark (one `pwrite`, no sync).
    pub(crate) fn write(&mut self, mark: Mark) -> Result<(), JournalError> {
        self.file
            .write_all_at(&encode(mark), 0)
            .map_err(|e| JournalError::io("write high-water mark", &self.path, e))?;
        self.last = mark;
        Ok(())
    }

    /// `fdatasync`s the mark.
    pub(crate) fn sync(&self) -> Result<(), JournalError> {
        self.file
            .sync_data()
            .map_err(|e| JournalError::io("fdatasync high-water mark", &self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_pinned_and_round_trips() {
        let m = Mark {
            committed_seq: 0x0102_0304_0506_0708,
            segment_first: 42,
        };
        let b = encode(m);
        assert_eq!(&b[..8], b"PGJNLHWM");
        assert_eq!(&b[8..16], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(&b[16..24], &42u64.to_le_bytes());
        assert_eq!(&b[24..28], &crc32c::crc32c(&b[..24]).to_le_bytes());
        assert_eq!(&b[28..], &[0, 0, 0, 0]);
        assert_eq!(decode(&b), Ok(m));
    }

    #[test]
    fn every_bit_flip_and_bad_length_is_detected() {
        let b = encode(Mark {
            committed_seq: 9,
            segment_first: 1,
        });
        for byte in 0..LEN {
            for bit in 0..8 {
                let mut c = b;
                c[byte] ^= 1 << bit;
                assert!(decode(&c).is_err(), "flip {byte}:{bit}");
            }
        }
        assert_eq!(decode(&b[..31]), Err(MarkDefect::Length(31)));
        assert_eq!(decode(&[]), Err(MarkDefect::Length(0)));
    }

    #[test]
    fn file_round_trip_and_absent_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
        let m = Mark {
            committed_seq: 5,
            segment_first: 1,
        };
        let mut f = MarkFile::create(&Storage::os(), dir.path(), Mark::default()).unwrap();
        f.write(m).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(m));
        std::fs::write(path(dir.path()), b"garbage").unwrap();
        assert!(matches!(
            read(dir.path()),
            Err(JournalError::BadHighWaterMark {
                defect: MarkDefect::Length(7),
                ..
            })
        ));
    }
}
