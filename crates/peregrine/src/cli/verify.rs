//! `peregrine verify`: recomputes commitments from the command journal and checks
//! them against the commitment log, and prints Merkle inclusion proofs for trades
//! (the logic: `peregrine_exchange_core::tools::verify`).

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure};
use peregrine_exchange::Config;
use peregrine_exchange_core::journal::JournalSection;
use peregrine_exchange_core::tools::verify::{self, hex};
use peregrine_exchange_core::VenueSpec;

/// `peregrine verify` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub(crate) enum VerifyCommand {
    /// Replay the journal, recompute every commitment, compare with the commitment log.
    Journal(JournalArgs),
    /// Prove that one trade is under its tick's logged Merkle root.
    Trade(TradeArgs),
}

/// `peregrine verify journal` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct JournalArgs {
    /// The journal directory (the commitment log is `<dir>/commitments`).
    #[arg(long)]
    pub dir: PathBuf,
    /// The exchange config (instruments, arena size; the window if the log is empty).
    /// Default: the built-in defaults.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// `peregrine verify trade` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TradeArgs {
    /// The journal directory.
    #[arg(long)]
    pub dir: PathBuf,
    /// The exchange config (as for `verify journal`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The tick (window index, `tick_seq`).
    #[arg(long)]
    pub tick: u64,
    /// The trade id.
    #[arg(long)]
    pub trade_id: u64,
    /// The instrument, when trade ids of several instruments collide in the tick.
    #[arg(long)]
    pub instrument: Option<u32>,
}

/// Runs a `peregrine verify` subcommand.
pub(crate) fn run(cmd: VerifyCommand) -> anyhow::Result<()> {
    match cmd {
        VerifyCommand::Journal(a) => journal(&a),
        VerifyCommand::Trade(a) => trade(&a),
    }
}

/// The config (default: the built-in one), its venue and the journal section for
/// `dir`.
fn load(config: Option<&Path>, dir: &Path) -> anyhow::Result<(Config, VenueSpec, JournalSection)> {
    let config = match config {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    let venue = config
        .venue()
        .map_err(|errs| anyhow::anyhow!("invalid config:\n  - {}", errs.join("\n  - ")))?;
    let section = match &config.journal {
        Some(s) => JournalSection {
            dir: dir.to_path_buf(),
            ..s.clone()
        },
        None => JournalSection::new(dir),
    };
    Ok((config, venue, section))
}

/// `peregrine verify journal`: prints a summary, or the first mismatch and fails.
/// For a cluster node's config, the node's Raft log is replayed instead (commitments
/// are not replicated): it verifies when every replicated state-hash check matches.
fn journal(args: &JournalArgs) -> anyhow::Result<()> {
    let (mut config, venue, section) = load(args.config.as_deref(), &args.dir)?;
    if config.cluster.is_some() {
        let r = super::journal::cluster_replay(&mut config, Some(args.dir.clone()))?;
        let l = &r.log;
        if !l.hash_mismatches.is_empty() {
            let m = format!(
                "STATE HASH MISMATCH at index(es) {:?}: this node's log replays to a different state than the leader's",
                l.hash_mismatches
            );
            println!("{m}");
            bail!("{m}");
        }
        println!(
            "OK: {} replicated state-hash check(s) matched",
            l.hash_checks_ok
        );
        return Ok(());
    }
    let check = verify::check_journal(&venue, &section, config.commit_window_ns())?;
    println!(
        "journal: {} record(s); window {} ns; recomputed {} window(s); commitment log: {} commitment(s)",
        check.records,
        check.window_ns,
        check.recomputed,
        check.logged.len()
    );
    match check.result {
        Ok(v) => {
            let range = match (check.logged.first(), check.logged.last()) {
                (Some(a), Some(b)) => format!(
                    " (tick_seq {}..={})",
                    a.commitment.tick_seq, b.commitment.tick_seq
                ),
                _ => String::new(),
            };
            println!(
                "OK: {} commitment(s) verified{range}; {} window(s) after the last logged one (open or in flight at the stop)",
                v.verified, v.pending
            );
            Ok(())
        }
        Err(m) => {
            println!("{m}");
            bail!("{m}")
        }
    }
}

/// `peregrine verify trade`: prints the trade, its leaf, the proof and the root;
/// fails unless the proof checks against the logged root.
fn trade(args: &TradeArgs) -> anyhow::Result<()> {
    let (config, venue, section) = load(args.config.as_deref(), &args.dir)?;
    let logged = verify::read_log(&args.dir)?;
    let window_ns = verify::window_of_log(&logged, config.commit_window_ns());
    let p = verify::prove_trade(
        &venue,
        &section,
        &logged,
        window_ns,
        args.tick,
        args.trade_id,
        args.instrument,
    )?;
    let t = &p.trade;
    println!(
        "trade {} instrument {} price {} qty {} maker {} (acct {}) taker {} (acct {}) side {} ts {}",
        t.trade_id,
        t.instrument,
        t.price,
        t.qty,
        t.maker_order,
        t.maker_account,
        t.taker_order,
        t.taker_account,
        t.taker_side,
        t.timestamp
    );
    println!("record {}", hex(&t.encode()));
    println!("leaf {} (index {} of {})", hex(&p.leaf), p.index, p.leaves);
    for (i, s) in p.proof.steps.iter().enumerate() {
        let side = if s.sibling_is_left { "L" } else { "R" };
        println!("step {i} {side} {}", hex(&s.sibling));
    }
    println!("root {} (logged for tick {})", hex(&p.root), args.tick);
    ensure!(p.valid, "the proof does NOT check against the logged root");
    println!("OK: the trade is included in tick {}", args.tick);
    Ok(())
}
