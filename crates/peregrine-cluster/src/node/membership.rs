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
/// they come from our own leader's log, never straight from a socket). The bytes are
/// checked first ([`plain`]): rust-protobuf 2 never sees a group.
pub(crate) fn decode(e: &Entry) -> Result<AppliedChange, String> {
    let nested = match e.entry_type {
        EntryType::EntryConfChangeV2 => Some(2), // `changes`: ConfChangeSingle
        _ => None,
    };
    plain(&e.data, nested).map_err(|why| format!("conf change at {}: {why}", e.index))?;
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

/// Checks protobuf bytes before rust-protobuf 2 parses them: every field well formed
/// and no group (wire types 3 and 4), the unbounded recursion of RUSTSEC-2024-0437;
/// the length-delimited field `nested` (a sub-message) is checked the same way, one
/// level down. Neither `ConfChange` nor `ConfChangeV2` has a group or deeper nesting,
/// so this refuses nothing raft-rs writes (docs/cluster.md, "Supply chain").
pub(crate) fn plain(b: &[u8], nested: Option<u64>) -> Result<(), String> {
    let mut at = 0;
    while at < b.len() {
        let key = varint(b, &mut at)?;
        let field = key >> 3;
        match key & 7 {
            0 => {
                varint(b, &mut at)?;
            }
            1 => at = skip(b, at, 8)?,
            5 => at = skip(b, at, 4)?,
            2 => {
                let n = usize::try_from(varint(b, &mut at)?).map_err(|_| "length".to_string())?;
                let end = skip(b, at, n)?;
                if Some(field) == nested {
                    plain(&b[at..end], None)?;
                }
                at = end;
            }
            w => {
                return Err(format!(
                    "field {field}: wire type {w} (a group, or invalid)"
                ))
            }
        }
    }
    Ok(())
}

fn varint(b: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at).ok_or("truncated varint")?;
        *at += 1;
        v |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("varint longer than 10 bytes".into())
}

fn skip(b: &[u8], at: usize, n: usize) -> Result<usize, String> {
    at.checked_add(n)
        .filter(|end| *end <= b.len())
        .ok_or_else(|| "truncated field".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn what_raft_rs_writes_passes_and_decodes() {
        for change in [
            MembershipChange::AddLearner {
                id: 4,
                addr: "10.0.0.4:7710".into(),
            },
            MembershipChange::AddVoter {
                id: 4,
                addr: "h:1".into(),
            },
            MembershipChange::Remove { id: 9 },
        ] {
            let (cc, ctx) = change.to_raft();
            let e = Entry {
                entry_type: EntryType::EntryConfChangeV2,
                data: cc.write_to_bytes().unwrap().into(),
                context: ctx.into(),
                ..Default::default()
            };
            let d = decode(&e).unwrap();
            assert_eq!(d.cc, cc);
        }
        let v1 = ConfChange {
            node_id: 3,
            change_type: ConfChangeType::RemoveNode,
            ..Default::default()
        };
        let e = Entry {
            entry_type: EntryType::EntryConfChange,
            data: v1.write_to_bytes().unwrap().into(),
            ..Default::default()
        };
        assert_eq!(decode(&e).unwrap().cc.changes[0].node_id, 3);
    }

    #[test]
    fn groups_and_bad_fields_are_refused_before_rust_protobuf_sees_them() {
        // A start-group tag (field 2, wire type 3) repeated: what overflowed the
        // stack of rust-protobuf < 3.7.2.
        let deep = vec![0x13u8; 100_000];
        assert!(plain(&deep, Some(2)).is_err());
        // A group inside the nested `changes` message.
        let inner = [0x0B, 0x0C]; // field 1 start group, end group
        let outer = [&[0x12, inner.len() as u8][..], &inner[..]].concat();
        assert!(plain(&outer, Some(2)).is_err());
        assert!(
            plain(&outer, None).is_ok(),
            "an unparsed bytes field may hold anything"
        );
        // Truncated varint, truncated length, invalid wire type.
        assert!(plain(&[0x08, 0x80], None).is_err());
        assert!(plain(&[0x12, 0x05, 0x00], None).is_err());
        assert!(plain(&[0x0F], None).is_err());
        let e = Entry {
            entry_type: EntryType::EntryConfChangeV2,
            data: deep.into(),
            ..Default::default()
        };
        assert!(decode(&e).unwrap_err().contains("wire type 3"));
    }

    proptest! {
        #[test]
        fn prop_plain_never_panics(b in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = plain(&b, Some(2));
        }
    }
}
