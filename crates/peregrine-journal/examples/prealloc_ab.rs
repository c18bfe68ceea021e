//! Commit latency with segments prepared ahead against plain appends, alternated in
//! one run: `Batch` policy, each commit 40 records of 100 bytes (~5.4 KB) written and
//! `fdatasync`ed (the high-water mark's own sync off, as the exchange's group commit
//! keeps it off the commit). Prints p50 / p90 / p99 / max per round.
//!
//! `cargo run --release -p peregrine-journal --example prealloc_ab [DIR] [ROUNDS]`
//! DIR defaults to a temp dir; pass one on the disk you care about.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use peregrine_journal::{FsyncPolicy, Journal, JournalConfig, JournalError, Timestamps};

type Error = Box<dyn std::error::Error>;

const COMMITS: usize = 2_000;
const PER_COMMIT: u64 = 40;

fn round(dir: &std::path::Path, preallocate: bool) -> Result<Vec<f64>, JournalError> {
    let config = JournalConfig {
        fsync: FsyncPolicy::Batch,
        mark_fsync: false,
        preallocate,
        ..JournalConfig::default()
    };
    let (mut j, _) = Journal::open(dir, config)?;
    let payload = [0x5Au8; 100];
    let mut seq = 1;
    let mut commit = |j: &mut Journal| -> Result<Duration, JournalError> {
        for _ in 0..PER_COMMIT {
            let ts = Timestamps {
                recv_ns: seq,
                engine_ns: seq,
            };
            j.append(seq, ts, 1, &payload)?;
            seq += 1;
        }
        let t = Instant::now();
        j.commit()?;
        Ok(t.elapsed())
    };
    // Into the first prepared segment before timing (with `preallocate`).
    let deadline = Instant::now() + Duration::from_secs(30);
    while preallocate && !j.active_prepared() && Instant::now() < deadline {
        commit(&mut j)?;
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut us = Vec::with_capacity(COMMITS);
    for _ in 0..COMMITS {
        us.push(commit(&mut j)?.as_secs_f64() * 1e6);
    }
    j.close()?;
    us.sort_by(f64::total_cmp);
    Ok(us)
}

fn main() -> Result<(), Error> {
    let tmp = tempfile::tempdir()?;
    let mut args = std::env::args().skip(1);
    let root = args
        .next()
        .map_or_else(|| tmp.path().to_path_buf(), PathBuf::from);
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    println!("commit of {PER_COMMIT} x 100 B + fdatasync, {COMMITS} commits per round, us");
    for r in 0..rounds {
        for preallocate in [false, true] {
            let dir = root.join(format!("round-{r}-{preallocate}"));
            let us = round(&dir, preallocate)?;
            let q = |p: f64| us[((us.len() as f64 * p) as usize).min(us.len() - 1)];
            println!(
                "round {r}  {:<14} p50 {:>7.1}  p90 {:>7.1}  p99 {:>7.1}  max {:>8.1}",
                if preallocate {
                    "prepared"
                } else {
                    "plain appends"
                },
                q(0.5),
                q(0.9),
                q(0.99),
                us[us.len() - 1]
            );
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    Ok(())
}
