//! `peregrine journal replay` / `verify` on a cluster node: its Raft log replayed
//! offline into a fresh replica ([`peregrine_cluster::log::replay_offline`]), with
//! the same state hash the node reports on its admin endpoint (`current_state`).

use std::sync::Arc;

use peregrine_exchange_core::reports::Retention;

use super::sm::ExchangeSm;
use super::Shared;
use crate::config::Config;
use crate::error::{ExchangeError, IoContext};

/// What the replay of a cluster node's log found.
#[derive(Debug, Clone)]
pub struct ClusterReplay {
    /// The log's summary (indices, checks, the final hash).
    pub log: peregrine_cluster::log::OfflineReplay,
    /// Engine seq of the last command applied.
    pub engine_seq: u64,
    /// The state hash, hex (as the node's `current_state.hash`).
    pub state_hash: String,
}

/// Replays the Raft log of the node configured by `config` (its `[journal] dir`)
/// from its newest snapshot through the recorded commit index. The node must be
/// stopped (the log's lock is taken).
pub fn replay_cluster_log(config: &Config) -> Result<ClusterReplay, ExchangeError> {
    let Some(cc) = &config.cluster else {
        return Err(ExchangeError::Config(vec![
            "not a cluster node's config (no [cluster] section)".into(),
        ]));
    };
    let Some(journal) = &config.journal else {
        return Err(ExchangeError::Config(vec![
            "cluster: needs [journal] (its dir holds the node's Raft log)".into(),
        ]));
    };
    let venue = config.venue().map_err(ExchangeError::Config)?;
    let shared = Arc::new(Shared::new().doing(|| "creating the cluster eventfd".into())?);
    let retention = Retention {
        per_account: config.reports.retain_per_account,
    };
    let mut sm =
        ExchangeSm::new(&venue, retention, Arc::clone(&shared)).map_err(ExchangeError::Cluster)?;
    let log = peregrine_cluster::log::replay_offline(&journal.dir, cc.snapshot_every, &mut sm)
        .map_err(|e| ExchangeError::Cluster(e.to_string()))?;
    if let Some(why) = shared.failure() {
        return Err(ExchangeError::Cluster(why));
    }
    Ok(ClusterReplay {
        engine_seq: sm.engine_seq(),
        state_hash: peregrine_cluster::hex(&log.state_hash),
        log,
    })
}
