//! The in-memory view of the Raft log that raft-rs reads through its `Storage` trait:
//! the entries since the last compaction (each with the journal seq of its last
//! record), the newest snapshot, the hard state and the conf state. Writes go to the
//! journal first (`durable.rs`), then here.

use std::collections::VecDeque;

use raft::eraftpb::{ConfState, Entry, HardState, Snapshot};
use raft::{GetEntriesContext, RaftState, Storage, StorageError};

/// raft-rs's view of the log.
#[derive(Debug, Default)]
pub struct LogCache {
    hs: HardState,
    cs: ConfState,
    snapshot: Snapshot,
    /// Index of `entries[0]` (or the next index when empty).
    offset: u64,
    /// Term of entry `offset - 1` (the compaction boundary).
    boundary_term: u64,
    entries: VecDeque<Entry>,
    /// Journal seq of each entry's last record (snapshot files are named by it).
    seqs: VecDeque<u64>,
}

impl LogCache {
    /// A cache starting after `snapshot` (index 0 for a fresh log).
    pub fn new(hs: HardState, cs: ConfState, snapshot: Snapshot) -> Self {
        let meta = snapshot.get_metadata();
        Self {
            hs,
            cs,
            offset: meta.index + 1,
            boundary_term: meta.term,
            snapshot,
            entries: VecDeque::new(),
            seqs: VecDeque::new(),
        }
    }

    /// Appends entries that continue the log or replace a suffix of it (the conflicting
    /// uncommitted tail a new leader overwrites).
    pub fn append(&mut self, entries: &[Entry], seqs: &[u64]) -> Result<(), String> {
        debug_assert_eq!(entries.len(), seqs.len());
        let Some(first) = entries.first() else {
            return Ok(());
        };
        if first.index < self.offset {
            return Err(format!(
                "entry {} precedes the log's first index {}",
                first.index, self.offset
            ));
        }
        if first.index > self.last() + 1 {
            return Err(format!(
                "entry {} leaves a gap after {}",
                first.index,
                self.last()
            ));
        }
        let keep = (first.index - self.offset) as usize;
        self.entries.truncate(keep);
        self.seqs.truncate(keep);
        self.entries.extend(entries.iter().cloned());
        self.seqs.extend(seqs.iter().copied());
        Ok(())
    }

    /// Replaces the whole log with `snapshot` (a follower installing the leader's).
    pub fn install(&mut self, snapshot: Snapshot) {
        let meta = snapshot.get_metadata();
        self.offset = meta.index + 1;
        self.boundary_term = meta.term;
        self.cs = meta.get_conf_state().clone();
        self.hs.term = self.hs.term.max(meta.term);
        self.hs.commit = self.hs.commit.max(meta.index);
        self.entries.clear();
        self.seqs.clear();
        self.snapshot = snapshot;
    }

    /// Records a snapshot taken locally (for sending to followers); the log is kept.
    pub fn set_snapshot(&mut self, snapshot: Snapshot) {
        self.snapshot = snapshot;
    }

    /// Drops entries below `index` (which must be ≤ the snapshot index + 1).
    pub fn compact(&mut self, index: u64) {
        let index = index.min(self.snapshot.get_metadata().index + 1);
        if index <= self.offset {
            return;
        }
        let drop = ((index - self.offset) as usize).min(self.entries.len());
        if drop == 0 {
            return;
        }
        self.boundary_term = self.entries[drop - 1].term;
        self.entries.drain(..drop);
        self.seqs.drain(..drop);
        self.offset += drop as u64;
    }

    /// Sets the hard state (after it is durable).
    pub fn set_hard_state(&mut self, hs: HardState) {
        self.hs = hs;
    }

    /// Sets the commit index only.
    pub fn set_commit(&mut self, commit: u64) {
        self.hs.commit = commit;
    }

    /// Sets the conf state (after a membership change is applied).
    pub fn set_conf_state(&mut self, cs: ConfState) {
        self.cs = cs;
    }

    /// The hard state.
    pub fn hard_state(&self) -> &HardState {
        &self.hs
    }

    /// The conf state.
    pub fn conf_state(&self) -> &ConfState {
        &self.cs
    }

    /// The newest snapshot.
    pub fn snapshot_ref(&self) -> &Snapshot {
        &self.snapshot
    }

    /// Index of the last entry (the snapshot's when empty).
    pub fn last(&self) -> u64 {
        self.offset + self.entries.len() as u64 - 1
    }

    /// Index of the first entry held.
    pub fn first(&self) -> u64 {
        self.offset
    }

    /// Entries held in memory.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry at `index`, if held.
    pub fn entry(&self, index: u64) -> Option<&Entry> {
        index
            .checked_sub(self.offset)
            .and_then(|i| self.entries.get(i as usize))
    }

    /// Journal seq of the last record of entry `index`, if held.
    pub fn seq_of(&self, index: u64) -> Option<u64> {
        index
            .checked_sub(self.offset)
            .and_then(|i| self.seqs.get(i as usize).copied())
    }

    /// Term of `index` (the boundary's or an entry's).
    pub fn term_of(&self, index: u64) -> Option<u64> {
        if index + 1 == self.offset {
            return Some(self.boundary_term);
        }
        self.entry(index).map(|e| e.term)
    }
}

impl Storage for LogCache {
    fn initial_state(&self) -> raft::Result<RaftState> {
        Ok(RaftState::new(self.hs.clone(), self.cs.clone()))
    }

    fn entries(
        &self,
        low: u64,
        high: u64,
        max_size: impl Into<Option<u64>>,
        _context: GetEntriesContext,
    ) -> raft::Result<Vec<Entry>> {
        if low < self.offset {
            return Err(raft::Error::Store(StorageError::Compacted));
        }
        if high > self.last() + 1 || low > high {
            return Err(raft::Error::Store(StorageError::Unavailable));
        }
        let lo = (low - self.offset) as usize;
        let hi = (high - self.offset) as usize;
        let mut out: Vec<Entry> = self.entries.range(lo..hi).cloned().collect();
        raft::util::limit_size(&mut out, max_size.into());
        Ok(out)
    }

    fn term(&self, idx: u64) -> raft::Result<u64> {
        if idx + 1 == self.offset {
            return Ok(self.boundary_term);
        }
        if idx < self.offset {
            return Err(raft::Error::Store(StorageError::Compacted));
        }
        self.entry(idx)
            .map(|e| e.term)
            .ok_or(raft::Error::Store(StorageError::Unavailable))
    }

    fn first_index(&self) -> raft::Result<u64> {
        Ok(self.offset)
    }

    fn last_index(&self) -> raft::Result<u64> {
        Ok(self.last())
    }

    fn snapshot(&self, request_index: u64, _to: u64) -> raft::Result<Snapshot> {
        if self.snapshot.get_metadata().index < request_index {
            return Err(raft::Error::Store(
                StorageError::SnapshotTemporarilyUnavailable,
            ));
        }
        Ok(self.snapshot.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(index: u64, term: u64) -> Entry {
        Entry {
            index,
            term,
            ..Default::default()
        }
    }

    #[test]
    fn append_replaces_a_conflicting_suffix_and_refuses_gaps() {
        let mut c = LogCache::default();
        c = LogCache::new(c.hs.clone(), c.cs.clone(), Snapshot::default());
        c.append(&[e(1, 1), e(2, 1), e(3, 1)], &[1, 2, 3]).unwrap();
        c.append(&[e(2, 2)], &[4]).unwrap();
        assert_eq!(c.last(), 2);
        assert_eq!(c.term(2).unwrap(), 2);
        assert_eq!(c.seq_of(2), Some(4));
        assert!(c.append(&[e(5, 2)], &[5]).is_err());
        c.set_snapshot({
            let mut s = Snapshot::default();
            s.mut_metadata().index = 2;
            s.mut_metadata().term = 2;
            s
        });
        c.compact(3);
        assert_eq!(c.first(), 3);
        assert_eq!(c.term(2).unwrap(), 2);
        assert!(matches!(
            c.term(1),
            Err(raft::Error::Store(StorageError::Compacted))
        ));
        assert!(c.append(&[e(1, 3)], &[6]).is_err());
    }
}
