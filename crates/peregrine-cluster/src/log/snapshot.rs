//! The two snapshot layouts of the cluster.
//!
//! * [`SnapshotData`] is raft-rs's `Snapshot.data`: what a leader sends a lagging
//!   follower. It holds the peer address book, the state hash and the state machine's
//!   own snapshot (for the exchange: its existing snapshot codec).
//! * The **file blob** stored through `peregrine_journal::SnapshotStore` wraps it with
//!   the Raft metadata (index, term, conf state) and the hard state at write time, so
//!   a file alone restarts a node.
//!
//! All integers little-endian; decoders check every length before slicing.

use std::collections::BTreeMap;

use bytes::Bytes;
use raft::eraftpb::{ConfState, HardState, Snapshot, SnapshotMetadata};

use crate::log::records::{u32_at, u64_at};

/// First bytes of a cluster snapshot file blob.
pub const FILE_MAGIC: [u8; 8] = *b"PGCLSNAP";
/// Version of the file blob.
pub const FILE_VERSION: u32 = 1;
const FILE_FIXED: usize = 88;
/// Version of [`SnapshotData`].
pub const DATA_VERSION: u8 = 1;
const DATA_FIXED: usize = 48;
/// Longest peer address accepted in a snapshot.
pub const MAX_ADDR_LEN: usize = 255;

/// Raft's snapshot payload: peers, the state hash, the state machine's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SnapshotData {
    /// Peer id → address (`host:port`) as known when the snapshot was taken.
    pub peers: BTreeMap<u64, String>,
    /// The state machine's hash at the snapshot index.
    pub state_hash: [u8; 32],
    /// The state machine's own snapshot; empty means its initial state.
    pub state: Bytes,
}

impl SnapshotData {
    /// Encodes into a fresh buffer.
    pub fn encode(&self) -> Vec<u8> {
        let peers_len: usize = self.peers.values().map(|a| 10 + a.len()).sum();
        let mut out = Vec::with_capacity(DATA_FIXED + peers_len + self.state.len());
        out.push(DATA_VERSION);
        out.extend_from_slice(&[0; 3]);
        out.extend_from_slice(&(self.peers.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.state_hash);
        out.extend_from_slice(&(self.state.len() as u64).to_le_bytes());
        for (id, addr) in &self.peers {
            let addr = &addr.as_bytes()[..addr.len().min(MAX_ADDR_LEN)];
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(&(addr.len() as u16).to_le_bytes());
            out.extend_from_slice(addr);
        }
        out.extend_from_slice(&self.state);
        out
    }

    /// Decodes; `state` is a slice of `b`, not a copy.
    pub fn decode(b: &Bytes) -> Result<Self, String> {
        if b.len() < DATA_FIXED {
            return Err(format!("snapshot data of {} bytes", b.len()));
        }
        if b[0] != DATA_VERSION || b[1..4] != [0; 3] {
            return Err(format!("snapshot data version {}", b[0]));
        }
        let n_peers = u32_at(b, 4) as usize;
        let mut state_hash = [0u8; 32];
        state_hash.copy_from_slice(&b[8..40]);
        let state_len = u64_at(b, 40);
        let mut at = DATA_FIXED;
        let mut peers = BTreeMap::new();
        for _ in 0..n_peers {
            if b.len() - at < 10 {
                return Err("snapshot data: peer table truncated".into());
            }
            let id = u64_at(b, at);
            let len = usize::from(u16::from_le_bytes([b[at + 8], b[at + 9]]));
            at += 10;
            if len > MAX_ADDR_LEN || b.len() - at < len {
                return Err("snapshot data: peer address truncated or too long".into());
            }
            let addr = std::str::from_utf8(&b[at..at + len])
                .map_err(|_| "snapshot data: peer address is not UTF-8".to_string())?;
            peers.insert(id, addr.to_string());
            at += len;
        }
        if (b.len() - at) as u64 != state_len {
            return Err(format!(
                "snapshot data: state of {} bytes, header says {state_len}",
                b.len() - at
            ));
        }
        Ok(Self {
            peers,
            state_hash,
            state: b.slice(at..),
        })
    }
}

/// A snapshot as stored in a file: Raft's snapshot plus the hard state.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotFile {
    /// Raft's snapshot: metadata (index, term, conf state) and [`SnapshotData`] bytes.
    pub snapshot: Snapshot,
    /// The hard state when the file was written.
    pub hard_state: HardState,
}

impl SnapshotFile {
    /// The file blob.
    pub fn encode(&self) -> Vec<u8> {
        let meta = self.snapshot.get_metadata();
        let cs = meta.get_conf_state();
        let lists = [
            &cs.voters,
            &cs.learners,
            &cs.voters_outgoing,
            &cs.learners_next,
        ];
        let ids: usize = lists.iter().map(|l| l.len()).sum();
        let data = &self.snapshot.data;
        let mut out = Vec::with_capacity(FILE_FIXED + 8 * ids + data.len());
        out.extend_from_slice(&FILE_MAGIC);
        out.extend_from_slice(&FILE_VERSION.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        for v in [
            meta.index,
            meta.term,
            self.hard_state.term,
            self.hard_state.vote,
            self.hard_state.commit,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for l in lists {
            out.extend_from_slice(&(l.len() as u32).to_le_bytes());
        }
        out.push(u8::from(cs.auto_leave));
        out.extend_from_slice(&[0; 7]);
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        for l in lists {
            for id in l.iter() {
                out.extend_from_slice(&id.to_le_bytes());
            }
        }
        out.extend_from_slice(data);
        out
    }

    /// Decodes a file blob.
    pub fn decode(b: Vec<u8>) -> Result<Self, String> {
        if b.len() < FILE_FIXED {
            return Err(format!("snapshot blob of {} bytes", b.len()));
        }
        if b[..8] != FILE_MAGIC {
            return Err("not a cluster snapshot (magic)".into());
        }
        if u32_at(&b, 8) != FILE_VERSION || b[12..16] != [0; 4] {
            return Err(format!("cluster snapshot version {}", u32_at(&b, 8)));
        }
        let (index, term) = (u64_at(&b, 16), u64_at(&b, 24));
        let hard_state = HardState {
            term: u64_at(&b, 32),
            vote: u64_at(&b, 40),
            commit: u64_at(&b, 48),
            ..Default::default()
        };
        let counts = [56, 60, 64, 68].map(|at| u32_at(&b, at) as usize);
        let auto_leave = match b[72] {
            0 => false,
            1 => true,
            x => return Err(format!("auto_leave byte {x}")),
        };
        if b[73..80] != [0; 7] {
            return Err("non-zero reserved bytes in snapshot blob".into());
        }
        let data_len = u64_at(&b, 80);
        let ids: usize = counts.iter().sum();
        let mut at = FILE_FIXED;
        if ids > (b.len() - at) / 8 || (b.len() - at - 8 * ids) as u64 != data_len {
            return Err("snapshot blob lengths do not add up".into());
        }
        let mut lists: [Vec<u64>; 4] = Default::default();
        for (l, n) in lists.iter_mut().zip(counts) {
            for _ in 0..n {
                l.push(u64_at(&b, at));
                at += 8;
            }
        }
        let [voters, learners, voters_outgoing, learners_next] = lists;
        let mut meta = SnapshotMetadata {
            index,
            term,
            ..Default::default()
        };
        meta.set_conf_state(ConfState {
            voters,
            learners,
            voters_outgoing,
            learners_next,
            auto_leave,
            ..Default::default()
        });
        let mut snapshot = Snapshot {
            data: Bytes::from(b).slice(at..),
            ..Default::default()
        };
        snapshot.set_metadata(meta);
        Ok(Self {
            snapshot,
            hard_state,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SnapshotFile {
        let data = SnapshotData {
            peers: BTreeMap::from([(1, "127.0.0.1:1".into()), (2, "h:2".into())]),
            state_hash: [7; 32],
            state: Bytes::from_static(b"state bytes"),
        };
        let mut meta = SnapshotMetadata {
            index: 10,
            term: 2,
            ..Default::default()
        };
        meta.set_conf_state(ConfState::from((vec![1, 2, 3], vec![4])));
        let mut snapshot = Snapshot {
            data: data.encode().into(),
            ..Default::default()
        };
        snapshot.set_metadata(meta);
        SnapshotFile {
            snapshot,
            hard_state: HardState {
                term: 3,
                vote: 1,
                commit: 12,
                ..Default::default()
            },
        }
    }

    #[test]
    fn file_and_data_round_trip() {
        let f = sample();
        let back = SnapshotFile::decode(f.encode()).unwrap();
        assert_eq!(back, f);
        let d = SnapshotData::decode(&back.snapshot.data).unwrap();
        assert_eq!(d.peers.len(), 2);
        assert_eq!(&d.state[..], b"state bytes");
        assert_eq!(d.state_hash, [7; 32]);
    }

    #[test]
    fn every_truncation_and_byte_flip_is_refused_or_harmless() {
        let blob = sample().encode();
        for n in 0..blob.len() {
            assert!(
                SnapshotFile::decode(blob[..n].to_vec()).is_err(),
                "prefix {n}"
            );
        }
        let data = Bytes::from(
            SnapshotData::decode(&sample().snapshot.data)
                .unwrap()
                .encode(),
        );
        for n in 0..data.len() {
            assert!(
                SnapshotData::decode(&data.slice(..n)).is_err(),
                "prefix {n}"
            );
        }
        for i in 0..blob.len() {
            let mut b = blob.clone();
            b[i] ^= 0x5a;
            let _ = SnapshotFile::decode(b); // must not panic
        }
    }
}
