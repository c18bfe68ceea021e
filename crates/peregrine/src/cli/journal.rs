//! `peregrine journal replay`: replays a journal offline into a fresh engine and
//! prints the record count, the last sequence number, the state hash and the rate
//! (the logic: `peregrine_exchange_core::tools::offline_replay`).

use std::path::PathBuf;

use anyhow::bail;
use peregrine_exchange::Config;
use peregrine_exchange_core::journal::JournalSection;
use peregrine_exchange_core::tools::offline_replay::replay_journal;

/// `peregrine journal replay` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ReplayArgs {
    /// The exchange config (instruments, and the journal directory unless `--dir`).
    #[arg(long, default_value = "exchange.toml")]
    pub config: PathBuf,
    /// Journal directory; default: `journal.dir` of the config.
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// Prints `records N last_seq S state_hash H`, then a timing line.
pub(crate) fn replay(args: ReplayArgs) -> anyhow::Result<()> {
    if let Some(dir) = &args.dir {
        anyhow::ensure!(dir.is_dir(), "no journal directory {}", dir.display());
    }
    let config = Config::load(&args.config)?;
    let section = match (args.dir, &config.journal) {
        (Some(dir), Some(s)) => JournalSection { dir, ..s.clone() },
        (Some(dir), None) => JournalSection::new(dir),
        (None, Some(s)) => s.clone(),
        (None, None) => bail!("no --dir and no [journal] section in the config"),
    };
    // An offline replay never creates the directory it is asked to read.
    anyhow::ensure!(
        section.dir.is_dir(),
        "no journal directory {}",
        section.dir.display()
    );
    let venue = config
        .venue()
        .map_err(|errs| anyhow::anyhow!("invalid config:\n  - {}", errs.join("\n  - ")))?;
    let s = replay_journal(&venue, &section)?;
    let done = &s.replayed;
    let opened_ms = s.opened.as_secs_f64() * 1e3;
    if s.from_snapshot {
        println!(
            "records {} last_seq {} state_hash {} (pruned journal: newest snapshot + {} record(s) after it)",
            s.records, s.last_seq, s.state_hash, done.records
        );
        println!(
            "open (verify every record) {opened_ms:.3} ms; replay {:.3} ms: {:.0} records/s",
            done.elapsed_ns as f64 / 1e6,
            done.rate()
        );
    } else {
        println!(
            "records {} last_seq {} state_hash {}",
            s.records, s.last_seq, s.state_hash
        );
        println!(
            "open (verify every record) {opened_ms:.3} ms; replay {:.3} ms: {:.0} records/s (read + verify + decode + execute)",
            done.elapsed_ns as f64 / 1e6,
            done.rate()
        );
    }
    Ok(())
}
