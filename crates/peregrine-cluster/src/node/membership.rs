//! Membership changes as raft-rs conf-change entries. One change per entry (Raft's
//! simple protocol: a majority of the old and the new configuration always
//! overlap); the entry's context carries the address of a node being added, so every
//! member learns it from the log.

use protobuf::Message as _;
use raft::eraftpb::{ConfChange, ConfChangeSingle, ConfChangeType, ConfChangeV2, Entry, EntryType};

/// A membership change an operator asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MembershipChange {
    /// Add a voter (prefer adding a learner first, then promoting it once caught up).
    AddVoter {
        /// New node id.
        id: u64,
        /// Its peer address.
        addr: String,
    },
    /// Add a non-voting learner that receives the log.
    AddLearner {
        /// New node id.
        id: u64,
        /// Its peer address.
        addr: String,
    },
    /// Remove a voter or learner.
    Remove {
        /// Node id.
        id: u64,
    },
}

impl MembershipChange {
    /// The raft-rs conf change and the entry context (the address, if any).
    pub(crate) fn to_raft(&self) -> (ConfChangeV2, Vec<u8>) {
        let (ty, id, ctx) = match self {
            Self::AddVoter { id, addr } => (ConfChangeType::AddNode, *id, addr.as_bytes().to_vec()),
            Self::AddLearner { id, addr } => (
                ConfChangeType::AddLearnerNode,
                *id,
                addr.as_bytes().to_vec(),
            ),
            Self::Remove { id } => (ConfChangeType::RemoveNode, *id, Vec::new()),
        };
        let single = ConfChangeSingle {
            change_type: ty,
            node_id: id,
            ..Default::default()
        };
        let cc = ConfChangeV2 {
            changes: vec![single].into(),
            ..Default::default()
        };
        (cc, ctx)
    }
}

/// A committed conf-change entry, decoded.
#[derive(Debug, Clone)]
pub(crate) struct AppliedChange {
    pub cc: ConfChangeV2,
    /// Address from the entry context (for additions), if valid UTF-8 and non-empty.
    pub addr: Option<String>,
}

/// Decodes a committed conf-change entry (raft-rs encodes them with rust-protobuf;
/// they come from our own leader's log, never straight from a socket).
pub(crate) fn decode(e: &Entry) -> Result<AppliedChange, String> {
    let cc = match e.entry_type {
        EntryType::EntryConfChangeV2 => ConfChangeV2::parse_from_bytes(&e.data)
            .map_err(|err| format!("conf change v2 at {}: {err}", e.index))?,
        EntryType::EntryConfChange => {
            let v1 = ConfChange::parse_from_bytes(&e.data)
                .map_err(|err| format!("conf change at {}: {err}", e.index))?;
            let single = ConfChangeSingle {
                change_type: v1.change_type,
                node_id: v1.node_id,
                ..Default::default()
            };
            ConfChangeV2 {
                changes: vec![single].into(),
                ..Default::default()
            }
        }
        EntryType::EntryNormal => return Err("not a conf change".into()),
    };
    let addr = std::str::from_utf8(&e.context)
        .ok()
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    Ok(AppliedChange { cc, addr })
}
