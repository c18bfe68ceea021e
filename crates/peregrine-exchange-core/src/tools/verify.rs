//! The logic of `peregrine verify`: recomputes commitments from the command journal
//! and compares them with the commitment log, and builds Merkle inclusion proofs for
//! trades (the CLI in the `peregrine` binary prints them).
//!
//! Commitments are a pure function of the journal ([`peregrine_commit::WindowState`]),
//! so an offline replay through a fresh engine reproduces every one bit for bit.

use std::path::{Path, PathBuf};

use peregrine_book::engine::EngineError;
use peregrine_commit::commit_log::{self, CommitLogError, LoggedCommitment};
use peregrine_commit::{leaf_hash, verify_proof, Commitment, Proof, Recomputer, TradeRecord};

use crate::clock::Clock;
use crate::codec::command::Record;
use crate::journal::{JournalSection, NoLog};
use crate::replay::{open_journal, replay_records, ReplayError};
use crate::venue::VenueSpec;

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

/// Why an offline recomputation or proof failed.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The fresh engine could not be built.
    #[error("building the matching engine: {0}")]
    Engine(#[from] EngineError),
    /// Opening or replaying the journal failed.
    #[error("replaying the journal in {dir}: {source}")]
    Journal {
        /// The journal directory.
        dir: PathBuf,
        /// Why.
        source: ReplayError,
    },
    /// Reading the commitment log failed.
    #[error("reading the commitment log in {dir}: {source}")]
    CommitLog {
        /// The log directory.
        dir: PathBuf,
        /// Why.
        source: CommitLogError,
    },
    /// The directory given is not there (an offline check never creates it).
    #[error("no journal directory {0}")]
    NoJournal(PathBuf),
    /// The journal has no commitment log: it was written without `[commitments]`, so
    /// there is nothing to verify (never "OK").
    #[error("no commitment log {0}: this journal was written without [commitments] enabled")]
    NoCommitLog(PathBuf),
    /// The tick is not in the commitment log.
    #[error("tick {0} is not in the commitment log")]
    TickNotLogged(u64),
    /// The journal has no command in the tick.
    #[error("tick {0} has no commands in the journal")]
    TickEmpty(u64),
    /// No such trade in the tick.
    #[error("trade {trade_id} is not in tick {tick}")]
    NoSuchTrade {
        /// The trade id asked for.
        trade_id: u64,
        /// The tick.
        tick: u64,
    },
}

/// Replays the journal in `section` through a fresh core for `venue` and recomputes
/// every window of `window_ns`; keeps the trades of window `keep`.
pub fn recompute(
    venue: &VenueSpec,
    section: &JournalSection,
    window_ns: u64,
    keep: Option<u64>,
) -> Result<Recomputation, VerifyError> {
    let journal_err = |source| VerifyError::Journal {
        dir: section.dir.clone(),
        source,
    };
    let (mut journal, _) =
        open_journal(section, peregrine_journal::LossPolicy::Refuse).map_err(journal_err)?;
    // The same path as the server's recovery (balances included), so an order the
    // ledger refused live is refused here too.
    let mut core = venue.core(NoLog, Clock::monotonic(), 1 << 16)?;
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
        Record::MassCancel(_) | Record::List(_) => {
            let ts = rec.ts().0;
            windows.command(ts, &mut on_close);
            core.replay_record(seq, rec);
            windows.events(core.last_events(), ts);
        }
        // Deposits and withdrawals change balances, not windows (the live core does
        // not count them either).
        Record::Admin(_) => core.replay_record(seq, rec),
    })
    .map_err(journal_err)?;
    windows.finish(&mut on_close);
    out.records = done.records;
    Ok(out)
}

/// Every commitment of the log next to the journal in `journal_dir`.
pub fn read_log(journal_dir: &Path) -> Result<Vec<LoggedCommitment>, VerifyError> {
    if !journal_dir.is_dir() {
        return Err(VerifyError::NoJournal(journal_dir.to_path_buf()));
    }
    let dir = commit_log::dir_of(journal_dir);
    if !dir.is_dir() {
        return Err(VerifyError::NoCommitLog(dir));
    }
    commit_log::read_all(&dir).map_err(|source| VerifyError::CommitLog { dir, source })
}

/// The window length: the log's (every record must agree), else `configured`.
pub fn window_of_log(logged: &[LoggedCommitment], configured: u64) -> u64 {
    logged.first().map_or(configured, |l| l.window_ns)
}

/// What `peregrine verify journal` found.
#[derive(Debug, Clone)]
pub struct JournalCheck {
    /// Journal records replayed.
    pub records: u64,
    /// The window length compared (the log's, else the configured one).
    pub window_ns: u64,
    /// Windows recomputed from the journal.
    pub recomputed: usize,
    /// The commitment log.
    pub logged: Vec<LoggedCommitment>,
    /// The comparison: every logged commitment verified, or the first mismatch.
    pub result: Result<Verified, Mismatch>,
}

/// Replays the journal in `section` for `venue`, recomputes every commitment and
/// compares them with the log next to the journal (`configured_window_ns` is used
/// only when the log is empty).
pub fn check_journal(
    venue: &VenueSpec,
    section: &JournalSection,
    configured_window_ns: u64,
) -> Result<JournalCheck, VerifyError> {
    let logged = read_log(&section.dir)?;
    let window_ns = window_of_log(&logged, configured_window_ns);
    let re = recompute(venue, section, window_ns, None)?;
    let result = compare(&logged, &re.commitments, window_ns);
    Ok(JournalCheck {
        records: re.records,
        window_ns,
        recomputed: re.commitments.len(),
        logged,
        result,
    })
}

/// A trade's inclusion proof against its tick's logged root.
#[derive(Debug, Clone)]
pub struct TradeProof {
    /// The trade.
    pub trade: TradeRecord,
    /// Its leaf hash.
    pub leaf: [u8; 32],
    /// Its position among the tick's leaves.
    pub index: usize,
    /// Leaves in the tick.
    pub leaves: usize,
    /// The proof.
    pub proof: Proof,
    /// The root logged for the tick.
    pub root: [u8; 32],
    /// Whether the proof checks against that root.
    pub valid: bool,
}

/// Builds the inclusion proof of trade `trade_id` (of `instrument`, when ids of
/// several instruments collide) in tick `tick`, from the journal and the log.
pub fn prove_trade(
    venue: &VenueSpec,
    section: &JournalSection,
    logged: &[LoggedCommitment],
    window_ns: u64,
    tick: u64,
    trade_id: u64,
    instrument: Option<u32>,
) -> Result<TradeProof, VerifyError> {
    let entry = logged
        .iter()
        .find(|l| l.commitment.tick_seq == tick)
        .ok_or(VerifyError::TickNotLogged(tick))?;
    let re = recompute(venue, section, window_ns, Some(tick))?;
    let trades = re.trades.ok_or(VerifyError::TickEmpty(tick))?;
    let index = trades
        .iter()
        .position(|t| t.trade_id == trade_id && instrument.is_none_or(|i| i == t.instrument))
        .ok_or(VerifyError::NoSuchTrade { trade_id, tick })?;
    let leaves: Vec<[u8; 32]> = trades.iter().map(leaf_hash).collect();
    // `index` is in range, so the proof always builds.
    let proof = Proof::build(&leaves, index).ok_or(VerifyError::TickEmpty(tick))?;
    let root = entry.commitment.merkle_root;
    // The position is checked against the logged trade count (defect 6), and the
    // recomputed window must have that many trades.
    let count = usize::try_from(entry.commitment.trade_count).unwrap_or(usize::MAX);
    let valid = leaves.len() == count && verify_proof(&leaves[index], &proof, &root, count);
    Ok(TradeProof {
        trade: trades[index],
        leaf: leaves[index],
        index,
        leaves: leaves.len(),
        proof,
        root,
        valid,
    })
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
