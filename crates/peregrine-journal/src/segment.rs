//! Segment files: naming, the 16-byte segment header, directory listing.
//!
//! A segment is `journal-<first_seq:020>.log`: a 16-byte header (`PGJOURNL`
//! magic, u32 LE version, u32 reserved zero) followed by packed records.

use std::path::{Path, PathBuf};

use crate::error::JournalError;
use crate::storage::Storage;

/// Size of the segment header in bytes.
pub const SEGMENT_HEADER_LEN: usize = 16;
/// Segment format version written by this crate.
/// Version 2: record CRCs are CRC-32C (version 1 used IEEE CRC-32 and is refused).
pub const SEGMENT_VERSION: u32 = 2;
const MAGIC: &[u8; 8] = b"PGJOURNL";
const PREFIX: &str = "journal-";
const SUFFIX: &str = ".log";

/// One segment file found in the journal directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentFile {
    /// Sequence number of its first record, from the file name.
    pub first_seq: u64,
    /// Full path.
    pub path: PathBuf,
}

/// The header every segment starts with.
pub fn header_bytes() -> [u8; SEGMENT_HEADER_LEN] {
    let mut h = [0u8; SEGMENT_HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&SEGMENT_VERSION.to_le_bytes());
    h
}

/// How the first bytes of a segment look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderState {
    /// Magic and version match.
    Valid,
    /// Shorter than a header, or all zeros: a creation torn by a crash.
    Torn,
    /// Non-zero bytes that are not our header.
    Bad,
}

/// Classifies the start of a segment file.
pub fn check_header(bytes: &[u8]) -> HeaderState {
    let head = &bytes[..bytes.len().min(SEGMENT_HEADER_LEN)];
    if head.len() == SEGMENT_HEADER_LEN && head == header_bytes() {
        HeaderState::Valid
    } else if is_torn(head) {
        HeaderState::Torn
    } else {
        HeaderState::Bad
    }
}

/// A header prefix cut short by a crash, or never written (zeros).
fn is_torn(head: &[u8]) -> bool {
    let prefix = head.len() < SEGMENT_HEADER_LEN && header_bytes().starts_with(head);
    prefix || head.iter().all(|&b| b == 0)
}

/// File name of the segment whose first record is `first_seq`.
pub fn file_name(first_seq: u64) -> String {
    format!("{PREFIX}{first_seq:020}{SUFFIX}")
}

fn parse_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Lists the segments of `dir`, sorted by first sequence number.
/// Files that do not match the naming scheme are ignored.
pub fn list(dir: &Path) -> Result<Vec<SegmentFile>, JournalError> {
    list_in(&Storage::os(), dir)
}

/// [`list`] on `storage`.
pub fn list_in(storage: &Storage, dir: &Path) -> Result<Vec<SegmentFile>, JournalError> {
    let names = storage
        .list(dir)
        .map_err(|e| JournalError::io("read_dir", dir, e))?;
    let mut out: Vec<SegmentFile> = names
        .iter()
        .filter_map(|name| {
            parse_name(name).map(|first_seq| SegmentFile {
                first_seq,
                path: dir.join(name),
            })
        })
        .collect();
    out.sort_by_key(|s| s.first_seq);
    Ok(out)
}

/// Fsyncs a directory so that created, renamed or deleted entries are durable.
pub fn sync_dir(dir: &Path) -> Result<(), JournalError> {
    sync_dir_in(&Storage::os(), dir)
}

/// [`sync_dir`] on `storage`.
pub fn sync_dir_in(storage: &Storage, dir: &Path) -> Result<(), JournalError> {
    storage
        .sync_dir(dir)
        .map_err(|e| JournalError::io("fsync dir", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sort_numerically() {
        assert_eq!(file_name(42), "journal-00000000000000000042.log");
        assert_eq!(parse_name(&file_name(u64::MAX)), Some(u64::MAX));
        assert_eq!(parse_name("journal-42.log"), None);
        assert_eq!(parse_name("journal-0000000000000000004x.log"), None);
        assert_eq!(parse_name("snapshot-00000000000000000042.snap"), None);
    }

    #[test]
    fn header_states() {
        let h = header_bytes();
        assert_eq!(check_header(&h), HeaderState::Valid);
        assert_eq!(check_header(&h[..5]), HeaderState::Torn);
        assert_eq!(check_header(&[]), HeaderState::Torn);
        assert_eq!(check_header(&[0u8; 16]), HeaderState::Torn);
        assert_eq!(check_header(b"NOTAJOURNALFILE!"), HeaderState::Bad);
        let mut v1 = h;
        v1[8] = 1;
        assert_eq!(
            check_header(&v1),
            HeaderState::Bad,
            "IEEE-CRC segments refused"
        );
        let mut v3 = h;
        v3[8] = 3;
        assert_eq!(check_header(&v3), HeaderState::Bad);
    }

    #[test]
    fn list_sorts_and_ignores_strangers() {
        let dir = tempfile::tempdir().unwrap();
        for seq in [100u64, 2, 30] {
            std::fs::write(dir.path().join(file_name(seq)), b"").unwrap();
        }
        std::fs::write(dir.path().join("notes.txt"), b"").unwrap();
        let firsts: Vec<u64> = list(dir.path())
            .unwrap()
            .iter()
            .map(|s| s.first_seq)
            .collect();
        assert_eq!(firsts, vec![2, 30, 100]);
    }
}
