//! Recovery: the journal's records read back and applied to a fresh state
//! ([`peregrine_orchestrator::Replayer`], the pure part), which the orchestrator core
//! takes over. See `peregrine_orchestrator::replay` for what comes back and how open
//! orders become orphans the venues reconcile.

use peregrine_journal::Journal;
use peregrine_orchestrator::{CoreConfig, Rec, RecError, Recovered, Replayer};

/// Why the journal could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The journal itself.
    #[error(transparent)]
    Journal(#[from] peregrine_journal::JournalError),
    /// A record.
    #[error("engine journal record {seq}: {source}")]
    Record {
        /// Its sequence number.
        seq: u64,
        /// Why.
        source: RecError,
    },
}

/// Replays every record of `journal` on top of `cfg`'s strategies and limits.
pub fn replay(
    journal: &mut Journal,
    cfg: &CoreConfig,
    now_ns: u64,
) -> Result<Recovered, ReplayError> {
    let mut st = Replayer::new(cfg, now_ns);
    if let Some(first) = journal.first_seq() {
        let mut r = journal.replay_from(first)?;
        while let Some(rec) = r.next()? {
            let seq = rec.seq;
            let decoded = Rec::decode(rec.kind, rec.payload)
                .map_err(|source| ReplayError::Record { seq, source })?;
            st.apply(decoded);
        }
    }
    Ok(st.finish())
}
