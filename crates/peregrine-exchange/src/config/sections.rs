//! The smaller sections of the exchange config: thread layout, accounts, the feed and
//! the metrics endpoint.

use std::net::SocketAddr;

use peregrine_types::AccountId;
use serde::{Deserialize, Serialize};

/// Thread layout of the exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Topology {
    /// One thread polls the sockets, decodes, matches and writes. The default: on a
    /// 2-core machine one core serves the exchange and the other the clients, and no
    /// cross-thread hand-off (or wake-up) sits on the order path.
    Compact,
    /// An ingestion thread (sockets, decode, login, writes) and a matching thread,
    /// joined by two SPSC rings. For machines with cores to spare.
    Split,
}

/// One trading account and its credential.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountConfig {
    /// Account id (what `Login.account` names).
    pub id: AccountId,
    /// Password, at most 16 bytes (the wire credential field), compared exactly.
    pub password: String,
    /// May send `Deposit` / `Withdraw` and query any account's balance. Default
    /// `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub admin: bool,
}

/// The UDP market-data feed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MarketDataConfig {
    /// Publish the feed at all. Default `true`.
    pub enabled: bool,
    /// Where packets go: a unicast address (default `127.0.0.1:7701`, fine for a
    /// laptop and tests) or a multicast group such as `239.1.1.1:7701`.
    pub target: SocketAddr,
    /// Largest datagram payload in bytes. Default 1400 (fits an Ethernet MTU).
    pub mtu: usize,
    /// Heartbeat packet interval when the feed is idle, milliseconds. Default 1000.
    pub heartbeat_ms: u64,
    /// Multicast TTL. Default 1 (stay on the local network).
    pub multicast_ttl: u32,
    /// Feed messages kept for replay by the recovery service (the most recent ones),
    /// a power of two; 0 keeps none (gaps are then healed from snapshots only).
    /// Default 65,536 (~3.7 MiB).
    pub replay_retain: usize,
    /// Feed messages wait at most this long, microseconds, for their packet to
    /// fill before it is sent (fewer `sendto` calls under load; a lone update leaves
    /// after this delay). 0: every batch sends its own packet. Default 50.
    pub max_delay_us: u64,
}

impl Default for MarketDataConfig {
    fn default() -> Self {
        MarketDataConfig {
            enabled: true,
            target: SocketAddr::from(([127, 0, 0, 1], 7701)),
            mtu: 1400,
            heartbeat_ms: 1000,
            multicast_ttl: 1,
            replay_retain: 65_536,
            max_delay_us: 50,
        }
    }
}

/// The `[metrics]` section: the Prometheus endpoint and the depth snapshots behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Serve `/metrics` at all. Default `false` (the shipped `exchange.toml` turns it
    /// on).
    pub enabled: bool,
    /// HTTP address of `/metrics`. Default `127.0.0.1:9100`; port 0 picks a free port
    /// (logged as `metrics on http://ADDR/metrics`).
    pub listen: SocketAddr,
    /// The matching and session threads copy their counters for the endpoint at most
    /// this often, milliseconds. Default 100.
    pub publish_interval_ms: u64,
    /// Price levels per side in the depth snapshot. Default 5.
    pub depth_levels: usize,
    /// The matching thread copies the books' top levels at most this often,
    /// microseconds (and only if a command ran since). Default 500.
    pub depth_interval_us: u64,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            enabled: false,
            listen: SocketAddr::from(([127, 0, 0, 1], 9100)),
            publish_interval_ms: 100,
            depth_levels: 5,
            depth_interval_us: 500,
        }
    }
}

impl MetricsConfig {
    /// Pushes every problem found onto `errs`.
    pub(crate) fn check(&self, errs: &mut Vec<String>) {
        if !(1..=60_000).contains(&self.publish_interval_ms) {
            errs.push("metrics.publish_interval_ms: must be 1..=60000".into());
        }
        if !(1..=10_000).contains(&self.depth_levels) {
            errs.push("metrics.depth_levels: must be 1..=10000".into());
        }
        if !(1..=60_000_000).contains(&self.depth_interval_us) {
            errs.push("metrics.depth_interval_us: must be 1..=60000000".into());
        }
    }
}
