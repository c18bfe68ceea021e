//! The snapshot directory: atomic writes, newest-valid lookup, retention.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::format::{self, SnapshotDefect};
use crate::error::JournalError;
use crate::storage::{Open, Storage};

const PREFIX: &str = "snapshot-";
const SUFFIX: &str = ".snap";
const TMP_SUFFIX: &str = ".snap.tmp";

/// Snapshot store settings. Defaults: keep 3, no journal pruning.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SnapshotConfig {
    /// How many of the newest snapshot files to keep (at least 1).
    pub retain: usize,
    /// If set, after each write delete the segments of this journal
    /// directory that the *oldest retained* snapshot fully covers.
    pub prune_journal_dir: Option<PathBuf>,
}

impl Default for SnapshotConfig {
    fn default() -> Self {
        Self {
            retain: 3,
            prune_journal_dir: None,
        }
    }
}

/// Errors from the snapshot store.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
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
    /// `retain` was zero.
    #[error("invalid snapshot config: retain must be >= 1")]
    Config,
    /// Pruning journal segments failed.
    #[error("pruning journal: {0}")]
    Prune(#[from] JournalError),
}

fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> SnapshotError + 'a {
    move |source| SnapshotError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// A verified snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Last journal sequence number the blob includes; replay from `+ 1`.
    pub last_seq: u64,
    /// The caller's state bytes.
    pub data: Vec<u8>,
    /// Where it was read from.
    pub path: PathBuf,
}

/// A snapshot file `latest_valid` passed over. Log it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedSnapshot {
    /// The file.
    pub path: PathBuf,
    /// What was wrong.
    pub defect: SnapshotDefect,
}

/// Result of [`SnapshotStore::latest_valid`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LatestSnapshot {
    /// The newest snapshot that verified, if any.
    pub snapshot: Option<Snapshot>,
    /// Newer files that failed verification, newest first.
    pub skipped: Vec<SkippedSnapshot>,
}

/// What one [`SnapshotStore::write`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotWritten {
    /// The new snapshot file.
    pub path: PathBuf,
    /// Older snapshots removed by retention.
    pub removed_snapshots: Vec<PathBuf>,
    /// Journal segments removed by pruning.
    pub removed_segments: Vec<PathBuf>,
}

/// A directory of `snapshot-<last_seq:020>.snap` files. `Send`: move it to
/// the thread that writes snapshots.
#[derive(Debug)]
pub struct SnapshotStore {
    storage: Storage,
    dir: PathBuf,
    config: SnapshotConfig,
}

impl SnapshotStore {
    /// Opens (creating) `dir` and deletes temp files left by a crash mid-write.
    pub fn open(dir: impl AsRef<Path>, config: SnapshotConfig) -> Result<Self, SnapshotError> {
        Self::open_in(&Storage::os(), dir, config)
    }

    /// [`SnapshotStore::open`] on `storage`.
    pub fn open_in(
        storage: &Storage,
        dir: impl AsRef<Path>,
        config: SnapshotConfig,
    ) -> Result<Self, SnapshotError> {
        if config.retain == 0 {
            return Err(SnapshotError::Config);
        }
        let dir = dir.as_ref().to_path_buf();
        storage
            .create_dir_all(&dir)
            .map_err(io("create dir", &dir))?;
        let store = Self {
            storage: storage.clone(),
            dir,
            config,
        };
        for tmp in store.list(TMP_SUFFIX)? {
            storage
                .remove_file(&tmp.1)
                .map_err(io("remove temp", &tmp.1))?;
        }
        Ok(store)
    }

    /// Writes `data` as the snapshot through `last_seq`, atomically: temp
    /// file, fsync, rename, fsync directory. Then applies retention and
    /// optional journal pruning. Blocking; call it off the hot path.
    pub fn write(
        &mut self,
        last_seq: u64,
        data: Vec<u8>,
    ) -> Result<SnapshotWritten, SnapshotError> {
        let path = self.dir.join(name(last_seq, SUFFIX));
        let tmp = self.dir.join(name(last_seq, TMP_SUFFIX));
        write_synced(&self.storage, &tmp, &format::header(last_seq, &data), &data)?;
        self.storage
            .rename(&tmp, &path)
            .map_err(io("rename snapshot", &tmp))?;
        sync_dir(&self.storage, &self.dir)?;
        let removed_snapshots = self.apply_retention()?;
        let removed_segments = self.prune()?;
        Ok(SnapshotWritten {
            path,
            removed_snapshots,
            removed_segments,
        })
    }

    /// The newest snapshot whose header and CRC verify; corrupt newer files
    /// are reported in `skipped`, never deleted.
    pub fn latest_valid(&self) -> Result<LatestSnapshot, SnapshotError> {
        let mut out = LatestSnapshot::default();
        for (seq, path) in self.list(SUFFIX)?.into_iter().rev() {
            match read_verified(&self.storage, &path, seq) {
                Ok(data) => {
                    out.snapshot = Some(Snapshot {
                        last_seq: seq,
                        data,
                        path,
                    });
                    break;
                }
                Err(defect) => out.skipped.push(SkippedSnapshot { path, defect }),
            }
        }
        Ok(out)
    }

    /// Snapshot files as `(last_seq, path)`, oldest first.
    pub fn snapshots(&self) -> Result<Vec<(u64, PathBuf)>, SnapshotError> {
        self.list(SUFFIX)
    }

    /// The snapshot directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn apply_retention(&self) -> Result<Vec<PathBuf>, SnapshotError> {
        let all = self.list(SUFFIX)?;
        let excess = all.len().saturating_sub(self.config.retain);
        let mut removed = Vec::new();
        for (_, path) in all.into_iter().take(excess) {
            self.storage
                .remove_file(&path)
                .map_err(io("remove snapshot", &path))?;
            removed.push(path);
        }
        if !removed.is_empty() {
            sync_dir(&self.storage, &self.dir)?;
        }
        Ok(removed)
    }

    fn prune(&self) -> Result<Vec<PathBuf>, SnapshotError> {
        let Some(journal_dir) = &self.config.prune_journal_dir else {
            return Ok(Vec::new());
        };
        let Some(&(oldest_retained, _)) = self.list(SUFFIX)?.first() else {
            return Ok(Vec::new());
        };
        Ok(super::prune_segments_in(
            &self.storage,
            journal_dir,
            oldest_retained,
        )?)
    }

    fn list(&self, suffix: &str) -> Result<Vec<(u64, PathBuf)>, SnapshotError> {
        let names = self
            .storage
            .list(&self.dir)
            .map_err(io("read_dir", &self.dir))?;
        let mut out = Vec::new();
        for name in names {
            if let Some(seq) = parse_name(&name, suffix) {
                out.push((seq, self.dir.join(name)));
            }
        }
        out.sort();
        Ok(out)
    }
}

fn name(last_seq: u64, suffix: &str) -> String {
    format!("{PREFIX}{last_seq:020}{suffix}")
}

fn parse_name(name: &str, suffix: &str) -> Option<u64> {
    let digits = name.strip_prefix(PREFIX)?.strip_suffix(suffix)?;
    let ok = digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| digits.parse().ok()).flatten()
}

fn write_synced(
    storage: &Storage,
    path: &Path,
    header: &[u8],
    data: &[u8],
) -> Result<(), SnapshotError> {
    let f = storage
        .open(path, Open::CreateTruncate)
        .map_err(io("create temp", path))?;
    f.write_all_at(header, 0).map_err(io("write temp", path))?;
    f.write_all_at(data, header.len() as u64)
        .map_err(io("write temp", path))?;
    f.sync_all().map_err(io("fsync temp", path))
}

fn read_verified(storage: &Storage, path: &Path, name_seq: u64) -> Result<Vec<u8>, SnapshotDefect> {
    let mut file = storage.read(path).map_err(|_| SnapshotDefect::Unreadable)?;
    let seq = format::verify(&file)?;
    if seq != name_seq {
        return Err(SnapshotDefect::NameMismatch);
    }
    file.drain(..format::SNAPSHOT_HEADER_LEN);
    Ok(file)
}

fn sync_dir(storage: &Storage, dir: &Path) -> Result<(), SnapshotError> {
    storage.sync_dir(dir).map_err(io("fsync dir", dir))
}
