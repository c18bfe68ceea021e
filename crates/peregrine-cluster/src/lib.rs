//! Replication of a deterministic service (the Peregrine exchange) over Raft.
//!
//! * [`Node`] drives raft-rs's `RawNode` (a consensus core without I/O): ticks,
//!   messages, proposals, and the handling of each `Ready` — new entries and the
//!   hard state made durable in one journal commit, acknowledgements sent only after
//!   it, committed entries applied through the [`StateMachine`] on every node,
//!   snapshots at the same indices everywhere with a replicated state-hash check.
//! * [`log`] keeps the Raft log on `peregrine-journal` (one durable log; logical
//!   truncation of an uncommitted suffix on append-only segments) and snapshots in
//!   its `SnapshotStore`.
//! * [`wire`] and [`transport`] carry raft-rs messages between nodes over TCP in our
//!   own bounded, CRC-framed layout.
//!
//! Why raft-rs and how every part works: `docs/cluster.md`.
#![deny(unsafe_code)]

pub mod config;
pub mod entry;
pub mod error;
pub mod log;
pub mod node;
mod os;
pub mod runner;
pub mod sm;
pub mod transport;
pub mod wire;

pub use config::{ClusterConfig, PeerConfig};
pub use error::{ClusterError, DecodeError, FrameError, LogError};
pub use node::{hex, Event, MembershipChange, Node, NodeOptions, Role, Status};
pub use runner::{spawn, Pump, RunnerHandle};
pub use sm::{SnapshotEncode, StateMachine};

/// raft-rs's message type, as carried by the transport, and its kinds.
pub use raft::eraftpb::{Message, MessageType};
