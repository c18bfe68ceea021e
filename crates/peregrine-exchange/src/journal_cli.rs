//! `peregrine journal replay`: replays a journal offline into a fresh engine and prints
//! the record count, the last sequence number, the state hash and the rate.

use std::path::PathBuf;

use anyhow::Context;
use peregrine_book::MatchingEngine;

use crate::config::Config;
use crate::core::Core;
use crate::journal::NoLog;
use crate::journal_log::JournalSection;
use crate::journal_replay::{open_journal, replay_records};

/// `peregrine journal replay` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// The exchange config (instruments, and the journal directory unless `--dir`).
    #[arg(long, default_value = "exchange.toml")]
    pub config: PathBuf,
    /// Journal directory; default: `journal.dir` of the config.
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// The result of an offline replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaySummary {
    /// Records replayed.
    pub records: u64,
    /// Last sequence number (0 for an empty journal).
    pub last_seq: u64,
    /// The venue state hash after the replay (`Core::state_hash`: the engine's, with
    /// the balances when they are on), hex.
    pub state_hash: String,
}

/// Runs the subcommand: prints `records N last_seq S state_hash H` on stdout, then a
/// timing line.
pub fn run(args: ReplayArgs) -> anyhow::Result<ReplaySummary> {
    let config = Config::load(&args.config)?;
    let section = match (args.dir, &config.journal) {
        (Some(dir), Some(s)) => JournalSection { dir, ..s.clone() },
        (Some(dir), None) => JournalSection::new(dir),
        (None, Some(s)) => s.clone(),
        (None, None) => anyhow::bail!("no --dir and no [journal] section in the config"),
    };
    let t0 = std::time::Instant::now();
    let (mut journal, _) = open_journal(&section)
        .with_context(|| format!("opening the journal in {}", section.dir.display()))?;
    let opened = t0.elapsed();
    if journal.first_seq().is_some_and(|first| first > 1) {
        return from_snapshot(&config, &section, journal, opened);
    }
    let engine: MatchingEngine = MatchingEngine::new(&config.instruments, config.arena_capacity)
        .context("building the matching engine")?;
    let seq = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut core = Core::new(engine, 1 << 16, seq, NoLog, None);
    if let Some(setup) = crate::server::balance_setup(&config)? {
        core = core.with_balances(&setup);
    }
    let done = replay_records(&mut journal, |seq, rec| core.replay_record(seq, rec))
        .with_context(|| format!("replaying the journal in {}", section.dir.display()))?;
    let summary = ReplaySummary {
        records: done.records,
        last_seq: done.last_seq,
        state_hash: core.state_hash().to_string(),
    };
    println!(
        "records {} last_seq {} state_hash {}",
        summary.records, summary.last_seq, summary.state_hash
    );
    println!(
        "open (verify every record) {:.3} ms; replay {:.3} ms: {:.0} records/s (read + verify + decode + execute)",
        opened.as_secs_f64() * 1e3,
        done.elapsed_ns as f64 / 1e6,
        done.rate()
    );
    Ok(summary)
}

/// A pruned journal (its first segments deleted after snapshots): the newest valid
/// snapshot plus the journal after it, as the server's start-up does.
fn from_snapshot(
    config: &Config,
    section: &JournalSection,
    journal: peregrine_journal::Journal,
    opened: std::time::Duration,
) -> anyhow::Result<ReplaySummary> {
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;
    let engine: MatchingEngine = MatchingEngine::new(&config.instruments, config.arena_capacity)
        .context("building the matching engine")?;
    let log = crate::journal_log::JournalLog::new(journal);
    let mut core = crate::core::Core::new(engine, 1 << 16, Arc::new(AtomicU64::new(0)), log, None);
    if let Some(setup) = crate::server::balance_setup(config)? {
        core = core.with_balances(&setup);
    }
    let store = peregrine_journal::SnapshotStore::open(
        section.snapshot_dir(),
        peregrine_journal::SnapshotConfig::default(),
    )?;
    let (done, hash) = crate::journal_replay::restore(&mut core, Some(&store))
        .with_context(|| format!("replaying the journal in {}", section.dir.display()))?;
    let summary = ReplaySummary {
        records: done.records,
        last_seq: core.engine_seq(),
        state_hash: hash.to_string(),
    };
    println!(
        "records {} last_seq {} state_hash {} (pruned journal: newest snapshot + {} record(s) after it)",
        summary.records, summary.last_seq, summary.state_hash, done.records
    );
    println!(
        "open (verify every record) {:.3} ms; replay {:.3} ms: {:.0} records/s",
        opened.as_secs_f64() * 1e3,
        done.elapsed_ns as f64 / 1e6,
        done.rate()
    );
    Ok(summary)
}
