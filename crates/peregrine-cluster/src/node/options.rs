//! What a [`crate::Node`] is opened with (derived from [`crate::ClusterConfig`], or
//! built directly by tests).

use std::collections::BTreeMap;

use peregrine_journal::FsyncPolicy;

use crate::config::ClusterConfig;

/// Options of one node.
#[derive(Debug, Clone)]
pub struct NodeOptions {
    /// Node id (≥ 1).
    pub id: u64,
    /// Initial voters written as the first snapshot when the log is empty; empty for a
    /// node that joins an existing cluster.
    pub bootstrap: BTreeMap<u64, String>,
    /// Addresses from the configuration; they override addresses learnt from the log.
    pub known_peers: BTreeMap<u64, String>,
    /// Election timeout, ticks.
    pub election_tick: usize,
    /// Heartbeat interval, ticks.
    pub heartbeat_tick: usize,
    /// Randomise each election timeout in `election_tick ..< 2 × election_tick`
    /// (raft-rs draws from the thread RNG). Off: exactly `election_tick`, for
    /// deterministic simulation (give nodes different values to break ties).
    pub randomize_election: bool,
    /// Largest proposal, bytes.
    pub max_entry_bytes: usize,
    /// Largest append message, bytes.
    pub max_append_bytes: u64,
    /// Append messages in flight per follower.
    pub max_inflight: usize,
    /// Snapshot every N applied entries (0: never).
    pub snapshot_every: u64,
    /// Entries kept behind the newest snapshot.
    pub log_retain: u64,
    /// Journal fsync policy.
    pub fsync: FsyncPolicy,
    /// Journal segment size.
    pub segment_bytes: u64,
    /// Snapshot files kept.
    pub snapshot_retain: usize,
    /// Prune covered journal segments.
    pub prune: bool,
    /// Leave the journal's `fdatasync` to the shell ([`crate::Node::sync_target`],
    /// [`crate::Node::synced`]; the runner's sync thread) instead of syncing inline
    /// in [`crate::Node::advance`] (tests and the simulator).
    pub deferred_sync: bool,
    /// Committed entries applied per [`crate::Node::advance`] at most (the shell
    /// calls again while [`crate::Node::apply_backlog`] is not empty), so applying a
    /// backlog never holds up heartbeats and acknowledgements; `usize::MAX`: all.
    pub apply_slice: usize,
    /// The leader proposes a hash point every this many ticks (0: only at snapshot
    /// points): every node hashes its state there and compares with the leader's.
    pub hash_check_ticks: u64,
}

impl NodeOptions {
    /// Options for `config` (already validated).
    pub fn from_config(c: &ClusterConfig) -> Self {
        let peers: BTreeMap<u64, String> = c.peers.iter().map(|p| (p.id, p.addr.clone())).collect();
        Self {
            id: c.node_id,
            bootstrap: if c.join {
                BTreeMap::new()
            } else {
                peers.clone()
            },
            known_peers: peers,
            election_tick: c.election_ticks,
            heartbeat_tick: c.heartbeat_ticks,
            randomize_election: true,
            max_entry_bytes: c.max_entry_bytes,
            max_append_bytes: c.max_append_bytes,
            max_inflight: c.max_inflight,
            snapshot_every: c.snapshot_every,
            log_retain: c.log_retain,
            fsync: c.fsync,
            segment_bytes: c.segment_bytes,
            snapshot_retain: c.snapshot_retain,
            prune: c.prune,
            deferred_sync: true,
            apply_slice: 4,
            hash_check_ticks: (c.hash_check_secs.saturating_mul(1_000) / c.tick_ms.max(1)),
        }
    }

    /// raft-rs's config, starting after `applied`.
    pub(crate) fn raft_config(&self, applied: u64) -> raft::Config {
        let max_election = if self.randomize_election {
            2 * self.election_tick
        } else {
            self.election_tick + 1
        };
        raft::Config {
            id: self.id,
            election_tick: self.election_tick,
            heartbeat_tick: self.heartbeat_tick,
            applied,
            max_size_per_msg: self.max_append_bytes,
            max_inflight_msgs: self.max_inflight,
            // A leader that has not heard from a majority for an election timeout
            // steps down; pre-vote keeps a partitioned node from raising terms.
            check_quorum: true,
            pre_vote: true,
            min_election_tick: self.election_tick,
            max_election_tick: max_election,
            ..Default::default()
        }
    }
}
