//! Snapshot store: atomicity, fallback, retention, pruning, background use.

mod common;

use std::path::Path;

use peregrine_journal::snapshot::{SnapshotConfig, SnapshotDefect, SnapshotStore};
use peregrine_journal::{FsyncPolicy, JournalConfig};

fn store(dir: &Path, retain: usize) -> SnapshotStore {
    let config = SnapshotConfig {
        retain,
        ..SnapshotConfig::default()
    };
    SnapshotStore::open(dir, config).unwrap()
}

#[test]
fn empty_store_has_no_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let latest = store(dir.path(), 3).latest_valid().unwrap();
    assert_eq!((latest.snapshot, latest.skipped.len()), (None, 0));
}

#[test]
fn newest_valid_wins_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(dir.path(), 3);
    s.write(10, b"ten".to_vec()).unwrap();
    s.write(20, b"twenty".to_vec()).unwrap();
    let snap = s.latest_valid().unwrap().snapshot.unwrap();
    assert_eq!((snap.last_seq, snap.data), (20, b"twenty".to_vec()));
}

#[test]
fn leftover_temp_file_is_ignored_and_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(dir.path(), 3);
    s.write(10, b"ten".to_vec()).unwrap();
    let tmp = dir.path().join("snapshot-00000000000000000020.snap.tmp");
    std::fs::write(&tmp, b"half a snapsh").unwrap();
    let latest = s.latest_valid().unwrap();
    assert_eq!(latest.snapshot.unwrap().last_seq, 10);
    assert!(latest.skipped.is_empty());
    let _reopened = store(dir.path(), 3);
    assert!(!tmp.exists());
}

#[test]
fn corrupt_newest_falls_back_to_previous_with_report() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(dir.path(), 3);
    s.write(10, b"ten".to_vec()).unwrap();
    let newest = s.write(20, b"twenty".to_vec()).unwrap().path;
    let mut bytes = std::fs::read(&newest).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&newest, &bytes).unwrap();
    let latest = s.latest_valid().unwrap();
    assert_eq!(latest.snapshot.unwrap().data, b"ten".to_vec());
    assert_eq!(latest.skipped.len(), 1);
    assert_eq!(latest.skipped[0].path, newest);
    assert_eq!(latest.skipped[0].defect, SnapshotDefect::CrcMismatch);
}

#[test]
fn renamed_snapshot_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(dir.path(), 3);
    let p = s.write(10, b"ten".to_vec()).unwrap().path;
    std::fs::rename(&p, dir.path().join("snapshot-00000000000000000099.snap")).unwrap();
    let latest = s.latest_valid().unwrap();
    assert_eq!(latest.snapshot, None);
    assert_eq!(latest.skipped[0].defect, SnapshotDefect::NameMismatch);
}

#[test]
fn retention_keeps_the_last_k() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(dir.path(), 2);
    for seq in 1..=5u64 {
        s.write(seq * 100, vec![seq as u8; 10]).unwrap();
    }
    let kept: Vec<u64> = s.snapshots().unwrap().into_iter().map(|x| x.0).collect();
    assert_eq!(kept, vec![400, 500]);
}

#[test]
fn zero_retention_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let config = SnapshotConfig {
        retain: 0,
        ..SnapshotConfig::default()
    };
    assert!(SnapshotStore::open(dir.path(), config).is_err());
}

#[test]
fn pruning_is_off_by_default_and_removes_covered_segments_when_on() {
    let root = tempfile::tempdir().unwrap();
    let jdir = root.path().join("journal");
    let cfg = JournalConfig {
        segment_bytes: JournalConfig::MIN_SEGMENT_BYTES,
        fsync: FsyncPolicy::None,
        buffer_bytes: 8 << 10,
        mark_fsync: true,
        preallocate: false,
    };
    let recs: Vec<_> = (1..=300).map(|s| common::record(s, 100)).collect();
    common::write_all(&jdir, cfg.clone(), &recs);
    let before = common::segments(&jdir).len();
    let mut off = store(&root.path().join("a"), 1);
    off.write(250, b"state".to_vec()).unwrap();
    assert_eq!(common::segments(&jdir).len(), before);

    let config = SnapshotConfig {
        retain: 2,
        prune_journal_dir: Some(jdir.clone()),
    };
    let mut on = SnapshotStore::open(root.path().join("b"), config).unwrap();
    assert!(
        on.write(100, b"s100".to_vec())
            .unwrap()
            .removed_segments
            .len()
            > 1
    );
    // Retained: 100 and 250; the oldest (100) still bounds pruning.
    assert!(on
        .write(250, b"s250".to_vec())
        .unwrap()
        .removed_segments
        .is_empty());
    let (report, _) = common::read_all(&jdir, cfg.clone());
    assert!(report.first_seq.unwrap() <= 101);
    // Retained: 250 and 280; segments up to 250 go.
    assert!(!on
        .write(280, b"s280".to_vec())
        .unwrap()
        .removed_segments
        .is_empty());
    let (report, got) = common::read_all(&jdir, cfg);
    assert!(report.first_seq.unwrap() > 101 && report.first_seq.unwrap() <= 251);
    assert_eq!(got.last().unwrap().seq, 300);
}

#[test]
fn snapshots_are_written_from_a_background_thread() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path(), 3);
    let (tx, rx) = std::sync::mpsc::channel::<(u64, Vec<u8>)>();
    let writer = std::thread::spawn(move || {
        let mut s = s;
        for (seq, blob) in rx {
            s.write(seq, blob).unwrap();
        }
        s
    });
    for seq in [10u64, 20, 30] {
        tx.send((seq, vec![seq as u8; 1000])).unwrap(); // owned blob built off the hot path
    }
    drop(tx);
    let s = writer.join().unwrap();
    assert_eq!(s.latest_valid().unwrap().snapshot.unwrap().last_seq, 30);
}
