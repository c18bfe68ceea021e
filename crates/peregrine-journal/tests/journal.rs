//! Integration tests of the journal against real files.

mod common;

use common::{config, read_all, record, segments, set_len, set_mark, write_all, Owned};
use peregrine_journal::{
    FsyncPolicy, Journal, JournalConfig, JournalError, RecordDefect, TailDefect, Timestamps,
    MAX_PAYLOAD,
};

fn records(first: u64, n: u64, len: usize) -> Vec<Owned> {
    (first..first + n).map(|s| record(s, len)).collect()
}

#[test]
fn round_trip_under_every_policy() {
    for policy in [
        FsyncPolicy::EveryCommand,
        FsyncPolicy::Batch,
        FsyncPolicy::None,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let recs = records(1, 200, 64);
        write_all(dir.path(), config(4096 * 4, policy), &recs);
        let (report, got) = read_all(dir.path(), config(4096 * 4, policy));
        assert_eq!(got, recs, "{policy:?}");
        assert_eq!((report.first_seq, report.last_seq), (Some(1), Some(200)));
        assert_eq!(report.truncated, None);
    }
}

#[test]
fn rotation_names_segments_by_first_seq_and_reopen_appends() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(JournalConfig::MIN_SEGMENT_BYTES, FsyncPolicy::Batch);
    let recs = records(10, 500, 100);
    write_all(dir.path(), cfg.clone(), &recs[..300]);
    write_all(dir.path(), cfg.clone(), &recs[300..]);
    let segs = segments(dir.path());
    assert!(segs.len() > 10, "only {} segments", segs.len());
    assert!(segs[0].ends_with("journal-00000000000000000010.log"));
    let (report, got) = read_all(dir.path(), cfg);
    assert_eq!(got, recs);
    assert_eq!(report.segments, segs.len());
}

#[test]
fn replay_from_middle_and_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(JournalConfig::MIN_SEGMENT_BYTES, FsyncPolicy::None);
    let recs = records(1, 300, 50);
    write_all(dir.path(), cfg.clone(), &recs);
    let (mut j, _) = Journal::open(dir.path(), cfg).unwrap();
    let mut replay = j.replay_from(123).unwrap();
    let mut seqs = Vec::new();
    while let Some(r) = replay.next().unwrap() {
        seqs.push(r.seq);
    }
    assert_eq!(seqs, (123..=300).collect::<Vec<_>>());
    assert!(j.replay_from(301).unwrap().next().unwrap().is_none());
    for bad in [0, 302] {
        let err = j.replay_from(bad).unwrap_err();
        assert!(
            matches!(err, JournalError::SeqNotAvailable { .. }),
            "{bad}: {err}"
        );
    }
}

#[test]
fn append_rejects_gaps_oversize_and_zero() {
    let dir = tempfile::tempdir().unwrap();
    let (mut j, _) = Journal::open(dir.path(), JournalConfig::default()).unwrap();
    let ts = Timestamps::default();
    assert!(matches!(
        j.append(0, ts, 1, b""),
        Err(JournalError::OutOfSequence { .. })
    ));
    j.append(5, ts, 1, b"first may start anywhere").unwrap();
    let err = j.append(7, ts, 1, b"").unwrap_err();
    assert!(matches!(
        err,
        JournalError::OutOfSequence {
            expected: 6,
            got: 7
        }
    ));
    let big = vec![0u8; MAX_PAYLOAD + 1];
    assert!(matches!(
        j.append(6, ts, 1, &big),
        Err(JournalError::PayloadTooLarge { .. })
    ));
    j.append(6, ts, 1, &big[..MAX_PAYLOAD]).unwrap();
    assert_eq!(
        (j.first_seq(), j.last_seq(), j.next_seq()),
        (Some(5), Some(6), Some(7))
    );
}

#[test]
fn uncommitted_batch_is_written_on_drop_and_commit_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    {
        let (mut j, _) = Journal::open(dir.path(), cfg.clone()).unwrap();
        for r in records(1, 10, 8) {
            j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
        }
        j.commit().unwrap();
        j.commit().unwrap();
        j.append(11, Timestamps::default(), 0, b"dropped without commit")
            .unwrap();
    }
    let (report, _) = read_all(dir.path(), cfg);
    assert_eq!(report.last_seq, Some(11));
}

#[test]
fn torn_tail_is_truncated_reported_and_appending_continues() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    let recs = records(1, 20, 40);
    write_all(dir.path(), cfg.clone(), &recs);
    set_mark(dir.path(), 19); // seq 20 reached the file but was never acknowledged
    let seg = segments(dir.path()).pop().unwrap();
    let len = std::fs::metadata(&seg).unwrap().len();
    set_len(&seg, len - 10);
    let (mut j, report) = Journal::open(dir.path(), cfg.clone()).unwrap();
    let t = report.truncated.expect("tail reported");
    assert_eq!(t.segment, seg);
    assert_eq!(t.last_good_seq, Some(19));
    assert_eq!(t.bytes_dropped, (36 + 40 - 10) as u64);
    assert_eq!(t.defect, TailDefect::Record(RecordDefect::TruncatedPayload));
    assert_eq!(report.accepted_loss, None);
    let r = &recs[19];
    j.append(20, r.ts, r.kind, &r.payload).unwrap();
    j.close().unwrap();
    let (report, got) = read_all(dir.path(), cfg);
    assert_eq!((report.truncated, got), (None, recs));
    assert_eq!(report.committed_seq, 20);
}

#[test]
fn zeros_after_the_last_record_are_room_to_write_in_not_a_torn_tail() {
    // What a crash leaves in a segment prepared ahead (`preallocate`); here made by
    // hand on a plain one.
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::None);
    let recs = records(1, 6, 16);
    write_all(dir.path(), cfg.clone(), &recs[..5]);
    let seg = segments(dir.path()).pop().unwrap();
    let len = std::fs::metadata(&seg).unwrap().len();
    set_len(&seg, len + 4096);
    let (mut j, report) = Journal::open(dir.path(), cfg.clone()).unwrap();
    assert_eq!((report.truncated, report.last_seq), (None, Some(5)));
    let r = &recs[5];
    j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
    j.commit().unwrap();
    assert_eq!(
        std::fs::metadata(&seg).unwrap().len(),
        len + 4096,
        "written into the zeros"
    );
    j.close().unwrap();
    let (report, got) = read_all(dir.path(), cfg);
    assert_eq!((report.truncated, got), (None, recs));
}

#[test]
fn zeros_after_the_records_of_a_sealed_segment_end_it_for_replay_too() {
    // A sealed prepared segment whose trim was lost: recovery accepts the zeros, so
    // replay must read past them into the next segment.
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(JournalConfig::MIN_SEGMENT_BYTES, FsyncPolicy::None);
    let recs = records(1, 200, 100);
    write_all(dir.path(), cfg.clone(), &recs);
    let first = segments(dir.path()).remove(0);
    let len = std::fs::metadata(&first).unwrap().len();
    set_len(&first, len + 4096);
    let (report, got) = read_all(dir.path(), cfg);
    assert!(report.segments > 1);
    assert_eq!((report.truncated, got), (None, recs));
}

#[test]
fn corrupt_middle_record_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::None);
    write_all(dir.path(), cfg.clone(), &records(1, 5, 16));
    let seg = segments(dir.path()).pop().unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    let second = 16 + 52;
    bytes[second + 40] ^= 1;
    std::fs::write(&seg, &bytes).unwrap();
    let err = Journal::open(dir.path(), cfg).unwrap_err();
    match err {
        JournalError::CorruptRecord {
            segment,
            offset,
            defect,
            next_valid_at,
        } => {
            assert_eq!((segment, offset), (seg, second as u64));
            assert_eq!(defect, RecordDefect::CrcMismatch);
            // The proof it is not the tail: the batch's COMMIT record (the last).
            assert_eq!(next_valid_at, Some(16 + 4 * 52));
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn unacknowledged_records_after_a_hole_are_dropped_as_tail() {
    // A power loss can persist later pages of an uncommitted batch but not
    // earlier ones: the hole and the records after it were never acknowledged.
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    let (mut j, _) = Journal::open(dir.path(), cfg.clone()).unwrap();
    for r in records(1, 10, 16) {
        j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
        if r.seq == 4 {
            j.commit().unwrap();
        }
    }
    drop(j); // Drop commits too, marking seq 10: undo that below.
    set_mark(dir.path(), 4);
    let seg = segments(dir.path()).pop().unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    let rec = 52;
    let hole = 16 + 4 * rec; // seq 5
    bytes[hole..hole + rec].fill(0);
    let last = 16 + 9 * rec;
    bytes[last..last + rec].fill(0); // seq 10 (the COMMIT record) lost too
    std::fs::write(&seg, &bytes).unwrap();
    let (report, got) = read_all(dir.path(), cfg);
    assert_eq!(got.len(), 4);
    let t = report.truncated.unwrap();
    assert_eq!((t.offset, t.last_good_seq), (hole as u64, Some(4)));
}

#[test]
fn torn_end_of_a_non_last_segment_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(JournalConfig::MIN_SEGMENT_BYTES, FsyncPolicy::None);
    write_all(dir.path(), cfg.clone(), &records(1, 200, 100));
    let first = segments(dir.path()).remove(0);
    let len = std::fs::metadata(&first).unwrap().len();
    set_len(&first, len - 1);
    let err = Journal::open(dir.path(), cfg).unwrap_err();
    assert!(matches!(err, JournalError::CorruptRecord { segment, .. } if segment == first));
}

#[test]
fn missing_segment_is_a_seq_gap() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(JournalConfig::MIN_SEGMENT_BYTES, FsyncPolicy::None);
    write_all(dir.path(), cfg.clone(), &records(1, 200, 100));
    let segs = segments(dir.path());
    std::fs::remove_file(&segs[1]).unwrap();
    let err = Journal::open(dir.path(), cfg).unwrap_err();
    assert!(matches!(err, JournalError::SeqGap { segment, .. } if segment == segs[2]));
}

#[test]
fn torn_new_segment_header_is_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    let recs = records(1, 3, 10);
    write_all(dir.path(), cfg.clone(), &recs);
    let torn = dir.path().join(peregrine_journal::segment::file_name(4));
    std::fs::write(&torn, b"PGJ").unwrap();
    let (mut j, report) = Journal::open(dir.path(), cfg.clone()).unwrap();
    let t = report.truncated.unwrap();
    assert_eq!(
        (t.segment, t.bytes_dropped, t.defect),
        (torn, 3, TailDefect::SegmentHeader)
    );
    assert_eq!(j.next_seq(), Some(4));
    j.append(4, Timestamps::default(), 0, b"x").unwrap();
    j.close().unwrap();
    assert_eq!(read_all(dir.path(), cfg).1.len(), 4);
}

#[test]
fn config_is_validated_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let err = Journal::open(dir.path(), config(100, FsyncPolicy::None)).unwrap_err();
    assert!(matches!(err, JournalError::Config(p) if p.len() == 1));
}

#[test]
fn handles_can_move_to_their_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<Journal>();
    assert_send::<peregrine_journal::SnapshotStore>();
    assert_send::<peregrine_journal::Replay>();
}

#[test]
fn stats_count_records_bytes_and_syncs() {
    for (policy, syncs) in [(FsyncPolicy::Batch, 5), (FsyncPolicy::None, 0)] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(JournalConfig::MIN_SEGMENT_BYTES, policy);
        let (mut j, _) = Journal::open(dir.path(), cfg).unwrap();
        assert_eq!(j.stats().records, 0);
        for batch in 0..5u64 {
            for r in records(1 + batch * 10, 10, 64) {
                j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
            }
            j.commit().unwrap();
        }
        let s = *j.stats();
        drop(j);
        let on_disk: u64 = segments(dir.path())
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum();
        assert_eq!(s.records, 50, "{policy:?}");
        assert_eq!(s.bytes_written, on_disk, "{policy:?}");
        // Rotation syncs the sealed segment under every policy; count only commits'.
        assert!(s.syncs >= syncs, "{policy:?}: {} syncs", s.syncs);
        assert_eq!(s.sync_ns_buckets.iter().sum::<u64>(), s.syncs);
        assert!(s.syncs == 0 || s.sync_ns_sum > 0);
    }
}

/// Run by the test below in a child process: opens the journal and the snapshot store
/// of the directory the variable names, and prints what happened to each.
#[test]
fn child_opens_the_journal() {
    let Ok(dir) = std::env::var("PEREGRINE_JOURNAL_CHILD") else {
        return;
    };
    let dir = std::path::Path::new(&dir);
    match Journal::open(dir.join("journal"), JournalConfig::default()) {
        Ok(_) => println!("JOURNAL OPENED"),
        Err(e) => println!("JOURNAL REFUSED {e}"),
    }
    match peregrine_journal::SnapshotStore::open(dir.join("snapshots"), Default::default()) {
        Ok(_) => println!("SNAPSHOTS OPENED"),
        Err(e) => println!("SNAPSHOTS REFUSED {e}"),
    }
}

/// Issue 27, defect 2: two exchanges on one journal directory each believed its
/// records were the journal. A second process is refused, naming the holder's pid,
/// for the journal and the snapshot directory, until the holder lets go.
#[test]
fn a_second_process_on_the_journal_or_its_snapshots_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let child = || {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_opens_the_journal", "--nocapture"])
            .env("PEREGRINE_JOURNAL_CHILD", dir.path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (journal, _) = Journal::open(dir.path().join("journal"), JournalConfig::default()).unwrap();
    let snaps =
        peregrine_journal::SnapshotStore::open(dir.path().join("snapshots"), Default::default())
            .unwrap();
    let out = child();
    let pid = format!("pid {}", std::process::id());
    for what in ["JOURNAL REFUSED", "SNAPSHOTS REFUSED"] {
        let line = out.lines().find(|l| l.starts_with(what));
        assert!(line.is_some_and(|l| l.contains(&pid)), "{what}: {out}");
    }
    drop(journal);
    drop(snaps);
    let out = child();
    assert!(
        out.contains("JOURNAL OPENED") && out.contains("SNAPSHOTS OPENED"),
        "{out}"
    );
}
