//! The commitment log: every [`Commitment`] the hasher thread computes, appended to
//! a `peregrine-journal` write-ahead log in `<journal dir>/commitments` (CRC32 per
//! record, segments, torn-tail truncation on open), one record of kind
//! [`KIND_COMMITMENT`] per commitment, record sequence numbers 1, 2, 3...
//!
//! # Payload (112 bytes, little-endian, version 1)
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 1 | version `1` |
//! | 1 | 7 | zero |
//! | 8 | 8 | `window_ns`: the window length the commitment was computed with |
//! | 16 | 8 | `tick_seq` (window index) |
//! | 24 | 8 | `timestamp` |
//! | 32 | 8 | `tx_count` |
//! | 40 | 8 | `trade_count` |
//! | 48 | 32 | `state_hash` |
//! | 80 | 32 | `merkle_root` |
//!
//! [`decode`] checks length, version and padding and never panics
//! (`prop_decode_never_panics`).

use std::path::{Path, PathBuf};

use crate::tick::Commitment;
use peregrine_journal::{FsyncPolicy, Journal, JournalConfig, JournalError, Timestamps};

/// Journal record kind of a commitment payload.
pub const KIND_COMMITMENT: u8 = 2;
/// Encoded payload size.
pub const PAYLOAD_LEN: usize = 112;
/// Payload version written.
pub const VERSION: u8 = 1;

/// One logged commitment and the window length it was computed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedCommitment {
    /// Window length, nanoseconds (the tick in batch mode).
    pub window_ns: u64,
    /// The commitment.
    pub commitment: Commitment,
}

/// Why a payload or the log could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CommitLogError {
    /// The payload is not [`PAYLOAD_LEN`] bytes.
    #[error("commitment payload of {0} bytes, expected 112")]
    BadLength(usize),
    /// Unknown payload version.
    #[error("commitment payload version {0}, expected 1")]
    BadVersion(u8),
    /// Non-zero padding.
    #[error("commitment payload has non-zero padding")]
    BadPadding,
    /// A record of another kind.
    #[error("commitment log record {seq}: kind {kind}, expected 2")]
    BadKind {
        /// Record sequence number.
        seq: u64,
        /// Its kind.
        kind: u8,
    },
    /// A record's payload does not decode.
    #[error("commitment log record {seq}: {source}")]
    Record {
        /// Record sequence number.
        seq: u64,
        /// Why.
        #[source]
        source: Box<CommitLogError>,
    },
    /// The underlying journal failed.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// Encodes `c` (see the module docs for the layout).
pub fn encode(c: &LoggedCommitment) -> [u8; PAYLOAD_LEN] {
    let mut b = [0u8; PAYLOAD_LEN];
    let m = &c.commitment;
    b[0] = VERSION;
    b[8..16].copy_from_slice(&c.window_ns.to_le_bytes());
    b[16..24].copy_from_slice(&m.tick_seq.to_le_bytes());
    b[24..32].copy_from_slice(&m.timestamp.to_le_bytes());
    b[32..40].copy_from_slice(&m.tx_count.to_le_bytes());
    b[40..48].copy_from_slice(&m.trade_count.to_le_bytes());
    b[48..80].copy_from_slice(&m.state_hash);
    b[80..112].copy_from_slice(&m.merkle_root);
    b
}

fn u64_at(b: &[u8; PAYLOAD_LEN], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Decodes a payload; typed errors, never panics.
pub fn decode(bytes: &[u8]) -> Result<LoggedCommitment, CommitLogError> {
    let b: &[u8; PAYLOAD_LEN] = bytes
        .try_into()
        .map_err(|_| CommitLogError::BadLength(bytes.len()))?;
    if b[0] != VERSION {
        return Err(CommitLogError::BadVersion(b[0]));
    }
    if b[1..8].iter().any(|&x| x != 0) {
        return Err(CommitLogError::BadPadding);
    }
    let mut state_hash = [0u8; 32];
    state_hash.copy_from_slice(&b[48..80]);
    let mut merkle_root = [0u8; 32];
    merkle_root.copy_from_slice(&b[80..112]);
    Ok(LoggedCommitment {
        window_ns: u64_at(b, 8),
        commitment: Commitment {
            tick_seq: u64_at(b, 16),
            timestamp: u64_at(b, 24),
            tx_count: u64_at(b, 32),
            trade_count: u64_at(b, 40),
            state_hash,
            merkle_root,
        },
    })
}

/// Where the commitment log of a journal directory lives.
pub fn dir_of(journal_dir: &Path) -> PathBuf {
    journal_dir.join("commitments")
}

/// The writer, owned by the hasher thread.
#[derive(Debug)]
pub struct CommitLog {
    journal: Journal,
    next: u64,
}

impl CommitLog {
    /// Opens (creating) the log in `dir` (truncating a torn tail) and returns it with
    /// the last commitment it holds.
    pub fn open(
        dir: &Path,
        fsync: FsyncPolicy,
    ) -> Result<(CommitLog, Option<LoggedCommitment>), CommitLogError> {
        let config = JournalConfig {
            fsync,
            ..JournalConfig::default()
        };
        let (mut journal, report) = Journal::open(dir, config)?;
        if let Some(t) = &report.truncated {
            log::warn!(
                "commitment log: torn tail truncated: {} at offset {}, {} byte(s) dropped",
                t.segment.display(),
                t.offset,
                t.bytes_dropped
            );
        }
        let last = match journal.last_seq() {
            Some(seq) => {
                let mut replay = journal.replay_from(seq)?;
                match replay.next()? {
                    Some(rec) => Some(decode_record(rec.seq, rec.kind, rec.payload)?),
                    None => None,
                }
            }
            None => None,
        };
        let next = journal.last_seq().map_or(1, |s| s + 1);
        Ok((CommitLog { journal, next }, last))
    }

    /// Appends and commits one commitment (per the fsync policy).
    pub fn append(&mut self, c: &LoggedCommitment) -> Result<(), JournalError> {
        let payload = encode(c);
        let ts = Timestamps {
            recv_ns: c.commitment.timestamp,
            engine_ns: c.commitment.timestamp,
        };
        self.journal
            .append(self.next, ts, KIND_COMMITMENT, &payload)?;
        self.journal.commit()?;
        self.next += 1;
        Ok(())
    }
}

fn decode_record(seq: u64, kind: u8, payload: &[u8]) -> Result<LoggedCommitment, CommitLogError> {
    if kind != KIND_COMMITMENT {
        return Err(CommitLogError::BadKind { seq, kind });
    }
    decode(payload).map_err(|e| CommitLogError::Record {
        seq,
        source: Box::new(e),
    })
}

/// Reads every commitment of the log in `dir`, in order. Opens the log like the
/// writer does (a torn tail is truncated): run it on a stopped exchange or a copy.
pub fn read_all(dir: &Path) -> Result<Vec<LoggedCommitment>, CommitLogError> {
    let (mut journal, _) = Journal::open(dir, JournalConfig::default())?;
    let mut out = Vec::new();
    let Some(first) = journal.first_seq() else {
        return Ok(out);
    };
    let mut replay = journal.replay_from(first)?;
    while let Some(rec) = replay.next()? {
        out.push(decode_record(rec.seq, rec.kind, rec.payload)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample(i: u64) -> LoggedCommitment {
        LoggedCommitment {
            window_ns: 1_000_000,
            commitment: Commitment {
                tick_seq: i,
                timestamp: i.wrapping_mul(1_000_000),
                tx_count: 3,
                trade_count: 2,
                state_hash: [i as u8; 32],
                merkle_root: [0xAB; 32],
            },
        }
    }

    #[test]
    fn layout_is_pinned_and_round_trips() {
        let c = sample(7);
        let b = encode(&c);
        assert_eq!(b[0], 1);
        assert_eq!(&b[8..16], &1_000_000u64.to_le_bytes());
        assert_eq!(&b[16..24], &7u64.to_le_bytes());
        assert_eq!(&b[48..80], &[7u8; 32]);
        assert_eq!(&b[80..112], &[0xAB; 32]);
        assert_eq!(decode(&b).unwrap(), c);
        assert!(matches!(
            decode(&b[..111]),
            Err(CommitLogError::BadLength(111))
        ));
        let mut bad = b;
        bad[0] = 2;
        assert!(matches!(decode(&bad), Err(CommitLogError::BadVersion(2))));
        let mut bad = b;
        bad[3] = 1;
        assert!(matches!(decode(&bad), Err(CommitLogError::BadPadding)));
    }

    #[test]
    fn log_appends_reopens_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let (mut log, last) = CommitLog::open(dir.path(), FsyncPolicy::None).unwrap();
        assert_eq!(last, None);
        for i in 1..=5 {
            log.append(&sample(i)).unwrap();
        }
        drop(log);
        let (mut log, last) = CommitLog::open(dir.path(), FsyncPolicy::None).unwrap();
        assert_eq!(last, Some(sample(5)));
        log.append(&sample(9)).unwrap();
        drop(log);
        let all = read_all(dir.path()).unwrap();
        assert_eq!(all.len(), 6);
        assert_eq!(all[5], sample(9));
    }

    proptest! {
        #[test]
        fn prop_decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes);
        }

        #[test]
        fn prop_valid_prefix_mutations_decode_or_error(i in any::<u64>(), at in 0usize..112, v in any::<u8>()) {
            let mut b = encode(&sample(i));
            b[at] = v;
            match decode(&b) {
                Ok(c) => prop_assert_eq!(encode(&c), b),
                Err(_) => prop_assert!(at < 8),
            }
        }
    }
}
