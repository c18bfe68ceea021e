//! What a node reports about itself: `peregrine admin cluster status`, metrics, tests.

use serde::Serialize;

/// Raft role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Follows a leader (or waits for one).
    Follower,
    /// Asks for votes.
    Candidate,
    /// Asks whether it could win before raising its term.
    PreCandidate,
    /// Sequences and replicates.
    Leader,
}

impl From<raft::StateRole> for Role {
    fn from(r: raft::StateRole) -> Self {
        match r {
            raft::StateRole::Follower => Role::Follower,
            raft::StateRole::Candidate => Role::Candidate,
            raft::StateRole::PreCandidate => Role::PreCandidate,
            raft::StateRole::Leader => Role::Leader,
        }
    }
}

/// Replication progress of one peer, as the leader sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeerProgress {
    /// Peer id.
    pub id: u64,
    /// Highest index known to be durable on the peer.
    pub matched: u64,
    /// Next index the leader sends.
    pub next: u64,
    /// `probe`, `replicate` or `snapshot`.
    pub state: String,
    /// Voter or learner.
    pub voter: bool,
}

/// A snapshot of a node's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// This node.
    pub id: u64,
    /// Its role.
    pub role: Role,
    /// Current term.
    pub term: u64,
    /// The leader it knows of.
    pub leader: Option<u64>,
    /// Highest index known committed.
    pub commit: u64,
    /// Highest index applied to the state machine.
    pub applied: u64,
    /// First index held in the log.
    pub first_index: u64,
    /// Last index held in the log.
    pub last_index: u64,
    /// Index of the newest snapshot.
    pub snapshot_index: u64,
    /// Voting members.
    pub voters: Vec<u64>,
    /// Non-voting members.
    pub learners: Vec<u64>,
    /// Peer addresses known (id, address).
    pub peers: Vec<(u64, String)>,
    /// Per-peer progress (leader only).
    pub progress: Vec<PeerProgress>,
    /// Newest snapshot point's index and state hash (hex).
    pub state_hash: Option<(u64, String)>,
    /// State-hash entries that matched this node's own hash.
    pub hash_checks_ok: u64,
    /// State-hash entries that did not: the replicas diverged.
    pub hash_mismatches: u64,
    /// Snapshots taken locally.
    pub snapshots_taken: u64,
    /// Snapshots installed from a leader.
    pub snapshots_installed: u64,
    /// Snapshots due while the previous one's file was still being written (skipped:
    /// the next interval takes one).
    pub snapshots_skipped: u64,
    /// Entries applied since start.
    pub entries_applied: u64,
    /// Whether this node was removed from the cluster.
    pub removed: bool,
}

/// Lower-case hex of a hash.
pub fn hex(hash: &[u8; 32]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(64);
    for b in hash {
        let _ = write!(s, "{b:02x}");
    }
    s
}
