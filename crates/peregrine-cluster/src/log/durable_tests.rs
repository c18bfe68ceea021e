use std::path::Path;

use proptest::prelude::*;
use raft::eraftpb::{ConfState, Entry, EntryType, HardState, Snapshot, SnapshotMetadata};

use super::*;
use crate::log::snapshot::SnapshotData;

fn entry(index: u64, term: u64, len: usize) -> Entry {
    let data: Vec<u8> = (0..len).map(|i| (i as u64 ^ index ^ term) as u8).collect();
    Entry {
        entry_type: EntryType::EntryNormal,
        index,
        term,
        data: data.into(),
        context: if index.is_multiple_of(3) {
            bytes::Bytes::from_static(b"ctx")
        } else {
            bytes::Bytes::new()
        },
        ..Default::default()
    }
}

fn hs(term: u64, vote: u64, commit: u64) -> HardState {
    HardState {
        term,
        vote,
        commit,
        ..Default::default()
    }
}

fn snapshot(index: u64, term: u64) -> Snapshot {
    let mut meta = SnapshotMetadata {
        index,
        term,
        ..Default::default()
    };
    meta.set_conf_state(ConfState::from((vec![1, 2, 3], vec![])));
    let data = SnapshotData {
        state: bytes::Bytes::from(format!("state@{index}")),
        ..Default::default()
    };
    let mut s = Snapshot {
        data: data.encode().into(),
        ..Default::default()
    };
    s.set_metadata(meta);
    s
}

fn opts() -> LogOptions {
    LogOptions {
        fsync: FsyncPolicy::None,
        ..LogOptions::default()
    }
}

fn open(dir: &Path, o: &LogOptions) -> (DurableLog, Recovered) {
    DurableLog::open(dir, o).unwrap()
}

fn ents(r: &Recovered) -> Vec<(u64, u64, Vec<u8>, Vec<u8>)> {
    r.entries
        .iter()
        .map(|(e, _)| (e.index, e.term, e.data.to_vec(), e.context.to_vec()))
        .collect()
}

fn model(es: &[Entry]) -> Vec<(u64, u64, Vec<u8>, Vec<u8>)> {
    es.iter()
        .map(|e| (e.index, e.term, e.data.to_vec(), e.context.to_vec()))
        .collect()
}

#[test]
fn entries_longer_than_a_record_and_the_hard_state_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, rec) = open(dir.path(), &opts());
    assert!(rec.entries.is_empty() && rec.snapshot.is_none());
    let es: Vec<Entry> = (1..=20)
        .map(|i| entry(i, 1, [0, 10, 4000, 4064, 4065, 10_000][i as usize % 6]))
        .collect();
    for e in &es {
        log.append_entry(e).unwrap();
    }
    log.append_hard_state(&hs(1, 2, 15)).unwrap();
    log.commit().unwrap();
    drop(log);
    let (_, rec) = open(dir.path(), &opts());
    assert_eq!(ents(&rec), model(&es));
    assert_eq!(rec.hard_state, hs(1, 2, 15));
    assert_eq!(rec.partial_dropped, 0);
}

#[test]
fn a_replaced_uncommitted_suffix_is_cut_on_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = open(dir.path(), &opts());
    for i in 1..=5 {
        log.append_entry(&entry(i, 1, 50)).unwrap();
    }
    log.commit().unwrap();
    // A new leader (term 2) overwrites 3.. with its own entries.
    let newer = [entry(3, 2, 70), entry(4, 2, 9000)];
    for e in &newer {
        log.append_entry(e).unwrap();
    }
    log.append_hard_state(&hs(2, 3, 9)).unwrap(); // commit beyond the log is clamped
    log.commit().unwrap();
    drop(log);
    let (_, rec) = open(dir.path(), &opts());
    let mut want = model(&[entry(1, 1, 50), entry(2, 1, 50)]);
    want.extend(model(&newer));
    assert_eq!(ents(&rec), want);
    assert_eq!(rec.hard_state, hs(2, 3, 4));
}

#[test]
fn an_entry_torn_between_its_records_is_dropped_and_the_log_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = open(dir.path(), &opts());
    for i in 1..=3 {
        log.append_entry(&entry(i, 1, 100)).unwrap();
    }
    log.commit().unwrap();
    // The journal writes its committed high-water mark after the segment: a crash
    // that tears the segment's last write leaves the mark of the commit before.
    let mark = dir.path().join("journal").join("journal.hwm");
    let before = std::fs::read(&mark).unwrap();
    log.append_entry(&entry(4, 1, 3 * 4096)).unwrap(); // 4 records
    log.commit().unwrap();
    drop(log);
    std::fs::write(&mark, before).unwrap();
    // A crash cut the entry's last record in half.
    let seg = std::fs::read_dir(dir.path().join("journal"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let len = std::fs::metadata(&seg).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&seg)
        .unwrap()
        .set_len(len - 30)
        .unwrap();
    let (mut log, rec) = open(dir.path(), &opts());
    assert_eq!(rec.entries.len(), 3);
    assert_eq!(rec.partial_dropped, 1);
    assert!(rec.tail.is_some());
    let e4 = entry(4, 2, 5000);
    log.append_entry(&e4).unwrap();
    log.commit().unwrap();
    drop(log);
    let (_, rec) = open(dir.path(), &opts());
    assert_eq!(rec.entries.len(), 4);
    assert_eq!(ents(&rec)[3], model(&[e4])[0]);
    assert_eq!(
        rec.partial_dropped, 1,
        "the abandoned pieces are still skipped"
    );
}

#[test]
fn an_installed_snapshot_replaces_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = open(dir.path(), &opts());
    for i in 1..=5 {
        log.append_entry(&entry(i, 1, 10)).unwrap();
    }
    log.commit().unwrap();
    let seq = log
        .install_snapshot(&snapshot(10, 2), &hs(2, 1, 10))
        .unwrap();
    assert_eq!(log.snapshot_seq(), seq);
    let after = [entry(11, 2, 10), entry(12, 3, 10)];
    for e in &after {
        log.append_entry(e).unwrap();
    }
    log.append_hard_state(&hs(3, 0, 11)).unwrap();
    log.commit().unwrap();
    drop(log);
    let (_, rec) = open(dir.path(), &opts());
    let s = rec.snapshot.clone().unwrap();
    assert_eq!((s.get_metadata().index, s.get_metadata().term), (10, 2));
    assert_eq!(ents(&rec), model(&after));
    assert_eq!(rec.hard_state, hs(3, 0, 11));
}

#[test]
fn a_local_snapshot_lets_covered_segments_go_and_keeps_what_follows() {
    let dir = tempfile::tempdir().unwrap();
    let o = LogOptions {
        segment_bytes: 8 * 1024,
        snapshot_retain: 1,
        ..opts()
    };
    let (mut log, _) = open(dir.path(), &o);
    let mut seqs = Vec::new();
    let es: Vec<Entry> = (1..=200).map(|i| entry(i, 1, 300)).collect();
    for e in &es {
        seqs.push(log.append_entry(e).unwrap());
    }
    log.commit().unwrap();
    log.save_snapshot(seqs[149], &snapshot(150, 1), &hs(1, 1, 180))
        .unwrap();
    let first_seq =
        peregrine_journal::segment::list(&dir.path().join("journal")).unwrap()[0].first_seq;
    assert!(first_seq > 1, "covered segments were pruned");
    drop(log);
    let (_, rec) = open(dir.path(), &o);
    assert_eq!(rec.snapshot.as_ref().unwrap().get_metadata().index, 150);
    assert_eq!(ents(&rec), model(&es[150..]));
    assert_eq!(rec.hard_state.commit, 180);
}

#[test]
fn a_snapshot_written_without_its_marker_is_repaired_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = open(dir.path(), &opts());
    for i in 1..=3 {
        log.append_entry(&entry(i, 1, 10)).unwrap();
    }
    log.commit().unwrap();
    let next = log.next_seq();
    drop(log);
    // The process died after writing the file, before the marker record.
    let mut store =
        SnapshotStore::open(dir.path().join("snapshots"), SnapshotConfig::default()).unwrap();
    let file = SnapshotFile {
        snapshot: snapshot(20, 4),
        hard_state: hs(4, 2, 20),
    };
    store.write(next, file.encode()).unwrap();
    let (mut log, rec) = open(dir.path(), &opts());
    assert_eq!(rec.snapshot.unwrap().get_metadata().index, 20);
    assert!(rec.entries.is_empty());
    assert_eq!(log.next_seq(), next + 1, "the marker took its seq");
    log.append_entry(&entry(21, 4, 10)).unwrap();
    log.commit().unwrap();
    drop(log);
    let (_, rec) = open(dir.path(), &opts());
    assert_eq!(ents(&rec), model(&[entry(21, 4, 10)]));
}

#[test]
fn a_marker_whose_snapshot_is_gone_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = open(dir.path(), &opts());
    log.append_entry(&entry(1, 1, 10)).unwrap();
    log.commit().unwrap();
    let seq = log.install_snapshot(&snapshot(9, 2), &hs(2, 0, 9)).unwrap();
    log.append_entry(&entry(10, 2, 10)).unwrap();
    log.commit().unwrap();
    drop(log);
    let snap = dir
        .path()
        .join("snapshots")
        .join(format!("snapshot-{seq:020}.snap"));
    std::fs::remove_file(snap).unwrap();
    match DurableLog::open(dir.path(), &opts()) {
        Err(LogError::MissingSnapshot { seq: s }) => assert_eq!(s, seq),
        other => panic!("expected MissingSnapshot, got {other:?}"),
    }
}

#[test]
fn records_of_another_kind_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = open(dir.path(), &opts());
    log.append_raw(1, 1, b"an exchange command").unwrap();
    log.commit().unwrap();
    drop(log);
    assert!(matches!(
        DurableLog::open(dir.path(), &opts()),
        Err(LogError::BadRecord { seq: 1, .. })
    ));
}

#[derive(Debug, Clone)]
enum Op {
    /// Append entries from `start` (clamped into the log) with `term`.
    Append {
        start: u64,
        n: u64,
        term: u64,
        len: usize,
    },
    HardState {
        term: u64,
        commit: u64,
    },
    Install {
        ahead: u64,
    },
    Reopen,
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u64..40, 1u64..6, 1u64..5, prop_oneof![0usize..200, 4000usize..9000])
            .prop_map(|(start, n, term, len)| Op::Append { start, n, term, len }),
        2 => (1u64..10, 0u64..60).prop_map(|(term, commit)| Op::HardState { term, commit }),
        1 => (1u64..10).prop_map(|ahead| Op::Install { ahead }),
        2 => Just(Op::Reopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever mix of appends, suffix replacements, hard states, snapshot installs and
    /// restarts: recovery yields exactly the log a last-writer-wins model holds.
    #[test]
    fn prop_recovery_equals_the_model(ops in proptest::collection::vec(arb_op(), 1..40)) {
        let dir = tempfile::tempdir().unwrap();
        let o = LogOptions { segment_bytes: 16 * 1024, ..opts() };
        let (mut log, _) = open(dir.path(), &o);
        let mut snap_index = 0u64;
        let mut entries: Vec<Entry> = Vec::new();
        let mut term = 1u64;
        for op in ops {
            match op {
                Op::Append { start, n, term: t, len } => {
                    let last = entries.last().map_or(snap_index, |e| e.index);
                    let first = (snap_index + 1 + start).min(last + 1);
                    term = term.max(t);
                    entries.truncate((first - snap_index - 1) as usize);
                    for i in first..first + n {
                        let e = entry(i, term, len);
                        log.append_entry(&e).unwrap();
                        entries.push(e);
                    }
                    log.commit().unwrap();
                }
                Op::HardState { term: t, commit } => {
                    log.append_hard_state(&hs(t, 0, commit)).unwrap();
                    log.commit().unwrap();
                }
                Op::Install { ahead } => {
                    let last = entries.last().map_or(snap_index, |e| e.index);
                    snap_index = last + ahead;
                    term += 1;
                    log.install_snapshot(&snapshot(snap_index, term), &hs(term, 0, snap_index)).unwrap();
                    entries.clear();
                }
                Op::Reopen => {
                    drop(log);
                    let (l, rec) = open(dir.path(), &o);
                    log = l;
                    prop_assert_eq!(ents(&rec), model(&entries));
                    let got = rec.snapshot.map_or(0, |s| s.get_metadata().index);
                    prop_assert_eq!(got, snap_index);
                }
            }
        }
        drop(log);
        let (_, rec) = open(dir.path(), &o);
        prop_assert_eq!(ents(&rec), model(&entries));
    }
}

/// A snapshot written on another thread: the store travels with the write, so a
/// second write cannot start, nothing is named or pruned until the file is durable,
/// appends go on meanwhile, and a crash before the end (the write dropped unrun)
/// leaves the previous snapshot the one recovery uses.
#[test]
fn a_snapshot_written_elsewhere_counts_only_once_finished() {
    let dir = tempfile::tempdir().unwrap();
    let o = LogOptions {
        segment_bytes: 8 * 1024,
        snapshot_retain: 1,
        ..opts()
    };
    let (mut log, _) = open(dir.path(), &o);
    let es: Vec<Entry> = (1..=200).map(|i| entry(i, 1, 300)).collect();
    let mut seqs = Vec::new();
    for e in &es[..150] {
        seqs.push(log.append_entry(e).unwrap());
    }
    log.commit().unwrap();
    log.save_snapshot(seqs[99], &snapshot(100, 1), &hs(1, 1, 100))
        .unwrap();
    let w = log
        .begin_snapshot(seqs[149], &snapshot(150, 1), &hs(1, 1, 150))
        .unwrap()
        .expect("newer than the last snapshot");
    assert!(log
        .begin_snapshot(seqs[149], &snapshot(150, 1), &hs(1, 1, 150))
        .is_err());
    assert_eq!(
        log.snapshot_seq(),
        seqs[99],
        "not named before it is durable"
    );
    let done = std::thread::spawn(move || w.run()).join().unwrap();
    for e in &es[150..] {
        log.append_entry(e).unwrap();
    }
    log.commit().unwrap();
    log.finish_snapshot(done).unwrap();
    assert_eq!(log.snapshot_seq(), seqs[149]);
    assert!(log
        .begin_snapshot(seqs[149], &snapshot(150, 1), &hs(1, 1, 150))
        .unwrap()
        .is_none());
    // A write that never ran (the process died mid-way): the older snapshot stands.
    let lost = log
        .begin_snapshot(seqs[149] + 40, &snapshot(190, 1), &hs(1, 1, 190))
        .unwrap()
        .unwrap();
    drop(lost);
    drop(log);
    let (_, rec) = open(dir.path(), &o);
    assert_eq!(rec.snapshot.as_ref().unwrap().get_metadata().index, 150);
    assert_eq!(ents(&rec), model(&es[150..]));
}
