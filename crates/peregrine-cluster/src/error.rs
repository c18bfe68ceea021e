//! Typed errors of the cluster crate, by layer: wire decoding, the durable log, the node.

use std::path::PathBuf;

/// A peer's bytes that do not decode. The connection that sent them is closed; the
/// node is unaffected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Fewer bytes than the field at `at` needs.
    #[error("truncated at byte {at}: {need} more byte(s) needed")]
    Truncated { at: usize, need: usize },
    /// Unknown layout version.
    #[error("unknown version {0}")]
    BadVersion(u8),
    /// Unknown flag bits.
    #[error("unknown flags {0:#04x}")]
    BadFlags(u8),
    /// An enum byte outside its table.
    #[error("unknown {what} {value}")]
    BadEnum { what: &'static str, value: u8 },
    /// A reserved byte that is not zero.
    #[error("non-zero reserved byte at {at}")]
    Reserved { at: usize },
    /// A count the remaining bytes cannot hold.
    #[error("{count} {what} cannot fit in the frame")]
    Count { what: &'static str, count: usize },
    /// Bytes left over after the message.
    #[error("{0} trailing byte(s)")]
    Trailing(usize),
}

/// A frame or handshake that does not check out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The frame's length exceeds `max_frame_bytes`.
    #[error("frame of {len} bytes exceeds the limit of {max}")]
    TooLarge { len: usize, max: usize },
    /// The body's CRC-32C differs from the header's.
    #[error("frame checksum mismatch")]
    Checksum,
    /// The connection's first 40 bytes are not a valid hello.
    #[error("bad hello: {0}")]
    Hello(&'static str),
    /// The body does not decode.
    #[error("bad message: {0}")]
    Decode(#[from] DecodeError),
}

/// Errors of the durable Raft log (journal + snapshots) and its recovery.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The journal refused an operation.
    #[error("journal: {0}")]
    Journal(#[from] peregrine_journal::JournalError),
    /// The snapshot store refused an operation.
    #[error("snapshot store: {0}")]
    Snapshot(#[from] peregrine_journal::SnapshotError),
    /// A cluster record in the journal does not decode (journal seq, why).
    #[error("journal record {seq}: {why}")]
    BadRecord { seq: u64, why: String },
    /// A snapshot file's cluster blob does not decode.
    #[error("snapshot {path}: {why}")]
    BadSnapshot { path: PathBuf, why: String },
    /// The journal does not continue the Raft log: an entry index jumps.
    #[error(
        "journal record {seq}: entry index {found} does not continue the log ending at {last}"
    )]
    Gap { seq: u64, last: u64, found: u64 },
    /// The journal starts after the newest snapshot's position, or holds no snapshot
    /// for its pruned prefix.
    #[error("the journal starts at seq {first} but recovery needs seq {needed} (a snapshot or segment is missing)")]
    MissingPrefix { first: u64, needed: u64 },
    /// The log after a snapshot marker depends on a snapshot file that is missing or
    /// corrupt.
    #[error("journal record {seq} installs snapshot {seq} which is missing or corrupt")]
    MissingSnapshot { seq: u64 },
    /// An entry or hard state that the log cannot hold.
    #[error("{0}")]
    Invalid(String),
}

/// Errors of a cluster node.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The durable log failed; the node stops (a journal write error poisons it).
    #[error("log: {0}")]
    Log(#[from] LogError),
    /// raft-rs refused an operation.
    #[error("raft: {0}")]
    Raft(#[from] raft::Error),
    /// A proposal reached a node that is not the leader.
    #[error("not the leader (leader: {leader:?})")]
    NotLeader { leader: Option<u64> },
    /// A proposal larger than `max_entry_bytes`.
    #[error("entry of {len} bytes exceeds max_entry_bytes {max}")]
    EntryTooLarge { len: usize, max: usize },
    /// The state machine refused a snapshot.
    #[error("state machine: {0}")]
    StateMachine(String),
    /// The configuration is invalid (every problem).
    #[error("invalid cluster config: {}", .0.join("; "))]
    Config(Vec<String>),
    /// This node was removed from the cluster.
    #[error("this node was removed from the cluster")]
    Removed,
    /// A promotion to voter of a node that does not hold the committed log yet (a
    /// voter that cannot run would count against the majority).
    #[error(
        "node {id} has not caught up: it holds the log to index {matched} of {commit} \
         (wait until it installed a snapshot and caught up, then promote it)"
    )]
    NotCaughtUp { id: u64, matched: u64, commit: u64 },
    /// A membership change proposed while an earlier one is not yet applied (Raft
    /// takes one at a time).
    #[error(
        "a membership change (at index {index}) is not applied yet: wait for it, then propose this one"
    )]
    ChangePending { index: u64 },
}
