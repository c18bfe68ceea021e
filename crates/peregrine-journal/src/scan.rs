//! Verification of one segment's bytes and the tail-versus-middle rule.
//!
//! A record that fails verification at offset `o` is the *tail* only when
//! the segment is the last one **and** no byte position after `o` holds a
//! record that passes every check (length bound, flags and reserved bytes,
//! non-zero seq, CRC) **and carries the COMMIT flag**. Zeros, garbage,
//! half-written records and valid records of a never-acknowledged batch
//! (no COMMIT record after them, e.g. pages written back out of order
//! before a power loss) are all tail. Anything else is *middle* corruption
//! and an error.
//! A CRC-valid record whose seq is not the expected one is always an error.
//!
//! The committed high-water mark refines the rule ([`scan_guarded`]): a defect in the
//! last segment at a record the mark does not cover is the tail whatever follows it.
//! Every record up to the last acknowledged one was synced before its results left,
//! and the mark was moved over it before they left too; so a defect past the mark is
//! among records that were written but never acknowledged, and COMMIT records after it
//! are of batches that were written but never synced (several can be in flight while
//! one `fdatasync` runs, and a power loss keeps whichever of their pages the kernel
//! had written back, in any order).
//!
//! Before either rule: when every byte from `o` to the end of the segment is zero,
//! the segment simply ends at `o` (no defect, nothing to drop), in any segment. That
//! is the unused room of a segment prepared ahead
//! ([`JournalConfig::preallocate`](crate::JournalConfig::preallocate)), which the
//! writer trims when it seals a segment; a crash before the trim leaves it. No record
//! is all zeros (`seq` is never 0), so zeros never hide a record, and a record lost
//! in such a stretch is still found: by the high-water mark (committed records) or
//! by the next segment's first sequence number (a gap).

use std::path::Path;

use crate::error::JournalError;
use crate::record::{self, RecordDefect, HEADER_LEN, MAX_PAYLOAD};
use crate::segment::{self, HeaderState, SEGMENT_HEADER_LEN};

pub use crate::error::TailDefect;

/// Result of scanning one segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentScan {
    /// Number of valid records.
    pub records: u64,
    /// Sequence number of the last valid record.
    pub last_seq: Option<u64>,
    /// Offset just past the last valid record (0 if the header was torn).
    pub valid_end: u64,
    /// Invalid tail starting at `valid_end`, if any.
    pub tail: Option<TailDefect>,
}

/// Verifies `bytes` (a whole segment named `path`) whose first record must
/// carry `first_seq`. Only the last segment may end in an invalid tail.
pub fn scan(
    bytes: &[u8],
    path: &Path,
    first_seq: u64,
    is_last: bool,
) -> Result<SegmentScan, JournalError> {
    scan_guarded(bytes, path, first_seq, is_last, u64::MAX)
}

/// [`scan`] knowing that records up to `committed` (the high-water mark) were
/// acknowledged and nothing after them was: a defect in the last segment past
/// `committed` is the tail (see the module documentation). `u64::MAX`: no mark.
pub fn scan_guarded(
    bytes: &[u8],
    path: &Path,
    first_seq: u64,
    is_last: bool,
    committed: u64,
) -> Result<SegmentScan, JournalError> {
    match segment::check_header(bytes) {
        HeaderState::Valid => {}
        HeaderState::Torn if is_last => return Ok(torn_header()),
        HeaderState::Torn | HeaderState::Bad => {
            return Err(JournalError::BadSegmentHeader {
                segment: path.to_path_buf(),
            })
        }
    }
    let mut out = SegmentScan {
        records: 0,
        last_seq: None,
        valid_end: SEGMENT_HEADER_LEN as u64,
        tail: None,
    };
    let mut off = SEGMENT_HEADER_LEN;
    let mut expected = first_seq;
    while off < bytes.len() {
        match record::decode(&bytes[off..]) {
            Ok(r) if r.seq == expected => {
                off += r.encoded_len();
                out.records += 1;
                out.last_seq = Some(expected);
                out.valid_end = off as u64;
                expected += 1;
            }
            Ok(r) => return Err(seq_gap(path, off, expected, r.seq)),
            Err(_) if is_unused_room(&bytes[off..]) => break,
            Err(defect) => {
                let unacknowledged = expected > committed;
                classify(bytes, path, off, defect, is_last && unacknowledged, is_last)?;
                out.tail = Some(TailDefect::Record(defect));
                break;
            }
        }
    }
    Ok(out)
}

/// The offset of the record `seq` in a segment's verified bytes (records from the
/// header on), if it holds it.
pub(crate) fn offset_of(bytes: &[u8], seq: u64) -> Option<usize> {
    let mut off = SEGMENT_HEADER_LEN;
    while off < bytes.len() {
        let r = record::decode(&bytes[off..]).ok()?;
        if r.seq == seq {
            return Some(off);
        }
        if r.seq > seq {
            return None;
        }
        off += r.encoded_len();
    }
    None
}

/// True when the rest of a segment after its last record is all zeros: the unused
/// room of a segment prepared ahead, which ends the segment (the rule above; replay
/// applies it too).
pub(crate) fn is_unused_room(rest: &[u8]) -> bool {
    rest.iter().all(|&b| b == 0)
}

fn torn_header() -> SegmentScan {
    SegmentScan {
        records: 0,
        last_seq: None,
        valid_end: 0,
        tail: Some(TailDefect::SegmentHeader),
    }
}

/// Ok(()) if the defect at `off` is a droppable tail, else the typed error.
/// `unacknowledged`: the mark says nothing from here on was acknowledged.
fn classify(
    bytes: &[u8],
    path: &Path,
    off: usize,
    defect: RecordDefect,
    unacknowledged: bool,
    is_last: bool,
) -> Result<(), JournalError> {
    if unacknowledged || (is_last && find_valid_after(bytes, off + 1, true).is_none()) {
        return Ok(());
    }
    let next_valid = find_valid_after(bytes, off + 1, is_last);
    Err(JournalError::CorruptRecord {
        segment: path.to_path_buf(),
        offset: off as u64,
        defect,
        next_valid_at: next_valid.map(|o| o as u64),
    })
}

/// First offset at or after `from` where a fully valid record starts
/// (with the COMMIT flag if `commit_only`).
///
/// A cheap pre-filter (non-zero seq, known flags, zero reserved bytes,
/// length in bounds and inside the buffer) keeps the CRC off nearly every
/// position, so a 64 MiB garbage tail is scanned in well under a second.
pub fn find_valid_after(bytes: &[u8], from: usize, commit_only: bool) -> Option<usize> {
    let last_start = bytes.len().checked_sub(HEADER_LEN)?;
    (from..=last_start).find(|&pos| {
        let b = &bytes[pos..];
        plausible(b) && (!commit_only || record::is_commit(b)) && record::decode(b).is_ok()
    })
}

fn plausible(b: &[u8]) -> bool {
    let len = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
    record::header_plausible(b) && len <= MAX_PAYLOAD && HEADER_LEN + len <= b.len()
}

fn seq_gap(path: &Path, off: usize, expected: u64, found: u64) -> JournalError {
    JournalError::SeqGap {
        segment: path.to_path_buf(),
        offset: off as u64,
        expected,
        found,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{encode_into, mark_commit, Timestamps, MAX_RECORD};

    /// A segment of `n` records, each marked COMMIT (as under EveryCommand).
    fn segment(first: u64, n: u64) -> Vec<u8> {
        segment_marked(first, n, true)
    }

    fn segment_marked(first: u64, n: u64, commit: bool) -> Vec<u8> {
        let mut out = segment::header_bytes().to_vec();
        let mut buf = vec![0u8; MAX_RECORD];
        for seq in first..first + n {
            let len = encode_into(&mut buf, seq, Timestamps::default(), 1, &seq.to_le_bytes());
            if commit {
                mark_commit(&mut buf);
            }
            out.extend_from_slice(&buf[..len]);
        }
        out
    }

    const REC: usize = HEADER_LEN + 8;
    const P: &str = "seg";

    #[test]
    fn clean_segment() {
        let s = scan(&segment(5, 3), Path::new(P), 5, false).unwrap();
        assert_eq!((s.records, s.last_seq, s.tail), (3, Some(7), None));
        assert_eq!(s.valid_end as usize, SEGMENT_HEADER_LEN + 3 * REC);
    }

    #[test]
    fn partial_last_record_is_tail_in_last_segment_only() {
        let mut b = segment(1, 3);
        b.truncate(b.len() - 5);
        let s = scan(&b, Path::new(P), 1, true).unwrap();
        assert_eq!(s.last_seq, Some(2));
        assert_eq!(
            s.tail,
            Some(TailDefect::Record(RecordDefect::TruncatedPayload))
        );
        let err = scan(&b, Path::new(P), 1, false).unwrap_err();
        assert!(matches!(
            err,
            JournalError::CorruptRecord {
                next_valid_at: None,
                ..
            }
        ));
    }

    #[test]
    fn zeros_after_records_end_the_segment_without_a_defect_in_any_segment() {
        let mut b = segment(1, 2);
        let end = b.len() as u64;
        b.extend_from_slice(&[0u8; 1000]);
        for is_last in [true, false] {
            let s = scan(&b, Path::new(P), 1, is_last).unwrap();
            assert_eq!((s.tail, s.last_seq, s.valid_end), (None, Some(2), end));
        }
        // A non-zero byte anywhere after them makes it a defect again.
        *b.last_mut().unwrap() = 1;
        let s = scan(&b, Path::new(P), 1, true).unwrap();
        assert_eq!(s.tail, Some(TailDefect::Record(RecordDefect::BadHeader)));
        assert!(scan(&b, Path::new(P), 1, false).is_err());
    }

    #[test]
    fn bad_crc_followed_by_valid_record_is_middle() {
        let mut b = segment(1, 3);
        b[SEGMENT_HEADER_LEN + REC + HEADER_LEN] ^= 0xFF; // payload of seq 2
        let err = scan(&b, Path::new(P), 1, true).unwrap_err();
        let want_off = (SEGMENT_HEADER_LEN + REC) as u64;
        let want_next = Some(want_off + REC as u64);
        assert!(
            matches!(err, JournalError::CorruptRecord { offset, next_valid_at, .. }
            if offset == want_off && next_valid_at == want_next)
        );
    }

    #[test]
    fn hole_before_unacknowledged_records_is_tail_in_last_segment() {
        let mut b = segment(1, 2);
        let hole_at = b.len();
        b.extend_from_slice(&segment_marked(3, 3, false)[SEGMENT_HEADER_LEN..]);
        b[hole_at..hole_at + REC].fill(0); // seq 3 never reached the disk
        let s = scan(&b, Path::new(P), 1, true).unwrap();
        assert_eq!((s.last_seq, s.valid_end), (Some(2), hole_at as u64));
        let err = scan(&b, Path::new(P), 1, false).unwrap_err();
        let next = Some((hole_at + REC) as u64);
        assert!(
            matches!(err, JournalError::CorruptRecord { next_valid_at, .. } if next_valid_at == next)
        );
    }

    #[test]
    fn past_the_mark_a_hole_before_committed_records_is_tail() {
        // Batches 3..=4 and 5..=6 were written (each ending in a COMMIT record) while
        // a sync ran; a power loss kept 5..=6's page but not 3's. The mark covers 2.
        let mut b = segment(1, 2);
        let hole_at = b.len();
        b.extend_from_slice(&segment(3, 4)[SEGMENT_HEADER_LEN..]);
        b[hole_at..hole_at + REC].fill(0);
        let unguarded = scan(&b, Path::new(P), 1, true);
        assert!(matches!(unguarded, Err(JournalError::CorruptRecord { .. })));
        let s = scan_guarded(&b, Path::new(P), 1, true, 2).unwrap();
        assert_eq!((s.last_seq, s.valid_end), (Some(2), hole_at as u64));
        assert!(s.tail.is_some());
        // A hole at a record the mark covers stays an error.
        assert!(scan_guarded(&b, Path::new(P), 1, true, 3).is_err());
        // And only the last segment has a tail.
        assert!(scan_guarded(&b, Path::new(P), 1, false, 2).is_err());
    }

    #[test]
    fn seq_gap_is_an_error() {
        let b = segment(1, 2);
        let err = scan(&b, Path::new(P), 9, true).unwrap_err();
        assert!(matches!(
            err,
            JournalError::SeqGap {
                expected: 9,
                found: 1,
                ..
            }
        ));
    }

    #[test]
    fn torn_and_bad_segment_headers() {
        assert_eq!(scan(&[], Path::new(P), 1, true).unwrap(), torn_header());
        assert_eq!(scan(b"PGJO", Path::new(P), 1, true).unwrap(), torn_header());
        let bad = scan(b"XXXXXXXXXXXXXXXXXXXXXXXX", Path::new(P), 1, true);
        assert!(matches!(bad, Err(JournalError::BadSegmentHeader { .. })));
        let torn_mid = scan(&[], Path::new(P), 1, false);
        assert!(matches!(
            torn_mid,
            Err(JournalError::BadSegmentHeader { .. })
        ));
    }
}
