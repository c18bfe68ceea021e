//! Opening a journal directory: scan every segment in order, verify, check the
//! committed high-water mark, and only then truncate a torn tail of the last segment
//! so appending can continue.
//!
//! Nothing is modified until every check passed: a journal that lost committed records
//! is refused with its files exactly as found, so the operator can inspect or restore
//! them.

use std::path::{Path, PathBuf};

use crate::error::JournalError;
use crate::hwm::{self, Mark, MarkDefect, MarkFile};
use crate::scan::{self, SegmentScan, TailDefect};
use crate::segment::{self, SegmentFile};
use crate::storage::{Open, Storage};

/// What [`Journal::open_with`](crate::Journal::open_with) does when the segments do
/// not hold everything the high-water mark says was committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LossPolicy {
    /// Refuse to open ([`JournalError::CommittedRecordsLost`] and friends), touching
    /// nothing. The default, and what [`Journal::open`](crate::Journal::open) does.
    #[default]
    Refuse,
    /// The operator accepts the loss: truncate to what the segments hold, rewrite
    /// the mark to match, report it in [`RecoveryReport::accepted_loss`].
    Accept,
}

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

pub use crate::error::Damage;

/// A loss the operator accepted with [`LossPolicy::Accept`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcceptedLoss {
    /// Committed records were missing and are now gone for good.
    Lost {
        /// How many.
        missing: u64,
        /// The mark's last committed sequence number.
        committed_seq: u64,
        /// The last record kept.
        found_last: Option<u64>,
        /// What was found.
        damage: Damage,
    },
    /// There was no mark; one was rebuilt from the segments.
    NoMark {
        /// Records found.
        records: u64,
    },
    /// The mark was damaged; it was rebuilt from the segments.
    BadMark {
        /// What was wrong with it.
        defect: MarkDefect,
    },
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
    /// The last committed sequence number according to the high-water mark (after
    /// an accepted loss: the rebuilt mark).
    pub committed_seq: u64,
    /// Tail dropped from the last segment, if any: never-acknowledged records, or
    /// (with an accepted loss) whatever the damage left.
    pub truncated: Option<TailTruncation>,
    /// A loss the caller accepted with [`LossPolicy::Accept`]. Log it loudly.
    pub accepted_loss: Option<AcceptedLoss>,
    /// Records past the committed high-water mark that were written again and synced
    /// before anything counted them (see `recover`'s rewrite of the unmarked tail).
    pub rewritten: u64,
}

/// The state recovery hands to the writer.
#[derive(Debug)]
pub(crate) struct Recovered {
    pub segments: Vec<SegmentFile>,
    /// Length of the last segment's records (its header included) after truncation.
    pub last_len: u64,
    /// Length of the last segment's file: more than `last_len` when it was prepared
    /// ahead and holds unused zeros past its records.
    pub last_file_len: u64,
    pub report: RecoveryReport,
    pub mark: MarkFile,
}

/// The scan of the last segment's invalid tail, kept until the checks pass.
struct PendingTail {
    segment: SegmentFile,
    scan: SegmentScan,
    file_len: u64,
    defect: TailDefect,
}

/// Scans `dir`, verifies all segments against the high-water mark and truncates a
/// torn tail. With `resync`, the records past the mark are then written again and
/// synced, and the mark moved over them ([`rewrite_unmarked`]).
pub(crate) fn recover(
    storage: &Storage,
    dir: &Path,
    policy: LossPolicy,
    resync: bool,
) -> Result<Recovered, JournalError> {
    let segments = segment::list_in(storage, dir)?;
    let mark = match hwm::read_in(storage, dir) {
        Ok(m) => Ok(m),
        Err(JournalError::BadHighWaterMark { defect, .. }) if policy == LossPolicy::Accept => {
            Err(defect)
        }
        Err(e) => return Err(e),
    };
    let mut report = RecoveryReport {
        segments: segments.len(),
        ..RecoveryReport::default()
    };
    let committed = match mark {
        Ok(Some(m)) => m.committed_seq,
        _ => u64::MAX,
    };
    let (last_len, last_file_len, tail) = scan_all(storage, &segments, &mut report, committed)?;
    report.accepted_loss = check_mark(dir, &segments, mark, &report, tail.as_ref(), policy)?;
    if let Some(t) = &tail {
        report.truncated = Some(truncate_tail(storage, t, &report)?);
    }
    let mark = match (&report.accepted_loss, mark) {
        (None, Ok(Some(m))) => MarkFile::open(storage, dir, m)?,
        _ => MarkFile::create(
            storage,
            dir,
            Mark {
                committed_seq: report.last_seq.unwrap_or(0),
                segment_first: segments.last().map_or(0, |s| s.first_seq),
            },
        )?,
    };
    let mut mark = mark;
    if resync {
        report.rewritten = rewrite_unmarked(storage, &segments, &report, &mut mark)?;
    }
    report.committed_seq = mark.last().committed_seq;
    let (last_len, last_file_len) = match tail {
        Some(_) => {
            let len = last_len.max(segment::SEGMENT_HEADER_LEN as u64);
            (len, len)
        }
        None => (last_len, last_file_len),
    };
    Ok(Recovered {
        segments,
        last_len,
        last_file_len,
        report,
        mark,
    })
}

/// Verifies every segment, merging counts into `report`; returns the last segment's
/// valid length, its file length and its invalid tail, if any. Modifies nothing.
fn scan_all(
    storage: &Storage,
    segments: &[SegmentFile],
    report: &mut RecoveryReport,
    committed: u64,
) -> Result<(u64, u64, Option<PendingTail>), JournalError> {
    let mut buf = Vec::new();
    let mut last_len = 0;
    let mut last_file_len = 0;
    let mut tail = None;
    for (i, seg) in segments.iter().enumerate() {
        check_continuity(seg, report.last_seq)?;
        storage
            .read_into(&seg.path, &mut buf)
            .map_err(|e| JournalError::io("read segment", &seg.path, e))?;
        let is_last = i + 1 == segments.len();
        let s = scan::scan_guarded(&buf, &seg.path, seg.first_seq, is_last, committed)?;
        if s.records == 0 && !is_last {
            return Err(JournalError::EmptySegment {
                segment: seg.path.clone(),
            });
        }
        merge(report, &s);
        last_len = s.valid_end;
        last_file_len = buf.len() as u64;
        if let Some(defect) = s.tail {
            tail = Some(PendingTail {
                segment: seg.clone(),
                scan: s,
                file_len: buf.len() as u64,
                defect,
            });
        }
    }
    Ok((last_len, last_file_len, tail))
}

/// Compares the segments with the mark. `Ok(Some(..))`: a loss accepted under
/// [`LossPolicy::Accept`]; `Ok(None)`: nothing is missing.
fn check_mark(
    dir: &Path,
    segments: &[SegmentFile],
    mark: Result<Option<Mark>, MarkDefect>,
    report: &RecoveryReport,
    tail: Option<&PendingTail>,
    policy: LossPolicy,
) -> Result<Option<AcceptedLoss>, JournalError> {
    let m = match mark {
        Err(defect) => return Ok(Some(AcceptedLoss::BadMark { defect })),
        Ok(None) if report.records == 0 => return Ok(None),
        Ok(None) => {
            return match policy {
                LossPolicy::Accept => Ok(Some(AcceptedLoss::NoMark {
                    records: report.records,
                })),
                LossPolicy::Refuse => Err(JournalError::MissingHighWaterMark {
                    dir: dir.to_path_buf(),
                    mark: hwm::path(dir),
                    records: report.records,
                }),
            };
        }
        Ok(Some(m)) => m,
    };
    let base = report
        .last_seq
        .unwrap_or_else(|| m.segment_first.saturating_sub(1));
    let missing = m.committed_seq.saturating_sub(base);
    if missing == 0 {
        return Ok(None);
    }
    let damage = damage(dir, segments, m, tail);
    match policy {
        LossPolicy::Accept => Ok(Some(AcceptedLoss::Lost {
            missing,
            committed_seq: m.committed_seq,
            found_last: report.last_seq,
            damage,
        })),
        LossPolicy::Refuse => Err(JournalError::CommittedRecordsLost {
            missing,
            committed_seq: m.committed_seq,
            found_last: report.last_seq,
            damage,
        }),
    }
}

fn damage(dir: &Path, segments: &[SegmentFile], m: Mark, tail: Option<&PendingTail>) -> Damage {
    let held = segments.iter().any(|s| s.first_seq == m.segment_first);
    match tail {
        Some(t) => Damage::Tail {
            segment: t.segment.path.clone(),
            offset: t.scan.valid_end,
            defect: t.defect,
        },
        None if !held && m.segment_first != 0 => Damage::SegmentMissing {
            first_seq: m.segment_first,
            path: dir.join(segment::file_name(m.segment_first)),
        },
        None => Damage::EndsEarly {
            segment: segments.last().map(|s| s.path.clone()),
        },
    }
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

/// Writes again, and syncs, every record past the committed mark, then moves the mark
/// over them. Returns how many.
///
/// Why: those records were written by a process that may have stopped because an
/// `fdatasync` failed. Linux then marks the pages that failed to reach the disk clean
/// ("fsyncgate"): they read back from the page cache as if nothing happened, and no
/// later sync writes them, so a power loss after this start would lose records this
/// process counted durable (found by `peregrine sim`: a hole in a sealed segment, or a
/// mark ahead of the records). Written again, they are dirty and synced for real. The
/// records up to the mark were synced successfully before the mark moved: they are on
/// the disk. The mark is written again and synced too, for the same reason.
fn rewrite_unmarked(
    storage: &Storage,
    segments: &[SegmentFile],
    report: &RecoveryReport,
    mark: &mut MarkFile,
) -> Result<u64, JournalError> {
    let committed = mark.last().committed_seq;
    let Some(last) = report.last_seq.filter(|&l| l > committed) else {
        // The mark itself may have been read from a page its failed sync left clean:
        // written again and synced, it is on the disk.
        let m = mark.last();
        if m.committed_seq > 0 {
            mark.write(m)?;
            mark.sync()?;
        }
        return Ok(0);
    };
    let mut buf = Vec::new();
    let mut rewritten = 0;
    for (i, seg) in segments.iter().enumerate() {
        let next_first = segments.get(i + 1).map_or(u64::MAX, |n| n.first_seq);
        if next_first <= committed + 1 {
            continue; // every record of this segment is at or below the mark
        }
        let io = |op| move |e| JournalError::io(op, &seg.path, e);
        storage
            .read_into(&seg.path, &mut buf)
            .map_err(io("read segment"))?;
        let is_last = i + 1 == segments.len();
        let scanned = scan::scan(&buf, &seg.path, seg.first_seq, is_last)?;
        let from = scan::offset_of(&buf, committed + 1).unwrap_or(segment::SEGMENT_HEADER_LEN);
        let end = scanned.valid_end as usize;
        if from >= end {
            continue;
        }
        let f = storage
            .open(&seg.path, Open::Write)
            .map_err(io("open segment"))?;
        f.write_all_at(&buf[from..end], from as u64)
            .map_err(io("rewrite unmarked records"))?;
        f.sync_data().map_err(io("fdatasync segment"))?;
        let first_here = seg.first_seq.max(committed + 1);
        rewritten += scanned.last_seq.map_or(0, |l| l + 1 - first_here);
    }
    let segment_first = segments
        .iter()
        .rev()
        .find(|s| s.first_seq <= last)
        .map_or(0, |s| s.first_seq);
    mark.write(Mark {
        committed_seq: last,
        segment_first,
    })?;
    mark.sync()?;
    Ok(rewritten)
}

/// Cuts the last segment back to its last valid record (rewriting a torn
/// segment header) and makes the cut durable.
fn truncate_tail(
    storage: &Storage,
    t: &PendingTail,
    report: &RecoveryReport,
) -> Result<TailTruncation, JournalError> {
    let path = &t.segment.path;
    let io = |e| JournalError::io("truncate tail", path, e);
    let f = storage.open(path, Open::Write).map_err(io)?;
    f.set_len(t.scan.valid_end).map_err(io)?;
    if t.defect == TailDefect::SegmentHeader {
        f.write_all_at(&segment::header_bytes(), 0).map_err(io)?;
    }
    f.sync_all().map_err(io)?;
    Ok(TailTruncation {
        segment: path.clone(),
        offset: t.scan.valid_end,
        bytes_dropped: t.file_len - t.scan.valid_end,
        last_good_seq: report.last_seq,
        defect: t.defect,
    })
}
