//! Journal benches: append ns/op per fsync policy (64-byte payload) and
//! recovery time of 1M records. Run: `cargo bench -p peregrine-journal`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use peregrine_journal::record::{encode_into, MAX_RECORD};
use peregrine_journal::{bench, FsyncPolicy, Journal, JournalConfig, Timestamps};

const PAYLOAD: [u8; 64] = [0x5A; 64];

fn open(policy: FsyncPolicy) -> (tempfile::TempDir, Journal) {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = JournalConfig {
        fsync: policy,
        ..JournalConfig::default()
    };
    let (journal, _) = Journal::open(dir.path(), config).expect("open");
    (dir, journal)
}

/// Appends `iters` records, committing every `batch` (0: never), timed,
/// then commits (untimed) so the next sample starts with an empty buffer.
fn run(journal: &mut Journal, iters: u64, batch: u64) -> Duration {
    let elapsed = run_no_final_commit(journal, iters, batch);
    journal.commit().expect("commit");
    elapsed
}

fn run_no_final_commit(journal: &mut Journal, iters: u64, batch: u64) -> Duration {
    let first = journal.next_seq().unwrap_or(1);
    let start = Instant::now();
    for seq in first..first + iters {
        let ts = Timestamps {
            recv_ns: seq,
            engine_ns: seq,
        };
        journal
            .append(seq, ts, 1, black_box(&PAYLOAD))
            .expect("append");
        if batch != 0 && (seq - first + 1).is_multiple_of(batch) {
            journal.commit().expect("commit");
        }
    }
    start.elapsed()
}

fn encode(c: &mut Criterion) {
    let mut buf = vec![0u8; MAX_RECORD];
    let mut seq = 1u64;
    c.bench_function("record/encode_64b", |b| {
        b.iter(|| {
            seq += 1;
            encode_into(&mut buf, seq, Timestamps::default(), 1, black_box(&PAYLOAD))
        })
    });
}

fn crc(c: &mut Criterion) {
    // What a 64-byte-payload record's CRC covers; the baseline crate beside the one
    // the records use.
    let bytes = [0xA5u8; 96];
    c.bench_function("record/crc32fast_96b", |b| {
        b.iter(|| crc32fast::hash(black_box(&bytes)))
    });
    c.bench_function("record/crc32c_96b", |b| {
        b.iter(|| crc32c::crc32c(black_box(&bytes)))
    });
}

/// The hot-path cost alone: appends that fit in a 64 MiB buffer, no I/O.
/// A fresh journal per chunk of at most 500k appends; open and drop untimed.
fn buffered(n: u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = n;
    while left > 0 {
        let chunk = left.min(500_000);
        let dir = tempfile::tempdir().expect("tempdir");
        let config = JournalConfig {
            fsync: FsyncPolicy::None,
            buffer_bytes: 64 << 20,
            ..JournalConfig::default()
        };
        let (mut j, _) = Journal::open(dir.path(), config).expect("open");
        j.append(1, Timestamps::default(), 1, &PAYLOAD)
            .expect("append");
        total += run_no_final_commit(&mut j, chunk, 0);
        left -= chunk;
    }
    total
}

fn append(c: &mut Criterion) {
    let mut g = c.benchmark_group("append_64b");
    g.measurement_time(Duration::from_secs(4));
    g.bench_function("buffered_no_io", |b| b.iter_custom(buffered));
    let cases = [
        ("none/no_commit", FsyncPolicy::None, 0),
        ("none/commit_every_64", FsyncPolicy::None, 64),
    ];
    for (name, policy, batch) in cases {
        let (_dir, mut j) = open(policy);
        g.bench_function(name, |b| b.iter_custom(|n| run(&mut j, n, batch)));
    }
    g.sample_size(10);
    let (_dir, mut j) = open(FsyncPolicy::Batch);
    g.bench_function("batch/commit_every_64", |b| {
        b.iter_custom(|n| run(&mut j, n, 64))
    });
    let (_dir, mut j) = open(FsyncPolicy::EveryCommand);
    g.bench_function("every_command", |b| b.iter_custom(|n| run(&mut j, n, 0)));
    g.finish();
}

fn recovery(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    bench::bench_append(dir.path(), FsyncPolicy::None, 1_000_000, 64, 64).expect("fill");
    let mut g = c.benchmark_group("recovery");
    g.sample_size(10);
    g.bench_function("open_verify_1m_64b", |b| {
        b.iter(|| Journal::open(dir.path(), JournalConfig::default()).expect("open"))
    });
    g.bench_function("open_and_replay_1m_64b", |b| {
        b.iter(|| bench::bench_recovery(dir.path()).expect("recover"))
    });
    g.finish();
}

criterion_group!(benches, crc, encode, append, recovery);
criterion_main!(benches);
