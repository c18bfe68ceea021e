//! The writer: buffered appends, group commit, segment rotation.

use std::path::{Path, PathBuf};

use crate::config::{FsyncPolicy, JournalConfig};
use crate::error::JournalError;
use crate::hwm::{Mark, MarkFile};
use crate::prealloc::Preparer;
use crate::record::{self, Timestamps, HEADER_LEN, MAX_PAYLOAD};
use crate::recovery::{self, LossPolicy, RecoveryReport};
use crate::replay::Replay;
use crate::segment::{self, SegmentFile, SEGMENT_HEADER_LEN};
use crate::stats::JournalStats;
use crate::storage::{FileHandle, Open, Storage};

/// The write-ahead journal of one matching thread. `Send`, not shared.
///
/// Appends are encoded into a preallocated userspace buffer (no allocation,
/// no syscall) and reach the file on `commit`, when the buffer fills, or on
/// rotation. See [`FsyncPolicy`] for what is durable when, and
/// [`JournalConfig::preallocate`] for the segment files written ahead.
#[derive(Debug)]
pub struct Journal {
    storage: Storage,
    dir: PathBuf,
    config: JournalConfig,
    segments: Vec<SegmentFile>,
    active: Option<FileHandle>,
    /// Bytes of the active segment, written plus buffered (the file offset of the
    /// next write is `seg_len - filled`).
    seg_len: u64,
    /// The active segment's size cap: its preallocated size, or `segment_bytes`.
    limit: u64,
    /// The active file was prepared ahead (zeros past `seg_len`, trimmed when sealed).
    preallocated: bool,
    /// The helper thread preparing spare segments (`config.preallocate`), started at
    /// the first append.
    prep: Option<Preparer>,
    /// Check at each append whether to start the helper or move to its spare: the
    /// active segment is a plain file (or none) and preallocation is on.
    want_spare: bool,
    /// Size of the next spare to ask for.
    next_spare: u64,
    buf: Box<[u8]>,
    filled: usize,
    /// Bytes written to the active file since its last sync.
    unsynced: bool,
    /// Offset in `buf` of the last record appended since the last write,
    /// which `commit` marks with `FLAG_COMMIT`.
    last_in_buf: Option<usize>,
    next_seq: Option<u64>,
    first_seq: Option<u64>,
    poisoned: bool,
    stats: JournalStats,
    /// The committed high-water mark, rewritten by every commit that covers new
    /// records (or, for a caller that defers it, by [`Journal::write_mark`]).
    mark: MarkFile,
    /// The last sequence number a commit (or [`Journal::write`]) wrote to the file.
    committed_through: u64,
}

impl Journal {
    /// Opens (creating if needed) the journal in `dir`, verifies every
    /// segment against the committed high-water mark, truncates a torn
    /// (never-acknowledged) tail, and positions the writer at the end.
    ///
    /// Refuses, modifying nothing, when committed records are missing
    /// ([`JournalError::CommittedRecordsLost`]) or the mark is missing or damaged;
    /// see [`Journal::open_with`] to accept such a loss.
    pub fn open(
        dir: impl AsRef<Path>,
        config: JournalConfig,
    ) -> Result<(Self, RecoveryReport), JournalError> {
        Self::open_with(dir, config, LossPolicy::Refuse)
    }

    /// [`Journal::open`], with the operator's decision about lost committed
    /// records: [`LossPolicy::Accept`] truncates to what the segments hold, rebuilds
    /// the mark and reports the loss in [`RecoveryReport::accepted_loss`].
    pub fn open_with(
        dir: impl AsRef<Path>,
        config: JournalConfig,
        policy: LossPolicy,
    ) -> Result<(Self, RecoveryReport), JournalError> {
        Self::open_in(&Storage::os(), dir, config, policy)
    }

    /// [`Journal::open_with`] on `storage` (the operating system's file system, or a
    /// simulator's).
    pub fn open_in(
        storage: &Storage,
        dir: impl AsRef<Path>,
        config: JournalConfig,
        policy: LossPolicy,
    ) -> Result<(Self, RecoveryReport), JournalError> {
        config.validate().map_err(JournalError::Config)?;
        let dir = dir.as_ref().to_path_buf();
        storage
            .create_dir_all(&dir)
            .map_err(|e| JournalError::io("create dir", &dir, e))?;
        let rec = recovery::recover(storage, &dir, policy)?;
        let active = match rec.segments.last() {
            Some(last) => Some(open_write(storage, &last.path)?),
            None => None,
        };
        // Zeros past the last record: a prepared segment that was not sealed (a crash).
        let preallocated = active.is_some() && rec.last_file_len > rec.last_len;
        let limit = if preallocated {
            rec.last_file_len
        } else {
            config.segment_bytes
        };
        let next_seq = rec.report.last_seq.map(|s| s + 1);
        let journal = Self {
            limit,
            preallocated,
            prep: None,
            want_spare: config.preallocate && !preallocated,
            next_spare: config.segment_bytes.min(FIRST_SPARE),
            next_seq: next_seq.or(rec.segments.last().map(|s| s.first_seq)),
            first_seq: rec.report.first_seq,
            buf: prefaulted(config.buffer_bytes),
            filled: 0,
            unsynced: false,
            last_in_buf: None,
            seg_len: rec.last_len,
            active,
            segments: rec.segments,
            storage: storage.clone(),
            dir,
            config,
            poisoned: false,
            stats: JournalStats::default(),
            committed_through: rec.report.last_seq.unwrap_or(0),
            mark: rec.mark,
        };
        Ok((journal, rec.report))
    }

    /// Appends one record. `seq` must be the last sequence number + 1 (any
    /// non-zero value for an empty journal). Allocation-free except when it
    /// rotates to a new segment.
    #[inline]
    pub fn append(
        &mut self,
        seq: u64,
        ts: Timestamps,
        kind: u8,
        payload: &[u8],
    ) -> Result<(), JournalError> {
        self.check_append(seq, payload.len())?;
        let need = HEADER_LEN + payload.len();
        let switch = self.want_spare && self.spare_due()?;
        if switch || self.active.is_none() || self.seg_len + need as u64 > self.limit {
            self.rotate(seq)?;
        }
        if self.filled + need > self.buf.len() {
            self.write_buffer()?;
        }
        record::encode_into(&mut self.buf[self.filled..], seq, ts, kind, payload);
        self.last_in_buf = Some(self.filled);
        self.filled += need;
        self.seg_len += need as u64;
        self.next_seq = Some(seq + 1);
        self.first_seq.get_or_insert(seq);
        self.stats.records += 1;
        if self.config.fsync == FsyncPolicy::EveryCommand {
            self.commit()?;
        }
        Ok(())
    }

    #[inline]
    fn check_append(&self, seq: u64, len: usize) -> Result<(), JournalError> {
        if self.poisoned {
            return Err(JournalError::Poisoned);
        }
        if len > MAX_PAYLOAD {
            return Err(JournalError::PayloadTooLarge {
                len,
                max: MAX_PAYLOAD,
            });
        }
        let expected = self.next_seq.unwrap_or(0);
        if seq == 0 || seq == u64::MAX || (expected != 0 && seq != expected) {
            return Err(JournalError::OutOfSequence { expected, got: seq });
        }
        Ok(())
    }

    /// Ends a batch: marks the batch's last record `FLAG_COMMIT`, writes
    /// buffered records and, unless the policy is `None`, `fdatasync`s the
    /// active segment once; then records the batch's last sequence number in the
    /// high-water mark (one `pwrite`, and under `Batch` / `EveryCommand` one
    /// `fdatasync` of the mark: the mark never runs ahead of durable records).
    pub fn commit(&mut self) -> Result<(), JournalError> {
        self.write_marked()?;
        let sync = self.config.fsync != FsyncPolicy::None;
        if sync {
            self.sync_active()?;
        }
        self.advance_mark(sync && self.config.mark_fsync)
    }

    /// Ends a batch without syncing, whatever the policy: marks the batch's last
    /// record `FLAG_COMMIT` and writes the buffer to the active segment. For a
    /// caller that syncs on another thread ([`Journal::sync_handle`]); a rotation
    /// still syncs the segment it seals.
    pub fn write(&mut self) -> Result<(), JournalError> {
        self.write_marked()
    }

    /// A second handle on the active segment file, for `fdatasync` on another
    /// thread, with the first sequence number of that segment (a new segment after a
    /// rotation needs a new handle; the one it replaced was synced when sealed).
    pub fn sync_handle(&self) -> Result<Option<(u64, FileHandle)>, JournalError> {
        let (Some(file), Some(seg)) = (self.active.as_ref(), self.segments.last()) else {
            return Ok(None);
        };
        let clone = file
            .try_clone()
            .map_err(|e| JournalError::io("clone segment handle", &seg.path, e))?;
        Ok(Some((seg.first_seq, clone)))
    }

    /// True while the active segment is a file prepared ahead
    /// ([`JournalConfig::preallocate`]), i.e. appends overwrite zeros the file system
    /// already holds instead of growing the file.
    pub fn active_prepared(&self) -> bool {
        self.preallocated
    }

    /// The first sequence number of the active segment, if any.
    pub fn active_segment(&self) -> Option<u64> {
        self.active.as_ref()?;
        self.segments.last().map(|s| s.first_seq)
    }

    /// Commits and syncs regardless of policy, trims a prepared segment's unused
    /// zeros, then closes.
    pub fn close(mut self) -> Result<(), JournalError> {
        self.write_marked()?;
        self.seal_active()?;
        self.sync_active()?;
        self.advance_mark(true)
    }

    /// Moves the high-water mark to `min(through, the last record a commit wrote)`
    /// if that is ahead of it: one `pwrite`, no sync. For a caller that keeps the
    /// mark's write off its order path ([`Journal::write`] then this, later and less
    /// often): the mark may lag what was written, which start-up accepts (records
    /// past the mark are kept), and never runs ahead of `through`, so a caller whose
    /// records become durable on another thread passes how far they are durable.
    pub fn write_mark(&mut self, through: u64) -> Result<(), JournalError> {
        self.advance_mark_to(self.committed_through.min(through), false)
    }

    /// Moves the high-water mark to the last appended record, if it moved.
    fn advance_mark(&mut self, sync: bool) -> Result<(), JournalError> {
        let Some(last) = self.last_seq() else {
            return Ok(());
        };
        self.advance_mark_to(last, sync)
    }

    fn advance_mark_to(&mut self, last: u64, sync: bool) -> Result<(), JournalError> {
        if self.poisoned {
            return Err(JournalError::Poisoned);
        }
        if last == 0 || self.mark.last().committed_seq >= last {
            return Ok(());
        }
        // The segment that holds `last`: a mark that lags (`write_mark`) may name a
        // record in a segment sealed since.
        let segment_first = self
            .segments
            .iter()
            .rev()
            .find(|s| s.first_seq <= last)
            .map_or(0, |s| s.first_seq);
        let mark = Mark {
            committed_seq: last,
            segment_first,
        };
        let written = self.mark.write(mark).and_then(|()| {
            if sync {
                let started = std::time::Instant::now();
                self.mark.sync()?;
                let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                self.stats.record_mark_sync(ns);
            }
            Ok(())
        });
        if written.is_err() {
            self.poisoned = true;
        }
        written
    }

    /// Marks the last buffered record as a commit point and writes the buffer.
    fn write_marked(&mut self) -> Result<(), JournalError> {
        if let Some(at) = self.last_in_buf {
            record::mark_commit(&mut self.buf[at..self.filled]);
        }
        self.write_buffer()?;
        self.committed_through = self.last_seq().unwrap_or(0);
        Ok(())
    }

    fn write_buffer(&mut self) -> Result<(), JournalError> {
        if self.filled == 0 {
            return Ok(());
        }
        let Some(file) = self.active.as_ref() else {
            return Ok(());
        };
        let at = self.seg_len - self.filled as u64;
        if let Err(e) = file.write_all_at(&self.buf[..self.filled], at) {
            return Err(self.poison("write segment", e));
        }
        self.stats.bytes_written += self.filled as u64;
        if let Some(prep) = &self.prep {
            prep.note_written(self.stats.bytes_written);
        }
        self.filled = 0;
        self.last_in_buf = None;
        self.unsynced = true;
        Ok(())
    }

    fn sync_active(&mut self) -> Result<(), JournalError> {
        let Some(file) = self.active.as_ref() else {
            return Ok(());
        };
        if !self.unsynced {
            return Ok(());
        }
        // Two clock reads (~50 ns) around a sync of 0.1-10 ms: the cost is noise.
        let started = std::time::Instant::now();
        if let Err(e) = file.sync_data() {
            return Err(self.poison("fdatasync segment", e));
        }
        let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.stats.record_sync(ns);
        self.unsynced = false;
        Ok(())
    }

    /// After a failed write or fsync the page cache state is unknown
    /// (fsyncgate): refuse further appends; reopening re-verifies the files.
    #[cold]
    fn poison(&mut self, op: &'static str, e: std::io::Error) -> JournalError {
        self.poisoned = true;
        JournalError::io(op, self.active_path(), e)
    }

    fn active_path(&self) -> PathBuf {
        self.segments
            .last()
            .map_or_else(|| self.dir.clone(), |s| s.path.clone())
    }

    /// Whether to rotate now into a prepared spare; starts the helper thread on the
    /// first call. Only while the active segment is a plain file (or none).
    #[cold]
    fn spare_due(&mut self) -> Result<bool, JournalError> {
        let Some(prep) = self.prep.as_ref() else {
            match Preparer::start(&self.storage, &self.dir, self.next_spare) {
                Ok(p) => self.prep = Some(p),
                // No helper thread: plain appends, as with `preallocate = false`.
                Err(e) => {
                    log::warn!(
                        "journal: no segment-preparing helper ({e}); appends go on into \
                         plain segments"
                    );
                    self.stats.prepare_failed = true;
                    self.want_spare = false;
                }
            }
            return Ok(false);
        };
        if prep.failed() {
            // Its error was logged by the helper; stop asking.
            self.stats.prepare_failed = true;
            self.want_spare = false;
            return Ok(false);
        }
        // A segment must hold a record before it is sealed (recovery refuses an empty
        // one that is not the last); an absent one is created by the normal path.
        let has_records = self.seg_len > SEGMENT_HEADER_LEN as u64;
        Ok(self.active.is_some() && has_records && prep.ready())
    }

    /// Seals the active segment (written and synced under every policy, so a
    /// power loss never tears a non-last segment) and starts `journal-<seq>`: the
    /// prepared spare if one is ready, else a plain file.
    #[cold]
    fn rotate(&mut self, seq: u64) -> Result<(), JournalError> {
        self.write_buffer()?;
        self.seal_active()?;
        self.sync_active()?;
        if !self.config.mark_fsync && self.mark.last().committed_seq != 0 {
            // A deferred mark reaches the disk at least once per segment.
            self.mark.sync()?;
        }
        let path = self.dir.join(segment::file_name(seq));
        let taken = match self.prep.as_ref() {
            Some(prep) => {
                let next = (self.next_spare * 2).min(self.config.segment_bytes);
                let taken = prep
                    .take_into(&path, next)
                    .map_err(|e| JournalError::io("take prepared segment", &path, e))?;
                if taken.is_some() {
                    self.next_spare = next;
                }
                taken
            }
            None => None,
        };
        let file = match taken {
            Some(_) => open_write(&self.storage, &path)?,
            None => self
                .storage
                .open(&path, Open::CreateNew)
                .map_err(|e| JournalError::io("create segment", &path, e))?,
        };
        if self.config.fsync != FsyncPolicy::None {
            if let Err(e) = segment::sync_dir_in(&self.storage, &self.dir) {
                self.poisoned = true; // the new file exists; a retry would collide
                return Err(e);
            }
        }
        self.active = Some(file);
        self.segments.push(SegmentFile {
            first_seq: seq,
            path,
        });
        self.seg_len = SEGMENT_HEADER_LEN as u64;
        if let Some(bytes) = taken {
            self.stats.segments_prepared += 1;
            // The spare already holds the header, synced.
            self.filled = 0;
            self.limit = bytes;
            self.preallocated = true;
            self.want_spare = false;
        } else {
            self.stats.segments_plain += 1;
            let header = segment::header_bytes();
            self.buf[..SEGMENT_HEADER_LEN].copy_from_slice(&header);
            self.filled = SEGMENT_HEADER_LEN;
            self.limit = self.config.segment_bytes;
            self.preallocated = false;
            self.want_spare = self.config.preallocate;
        }
        Ok(())
    }

    /// Cuts a prepared active segment back to what was written (after
    /// `write_buffer`) and syncs that size, so a sealed segment ends at its last
    /// record. Recovery would also accept the zeros (an all-zero remainder is unused
    /// space); trimming keeps the files tidy and their lengths meaningful.
    fn seal_active(&mut self) -> Result<(), JournalError> {
        if !self.preallocated {
            return Ok(());
        }
        let Some(file) = self.active.as_ref() else {
            return Ok(());
        };
        let end = self.seg_len - self.filled as u64;
        if let Err(e) = file.set_len(end).and_then(|()| file.sync_all()) {
            return Err(self.poison("trim prepared segment", e));
        }
        self.unsynced = false;
        self.preallocated = false;
        self.limit = self.config.segment_bytes.max(end);
        Ok(())
    }

    /// Replays records from `from` (inclusive) to the last appended record.
    /// Pending records are committed first so the replay sees them.
    pub fn replay_from(&mut self, from: u64) -> Result<Replay, JournalError> {
        self.commit()?;
        let (first, last) = (self.first_seq.unwrap_or(0), self.last_seq().unwrap_or(0));
        let empty_ok = from == self.next_seq.unwrap_or(from);
        if !empty_ok && (from < first.max(1) || from > last) {
            return Err(JournalError::SeqNotAvailable {
                requested: from,
                first,
                last,
            });
        }
        Ok(Replay::new(
            self.storage.clone(),
            self.segments.clone(),
            from,
            last,
        ))
    }

    /// Sequence number of the last appended record.
    pub fn last_seq(&self) -> Option<u64> {
        self.first_seq.and(self.next_seq.map(|n| n - 1))
    }

    /// Sequence number of the first record held.
    pub fn first_seq(&self) -> Option<u64> {
        self.first_seq
    }

    /// Sequence number the next `append` must carry (None: any non-zero).
    pub fn next_seq(&self) -> Option<u64> {
        self.next_seq
    }

    /// The journal directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file system the journal lives on.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// The configuration in force.
    pub fn config(&self) -> &JournalConfig {
        &self.config
    }

    /// Records, bytes and syncs since this journal was opened (plain counters of
    /// the owning thread; copy them out to publish).
    pub fn stats(&self) -> &JournalStats {
        &self.stats
    }

    /// Segment files, oldest first (the last one is being appended to).
    pub fn segments(&self) -> &[SegmentFile] {
        &self.segments
    }
}

impl Drop for Journal {
    /// Best effort: commit under the configured policy and trim a prepared
    /// segment's unused zeros. Errors are ignored here; call [`Journal::close`] to
    /// see them.
    fn drop(&mut self) {
        if !self.poisoned {
            // No trim after a failed commit: a poisoned journal leaves its files as
            // they are for the next open to verify.
            let _ = self.commit().and_then(|()| self.seal_active());
        }
    }
}

/// Size of the first prepared segment (or `segment_bytes`, if smaller).
const FIRST_SPARE: u64 = 4 << 20;

fn open_write(storage: &Storage, path: &Path) -> Result<FileHandle, JournalError> {
    storage
        .open(path, Open::Write)
        .map_err(|e| JournalError::io("open segment", path, e))
}

/// The write buffer, with every page touched now rather than on the hot
/// path: `vec![0; n]` maps lazily-zeroed pages, and the first append into
/// each 4 KiB page would take a page fault (measured: ~120 ns/op for a
/// 64 MiB buffer filled once, against ~50 ns once pages are resident).
fn prefaulted(len: usize) -> Box<[u8]> {
    let mut buf = Vec::with_capacity(len);
    buf.resize(len, 0xA5); // non-zero so the stores cannot be elided
    buf.into_boxed_slice()
}
