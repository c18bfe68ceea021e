//! Measurement helpers shared by the criterion bench and a future
//! `peregrine bench journal` subcommand. Not for production use.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::{FsyncPolicy, Journal, JournalConfig, JournalError, Timestamps};

/// Result of [`bench_append`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AppendBench {
    /// Records appended.
    pub records: u64,
    /// Wall time for all appends and commits.
    pub elapsed: Duration,
    /// `elapsed / records` in nanoseconds.
    pub ns_per_op: f64,
}

/// Appends `records` records of `payload_len` bytes into a fresh journal in
/// `dir` under `policy`, calling `commit` every `batch` records (0: only at
/// the end). Timing covers appends and commits, not open/close.
pub fn bench_append(
    dir: &Path,
    policy: FsyncPolicy,
    records: u64,
    batch: u64,
    payload_len: usize,
) -> Result<AppendBench, JournalError> {
    let config = JournalConfig {
        fsync: policy,
        ..JournalConfig::default()
    };
    let (mut journal, _) = Journal::open(dir, config)?;
    let payload = vec![0x5Au8; payload_len];
    let first = journal.next_seq().unwrap_or(1);
    let start = Instant::now();
    for seq in first..first + records {
        let ts = Timestamps {
            recv_ns: seq,
            engine_ns: seq,
        };
        journal.append(seq, ts, 1, &payload)?;
        if batch != 0 && (seq - first + 1).is_multiple_of(batch) {
            journal.commit()?;
        }
    }
    journal.commit()?;
    let elapsed = start.elapsed();
    journal.close()?;
    Ok(AppendBench {
        records,
        elapsed,
        ns_per_op: elapsed.as_nanos() as f64 / records.max(1) as f64,
    })
}

/// Result of [`bench_recovery`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecoveryBench {
    /// Records verified by `open` and then replayed.
    pub records: u64,
    /// Time in `Journal::open` (scan and verify every record).
    pub open: Duration,
    /// Time to replay every record with `replay_from`.
    pub replay: Duration,
}

/// Opens the journal in `dir` and replays it entirely, timing both steps.
pub fn bench_recovery(dir: &Path) -> Result<RecoveryBench, JournalError> {
    let start = Instant::now();
    let (mut journal, report) = Journal::open(dir, JournalConfig::default())?;
    let open = start.elapsed();
    let start = Instant::now();
    let mut replayed = 0u64;
    if let Some(first) = report.first_seq {
        let mut replay = journal.replay_from(first)?;
        while let Some(rec) = replay.next()? {
            replayed += 1;
            std::hint::black_box(rec.payload);
        }
    }
    Ok(RecoveryBench {
        records: replayed,
        open,
        replay: start.elapsed(),
    })
}
