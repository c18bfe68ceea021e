//! `peregrine verify`: recomputes commitments from the command journal and checks
//! them against the commitment log, and builds Merkle inclusion proofs for trades.
//!
//! Commitments are a pure function of the journal ([`crate::window`]), so an offline
//! replay through a fresh engine reproduces every one bit for bit.

use std::path::{Path, PathBuf};

use anyhow::Context;
use peregrine_book::MatchingEngine;
use peregrine_commit::{leaf_hash, verify_proof, Commitment, Proof, TradeRecord};

use crate::command_codec::Record;
use crate::commit_log::{self, LoggedCommitment};
use crate::config::Config;
use crate::journal_log::JournalSection;
use crate::journal_replay::{open_journal, replay_records};
use crate::window::Recomputer;

/// `peregrine verify` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum VerifyCommand {
    /// Replay the journal, recompute every commitment, compare with the commitment log.
    Journal(JournalArgs),
    /// Prove that one trade is under its tick's logged Merkle root.
    Trade(TradeArgs),
}

/// `peregrine verify journal` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct JournalArgs {
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
pub struct TradeArgs {
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

/// The first difference between the log and the recomputation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Position in the log (0-based).
    pub position: usize,
    /// The logged commitment's tick (or the recomputed one's, if the log lacks it).
    pub tick_seq: u64,
    /// Which field differs.
    pub field: &'static str,
    /// The logged value.
    pub logged: String,
    /// The recomputed value.
    pub recomputed: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "MISMATCH at commitment #{} (tick_seq {}): {} differs: log {} vs journal {}",
            self.position + 1,
            self.tick_seq,
            self.field,
            self.logged,
            self.recomputed
        )
    }
}

/// A successful comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    /// Commitments checked.
    pub verified: usize,
    /// Recomputed windows after the last logged one (the window still open when the
    /// journal ends, or ones whose commitment was in flight at a stop; the exchange
    /// commits them on its next start).
    pub pending: usize,
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares the log with the recomputation, field by field, in order.
pub fn compare(
    logged: &[LoggedCommitment],
    recomputed: &[Commitment],
    window_ns: u64,
) -> Result<Verified, Mismatch> {
    for (i, l) in logged.iter().enumerate() {
        let lc = &l.commitment;
        let Some(r) = recomputed.get(i) else {
            return Err(Mismatch {
                position: i,
                tick_seq: lc.tick_seq,
                field: "presence",
                logged: "a commitment".into(),
                recomputed: "no such window".into(),
            });
        };
        let num = |field, a: u64, b: u64| (a != b).then(|| (field, a.to_string(), b.to_string()));
        let digest = |field, a: &[u8; 32], b: &[u8; 32]| (a != b).then(|| (field, hex(a), hex(b)));
        let diff = num("window_ns", l.window_ns, window_ns)
            .or_else(|| num("tick_seq", lc.tick_seq, r.tick_seq))
            .or_else(|| num("timestamp", lc.timestamp, r.timestamp))
            .or_else(|| num("tx_count", lc.tx_count, r.tx_count))
            .or_else(|| num("trade_count", lc.trade_count, r.trade_count))
            .or_else(|| digest("state_hash", &lc.state_hash, &r.state_hash))
            .or_else(|| digest("merkle_root", &lc.merkle_root, &r.merkle_root));
        if let Some((field, logged, recomputed)) = diff {
            return Err(Mismatch {
                position: i,
                tick_seq: lc.tick_seq,
                field,
                logged,
                recomputed,
            });
        }
    }
    Ok(Verified {
        verified: logged.len(),
        pending: recomputed.len().saturating_sub(logged.len()),
    })
}

/// What an offline replay recomputed.
#[derive(Debug, Clone, Default)]
pub struct Recomputation {
    /// Journal records replayed.
    pub records: u64,
    /// Every window's commitment, in order (the last one may still be open).
    pub commitments: Vec<Commitment>,
    /// The trades of the window asked for, if it exists.
    pub trades: Option<Vec<TradeRecord>>,
}

/// Replays the journal in `section` through a fresh engine for `config` and
/// recomputes every window of `window_ns`; keeps the trades of window `keep`.
pub fn recompute(
    config: &Config,
    section: &JournalSection,
    window_ns: u64,
    keep: Option<u64>,
) -> anyhow::Result<Recomputation> {
    let (mut journal, _) = open_journal(section)
        .with_context(|| format!("opening the journal in {}", section.dir.display()))?;
    let engine: MatchingEngine = MatchingEngine::new(&config.instruments, config.arena_capacity)
        .context("building the matching engine")?;
    // The same path as the server's recovery (balances included), so an order the
    // ledger refused live is refused here too.
    let seq = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut core = crate::core::Core::new(engine, 1 << 16, seq, crate::journal::NoLog, None);
    if let Some(setup) = crate::server::balance_setup(config)? {
        core = core.with_balances(&setup);
    }
    let mut out = Recomputation::default();
    let mut windows = Recomputer::new(window_ns);
    let mut on_close = |c: &Commitment, trades: &[TradeRecord]| {
        if keep == Some(c.tick_seq) {
            out.trades = Some(trades.to_vec());
        }
        out.commitments.push(*c);
    };
    let done = replay_records(&mut journal, |seq, rec| match rec {
        Record::Command(cmd) => {
            windows.command(cmd.ts.0, &mut on_close);
            core.replay(seq, cmd);
            windows.events(core.last_events(), cmd.ts.0);
        }
        // Deposits and withdrawals change balances, not windows (the live core does
        // not count them either).
        Record::Admin(_) => core.replay_record(seq, rec),
    })
    .with_context(|| format!("replaying the journal in {}", section.dir.display()))?;
    windows.finish(&mut on_close);
    out.records = done.records;
    Ok(out)
}

fn load(config: Option<&Path>, dir: &Path) -> anyhow::Result<(Config, JournalSection)> {
    let config = match config {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    let section = match &config.journal {
        Some(s) => JournalSection {
            dir: dir.to_path_buf(),
            ..s.clone()
        },
        None => JournalSection::new(dir),
    };
    Ok((config, section))
}

fn read_log(dir: &Path) -> anyhow::Result<Vec<LoggedCommitment>> {
    let log_dir = commit_log::dir_of(dir);
    commit_log::read_all(&log_dir)
        .with_context(|| format!("reading the commitment log in {}", log_dir.display()))
}

/// The window length: the log's (every record must agree), else the config's.
fn window_of_log(logged: &[LoggedCommitment], config: &Config) -> u64 {
    logged
        .first()
        .map_or_else(|| config.commit_window_ns(), |l| l.window_ns)
}

/// Runs `peregrine verify journal`: prints a summary, or the first mismatch and fails.
pub fn run_journal(args: &JournalArgs) -> anyhow::Result<Verified> {
    let (config, section) = load(args.config.as_deref(), &args.dir)?;
    let logged = read_log(&args.dir)?;
    let window_ns = window_of_log(&logged, &config);
    let re = recompute(&config, &section, window_ns, None)?;
    println!(
        "journal: {} record(s); window {} ns; recomputed {} window(s); commitment log: {} commitment(s)",
        re.records,
        window_ns,
        re.commitments.len(),
        logged.len()
    );
    match compare(&logged, &re.commitments, window_ns) {
        Ok(v) => {
            let range = match (logged.first(), logged.last()) {
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
            Ok(v)
        }
        Err(m) => {
            println!("{m}");
            anyhow::bail!("{m}")
        }
    }
}

/// Runs `peregrine verify trade`: prints the trade, its leaf, the proof and the
/// root; fails unless the proof checks against the logged root.
pub fn run_trade(args: &TradeArgs) -> anyhow::Result<Proof> {
    let (config, section) = load(args.config.as_deref(), &args.dir)?;
    let logged = read_log(&args.dir)?;
    let window_ns = window_of_log(&logged, &config);
    let entry = logged
        .iter()
        .find(|l| l.commitment.tick_seq == args.tick)
        .with_context(|| format!("tick {} is not in the commitment log", args.tick))?;
    let re = recompute(&config, &section, window_ns, Some(args.tick))?;
    let trades = re
        .trades
        .with_context(|| format!("tick {} has no commands in the journal", args.tick))?;
    let index = trades
        .iter()
        .position(|t| {
            t.trade_id == args.trade_id && args.instrument.is_none_or(|i| i == t.instrument)
        })
        .with_context(|| format!("trade {} is not in tick {}", args.trade_id, args.tick))?;
    let leaves: Vec<[u8; 32]> = trades.iter().map(leaf_hash).collect();
    let proof = Proof::build(&leaves, index).context("building the proof")?;
    let root = entry.commitment.merkle_root;
    let t = &trades[index];
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
    println!(
        "leaf {} (index {index} of {})",
        hex(&leaves[index]),
        leaves.len()
    );
    for (i, s) in proof.steps.iter().enumerate() {
        let side = if s.sibling_is_left { "L" } else { "R" };
        println!("step {i} {side} {}", hex(&s.sibling));
    }
    println!("root {} (logged for tick {})", hex(&root), args.tick);
    anyhow::ensure!(
        verify_proof(&leaves[index], &proof, &root),
        "the proof does NOT check against the logged root"
    );
    println!("OK: the trade is included in tick {}", args.tick);
    Ok(proof)
}

/// Runs a `peregrine verify` subcommand.
pub fn run(cmd: VerifyCommand) -> anyhow::Result<()> {
    match cmd {
        VerifyCommand::Journal(a) => run_journal(&a).map(|_| ()),
        VerifyCommand::Trade(a) => run_trade(&a).map(|_| ()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(k: u64) -> Commitment {
        Commitment {
            tick_seq: k,
            timestamp: k * 10,
            tx_count: 2,
            trade_count: 1,
            state_hash: [k as u8; 32],
            merkle_root: [7; 32],
        }
    }

    fn logged(k: u64) -> LoggedCommitment {
        LoggedCommitment {
            window_ns: 10,
            commitment: c(k),
        }
    }

    #[test]
    fn compare_finds_the_first_difference() {
        let re = [c(1), c(3), c(4)];
        assert_eq!(
            compare(&[logged(1), logged(3)], &re, 10),
            Ok(Verified {
                verified: 2,
                pending: 1
            })
        );
        let mut bad = [logged(1), logged(3), logged(4)];
        bad[1].commitment.merkle_root[0] ^= 1;
        bad[2].commitment.tx_count = 9;
        let m = compare(&bad, &re, 10).unwrap_err();
        assert_eq!((m.position, m.tick_seq, m.field), (1, 3, "merkle_root"));
        let m = compare(&[logged(1), logged(4)], &re, 10).unwrap_err();
        assert_eq!((m.position, m.field), (1, "tick_seq"));
        let m = compare(&[logged(1)], &re, 20).unwrap_err();
        assert_eq!(m.field, "window_ns");
        let m = compare(&[logged(1), logged(3), logged(4), logged(5)], &re, 10).unwrap_err();
        assert_eq!((m.position, m.field), (3, "presence"));
        assert!(m.to_string().contains("tick_seq 5"));
    }
}
