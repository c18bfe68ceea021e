//! Payloads of the cluster's journal records (`docs/cluster.md`, "The Raft log on the
//! journal"). Journal `kind` bytes 0x40..=0x43 are the cluster's; the single-node
//! exchange uses kind 1, and a cluster journal directory holds only these kinds.
//!
//! | kind | record | payload |
//! |---|---|---|
//! | 0x40 | entry (first piece) | 32-byte header + the first bytes of `data ++ context` |
//! | 0x41 | entry (continuation) | the next bytes of `data ++ context` |
//! | 0x42 | hard state | 32 bytes: version, term, vote, commit |
//! | 0x43 | snapshot installed | 24 bytes: version, index, term (the log restarts at the snapshot named by this record's seq) |

use raft::eraftpb::{EntryType, HardState};

/// First record of an entry.
pub const KIND_ENTRY: u8 = 0x40;
/// Continuation of an entry longer than one record.
pub const KIND_ENTRY_MORE: u8 = 0x41;
/// Term, vote and commit index.
pub const KIND_HARD_STATE: u8 = 0x42;
/// The log was replaced by the snapshot named by this record's journal seq.
pub const KIND_SNAPSHOT: u8 = 0x43;

/// Layout version of every cluster record payload.
pub const VERSION: u8 = 1;
/// Bytes of an entry's first-record header.
pub const ENTRY_HEADER_LEN: usize = 32;
/// Bytes of a hard-state record.
pub const HARD_STATE_LEN: usize = 32;
/// Bytes of a snapshot-installed record.
pub const SNAPSHOT_MARK_LEN: usize = 24;

/// The fixed part of an entry's first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryHeader {
    /// raft-rs entry type.
    pub entry_type: EntryType,
    /// Bytes of `data`.
    pub data_len: u32,
    /// Bytes of `context`, stored after the data.
    pub ctx_len: u32,
    /// Raft term.
    pub term: u64,
    /// Raft index.
    pub index: u64,
}

impl EntryHeader {
    /// Bytes of `data ++ context` the entry carries over all its records.
    pub fn body_len(&self) -> usize {
        self.data_len as usize + self.ctx_len as usize
    }

    /// The 32 header bytes.
    pub fn encode(&self) -> [u8; ENTRY_HEADER_LEN] {
        let mut b = [0u8; ENTRY_HEADER_LEN];
        b[0] = VERSION;
        b[1] = match self.entry_type {
            EntryType::EntryNormal => 0,
            EntryType::EntryConfChange => 1,
            EntryType::EntryConfChangeV2 => 2,
        };
        b[4..8].copy_from_slice(&self.data_len.to_le_bytes());
        b[8..12].copy_from_slice(&self.ctx_len.to_le_bytes());
        b[16..24].copy_from_slice(&self.term.to_le_bytes());
        b[24..32].copy_from_slice(&self.index.to_le_bytes());
        b
    }

    /// Parses the header at the start of `payload`; returns it and the bytes after it.
    pub fn decode(payload: &[u8]) -> Result<(Self, &[u8]), String> {
        if payload.len() < ENTRY_HEADER_LEN {
            return Err(format!("entry record of {} bytes", payload.len()));
        }
        let (h, rest) = payload.split_at(ENTRY_HEADER_LEN);
        if h[0] != VERSION {
            return Err(format!("entry record version {}", h[0]));
        }
        let entry_type = match h[1] {
            0 => EntryType::EntryNormal,
            1 => EntryType::EntryConfChange,
            2 => EntryType::EntryConfChangeV2,
            t => return Err(format!("entry type {t}")),
        };
        if h[2..4] != [0, 0] || h[12..16] != [0; 4] {
            return Err("non-zero reserved bytes in entry header".into());
        }
        let hdr = EntryHeader {
            entry_type,
            data_len: u32_at(h, 4),
            ctx_len: u32_at(h, 8),
            term: u64_at(h, 16),
            index: u64_at(h, 24),
        };
        if hdr.index == 0 {
            return Err("entry index 0".into());
        }
        if rest.len() > hdr.body_len() {
            return Err(format!(
                "entry record holds {} body bytes, header says {}",
                rest.len(),
                hdr.body_len()
            ));
        }
        Ok((hdr, rest))
    }
}

/// A hard-state record.
pub fn encode_hard_state(hs: &HardState) -> [u8; HARD_STATE_LEN] {
    let mut b = [0u8; HARD_STATE_LEN];
    b[0] = VERSION;
    b[8..16].copy_from_slice(&hs.term.to_le_bytes());
    b[16..24].copy_from_slice(&hs.vote.to_le_bytes());
    b[24..32].copy_from_slice(&hs.commit.to_le_bytes());
    b
}

/// Parses a hard-state record.
pub fn decode_hard_state(p: &[u8]) -> Result<HardState, String> {
    if p.len() != HARD_STATE_LEN || p[0] != VERSION || p[1..8] != [0; 7] {
        return Err(format!("hard-state record of {} bytes", p.len()));
    }
    Ok(HardState {
        term: u64_at(p, 8),
        vote: u64_at(p, 16),
        commit: u64_at(p, 24),
        ..Default::default()
    })
}

/// A snapshot-installed record.
pub fn encode_snapshot_mark(index: u64, term: u64) -> [u8; SNAPSHOT_MARK_LEN] {
    let mut b = [0u8; SNAPSHOT_MARK_LEN];
    b[0] = VERSION;
    b[8..16].copy_from_slice(&index.to_le_bytes());
    b[16..24].copy_from_slice(&term.to_le_bytes());
    b
}

/// Parses a snapshot-installed record: `(index, term)`.
pub fn decode_snapshot_mark(p: &[u8]) -> Result<(u64, u64), String> {
    if p.len() != SNAPSHOT_MARK_LEN || p[0] != VERSION || p[1..8] != [0; 7] {
        return Err(format!("snapshot record of {} bytes", p.len()));
    }
    Ok((u64_at(p, 8), u64_at(p, 16)))
}

/// Folds a hard state read later in the journal (or embedded in a snapshot) into
/// `acc`. Terms only grow, a vote is set at most once per term and the commit index
/// only grows, so the newest of each wins whatever order the two were written in.
pub fn merge_hard_state(acc: &mut HardState, next: &HardState) {
    if next.term > acc.term {
        acc.term = next.term;
        acc.vote = next.vote;
    } else if next.term == acc.term && acc.vote == 0 {
        acc.vote = next.vote;
    }
    acc.commit = acc.commit.max(next.commit);
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_header_round_trips_and_refuses_bad_bytes() {
        let h = EntryHeader {
            entry_type: EntryType::EntryConfChangeV2,
            data_len: 7,
            ctx_len: 3,
            term: 9,
            index: 42,
        };
        let mut rec = h.encode().to_vec();
        rec.extend_from_slice(b"abcdefghij");
        let (back, rest) = EntryHeader::decode(&rec).unwrap();
        assert_eq!(back, h);
        assert_eq!(rest, b"abcdefghij");
        rec.push(0); // more body than the header declares
        assert!(EntryHeader::decode(&rec).is_err());
        let mut bad = h.encode();
        bad[1] = 9;
        assert!(EntryHeader::decode(&bad).is_err());
        let mut bad = h.encode();
        bad[13] = 1;
        assert!(EntryHeader::decode(&bad).is_err());
        assert!(EntryHeader::decode(&[1; 5]).is_err());
    }

    #[test]
    fn hard_state_and_marker_round_trip() {
        let hs = HardState {
            term: 3,
            vote: 2,
            commit: 99,
            ..Default::default()
        };
        assert_eq!(decode_hard_state(&encode_hard_state(&hs)).unwrap(), hs);
        assert_eq!(
            decode_snapshot_mark(&encode_snapshot_mark(5, 6)).unwrap(),
            (5, 6)
        );
        assert!(decode_hard_state(&[0; 31]).is_err());
        assert!(decode_snapshot_mark(&[2; 24]).is_err());
    }

    #[test]
    fn merging_keeps_the_newest_term_vote_and_commit() {
        let hs = |term, vote, commit| HardState {
            term,
            vote,
            commit,
            ..Default::default()
        };
        let mut acc = hs(5, 2, 100);
        merge_hard_state(&mut acc, &hs(4, 1, 90)); // older: ignored except commit max
        assert_eq!(acc, hs(5, 2, 100));
        merge_hard_state(&mut acc, &hs(6, 0, 95));
        assert_eq!(acc, hs(6, 0, 100));
        merge_hard_state(&mut acc, &hs(6, 3, 120));
        assert_eq!(acc, hs(6, 3, 120));
    }
}
