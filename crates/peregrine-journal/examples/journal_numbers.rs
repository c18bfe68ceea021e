//! Prints append ns/op per fsync policy and 1M-record recovery time using
//! the crate's `bench` helpers (what `peregrine bench journal` would call).
//!
//! `cargo run --release -p peregrine-journal --example journal_numbers [DIR]`
//! DIR defaults to a temp dir; pass one on the disk you care about.

use std::path::PathBuf;

use peregrine_journal::bench::{bench_append, bench_recovery};
use peregrine_journal::{FsyncPolicy, JournalError};

fn main() -> Result<(), JournalError> {
    let tmp = tempfile::tempdir().map_err(|e| JournalError::Io {
        op: "tempdir",
        path: PathBuf::from("."),
        source: e,
    })?;
    let root = std::env::args()
        .nth(1)
        .map_or_else(|| tmp.path().to_path_buf(), PathBuf::from);
    let cases = [
        ("none, no commit", FsyncPolicy::None, 1_000_000, 0),
        ("none, commit every 64", FsyncPolicy::None, 1_000_000, 64),
        ("batch, commit every 64", FsyncPolicy::Batch, 64 * 500, 64),
        ("every command", FsyncPolicy::EveryCommand, 2_000, 0),
    ];
    for (i, (name, policy, n, batch)) in cases.into_iter().enumerate() {
        let r = bench_append(&root.join(format!("append-{i}")), policy, n, batch, 64)?;
        println!(
            "append 64B  {name:<24} {n:>9} records  {:>10.1} ns/op",
            r.ns_per_op
        );
    }
    // The cost of the guarded end: the high-water mark's fdatasync per commit,
    // beside the segment's own, in the same run.
    let dir = root.join("mark");
    let (mut j, _) = peregrine_journal::Journal::open(&dir, Default::default())?;
    for batch in 0..500u64 {
        for i in 0..64 {
            let seq = batch * 64 + i + 1;
            j.append(seq, Default::default(), 1, &[0u8; 64])?;
        }
        j.commit()?;
    }
    let s = *j.stats();
    println!(
        "commit      batch of 64, 500 commits: segment fdatasync {:.1} us avg, \
         high-water mark fdatasync {:.1} us avg",
        s.sync_ns_sum as f64 / s.syncs.max(1) as f64 / 1e3,
        s.mark_sync_ns_sum as f64 / s.mark_syncs.max(1) as f64 / 1e3,
    );
    let dir = root.join("recovery");
    bench_append(&dir, FsyncPolicy::None, 1_000_000, 64, 64)?;
    for _ in 0..3 {
        let r = bench_recovery(&dir)?;
        println!(
            "recovery    {} records: open+verify {:.1} ms, replay {:.1} ms, total {:.1} ms",
            r.records,
            r.open.as_secs_f64() * 1e3,
            r.replay.as_secs_f64() * 1e3,
            (r.open + r.replay).as_secs_f64() * 1e3
        );
    }
    Ok(())
}
