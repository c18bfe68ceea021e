//! The durable Raft log: one `peregrine_journal::Journal` plus a `SnapshotStore`.
//!
//! * **Entries.** Each Raft entry is one journal record of kind 0x40 (header + the
//!   first bytes of `data ++ context`), followed by kind-0x41 records when it does not
//!   fit in one record's 4 KiB payload. The journal seq is a local record counter;
//!   the Raft index and term are in the payload.
//! * **Truncation is logical.** Segments stay append-only. When a new leader
//!   overwrites an uncommitted suffix, the replacing entries are simply appended;
//!   recovery reads records in journal order and an entry whose index is at or below
//!   the current last index cuts the log back to `index - 1` first (last writer wins).
//!   Raft never overwrites a committed entry, so nothing acknowledged is ever cut.
//! * **Hard state** (term, vote, commit) is a kind-0x42 record appended in the same
//!   batch as the entries it goes with; a commit-only change is appended without a
//!   sync of its own (losing it only delays re-applying on restart).
//! * **Snapshots** are files of the snapshot store named by a journal seq `m`:
//!   recovery loads the newest valid one and replays records from `m + 1`. A snapshot
//!   taken locally at index `i` is named by the seq of entry `i`'s last record (every
//!   current entry after `i` lies in later records); a snapshot received from the
//!   leader is named by the next seq, and a kind-0x43 record at that seq marks the
//!   reset of the log. The file embeds the hard state, so pruning the segments a
//!   retained snapshot covers loses nothing.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use peregrine_journal::{
    snapshot::prune_segments_in, FsyncPolicy, Journal, JournalConfig, LossPolicy, Record,
    SnapshotConfig, SnapshotStore, Storage, Timestamps, MAX_PAYLOAD,
};
use raft::eraftpb::{Entry, HardState, Snapshot};

use crate::error::LogError;
use crate::log::records::{self, EntryHeader, ENTRY_HEADER_LEN};
use crate::log::snapshot::SnapshotFile;

/// How the durable log is opened.
#[derive(Debug, Clone)]
pub struct LogOptions {
    /// `fdatasync` policy of the journal (`Batch`: one sync per Ready).
    pub fsync: FsyncPolicy,
    /// Journal segment size.
    pub segment_bytes: u64,
    /// Snapshot files kept.
    pub snapshot_retain: usize,
    /// Delete journal segments the oldest retained snapshot covers.
    pub prune: bool,
}

impl Default for LogOptions {
    fn default() -> Self {
        Self {
            fsync: FsyncPolicy::Batch,
            segment_bytes: JournalConfig::default().segment_bytes,
            snapshot_retain: 3,
            prune: true,
        }
    }
}

/// What recovery found.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Hard state: the snapshot's merged with every later hard-state record, the
    /// commit index clamped to the last entry.
    pub hard_state: HardState,
    /// The newest valid snapshot, if any.
    pub snapshot: Option<Snapshot>,
    /// Journal seq the snapshot is named by.
    pub snapshot_seq: u64,
    /// Entries after the snapshot, in index order, with their last record's seq.
    pub entries: Vec<(Entry, u64)>,
    /// Entries whose records ended before their last byte (a crash mid-append; never
    /// acknowledged) and were dropped.
    pub partial_dropped: u32,
    /// Torn tail the journal truncated, if any (`Debug` text).
    pub tail: Option<String>,
    /// Newer snapshot files that failed verification and were skipped.
    pub skipped_snapshots: Vec<String>,
    /// Journal records replayed.
    pub records: u64,
}

/// The journal and snapshot store of one node.
#[derive(Debug)]
pub struct DurableLog {
    storage: Storage,
    journal: Journal,
    /// `None` while a snapshot write holds it ([`DurableLog::begin_snapshot`]).
    snaps: Option<SnapshotStore>,
    journal_dir: PathBuf,
    prune: bool,
    scratch: Vec<u8>,
    /// Journal seq of the newest snapshot file.
    snapshot_seq: u64,
    /// The last journal seq known durable (synced here, or by the shell's sync
    /// thread: [`DurableLog::mark_durable`]).
    durable_seq: u64,
}

impl DurableLog {
    /// Opens `dir/journal` and `dir/snapshots` and recovers the Raft log.
    pub fn open(dir: &Path, opts: &LogOptions) -> Result<(Self, Recovered), LogError> {
        Self::open_in(&Storage::os(), dir, opts)
    }

    /// [`DurableLog::open`] on `storage` (a simulator's file system).
    pub fn open_in(
        storage: &Storage,
        dir: &Path,
        opts: &LogOptions,
    ) -> Result<(Self, Recovered), LogError> {
        let journal_dir = dir.join("journal");
        let config = JournalConfig {
            segment_bytes: opts.segment_bytes,
            fsync: opts.fsync,
            ..JournalConfig::default()
        };
        let (journal, report) =
            Journal::open_in(storage, &journal_dir, config, LossPolicy::Refuse)?;
        let snaps = SnapshotStore::open_in(
            storage,
            dir.join("snapshots"),
            SnapshotConfig {
                retain: opts.snapshot_retain,
                prune_journal_dir: None,
            },
        )?;
        let mut log = Self {
            storage: storage.clone(),
            journal,
            snaps: Some(snaps),
            journal_dir,
            prune: opts.prune,
            scratch: Vec::with_capacity(MAX_PAYLOAD),
            snapshot_seq: 0,
            durable_seq: 0,
        };
        let mut rec = log.recover()?;
        rec.tail = report.truncated.map(|t| format!("{t:?}"));
        // What recovery read may still be only in the page cache (a process crash):
        // make it durable before raft-rs counts it as persisted.
        log.commit()?;
        Ok((log, rec))
    }

    fn recover(&mut self) -> Result<Recovered, LogError> {
        let mut out = Recovered::default();
        let latest = self.snaps()?.latest_valid()?;
        out.skipped_snapshots = latest
            .skipped
            .iter()
            .map(|s| format!("{}: {:?}", s.path.display(), s.defect))
            .collect();
        let next_seq = self.journal.next_seq();
        let mut start = self.journal.first_seq().unwrap_or(1);
        let mut first_index = 1;
        if let Some(s) = latest.snapshot {
            let file = SnapshotFile::decode(s.data).map_err(|why| LogError::BadSnapshot {
                path: s.path.clone(),
                why,
            })?;
            let meta = file.snapshot.get_metadata();
            first_index = meta.index + 1;
            out.hard_state = file.hard_state.clone();
            records::merge_hard_state(
                &mut out.hard_state,
                &HardState {
                    term: meta.term,
                    commit: meta.index,
                    ..Default::default()
                },
            );
            self.snapshot_seq = s.last_seq;
            out.snapshot_seq = s.last_seq;
            start = s.last_seq + 1;
            match next_seq {
                Some(n) if n < s.last_seq => {
                    return Err(LogError::MissingPrefix {
                        first: n,
                        needed: s.last_seq,
                    })
                }
                Some(n) if n > s.last_seq => {}
                // The snapshot was written and the process died before its marker
                // record (or the journal is empty): write the marker now, so the
                // record at this seq is always the snapshot's own.
                _ => {
                    let mark = records::encode_snapshot_mark(meta.index, meta.term);
                    self.append_raw(s.last_seq, records::KIND_SNAPSHOT, &mark)?;
                    self.journal.commit()?;
                }
            }
            out.snapshot = Some(file.snapshot);
        }
        if let Some(first) = self.journal.first_seq() {
            if first > start {
                return Err(LogError::MissingPrefix {
                    first,
                    needed: start,
                });
            }
        }
        let last_seq = self.journal.last_seq().unwrap_or(0);
        if start > last_seq {
            return Ok(finish(out, first_index));
        }
        let mut st = ReplayState::new(first_index);
        let mut replay = self.journal.replay_from(start)?;
        while let Some(r) = replay.next()? {
            st.record(&r, &mut out)?;
        }
        if st.partial.is_some() {
            out.partial_dropped += 1;
        }
        out.entries = st.entries;
        Ok(finish(out, first_index))
    }

    /// Appends one entry (one or more records); returns the seq of its last record.
    pub fn append_entry(&mut self, e: &Entry) -> Result<u64, LogError> {
        let (data, ctx) = (&e.data[..], &e.context[..]);
        let hdr = EntryHeader {
            entry_type: e.entry_type,
            data_len: u32::try_from(data.len()).map_err(|_| too_big(e))?,
            ctx_len: u32::try_from(ctx.len()).map_err(|_| too_big(e))?,
            term: e.term,
            index: e.index,
        };
        let mut body = data.iter().chain(ctx.iter()).copied();
        let total = hdr.body_len();
        let mut written = 0;
        self.scratch.clear();
        self.scratch.extend_from_slice(&hdr.encode());
        let first = total.min(MAX_PAYLOAD - ENTRY_HEADER_LEN);
        self.scratch.extend(body.by_ref().take(first));
        written += first;
        let mut kind = records::KIND_ENTRY;
        loop {
            let seq = self.next_seq();
            let scratch = std::mem::take(&mut self.scratch);
            let r = self.append_raw(seq, kind, &scratch);
            self.scratch = scratch;
            r?;
            if written == total {
                return Ok(seq);
            }
            kind = records::KIND_ENTRY_MORE;
            let n = (total - written).min(MAX_PAYLOAD);
            self.scratch.clear();
            self.scratch.extend(body.by_ref().take(n));
            written += n;
        }
    }

    /// Appends a hard-state record.
    pub fn append_hard_state(&mut self, hs: &HardState) -> Result<(), LogError> {
        let seq = self.next_seq();
        self.append_raw(
            seq,
            records::KIND_HARD_STATE,
            &records::encode_hard_state(hs),
        )
    }

    /// Writes what was appended and syncs it under the fsync policy. Nothing
    /// appended before an `Ok` here is lost by a crash.
    pub fn commit(&mut self) -> Result<(), LogError> {
        self.journal.commit()?;
        self.durable_seq = self.durable_seq.max(self.journal.last_seq().unwrap_or(0));
        Ok(())
    }

    /// Writes what was appended to the page cache without syncing it (whatever the
    /// policy): a sync thread makes it durable ([`crate::log::Syncer`]), and the
    /// shell reports it with [`DurableLog::mark_durable`]. Returns the last seq
    /// written. Under `fsync = "none"` that is as durable as it gets: it counts as
    /// durable at once.
    pub fn write(&mut self) -> Result<u64, LogError> {
        self.journal.write()?;
        let last = self.journal.last_seq().unwrap_or(0);
        if self.journal.config().fsync == FsyncPolicy::None {
            self.durable_seq = self.durable_seq.max(last);
        }
        Ok(last)
    }

    /// Records that a sync thread made everything through `seq` durable, and moves
    /// the high-water mark up to it (one `pwrite`; the mark never runs ahead of
    /// durable records).
    pub fn mark_durable(&mut self, seq: u64) -> Result<(), LogError> {
        if seq > self.durable_seq {
            self.durable_seq = seq;
            self.journal.write_mark(seq)?;
        }
        Ok(())
    }

    /// The last journal seq known durable.
    pub fn durable_seq(&self) -> u64 {
        self.durable_seq
    }

    /// Installs the leader's snapshot: the file (named by the next seq) first, then
    /// the marker record at that seq, committed. Returns the seq.
    pub fn install_snapshot(&mut self, snap: &Snapshot, hs: &HardState) -> Result<u64, LogError> {
        self.commit()?;
        let seq = self.next_seq();
        let file = SnapshotFile {
            snapshot: snap.clone(),
            hard_state: hs.clone(),
        };
        self.snaps()?.write(seq, file.encode())?;
        let meta = snap.get_metadata();
        self.append_raw(
            seq,
            records::KIND_SNAPSHOT,
            &records::encode_snapshot_mark(meta.index, meta.term),
        )?;
        self.commit()?;
        self.snapshot_seq = seq;
        self.prune_covered()?;
        Ok(seq)
    }

    /// Saves a snapshot taken locally at an applied entry whose last record is
    /// `entry_seq`, on this thread: [`DurableLog::begin_snapshot`], the write, then
    /// [`DurableLog::finish_snapshot`]. The log itself is kept (the in-memory cache
    /// decides what to drop).
    pub fn save_snapshot(
        &mut self,
        entry_seq: u64,
        snap: &Snapshot,
        hs: &HardState,
    ) -> Result<(), LogError> {
        match self.begin_snapshot(entry_seq, snap, hs)? {
            Some(w) => self.finish_snapshot(w.run()),
            None => Ok(()),
        }
    }

    /// Starts saving a local snapshot at the entry whose last record is `entry_seq`:
    /// the returned write (encode the file, write a temp file, `fsync`, rename,
    /// `fsync` the directory) may run on another thread, and carries the snapshot
    /// store with it until [`DurableLog::finish_snapshot`] takes it back, so two
    /// snapshot writes never overlap. `None`: a snapshot at or past it exists.
    /// A crash before the rename leaves the previous snapshot the newest valid one.
    pub fn begin_snapshot(
        &mut self,
        entry_seq: u64,
        snap: &Snapshot,
        hs: &HardState,
    ) -> Result<Option<SnapshotWrite>, LogError> {
        if entry_seq <= self.snapshot_seq {
            return Ok(None);
        }
        // The entry's records must be on disk before a file names them (an applied
        // entry almost always is already: the sync thread ran before the commit).
        if self.durable_seq < entry_seq {
            self.commit()?;
        }
        let Some(store) = self.snaps.take() else {
            return Err(LogError::Invalid(
                "a snapshot write started while another runs".into(),
            ));
        };
        Ok(Some(SnapshotWrite {
            store,
            seq: entry_seq,
            file: SnapshotFile {
                snapshot: snap.clone(),
                hard_state: hs.clone(),
            },
        }))
    }

    /// Ends a [`DurableLog::begin_snapshot`]: takes the store back and, if the file
    /// is durable, names the snapshot and drops the journal segments it covers.
    pub fn finish_snapshot(&mut self, done: SnapshotDone) -> Result<(), LogError> {
        self.snaps = Some(done.store);
        done.result?;
        self.snapshot_seq = self.snapshot_seq.max(done.seq);
        self.prune_covered()
    }

    /// The snapshot store (never lent out while the node thread needs it: the node
    /// waits for a running write first).
    fn snaps(&mut self) -> Result<&mut SnapshotStore, LogError> {
        self.snaps
            .as_mut()
            .ok_or_else(|| LogError::Invalid("the snapshot store is lent to a write".into()))
    }

    fn prune_covered(&mut self) -> Result<(), LogError> {
        if !self.prune {
            return Ok(());
        }
        if let Some((oldest, _)) = self.snaps()?.snapshots()?.first() {
            prune_segments_in(&self.storage, &self.journal_dir, *oldest)?;
        }
        Ok(())
    }

    fn append_raw(&mut self, seq: u64, kind: u8, payload: &[u8]) -> Result<(), LogError> {
        Ok(self
            .journal
            .append(seq, Timestamps::default(), kind, payload)?)
    }

    /// The seq the next record gets.
    pub fn next_seq(&self) -> u64 {
        self.journal.next_seq().unwrap_or(1)
    }

    /// Journal seq of the newest snapshot file (0: none).
    pub fn snapshot_seq(&self) -> u64 {
        self.snapshot_seq
    }

    /// The journal (for its counters).
    pub fn journal(&self) -> &Journal {
        &self.journal
    }
}

fn too_big(e: &Entry) -> LogError {
    LogError::Invalid(format!("entry {} is larger than 4 GiB", e.index))
}

fn finish(mut out: Recovered, first_index: u64) -> Recovered {
    let last = out.entries.last().map_or(first_index - 1, |(e, _)| e.index);
    out.hard_state.commit = out.hard_state.commit.min(last).max(first_index - 1);
    out
}

/// Replay of records after the snapshot: last writer wins per index.
struct ReplayState {
    first_index: u64,
    entries: Vec<(Entry, u64)>,
    partial: Option<(EntryHeader, Vec<u8>)>,
}

impl ReplayState {
    fn new(first_index: u64) -> Self {
        Self {
            first_index,
            entries: Vec::new(),
            partial: None,
        }
    }

    fn last(&self) -> u64 {
        self.entries
            .last()
            .map_or(self.first_index - 1, |(e, _)| e.index)
    }

    fn record(&mut self, r: &Record<'_>, out: &mut Recovered) -> Result<(), LogError> {
        out.records += 1;
        let bad = |why: String| LogError::BadRecord { seq: r.seq, why };
        match r.kind {
            records::KIND_ENTRY => {
                if self.partial.take().is_some() {
                    out.partial_dropped += 1;
                }
                let (hdr, rest) = EntryHeader::decode(r.payload).map_err(bad)?;
                let mut body = Vec::with_capacity(hdr.body_len());
                body.extend_from_slice(rest);
                self.partial = Some((hdr, body));
            }
            records::KIND_ENTRY_MORE => {
                let Some((hdr, body)) = self.partial.as_mut() else {
                    return Err(bad("continuation without an entry".into()));
                };
                if body.len() + r.payload.len() > hdr.body_len() {
                    return Err(bad("continuation longer than the entry".into()));
                }
                body.extend_from_slice(r.payload);
            }
            records::KIND_HARD_STATE => {
                let hs = records::decode_hard_state(r.payload).map_err(bad)?;
                records::merge_hard_state(&mut out.hard_state, &hs);
                return Ok(());
            }
            records::KIND_SNAPSHOT => {
                // Only the record at the loaded snapshot's own seq is expected, and
                // replay starts after it: a later one belongs to a newer snapshot
                // that is missing or failed verification.
                records::decode_snapshot_mark(r.payload).map_err(bad)?;
                return Err(LogError::MissingSnapshot { seq: r.seq });
            }
            k => return Err(bad(format!("record kind {k} is not a cluster record"))),
        }
        let done = self
            .partial
            .as_ref()
            .is_some_and(|(h, b)| b.len() == h.body_len());
        if done {
            if let Some((hdr, body)) = self.partial.take() {
                self.push(hdr, body, r.seq)?;
            }
        }
        Ok(())
    }

    fn push(&mut self, hdr: EntryHeader, body: Vec<u8>, seq: u64) -> Result<(), LogError> {
        if hdr.index < self.first_index {
            // Covered by the snapshot: a committed entry, identical by Raft's rules.
            return Ok(());
        }
        let last = self.last();
        if hdr.index > last + 1 {
            return Err(LogError::Gap {
                seq,
                last,
                found: hdr.index,
            });
        }
        self.entries
            .truncate((hdr.index - self.first_index) as usize);
        let body = Bytes::from(body);
        let data_len = hdr.data_len as usize;
        let e = Entry {
            entry_type: hdr.entry_type,
            term: hdr.term,
            index: hdr.index,
            data: body.slice(..data_len),
            context: body.slice(data_len..),
            ..Default::default()
        };
        self.entries.push((e, seq));
        Ok(())
    }
}

#[cfg(test)]
#[path = "durable_tests.rs"]
mod tests;

/// A local snapshot file to write, possibly on another thread
/// ([`DurableLog::begin_snapshot`]).
#[derive(Debug)]
pub struct SnapshotWrite {
    store: SnapshotStore,
    seq: u64,
    file: SnapshotFile,
}

/// What a [`SnapshotWrite`] did, for [`DurableLog::finish_snapshot`].
#[derive(Debug)]
pub struct SnapshotDone {
    store: SnapshotStore,
    seq: u64,
    result: Result<(), LogError>,
}

impl SnapshotWrite {
    /// Sets the snapshot's data ([`crate::log::SnapshotData`] bytes) when it is made
    /// after [`DurableLog::begin_snapshot`] (on the writing thread).
    pub fn set_data(&mut self, data: bytes::Bytes) {
        self.file.snapshot.data = data;
    }

    /// Encodes and writes the file (blocking: the disk's `fsync`s).
    pub fn run(mut self) -> SnapshotDone {
        let blob = self.file.encode();
        drop(self.file);
        let result = self
            .store
            .write(self.seq, blob)
            .map(|_| ())
            .map_err(LogError::from);
        SnapshotDone {
            store: self.store,
            seq: self.seq,
            result,
        }
    }
}
