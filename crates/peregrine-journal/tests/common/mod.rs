//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::Path;

use peregrine_journal::{FsyncPolicy, Journal, JournalConfig, RecoveryReport, Timestamps};

/// An owned copy of a record, for comparisons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owned {
    pub seq: u64,
    pub ts: Timestamps,
    pub kind: u8,
    pub payload: Vec<u8>,
}

pub(crate) fn config(segment_bytes: u64, fsync: FsyncPolicy) -> JournalConfig {
    JournalConfig {
        segment_bytes,
        fsync,
        buffer_bytes: 8 << 10,
        mark_fsync: true,
        preallocate: false,
    }
}

/// Deterministic record `seq` with a payload of `len` bytes.
pub(crate) fn record(seq: u64, len: usize) -> Owned {
    Owned {
        seq,
        ts: Timestamps {
            recv_ns: seq * 10,
            engine_ns: seq * 10 + 3,
        },
        kind: (seq % 7) as u8,
        payload: (0..len).map(|i| (seq as usize + i) as u8).collect(),
    }
}

/// Appends `records` to the journal in `dir` and closes it.
pub(crate) fn write_all(dir: &Path, cfg: JournalConfig, records: &[Owned]) {
    let (mut j, _) = Journal::open(dir, cfg).unwrap();
    for r in records {
        j.append(r.seq, r.ts, r.kind, &r.payload).unwrap();
    }
    j.close().unwrap();
}

/// Opens the journal in `dir` and replays everything it holds.
pub(crate) fn read_all(dir: &Path, cfg: JournalConfig) -> (RecoveryReport, Vec<Owned>) {
    let (mut j, report) = Journal::open(dir, cfg).unwrap();
    let mut out = Vec::new();
    if let Some(first) = report.first_seq {
        let mut replay = j.replay_from(first).unwrap();
        while let Some(r) = replay.next().unwrap() {
            out.push(Owned {
                seq: r.seq,
                ts: r.ts,
                kind: r.kind,
                payload: r.payload.to_vec(),
            });
        }
    }
    (report, out)
}

/// The segment files of `dir`, oldest first.
pub(crate) fn segments(dir: &Path) -> Vec<std::path::PathBuf> {
    peregrine_journal::segment::list(dir)
        .unwrap()
        .into_iter()
        .map(|s| s.path)
        .collect()
}

/// Rewrites the high-water mark of `dir` as if only `committed_seq` had been
/// committed when the process stopped (the records after it reached the file but
/// were never acknowledged, as when a power loss persists pages of an open batch).
pub(crate) fn set_mark(dir: &Path, committed_seq: u64) {
    let segment_first = peregrine_journal::segment::list(dir)
        .unwrap()
        .iter()
        .rev()
        .find(|s| s.first_seq <= committed_seq)
        .map_or(0, |s| s.first_seq);
    let mark = peregrine_journal::hwm::Mark {
        committed_seq,
        segment_first,
    };
    std::fs::write(
        peregrine_journal::hwm::path(dir),
        peregrine_journal::hwm::encode(mark),
    )
    .unwrap();
}

/// Cuts or extends (with zeros) the file at `path` to `len` bytes, as a crash or
/// damage would leave it.
pub(crate) fn set_len(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}
