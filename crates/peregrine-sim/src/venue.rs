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
    if cfg.ledger {
        balances(&mut c, keys);
    }
    // The feed on with subscribers: its packets go to the run (never a socket in a
    // stepped venue), heartbeats often so a lost last packet is noticed soon.
    c.market_data.enabled = cfg.subscribers > 0;
    c.market_data.heartbeat_ms = 50;
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

/// The assets of a run with balances: (id, symbol, decimals). The base is in the
/// instruments' quantity units (0 decimals), the quote in price × quantity units.
const ASSETS: [(u32, &str, u32); 2] = [(1, "PGN", 0), (2, "USD", 2)];

/// What each trader is funded with, per asset id, in whole units: enough that no
/// order of a run is ever refused for funds (the reference book knows no balances).
const FUNDING: [(u32, i128); 2] = [(1, 1_000_000_000), (2, 1_000_000_000)];

/// Balances on: assets, each trader funded, fees (a maker rebate, a taker fee)
/// paid to the operator's account.
fn balances(c: &mut Config, keys: &[(AccountId, AccountKey)]) {
    use peregrine_exchange_core::balances::{AssetConfig, InitialBalance};
    c.assets = ASSETS
        .iter()
        .map(|&(id, symbol, decimals)| AssetConfig {
            id,
            symbol: symbol.into(),
            decimals,
        })
        .collect();
    for spec in &mut c.instruments {
        spec.base = Some(ASSETS[0].1.into());
        spec.quote = Some(ASSETS[1].1.into());
        spec.fees = Some(peregrine_types::FeeSchedule {
            maker_ppm: -20,
            taker_ppm: 50,
            tiers: Vec::new(),
        });
    }
    c.balances.enabled = true;
    c.balances.initial = keys
        .iter()
        .filter(|(a, _)| *a != OPERATOR)
        .flat_map(|(a, _)| {
            FUNDING.iter().map(|&(asset, whole)| InitialBalance {
                account: *a,
                asset: ASSETS[asset as usize - 1].1.into(),
                amount: whole.to_string(),
            })
        })
        .collect();
    c.fee_account = Some(OPERATOR);
}

/// Per asset id, what the run's accounts hold in all (available + reserved, fee
/// account included) at every moment once funded: the initial deposits, in the
/// asset's smallest units (no deposits or withdrawals happen later).
pub fn supply(cfg: &SimConfig) -> std::collections::BTreeMap<u32, i128> {
    if !cfg.ledger {
        return Default::default();
    }
    FUNDING
        .iter()
        .map(|&(asset, whole)| {
            let unit = 10i128.pow(ASSETS[asset as usize - 1].2);
            (asset, whole * unit * cfg.traders as i128)
        })
        .collect()
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
