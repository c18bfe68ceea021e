//! Deleting journal segments that a retained snapshot fully covers.

use std::path::{Path, PathBuf};

use crate::error::JournalError;
use crate::segment;
use crate::storage::Storage;

/// Deletes every segment of `journal_dir` whose records all have
/// `seq <= covered_seq`, judged from file names alone: segment *i* ends at
/// `first_seq(i + 1) - 1`. The newest segment is never deleted (the writer
/// appends to it), so this is safe to run while the journal is live.
/// Returns the deleted paths.
pub fn prune_segments(journal_dir: &Path, covered_seq: u64) -> Result<Vec<PathBuf>, JournalError> {
    prune_segments_in(&Storage::os(), journal_dir, covered_seq)
}

/// [`prune_segments`] on `storage`.
pub fn prune_segments_in(
    storage: &Storage,
    journal_dir: &Path,
    covered_seq: u64,
) -> Result<Vec<PathBuf>, JournalError> {
    let segments = segment::list_in(storage, journal_dir)?;
    let mut deleted = Vec::new();
    for pair in segments.windows(2) {
        let last_in_segment = pair[1].first_seq - 1;
        if last_in_segment > covered_seq {
            break;
        }
        let path = &pair[0].path;
        storage
            .remove_file(path)
            .map_err(|e| JournalError::io("delete segment", path, e))?;
        deleted.push(path.clone());
    }
    if !deleted.is_empty() {
        segment::sync_dir_in(storage, journal_dir)?;
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletes_only_fully_covered_and_never_the_last() {
        let dir = tempfile::tempdir().unwrap();
        for first in [1u64, 11, 21, 31] {
            std::fs::write(dir.path().join(segment::file_name(first)), b"").unwrap();
        }
        let deleted = prune_segments(dir.path(), 25).unwrap();
        assert_eq!(deleted.len(), 2); // 1..=10 and 11..=20; 21..=30 is partial
        let deleted = prune_segments(dir.path(), 1_000).unwrap();
        assert_eq!(deleted.len(), 1); // 21..=30; 31.. is the live one
        assert_eq!(segment::list(dir.path()).unwrap().len(), 1);
    }
}
