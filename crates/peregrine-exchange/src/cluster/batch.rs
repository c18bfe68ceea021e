//! One Raft entry = one group-commit batch of journaled records, stamped with the
//! leadership that executed it.
//!
//! ```text
//! offset size
//!  0      1   version (1)
//!  1      3   reserved, zero
//!  4      4   records (u32, ≥ 1)
//!  8      8   node id of the leader that executed the batch
//! 16      8   its Raft term
//! 24      …   records: engine seq u64, length u8, the record (the journal's codec)
//! ```
//!
//! The (node, term) stamp is what lets a leader release a batch's reports only when
//! **its own** batch is committed: an entry of another leader applied while this
//! node thinks it leads means it has been deposed (`cluster::sm`). Sequence numbers
//! are consecutive inside a batch and across the log; decoding checks both.

use peregrine_exchange_core::codec::command::{self, Record, MAX_ENCODED};

const VERSION: u8 = 1;
/// Bytes before the first record.
pub(crate) const HEADER: usize = 24;

/// Who executed a batch: the leader's node id and term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) node: u64,
    pub(crate) term: u64,
}

/// Why an entry's bytes are not a batch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    /// Shorter than what its header or a record claims.
    #[error("batch truncated at byte {0}")]
    Truncated(usize),
    /// Unknown version or non-zero reserved bytes.
    #[error("bad batch header")]
    BadHeader,
    /// No records.
    #[error("empty batch")]
    Empty,
    /// A record's sequence number does not follow the previous one.
    #[error("record seq {got} where {want} was expected")]
    Gap {
        /// Expected.
        want: u64,
        /// Found.
        got: u64,
    },
    /// A record that does not decode.
    #[error("record seq {seq}: {reason}")]
    Record {
        /// Its sequence number.
        seq: u64,
        /// The codec's reason.
        reason: String,
    },
    /// Bytes after the last record.
    #[error("{0} bytes after the last record")]
    Trailing(usize),
}

/// Builds one batch; reused across batches (no allocation once grown).
#[derive(Debug, Default)]
pub(crate) struct BatchWriter {
    buf: Vec<u8>,
    count: u32,
}

impl BatchWriter {
    /// Starts a batch executed by `stamp` (drops anything unfinished).
    pub(crate) fn start(&mut self, stamp: Stamp) {
        self.buf.clear();
        self.buf.push(VERSION);
        self.buf.extend_from_slice(&[0; 3]);
        self.buf.extend_from_slice(&0u32.to_le_bytes());
        self.buf.extend_from_slice(&stamp.node.to_le_bytes());
        self.buf.extend_from_slice(&stamp.term.to_le_bytes());
        self.count = 0;
    }

    /// Appends record `seq`.
    pub(crate) fn push(&mut self, seq: u64, rec: &Record) {
        let mut enc = [0u8; MAX_ENCODED];
        let n = command::encode_record(rec, &mut enc);
        self.count += 1;
        self.buf.extend_from_slice(&seq.to_le_bytes());
        // MAX_ENCODED (232) fits a byte (const-asserted in the codec).
        self.buf.push(n as u8);
        self.buf.extend_from_slice(&enc[..n]);
    }

    /// Records in the open batch.
    pub(crate) fn len(&self) -> u32 {
        self.count
    }

    /// Finishes the batch: its bytes (the writer is empty again until `start`).
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        self.buf[4..8].copy_from_slice(&self.count.to_le_bytes());
        self.count = 0;
        std::mem::take(&mut self.buf)
    }
}

fn u64_at(b: &[u8], at: usize) -> Result<u64, BatchError> {
    let s = b.get(at..at + 8).ok_or(BatchError::Truncated(b.len()))?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Ok(u64::from_le_bytes(a))
}

/// Decodes a batch: its stamp and records, checked for consecutive sequence
/// numbers; `apply` sees each record only if the whole batch decodes.
pub(crate) fn decode(b: &[u8]) -> Result<(Stamp, Vec<(u64, Record)>), BatchError> {
    if b.len() < HEADER {
        return Err(BatchError::Truncated(b.len()));
    }
    if b[0] != VERSION || b[1..4] != [0; 3] {
        return Err(BatchError::BadHeader);
    }
    let mut c = [0u8; 4];
    c.copy_from_slice(&b[4..8]);
    let count = u32::from_le_bytes(c) as usize;
    if count == 0 {
        return Err(BatchError::Empty);
    }
    let stamp = Stamp {
        node: u64_at(b, 8)?,
        term: u64_at(b, 16)?,
    };
    // Every record takes at least 9 bytes: refuse a count the bytes cannot hold
    // before reserving room for it.
    if count > (b.len() - HEADER) / 9 {
        return Err(BatchError::Truncated(b.len()));
    }
    let mut out: Vec<(u64, Record)> = Vec::with_capacity(count);
    let mut at = HEADER;
    for _ in 0..count {
        let seq = u64_at(b, at)?;
        let n = *b.get(at + 8).ok_or(BatchError::Truncated(b.len()))? as usize;
        let body = b
            .get(at + 9..at + 9 + n)
            .ok_or(BatchError::Truncated(b.len()))?;
        if let Some(&(prev, _)) = out.last() {
            // A record after seq u64::MAX has no valid number (found by fuzzing).
            let want = prev.checked_add(1).ok_or(BatchError::Gap {
                want: prev,
                got: seq,
            })?;
            if seq != want {
                return Err(BatchError::Gap { want, got: seq });
            }
        }
        let rec = command::decode_record(body).map_err(|e| BatchError::Record {
            seq,
            reason: e.to_string(),
        })?;
        out.push((seq, rec));
        at += 9 + n;
    }
    if at != b.len() {
        return Err(BatchError::Trailing(b.len() - at));
    }
    Ok((stamp, out))
}

/// The stamp and the first and last sequence numbers of a batch, from its header and
/// first record only (what releasing a committed batch needs); `None` if `b` is too
/// short to tell. Continuity is checked when the batch is applied ([`decode`]).
pub(crate) fn peek(b: &[u8]) -> Option<(Stamp, u64, u64)> {
    let mut c = [0u8; 4];
    c.copy_from_slice(b.get(4..8)?);
    let count = u64::from(u32::from_le_bytes(c));
    let stamp = Stamp {
        node: u64_at(b, 8).ok()?,
        term: u64_at(b, 16).ok()?,
    };
    let first = u64_at(b, HEADER).ok()?;
    let last = first.checked_add(count.checked_sub(1)?)?;
    Some((stamp, first, last))
}

/// Appends the records of batch `next` to batch `acc` (one entry for several of the
/// serving loop's batches) if both have the same stamp, `next` continues `acc`'s
/// sequence, and the result stays within `max` bytes; returns whether it did.
pub(crate) fn append(acc: &mut Vec<u8>, next: &[u8], max: usize) -> bool {
    let (Some((sa, _, last)), Some((sb, first, _))) = (peek(acc), peek(next)) else {
        return false;
    };
    if sa != sb || last.checked_add(1) != Some(first) || acc.len() + next.len() - HEADER > max {
        return false;
    }
    let mut c = [0u8; 4];
    c.copy_from_slice(&acc[4..8]);
    let mut n = [0u8; 4];
    n.copy_from_slice(&next[4..8]);
    let Some(count) = u32::from_le_bytes(c).checked_add(u32::from_le_bytes(n)) else {
        return false;
    };
    acc[4..8].copy_from_slice(&count.to_le_bytes());
    acc.extend_from_slice(&next[HEADER..]);
    true
}

/// Decodes `b` for a fuzz target: any input, never a panic.
pub fn fuzz_decode(b: &[u8]) -> Result<usize, BatchError> {
    decode(b).map(|(_, r)| r.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_book::{Action, Command};
    use peregrine_types::Timestamp;

    fn rec(i: u64) -> Record {
        Record::Command(Command {
            ts: Timestamp(1_000 + i),
            action: Action::Tick,
        })
    }

    fn batch(first: u64, n: u64) -> Vec<u8> {
        let mut w = BatchWriter::default();
        w.start(Stamp { node: 2, term: 7 });
        for s in first..first + n {
            w.push(s, &rec(s));
        }
        w.finish()
    }

    #[test]
    fn a_batch_round_trips() {
        let b = batch(41, 5);
        let (stamp, recs) = decode(&b).unwrap();
        assert_eq!(stamp, Stamp { node: 2, term: 7 });
        assert_eq!(recs.len(), 5);
        for (i, (seq, r)) in recs.iter().enumerate() {
            assert_eq!(*seq, 41 + i as u64);
            assert_eq!(*r, rec(*seq));
        }
    }

    #[test]
    fn every_prefix_and_every_byte_flip_is_refused_or_harmless() {
        let b = batch(1, 3);
        for n in 0..b.len() {
            assert!(decode(&b[..n]).is_err(), "prefix {n}");
        }
        for i in 0..b.len() {
            for bit in 0..8 {
                let mut m = b.clone();
                m[i] ^= 1 << bit;
                let _ = decode(&m); // never panics
            }
        }
        let mut extra = b.clone();
        extra.push(0);
        assert_eq!(decode(&extra).unwrap_err(), BatchError::Trailing(1));
    }

    #[test]
    fn a_gap_inside_a_batch_is_refused() {
        let mut w = BatchWriter::default();
        w.start(Stamp { node: 1, term: 1 });
        w.push(1, &rec(1));
        w.push(3, &rec(3));
        assert_eq!(
            decode(&w.finish()).unwrap_err(),
            BatchError::Gap { want: 2, got: 3 }
        );
    }

    /// The fuzz target's first find: records after seq u64::MAX overflowed the
    /// continuity check (a panic with overflow checks, a wrap to 0 without).
    #[test]
    fn a_record_after_the_last_sequence_number_is_refused() {
        let mut w = BatchWriter::default();
        w.start(Stamp { node: 2, term: 7 });
        w.push(u64::MAX, &rec(1));
        w.push(0, &rec(2));
        assert!(matches!(decode(&w.finish()), Err(BatchError::Gap { .. })));
    }

    #[test]
    fn consecutive_batches_of_one_leadership_merge_into_one() {
        let mut acc = batch(10, 3);
        assert_eq!(peek(&acc), Some((Stamp { node: 2, term: 7 }, 10, 12)));
        assert!(append(&mut acc, &batch(13, 2), 1 << 16));
        let (stamp, recs) = decode(&acc).unwrap();
        assert_eq!(stamp, Stamp { node: 2, term: 7 });
        let seqs: Vec<u64> = recs.iter().map(|(s, _)| *s).collect();
        assert_eq!(seqs, vec![10, 11, 12, 13, 14]);
        assert_eq!(peek(&acc), Some((Stamp { node: 2, term: 7 }, 10, 14)));
        // Not continuing, another leadership, or too large: left alone.
        let before = acc.clone();
        assert!(!append(&mut acc, &batch(16, 1), 1 << 16));
        let mut other = BatchWriter::default();
        other.start(Stamp { node: 3, term: 7 });
        other.push(15, &rec(15));
        assert!(!append(&mut acc, &other.finish(), 1 << 16));
        assert!(!append(&mut acc, &batch(15, 1), before.len()));
        assert_eq!(acc, before);
        assert_eq!(peek(&acc[..HEADER]), None);
    }

    #[test]
    fn a_huge_count_is_refused_before_allocating() {
        let mut b = batch(1, 1);
        b[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(decode(&b), Err(BatchError::Truncated(_))));
    }
}
