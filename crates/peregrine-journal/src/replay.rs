//! Sequential replay of verified records, one segment in memory at a time.

use crate::error::JournalError;
use crate::record::{self, Record};
use crate::scan;
use crate::segment::{SegmentFile, SEGMENT_HEADER_LEN};
use crate::storage::Storage;

/// A lending iterator over records `from..=last`, made by
/// [`Journal::replay_from`](crate::Journal::replay_from).
///
/// Each record is re-verified (CRC, sequence continuity). Payloads borrow
/// the replay's segment buffer, so call [`Replay::next`] in a `while let`:
///
/// ```no_run
/// # fn f(j: &mut peregrine_journal::Journal) -> Result<(), peregrine_journal::JournalError> {
/// let mut replay = j.replay_from(1)?;
/// while let Some(rec) = replay.next()? {
///     println!("{} {} {:?}", rec.seq, rec.kind, rec.payload);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Replay {
    storage: Storage,
    segments: Vec<SegmentFile>,
    /// Index of the next segment to load.
    next_segment: usize,
    buf: Vec<u8>,
    pos: usize,
    next_seq: u64,
    last: u64,
    /// True until the first record is yielded: records below `from` in the
    /// starting segment are skipped, anywhere else they are a gap.
    seeking: bool,
}

impl Replay {
    pub(crate) fn new(storage: Storage, segments: Vec<SegmentFile>, from: u64, last: u64) -> Self {
        let start = segments
            .iter()
            .rposition(|s| s.first_seq <= from)
            .unwrap_or(0);
        Self {
            storage,
            segments,
            next_segment: start,
            buf: Vec::new(),
            pos: 0,
            next_seq: from,
            last,
            seeking: true,
        }
    }

    /// The next record, `Ok(None)` after the last one.
    #[allow(clippy::should_implement_trait)] // lending: the item borrows self
    pub fn next(&mut self) -> Result<Option<Record<'_>>, JournalError> {
        if self.next_seq > self.last {
            return Ok(None);
        }
        loop {
            while self.pos >= self.buf.len() {
                self.load_next_segment()?;
            }
            let rec = match record::decode(&self.buf[self.pos..]) {
                Ok(rec) => rec,
                // Unused room of a prepared segment: the segment ends here, as in
                // recovery's scan.
                Err(_) if scan::is_unused_room(&self.buf[self.pos..]) => {
                    self.pos = self.buf.len();
                    continue;
                }
                Err(defect) => return Err(self.corrupt(defect)),
            };
            let (seq, len) = (rec.seq, rec.encoded_len());
            if self.seeking && seq < self.next_seq {
                self.pos += len;
                continue;
            }
            if seq != self.next_seq {
                return Err(self.gap(seq));
            }
            let at = self.pos;
            self.seeking = false;
            self.pos += len;
            self.next_seq += 1;
            return Ok(Some(record::parse_verified(&self.buf[at..])));
        }
    }

    fn load_next_segment(&mut self) -> Result<(), JournalError> {
        let Some(seg) = self.segments.get(self.next_segment) else {
            return Err(JournalError::SeqNotAvailable {
                requested: self.next_seq,
                first: self.segments.first().map_or(0, |s| s.first_seq),
                last: self.last,
            });
        };
        self.storage
            .read_into(&seg.path, &mut self.buf)
            .map_err(|e| JournalError::io("read segment", &seg.path, e))?;
        if self.buf.len() < SEGMENT_HEADER_LEN {
            return Err(JournalError::BadSegmentHeader {
                segment: seg.path.clone(),
            });
        }
        self.pos = SEGMENT_HEADER_LEN;
        self.next_segment += 1;
        Ok(())
    }

    fn current_path(&self) -> std::path::PathBuf {
        self.segments[self.next_segment - 1].path.clone()
    }

    fn corrupt(&self, defect: record::RecordDefect) -> JournalError {
        JournalError::CorruptRecord {
            segment: self.current_path(),
            offset: self.pos as u64,
            defect,
            next_valid_at: None,
        }
    }

    fn gap(&self, found: u64) -> JournalError {
        JournalError::SeqGap {
            segment: self.current_path(),
            offset: self.pos as u64,
            expected: self.next_seq,
            found,
        }
    }
}
