//! Offline replay of a stopped node's Raft log (`peregrine journal replay` and
//! `verify` on a cluster node): the newest snapshot restored into a fresh state
//! machine, then every committed entry after it applied in index order, exactly as
//! the node does when it restarts. The state hash at the end is the one the node
//! reported for the same applied index (`current_state` on its admin endpoint), and
//! every replicated state-hash check on the way is compared like the node compares
//! it.
//!
//! The log is opened as the node opens it at a restart (its directory lock taken, a
//! torn tail cut): stop the node first.

use std::path::Path;

use raft::eraftpb::EntryType;

use crate::entry::{self, Envelope};
use crate::error::{ClusterError, LogError};
use crate::log::durable::{DurableLog, LogOptions};
use crate::log::snapshot::SnapshotData;
use crate::sm::StateMachine;

/// What an offline replay found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OfflineReplay {
    /// Index of the snapshot the replay started from (0: none).
    pub snapshot_index: u64,
    /// Last applied index (the recorded commit index).
    pub applied: u64,
    /// Term of the hard state.
    pub term: u64,
    /// Entries after the snapshot applied.
    pub entries_applied: u64,
    /// Entries in the log after the commit index, not applied (not known committed).
    pub uncommitted: u64,
    /// Replicated state-hash checks that matched.
    pub hash_checks_ok: u64,
    /// Indices whose replicated state hash differed from the replay's.
    pub hash_mismatches: Vec<u64>,
    /// Entries whose envelope did not decode (skipped, as the node skips them).
    pub bad_entries: u64,
    /// The state hash after the last applied entry.
    pub state_hash: [u8; 32],
}

/// Replays the log in `dir` (the node's `journal.dir`: `journal/` and `snapshots/`)
/// into `sm`, which must be in its initial state. `snapshot_every` is the node's
/// (`[cluster] snapshot_every`): the indices where it hashed its state for the
/// replicated checks.
pub fn replay_offline<M: StateMachine>(
    dir: &Path,
    snapshot_every: u64,
    sm: &mut M,
) -> Result<OfflineReplay, ClusterError> {
    if !dir.join("journal").is_dir() {
        return Err(ClusterError::Log(LogError::Invalid(format!(
            "{} holds no Raft log (no journal/ directory)",
            dir.display()
        ))));
    }
    let opts = LogOptions {
        prune: false,
        ..LogOptions::default()
    };
    let (_log, rec) = DurableLog::open(dir, &opts)?;
    let mut out = OfflineReplay {
        term: rec.hard_state.term,
        ..OfflineReplay::default()
    };
    // Hashes this replay computed at snapshot and hash points, by index.
    let mut points: Vec<(u64, [u8; 32])> = Vec::new();
    if let Some(s) = &rec.snapshot {
        let data = SnapshotData::decode(&s.data).map_err(LogError::Invalid)?;
        if !data.state.is_empty() {
            sm.restore(&data.state)
                .map_err(ClusterError::StateMachine)?;
        }
        let index = s.get_metadata().index;
        let hash = sm.state_hash();
        if hash != data.state_hash {
            return Err(ClusterError::StateMachine(format!(
                "the snapshot at index {index} restores to a different state hash"
            )));
        }
        out.snapshot_index = index;
        out.applied = index;
        points.push((index, hash));
    }
    let commit = rec.hard_state.commit;
    for (e, _) in &rec.entries {
        if e.index <= out.applied {
            continue;
        }
        if e.index > commit {
            out.uncommitted += 1;
            continue;
        }
        if e.entry_type == EntryType::EntryNormal {
            match entry::decode(&e.data) {
                Ok(Envelope::Empty) => {}
                Ok(Envelope::App(data)) => sm.apply(e.index, data),
                Ok(Envelope::HashPoint) => points.push((e.index, sm.state_hash())),
                Ok(Envelope::StateHash { index, hash }) => {
                    match points.iter().find(|(i, _)| *i == index) {
                        Some((_, mine)) if *mine == hash => out.hash_checks_ok += 1,
                        Some(_) => out.hash_mismatches.push(index),
                        None => {} // a point before the snapshot: nothing to compare
                    }
                }
                Err(_) => out.bad_entries += 1,
            }
        }
        out.applied = e.index;
        out.entries_applied += 1;
        // The node snapshots (and hashes) at multiples of `snapshot_every`: the
        // state-hash check the leader replicates for that index compares here.
        if snapshot_every > 0 && e.index.is_multiple_of(snapshot_every) {
            points.push((e.index, sm.state_hash()));
        }
    }
    out.state_hash = sm.state_hash();
    Ok(out)
}
