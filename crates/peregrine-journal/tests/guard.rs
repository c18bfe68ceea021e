//! The guarded end of the journal: lost committed records (a truncated, damaged or
//! deleted last segment) are refused with the count and the files untouched, unless
//! the caller accepts the loss; a torn, never-acknowledged tail is still dropped.

mod common;

use std::path::Path;

use common::{config, read_all, record, segments, set_len, set_mark, write_all, Owned};
use peregrine_journal::hwm::{self, Mark, MarkDefect};
use peregrine_journal::{
    AcceptedLoss, Damage, FsyncPolicy, Journal, JournalConfig, JournalError, LossPolicy,
    RecordDefect, TailDefect,
};

fn records(first: u64, n: u64, len: usize) -> Vec<Owned> {
    (first..first + n).map(|s| record(s, len)).collect()
}

/// Every file of `dir` with its bytes, to prove a refused open changed nothing.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    out.sort();
    out
}

fn refused(dir: &Path, cfg: &JournalConfig) -> JournalError {
    let before = snapshot(dir);
    let err = Journal::open(dir, cfg.clone()).expect_err("must refuse");
    assert_eq!(snapshot(dir), before, "a refused open modifies nothing");
    err
}

fn lost(err: &JournalError) -> (u64, u64, Option<u64>, Damage) {
    match err {
        JournalError::CommittedRecordsLost {
            missing,
            committed_seq,
            found_last,
            damage,
        } => (*missing, *committed_seq, *found_last, damage.clone()),
        other => panic!("expected CommittedRecordsLost, got {other}"),
    }
}

/// Opens with the loss accepted, checks the report, then proves the journal is
/// whole again: a plain open is clean, and appending continues after the kept part.
fn accept(dir: &Path, cfg: &JournalConfig, missing: u64, kept: &[Owned]) {
    let (mut j, report) = Journal::open_with(dir, cfg.clone(), LossPolicy::Accept).unwrap();
    match report.accepted_loss {
        Some(AcceptedLoss::Lost { missing: m, .. }) => assert_eq!(m, missing),
        other => panic!("expected an accepted loss, got {other:?}"),
    }
    let next = kept.last().map_or(1, |r| r.seq + 1);
    assert_eq!(report.committed_seq, next - 1);
    let r = record(next, 8);
    j.append(next, r.ts, r.kind, &r.payload).unwrap();
    j.close().unwrap();
    let (report, got) = read_all(dir, cfg.clone());
    assert_eq!(report.accepted_loss, None);
    assert_eq!(&got[..got.len() - 1], kept);
    assert_eq!(report.committed_seq, next);
}

#[test]
fn a_fresh_journal_has_a_zero_mark_that_every_commit_advances() {
    for policy in [
        FsyncPolicy::EveryCommand,
        FsyncPolicy::Batch,
        FsyncPolicy::None,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (mut j, report) = Journal::open(dir.path(), config(1 << 20, policy)).unwrap();
        assert_eq!(report.committed_seq, 0);
        assert_eq!(hwm::read(dir.path()).unwrap(), Some(Mark::default()));
        for r in records(1, 5, 8) {
            j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
        }
        let before = hwm::read(dir.path()).unwrap().unwrap().committed_seq;
        let expect_before = if policy == FsyncPolicy::EveryCommand {
            5
        } else {
            0
        };
        assert_eq!(
            before, expect_before,
            "{policy:?}: appends alone do not commit"
        );
        j.commit().unwrap();
        let m = hwm::read(dir.path()).unwrap().unwrap();
        assert_eq!(
            m,
            Mark {
                committed_seq: 5,
                segment_first: 1
            },
            "{policy:?}"
        );
        std::mem::forget(j); // a crash right after the commit: the mark is on disk
        let (_, report) = Journal::open(dir.path(), config(1 << 20, policy)).unwrap();
        assert_eq!((report.committed_seq, report.last_seq), (5, Some(5)));
    }
}

#[test]
fn the_mark_is_synced_with_each_commit_unless_deferred() {
    for (mark_fsync, syncs) in [(true, 3), (false, 0)] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = JournalConfig {
            mark_fsync,
            ..config(1 << 20, FsyncPolicy::Batch)
        };
        let (mut j, _) = Journal::open(dir.path(), cfg).unwrap();
        for r in records(1, 3, 8) {
            j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
            j.commit().unwrap();
            // Written either way: a process crash never loses the mark.
            assert_eq!(hwm::read(dir.path()).unwrap().unwrap().committed_seq, r.seq);
        }
        assert_eq!(j.stats().mark_syncs, syncs, "mark_fsync = {mark_fsync}");
        assert_eq!(j.stats().syncs, 3);
    }
}

#[test]
fn a_truncated_last_record_is_refused_with_the_count() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    let recs = records(1, 20, 40);
    write_all(dir.path(), cfg.clone(), &recs);
    let seg = segments(dir.path()).pop().unwrap();
    let len = std::fs::metadata(&seg).unwrap().len();
    set_len(&seg, len - 10);
    let err = refused(dir.path(), &cfg);
    let (missing, committed, found, damage) = lost(&err);
    assert_eq!((missing, committed, found), (1, 20, Some(19)));
    assert_eq!(
        damage,
        Damage::Tail {
            segment: seg,
            offset: len - 76,
            defect: TailDefect::Record(RecordDefect::TruncatedPayload)
        }
    );
    assert!(err.is_loss());
    assert!(
        err.to_string().starts_with("1 committed record(s) missing"),
        "{err}"
    );
    accept(dir.path(), &cfg, 1, &recs[..19]);
}

#[test]
fn a_cut_between_records_is_refused_with_the_count() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    let recs = records(1, 20, 40);
    write_all(dir.path(), cfg.clone(), &recs);
    let seg = segments(dir.path()).pop().unwrap();
    let len = std::fs::metadata(&seg).unwrap().len();
    set_len(&seg, len - 3 * 76);
    let (missing, _, found, damage) = lost(&refused(dir.path(), &cfg));
    assert_eq!((missing, found), (3, Some(17)));
    assert_eq!(damage, Damage::EndsEarly { segment: Some(seg) });
    accept(dir.path(), &cfg, 3, &recs[..17]);
}

#[test]
fn a_flipped_byte_in_the_last_committed_record_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    let recs = records(1, 20, 40);
    write_all(dir.path(), cfg.clone(), &recs);
    let seg = segments(dir.path()).pop().unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = bytes.len() - 5; // inside seq 20's payload
    bytes[at] ^= 0x20;
    std::fs::write(&seg, &bytes).unwrap();
    let (missing, _, found, damage) = lost(&refused(dir.path(), &cfg));
    assert_eq!((missing, found), (1, Some(19)));
    assert!(matches!(
        damage,
        Damage::Tail {
            defect: TailDefect::Record(RecordDefect::CrcMismatch),
            ..
        }
    ));
    accept(dir.path(), &cfg, 1, &recs[..19]);
}

#[test]
fn a_deleted_last_segment_is_refused_with_the_count() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(JournalConfig::MIN_SEGMENT_BYTES, FsyncPolicy::Batch);
    let recs = records(1, 200, 100);
    write_all(dir.path(), cfg.clone(), &recs);
    let segs = peregrine_journal::segment::list(dir.path()).unwrap();
    let last = segs.last().unwrap().clone();
    let in_last = 201 - last.first_seq;
    std::fs::remove_file(&last.path).unwrap();
    let (missing, committed, found, damage) = lost(&refused(dir.path(), &cfg));
    assert_eq!(
        (missing, committed, found),
        (in_last, 200, Some(last.first_seq - 1))
    );
    assert_eq!(
        damage,
        Damage::SegmentMissing {
            first_seq: last.first_seq,
            path: last.path.clone(),
        }
    );
    accept(
        dir.path(),
        &cfg,
        in_last,
        &recs[..last.first_seq as usize - 1],
    );
}

#[test]
fn every_segment_deleted_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    write_all(dir.path(), cfg.clone(), &records(1, 17, 40));
    for s in segments(dir.path()) {
        std::fs::remove_file(s).unwrap();
    }
    let (missing, _, found, damage) = lost(&refused(dir.path(), &cfg));
    assert_eq!((missing, found), (17, None));
    assert_eq!(
        damage,
        Damage::SegmentMissing {
            first_seq: 1,
            path: dir.path().join(peregrine_journal::segment::file_name(1)),
        }
    );
    accept(dir.path(), &cfg, 17, &[]);
}

#[test]
fn bytes_after_the_last_commit_are_still_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    let recs = records(1, 20, 40);
    write_all(dir.path(), cfg.clone(), &recs);
    let seg = segments(dir.path()).pop().unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    let mut half = vec![0u8; 76];
    peregrine_journal::record::encode_into(&mut half, 21, Default::default(), 1, &[7; 40]);
    bytes.extend_from_slice(&half[..30]); // a record cut by the crash, never committed
    std::fs::write(&seg, &bytes).unwrap();
    let (report, got) = read_all(dir.path(), cfg);
    assert_eq!(got, recs);
    assert_eq!(report.truncated.unwrap().bytes_dropped, 30);
    assert_eq!(report.accepted_loss, None);
}

#[test]
fn a_missing_mark_is_refused_unless_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    let recs = records(1, 9, 40);
    write_all(dir.path(), cfg.clone(), &recs);
    std::fs::remove_file(hwm::path(dir.path())).unwrap();
    let err = refused(dir.path(), &cfg);
    assert!(
        matches!(err, JournalError::MissingHighWaterMark { records: 9, .. }),
        "{err}"
    );
    let (_, report) = Journal::open_with(dir.path(), cfg.clone(), LossPolicy::Accept).unwrap();
    assert_eq!(
        report.accepted_loss,
        Some(AcceptedLoss::NoMark { records: 9 })
    );
    let (report, got) = read_all(dir.path(), cfg);
    assert_eq!((report.committed_seq, got), (9, recs));
}

#[test]
fn a_damaged_mark_is_refused_unless_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    write_all(dir.path(), cfg.clone(), &records(1, 9, 40));
    let mut b = std::fs::read(hwm::path(dir.path())).unwrap();
    b[9] ^= 1;
    std::fs::write(hwm::path(dir.path()), &b).unwrap();
    let err = refused(dir.path(), &cfg);
    assert!(matches!(
        err,
        JournalError::BadHighWaterMark {
            defect: MarkDefect::Crc,
            ..
        }
    ));
    let (_, report) = Journal::open_with(dir.path(), cfg.clone(), LossPolicy::Accept).unwrap();
    assert_eq!(
        report.accepted_loss,
        Some(AcceptedLoss::BadMark {
            defect: MarkDefect::Crc
        })
    );
    assert_eq!(read_all(dir.path(), cfg).0.committed_seq, 9);
}

#[test]
fn an_intact_journal_with_uncommitted_records_opens_cleanly() {
    // Records after the mark that are whole stay (as before the mark existed); they
    // are written again and synced, and the mark moves over them (a failed fdatasync
    // of the process that wrote them may have left their pages clean but unwritten).
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    let recs = records(1, 12, 40);
    write_all(dir.path(), cfg.clone(), &recs);
    set_mark(dir.path(), 7);
    let (report, got) = read_all(dir.path(), cfg.clone());
    assert_eq!(
        (
            report.committed_seq,
            report.rewritten,
            report.truncated,
            got
        ),
        (12, 5, None, recs.clone())
    );
    // Without fsync nothing is promised, and nothing is rewritten.
    set_mark(dir.path(), 7);
    let (report, _) = read_all(dir.path(), config(1 << 20, FsyncPolicy::None));
    assert_eq!((report.committed_seq, report.rewritten), (7, 0));
}

/// Permission problems are typed as such. As root (CI) the check runs in a child
/// process whose identity `setpriv` drops to `nobody`; otherwise a mode-000 file is
/// enough.
#[test]
fn a_permission_error_is_reported_as_a_permission_error() {
    if let Ok(dir) = std::env::var("PEREGRINE_PERMISSION_CHILD") {
        let err = Journal::open(&dir, config(1 << 20, FsyncPolicy::Batch)).unwrap_err();
        assert!(
            matches!(err, JournalError::PermissionDenied { .. }),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("permission denied"), "{err}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::Batch);
    write_all(dir.path(), cfg.clone(), &records(1, 3, 8));
    let seg = segments(dir.path()).pop().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&seg, std::fs::Permissions::from_mode(0o000)).unwrap();
    // The effective uid, from the "Uid:" line of /proc/self/status (no libc call).
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let root = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"));
    if !root {
        let err = Journal::open(dir.path(), cfg).unwrap_err();
        assert!(
            matches!(err, JournalError::PermissionDenied { .. }),
            "{err:?}"
        );
        return;
    }
    // The temp dir must be reachable by nobody; the segment itself is mode 000.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&exe)
        .args([
            "--exact",
            "a_permission_error_is_reported_as_a_permission_error",
        ])
        .env("PEREGRINE_PERMISSION_CHILD", dir.path())
        .output()
        .expect("setpriv runs (util-linux)");
    assert!(
        out.status.success(),
        "child failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
}

#[test]
fn a_deferred_mark_covers_only_what_a_commit_wrote_and_never_regresses() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::None);
    let (mut j, _) = Journal::open(dir.path(), cfg).unwrap();
    let mark = || hwm::read(dir.path()).unwrap().unwrap().committed_seq;
    for r in records(1, 5, 8) {
        j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
    }
    j.write().unwrap();
    assert_eq!(mark(), 0, "`write` leaves the mark alone");
    // Appended after the write, not yet written by a commit: not covered.
    for r in records(6, 2, 8) {
        j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
    }
    j.write_mark(3).unwrap();
    assert_eq!(mark(), 3, "never past `through`");
    j.write_mark(u64::MAX).unwrap();
    assert_eq!(mark(), 5, "never past what a commit wrote");
    j.write_mark(2).unwrap();
    assert_eq!(mark(), 5, "never backwards");
    j.write().unwrap();
    j.write_mark(u64::MAX).unwrap();
    assert_eq!(mark(), 7);
}

#[test]
fn records_written_past_a_lagging_mark_survive_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(1 << 20, FsyncPolicy::None);
    let (mut j, _) = Journal::open(dir.path(), cfg.clone()).unwrap();
    let recs = records(1, 9, 16);
    for r in &recs[..4] {
        j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
    }
    j.write().unwrap();
    j.write_mark(u64::MAX).unwrap();
    for r in &recs[4..] {
        j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
        j.write().unwrap(); // in the page cache, as after an acknowledged batch
    }
    // A killed process: no close, no drop (which would commit and mark).
    std::mem::forget(j);
    assert_eq!(hwm::read(dir.path()).unwrap().unwrap().committed_seq, 4);
    let (report, got) = read_all(dir.path(), cfg);
    assert_eq!(report.committed_seq, 4, "the mark as it was");
    assert_eq!((report.last_seq, report.truncated), (Some(9), None));
    assert_eq!(got, recs, "every record past the mark is kept");
}

#[test]
fn a_lagging_mark_names_the_segment_that_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(JournalConfig::MIN_SEGMENT_BYTES, FsyncPolicy::None);
    let (mut j, _) = Journal::open(dir.path(), cfg.clone()).unwrap();
    // Big records, one write each: a few to a segment, so the journal rotates.
    for r in records(1, 6, 2000) {
        j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
        j.write().unwrap();
    }
    let held = j.segments().to_vec();
    assert!(held.len() >= 3, "the test crossed rotations");
    // The caller's records are durable only up to the first segment's last one.
    let through = held[1].first_seq - 1;
    j.write_mark(through).unwrap();
    std::mem::forget(j);
    let m = hwm::read(dir.path()).unwrap().unwrap();
    assert_eq!((m.committed_seq, m.segment_first), (through, 1));
    // So the guard still sees a journal whose segments are all gone.
    for s in segments(dir.path()) {
        std::fs::remove_file(s).unwrap();
    }
    let (missing, _, found, damage) = lost(&refused(dir.path(), &cfg));
    assert_eq!((missing, found), (through, None));
    assert!(
        matches!(damage, Damage::SegmentMissing { first_seq: 1, .. }),
        "{damage:?}"
    );
}
