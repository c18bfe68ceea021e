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

/// Prints `records N last_seq S state_hash H`, then a timing line; for a cluster
/// node's config, its Raft log's replay ([`cluster_replay`]).
pub(crate) fn replay(args: ReplayArgs) -> anyhow::Result<()> {
    if let Some(dir) = &args.dir {
        anyhow::ensure!(dir.is_dir(), "no journal directory {}", dir.display());
    }
    let mut config = Config::load(&args.config)?;
    if config.cluster.is_some() {
        let r = cluster_replay(&mut config, args.dir)?;
        anyhow::ensure!(
            r.log.hash_mismatches.is_empty(),
            "STATE HASH MISMATCH at index(es) {:?}",
            r.log.hash_mismatches
        );
        return Ok(());
    }
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

/// Replays a stopped cluster node's Raft log (`--dir`: its `[journal] dir`, default
/// the config's) and prints `applied_index I engine_seq S state_hash H`: the same seq
/// and hash as the node's `current_state` on its admin endpoint at that index. Then
/// a line with the snapshot it started from, the entries applied, and the
/// replicated state-hash checks compared on the way.
pub(crate) fn cluster_replay(
    config: &mut Config,
    dir: Option<PathBuf>,
) -> anyhow::Result<peregrine_exchange::ClusterReplay> {
    if let Some(dir) = dir {
        match config.journal.as_mut() {
            Some(j) => j.dir = dir,
            None => config.journal = Some(JournalSection::new(dir)),
        }
    }
    let Some(dir) = config.journal.as_ref().map(|j| j.dir.clone()) else {
        bail!("no --dir and no [journal] section in the config");
    };
    anyhow::ensure!(dir.is_dir(), "no Raft log directory {}", dir.display());
    let r = peregrine_exchange::replay_cluster_log(config)?;
    let l = &r.log;
    println!(
        "applied_index {} engine_seq {} state_hash {}",
        l.applied, r.engine_seq, r.state_hash
    );
    println!(
        "cluster log: term {}; from snapshot at index {}; {} entries applied, {} after the commit index not applied; hash checks {} ok, {} mismatched{}",
        l.term,
        l.snapshot_index,
        l.entries_applied,
        l.uncommitted,
        l.hash_checks_ok,
        l.hash_mismatches.len(),
        if l.bad_entries > 0 {
            format!("; {} undecodable entries skipped", l.bad_entries)
        } else {
            String::new()
        }
    );
    Ok(r)
}
