//! Segments prepared ahead (`JournalConfig::preallocate`): appends land in a file of
//! zeros, a crash leaves those zeros after the last record, and start-up must keep
//! every record, report nothing dropped, and still catch a lost committed record.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{read_all, record, Owned};
use peregrine_journal::{FsyncPolicy, Journal, JournalConfig, JournalError};

fn config(segment_bytes: u64) -> JournalConfig {
    JournalConfig {
        preallocate: true,
        ..common::config(segment_bytes, FsyncPolicy::Batch)
    }
}

fn append_commit(j: &mut Journal, r: &Owned) {
    j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
    j.commit().unwrap();
}

/// Appends and commits records from `next` until the active segment is a prepared
/// one; returns what it appended.
fn until_prepared(j: &mut Journal, next: &mut u64) -> Vec<Owned> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut out = Vec::new();
    while !j.active_prepared() {
        assert!(Instant::now() < deadline, "no prepared segment in 30 s");
        let r = record(*next, 40);
        append_commit(j, &r);
        out.push(r);
        *next += 1;
        std::thread::sleep(Duration::from_millis(2));
    }
    out
}

/// The byte offset where a segment's records end, by scanning it.
fn records_end(path: &Path, first_seq: u64) -> u64 {
    let bytes = std::fs::read(path).unwrap();
    peregrine_journal::scan::scan(&bytes, path, first_seq, true)
        .unwrap()
        .valid_end
}

/// A fresh journal in `dir`, written until its active segment is a prepared one;
/// with the records written and the next sequence number.
fn open_prepared(dir: &Path, cfg: &JournalConfig) -> (Journal, Vec<Owned>, u64) {
    let (mut j, _) = Journal::open(dir, cfg.clone()).unwrap();
    let mut next = 1;
    let recs = until_prepared(&mut j, &mut next);
    (j, recs, next)
}

/// [`open_prepared`], then a "crash" (`mem::forget`: no trim, no close). Returns the
/// records, the active segment and where its records end (zeros follow).
fn crashed_in_a_prepared_segment(dir: &Path, cfg: &JournalConfig) -> (Vec<Owned>, PathBuf, u64) {
    let (j, recs, _) = open_prepared(dir, cfg);
    std::mem::forget(j);
    let active = peregrine_journal::segment::list(dir)
        .unwrap()
        .pop()
        .unwrap();
    let end = records_end(&active.path, active.first_seq);
    (recs, active.path, end)
}

fn spares(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            peregrine_journal::prealloc::is_spare_name(name.to_str().unwrap())
        })
        .count()
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn a_crash_in_a_prepared_segment_keeps_every_record_and_writing_goes_on_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20);
    let (mut j, mut recs, mut next) = open_prepared(dir.path(), &cfg);
    let active = j.segments().last().unwrap().clone();
    assert_eq!(
        len(&active.path),
        1 << 20,
        "the first spare is min(4 MiB, segment)"
    );
    for _ in 0..50 {
        let r = record(next, 100);
        append_commit(&mut j, &r);
        recs.push(r);
        next += 1;
    }
    std::mem::forget(j); // kill -9: no trim, no close

    let end = records_end(&active.path, active.first_seq);
    assert!(
        end < 1 << 20 && len(&active.path) == 1 << 20,
        "zeros after the records"
    );
    let (mut j, report) = Journal::open(dir.path(), cfg.clone()).unwrap();
    assert_eq!(report.truncated, None, "unused zeros are not a torn tail");
    assert_eq!(report.last_seq, Some(next - 1));
    assert!(
        j.active_prepared(),
        "the reopened segment still has its room"
    );
    let r = record(next, 100);
    append_commit(&mut j, &r);
    recs.push(r);
    assert_eq!(len(&active.path), 1 << 20, "written in place, not appended");
    j.close().unwrap();

    assert_eq!(
        len(&active.path),
        records_end(&active.path, active.first_seq),
        "close trims the zeros"
    );
    let (report, got) = read_all(dir.path(), cfg);
    assert_eq!((report.truncated, got), (None, recs));
}

#[test]
fn a_torn_record_among_the_zeros_is_dropped_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20);
    let (recs, active, end) = crashed_in_a_prepared_segment(dir.path(), &cfg);
    // Half a record header that never got its commit: a torn write.
    let mut bytes = std::fs::read(&active).unwrap();
    bytes[end as usize..end as usize + 20].fill(0x5A);
    std::fs::write(&active, &bytes).unwrap();

    let (report, got) = read_all(dir.path(), cfg);
    let t = report.truncated.expect("a torn record is reported");
    assert_eq!((t.segment, t.offset), (active.clone(), end));
    assert_eq!(got, recs);
    assert_eq!(len(&active), end, "cut back to the last record");
}

#[test]
fn committed_records_lost_to_zeros_in_a_prepared_segment_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20);
    let (recs, active, end) = crashed_in_a_prepared_segment(dir.path(), &cfg);
    let end = end as usize;
    // The last committed record's pages never reached the disk (power loss): zeros.
    let last_len = 36 + recs.last().unwrap().payload.len();
    let mut bytes = std::fs::read(&active).unwrap();
    bytes[end - last_len..end].fill(0);
    std::fs::write(&active, &bytes).unwrap();

    match Journal::open(dir.path(), cfg) {
        Err(JournalError::CommittedRecordsLost { missing, .. }) => assert_eq!(missing, 1),
        other => panic!("expected the loss refused, got {:?}", other.map(|r| r.1)),
    }
}

#[test]
fn rotation_through_prepared_segments_seals_each_at_its_last_record() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(64 << 10);
    let (mut j, mut recs, mut next) = open_prepared(dir.path(), &cfg);
    let mut prepared_segments = 1;
    let mut last_active = j.active_segment();
    // 4,000 records of 136 bytes: about 8 segments of 64 KiB.
    for _ in 0..4_000 {
        let r = record(next, 100);
        append_commit(&mut j, &r);
        recs.push(r);
        next += 1;
        if j.active_segment() != last_active {
            last_active = j.active_segment();
            prepared_segments += usize::from(j.active_prepared());
            // Give the helper time to prepare the next one now and then.
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let stats = *j.stats();
    assert_eq!(
        stats.segments_prepared, prepared_segments as u64,
        "{stats:?}"
    );
    assert!(!stats.prepare_failed);
    j.close().unwrap();
    assert!(prepared_segments >= 3, "only {prepared_segments} prepared");
    for seg in peregrine_journal::segment::list(dir.path()).unwrap() {
        let end = records_end(&seg.path, seg.first_seq);
        assert_eq!(len(&seg.path), end, "{} not trimmed", seg.path.display());
    }
    assert_eq!(spares(dir.path()), 0, "no spare left behind");
    let (report, got) = read_all(dir.path(), cfg);
    assert_eq!((report.truncated, got), (None, recs));
}

#[test]
fn preallocate_off_never_creates_a_spare() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = JournalConfig {
        preallocate: false,
        ..config(1 << 20)
    };
    let (mut j, _) = Journal::open(dir.path(), cfg).unwrap();
    for seq in 1..=20 {
        append_commit(&mut j, &record(seq, 40));
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(!j.active_prepared());
    assert_eq!(spares(dir.path()), 0);
    let stats = j.stats();
    assert_eq!((stats.segments_prepared, stats.segments_plain), (0, 1));
}
