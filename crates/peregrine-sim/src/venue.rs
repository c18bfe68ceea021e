//! The exchange config of a run: small books, the run's accounts (their keys drawn
//! from the seed), the journal on the node's simulated disk.

use std::path::PathBuf;

use peregrine_cluster::{ClusterConfig, PeerConfig};
use peregrine_exchange::config::AccountConfig;
use peregrine_exchange::Config;
use peregrine_exchange_core::journal::JournalSection;
use peregrine_types::{AccountId, InstrumentSpec, Rng};
use peregrine_wire::auth::AccountKey;

use crate::knobs::SimConfig;

/// The account of the drop copy (an operator).
pub const OPERATOR: AccountId = AccountId(900);

/// Resting orders per book (small: a crashed node's memory is dropped often).
pub const CAPACITY: usize = 4096;

/// The accounts of a run: trader `i` is account `i + 1`; then the operator.
pub fn keys(cfg: &SimConfig) -> Vec<(AccountId, AccountKey)> {
    let mut r = Rng::new(cfg.seed ^ 0x4B45_5953_0000_0000);
    let mut key = || {
        let mut k = [0u8; 32];
        for c in k.chunks_mut(8) {
            c.copy_from_slice(&r.next_u64().to_le_bytes());
        }
        AccountKey(k)
    };
    let mut v: Vec<(AccountId, AccountKey)> = (0..cfg.traders)
        .map(|i| (AccountId(i as u32 + 1), key()))
        .collect();
    v.push((OPERATOR, key()));
    v
}

/// The instruments: two small books.
pub fn instruments() -> Vec<InstrumentSpec> {
    (1..=2).map(InstrumentSpec::example).collect()
}

/// Where node `n`'s journal lives on its disk.
pub fn journal_dir(n: usize) -> PathBuf {
    PathBuf::from(format!("/node{n}/journal"))
}

/// The exchange config of node `n`.
pub fn config(cfg: &SimConfig, n: usize, keys: &[(AccountId, AccountKey)]) -> Config {
    let mut c = Config {
        instruments: instruments(),
        arena_capacity: CAPACITY,
        max_sessions: 64,
        session_out_buffer: 64 << 10,
        ..Config::default()
    };
    c.accounts = keys
        .iter()
        .map(|(id, k)| AccountConfig {
            id: *id,
            stored_key: k.stored().to_hex(),
            admin: false,
            operator: *id == OPERATOR,
        })
        .collect();
    c.market_data.enabled = false;
    c.recovery_enabled = false;
    c.reports.retain_per_account = cfg.retain;
    let mut j = JournalSection::new(journal_dir(n));
    j.fsync = cfg.fsync;
    j.segment_bytes = cfg.segment_bytes;
    j.snapshot_every = cfg.snapshot_every;
    c.journal = Some(j);
    if cfg.nodes > 1 {
        c.cluster = Some(cluster(cfg, n));
    }
    c
}

/// The peer address of node `n` (never dialled: the simulator carries the messages).
pub fn peer_addr(n: usize) -> String {
    format!("10.1.0.{}:7710", n + 1)
}

/// The `[cluster]` section of node `n`: elections after exactly `election_ticks`,
/// different per node (no RNG), snapshots often, a short retained log.
fn cluster(cfg: &SimConfig, n: usize) -> ClusterConfig {
    ClusterConfig {
        node_id: n as u64 + 1,
        listen: "127.0.0.1:7710".into(),
        peers: (0..cfg.nodes)
            .map(|m| PeerConfig {
                id: m as u64 + 1,
                addr: peer_addr(m),
                client: None,
                recovery: None,
            })
            .collect(),
        election_ticks: 10 + 4 * n,
        heartbeat_ticks: 2,
        max_entry_bytes: 1 << 20,
        max_append_bytes: 64 << 10,
        max_inflight: 16,
        snapshot_every: cfg.raft_snapshot_every,
        log_retain: cfg.raft_log_retain,
        fsync: cfg.fsync,
        segment_bytes: cfg.segment_bytes,
        snapshot_retain: 2,
        prune: true,
        ..ClusterConfig::default()
    }
}
