//! Why the journal uses `write(2)` and not `mmap`: the cost of getting one
//! 64-byte-payload record into the page cache each way, same encoder.
//!
//! - `write`: encode into a 256 KiB userspace buffer, `write(2)` when full
//!   (the journal's `FsyncPolicy::None` path without commits).
//! - `mmap`: preallocate the file (untimed), map it, encode straight into
//!   the mapping; first touch of each page takes a fault.
//!
//! Neither includes a sync; `fdatasync` and `msync` cost the same disk flush.
#![allow(unsafe_code)] // memmap2's map_mut is unsafe; this bench only

use std::fs::OpenOptions;
use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use peregrine_journal::record::{encode_into, Timestamps};

const PAYLOAD: [u8; 64] = [0x5A; 64];
const RECORD: u64 = 100;
const CHUNK: u64 = 500_000;

fn ts(seq: u64) -> Timestamps {
    Timestamps {
        recv_ns: seq,
        engine_ns: seq,
    }
}

fn via_write(n: u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut buf = vec![0xA5u8; 256 << 10];
    for chunk in chunks(n) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut f = std::fs::File::create(dir.path().join("w")).expect("create");
        let start = Instant::now();
        let mut filled = 0;
        for seq in 1..=chunk {
            if filled + RECORD as usize > buf.len() {
                f.write_all(&buf[..filled]).expect("write");
                filled = 0;
            }
            filled += encode_into(&mut buf[filled..], seq, ts(seq), 1, black_box(&PAYLOAD));
        }
        f.write_all(&buf[..filled]).expect("write");
        total += start.elapsed();
    }
    total
}

fn via_mmap(n: u64) -> Duration {
    let mut total = Duration::ZERO;
    for chunk in chunks(n) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("m");
        let mut opts = OpenOptions::new();
        opts.read(true).write(true).create(true).truncate(true);
        let f = opts.open(&path).expect("create");
        f.set_len(chunk * RECORD).expect("set_len");
        // SAFETY: the file is private to this temp dir and nothing else maps,
        // truncates or writes it while the mapping lives.
        let mut map = unsafe { memmap2::MmapMut::map_mut(&f) }.expect("mmap");
        let start = Instant::now();
        let mut off = 0;
        for seq in 1..=chunk {
            off += encode_into(&mut map[off..], seq, ts(seq), 1, black_box(&PAYLOAD));
        }
        total += start.elapsed();
    }
    total
}

fn chunks(n: u64) -> impl Iterator<Item = u64> {
    (0..n.div_ceil(CHUNK)).map(move |i| (n - i * CHUNK).min(CHUNK))
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("page_cache_64b");
    g.measurement_time(Duration::from_secs(4));
    g.bench_function("write_256k_buffer", |b| b.iter_custom(via_write));
    g.bench_function("mmap_prealloc", |b| b.iter_custom(via_mmap));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
