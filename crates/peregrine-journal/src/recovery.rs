//! Opening a journal directory: scan every segment in order, verify, and
//! truncate a torn tail of the last segment so appending can continue.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::error::JournalError;
use crate::scan::{self, SegmentScan, TailDefect};
use crate::segment::{self, SegmentFile};

/// A torn or corrupt tail that recovery dropped. Log it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailTruncation {
    /// The (last) segment that was truncated.
    pub segment: PathBuf,
    /// Offset of the first dropped byte.
    pub offset: u64,
    /// How many bytes were dropped.
    pub bytes_dropped: u64,
    /// Last valid sequence number kept in the journal, if any.
    pub last_good_seq: Option<u64>,
    /// Why the first dropped record was invalid.
    pub defect: TailDefect,
}

/// What `Journal::open` found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecoveryReport {
    /// Number of segment files.
    pub segments: usize,
    /// Number of valid records across all segments.
    pub records: u64,
    /// First sequence number held.
    pub first_seq: Option<u64>,
    /// Last sequence number held.
    pub last_seq: Option<u64>,
    /// Tail dropped from the last segment, if any.
    pub truncated: Option<TailTruncation>,
}

/// The state recovery hands to the writer.
#[derive(Debug)]
pub(crate) struct Recovered {
    pub segments: Vec<SegmentFile>,
    /// Length of the last segment after truncation.
    pub last_len: u64,
    pub report: RecoveryReport,
}

/// Scans `dir`, verifies all segments and truncates a torn tail.
pub(crate) fn recover(dir: &Path) -> Result<Recovered, JournalError> {
    let segments = segment::list(dir)?;
    let mut report = RecoveryReport {
        segments: segments.len(),
        ..RecoveryReport::default()
    };
    let mut buf = Vec::new();
    let mut last_len = 0;
    for (i, seg) in segments.iter().enumerate() {
        check_continuity(seg, report.last_seq)?;
        read_into(&seg.path, &mut buf)?;
        let is_last = i + 1 == segments.len();
        let s = scan::scan(&buf, &seg.path, seg.first_seq, is_last)?;
        if s.records == 0 && !is_last {
            return Err(JournalError::EmptySegment {
                segment: seg.path.clone(),
            });
        }
        merge(&mut report, &s);
        last_len = s.valid_end;
        if let Some(defect) = s.tail {
            report.truncated = Some(truncate_tail(seg, &s, buf.len() as u64, defect, &report)?);
            last_len = last_len.max(segment::SEGMENT_HEADER_LEN as u64);
        }
    }
    Ok(Recovered {
        segments,
        last_len,
        report,
    })
}

fn check_continuity(seg: &SegmentFile, prev_last: Option<u64>) -> Result<(), JournalError> {
    match prev_last {
        Some(last) if seg.first_seq != last + 1 => Err(JournalError::SeqGap {
            segment: seg.path.clone(),
            offset: segment::SEGMENT_HEADER_LEN as u64,
            expected: last + 1,
            found: seg.first_seq,
        }),
        _ => Ok(()),
    }
}

fn merge(report: &mut RecoveryReport, s: &SegmentScan) {
    report.records += s.records;
    if let Some(last) = s.last_seq {
        let first = last + 1 - s.records;
        report.first_seq.get_or_insert(first);
        report.last_seq = Some(last);
    }
}

fn read_into(path: &Path, buf: &mut Vec<u8>) -> Result<(), JournalError> {
    buf.clear();
    File::open(path)
        .and_then(|mut f| f.read_to_end(buf))
        .map_err(|e| JournalError::io("read segment", path, e))?;
    Ok(())
}

/// Cuts the last segment back to its last valid record (rewriting a torn
/// segment header) and makes the cut durable.
fn truncate_tail(
    seg: &SegmentFile,
    s: &SegmentScan,
    file_len: u64,
    defect: TailDefect,
    report: &RecoveryReport,
) -> Result<TailTruncation, JournalError> {
    let path = &seg.path;
    let io = |e| JournalError::io("truncate tail", path, e);
    let mut f = OpenOptions::new().write(true).open(path).map_err(io)?;
    f.set_len(s.valid_end).map_err(io)?;
    if defect == TailDefect::SegmentHeader {
        f.write_all(&segment::header_bytes()).map_err(io)?;
    }
    f.sync_all().map_err(io)?;
    Ok(TailTruncation {
        segment: path.clone(),
        offset: s.valid_end,
        bytes_dropped: file_len - s.valid_end,
        last_good_seq: report.last_seq,
        defect,
    })
}
