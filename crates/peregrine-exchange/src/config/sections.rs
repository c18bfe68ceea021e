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

/// One account allowed to log in (`[[accounts]]`): only the SHA-256 of its key is
/// stored (`peregrine keygen` writes the key for the client and prints this entry),
/// never a password or the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountConfig {
    /// Account id (what `Login.account` names).
    pub id: AccountId,
    /// SHA-256 of the account's key, 64 hex digits.
    pub stored_key: String,
    /// May send `Deposit` / `Withdraw` and query any account's balance. Default
    /// `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub admin: bool,
    /// May open a drop copy of any account, or of every account. Default `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub operator: bool,
}

impl AccountConfig {
    /// Pushes every problem with this entry onto `errs`.
    pub(crate) fn check(&self, errs: &mut Vec<String>) {
        if peregrine_wire::auth::StoredKey::from_hex(&self.stored_key).is_none() {
            errs.push(format!(
                "account {}: stored_key must be 64 hex digits (the SHA-256 of the account's \
                 key; `peregrine keygen` prints it)",
                self.id
            ));
        }
        if self.id.0 == u32::MAX {
            errs.push("accounts: id 4294967295 is reserved (it means every account)".into());
        }
    }
}

/// The `[access]` section: who may connect and how often, so idle or hostile
/// connections cannot lock legitimate clients out (docs/exchange.md, "Access").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AccessConfig {
    /// Connections waiting to log in, over every address (their own pool, apart from
    /// `max_sessions`); beyond it the oldest waiting connection is closed. Default
    /// 1024.
    pub pending: usize,
    /// Connections waiting to log in from one address; beyond it that address's
    /// oldest is closed. Default 64.
    pub pending_per_address: usize,
    /// Milliseconds a connection may take to log in. Default 2000.
    pub login_timeout_ms: u64,
    /// Failed logins (per address, and per account from addresses that have not
    /// logged in to it) before any delay. Default 3.
    pub throttle_free_failures: u32,
    /// The first delay, milliseconds; it doubles with each further failure.
    /// Default 250.
    pub throttle_base_ms: u64,
    /// The largest delay, milliseconds. Default 30,000.
    pub throttle_max_ms: u64,
    /// Recovery-service connections at once. Default 64.
    pub recovery_clients: usize,
    /// Recovery-service connections from one address. Default 8.
    pub recovery_per_address: usize,
    /// A recovery connection idle this long (no request) is closed, milliseconds.
    /// Default 10,000.
    pub recovery_idle_ms: u64,
}

impl Default for AccessConfig {
    fn default() -> Self {
        AccessConfig {
            pending: 1024,
            pending_per_address: 64,
            login_timeout_ms: 2000,
            throttle_free_failures: 3,
            throttle_base_ms: 250,
            throttle_max_ms: 30_000,
            recovery_clients: 64,
            recovery_per_address: 8,
            recovery_idle_ms: 10_000,
        }
    }
}

impl AccessConfig {
    /// Pushes every problem found onto `errs`.
    pub(crate) fn check(&self, errs: &mut Vec<String>) {
        let mut need = |ok: bool, msg: &str| {
            if !ok {
                errs.push(msg.to_string());
            }
        };
        need(
            (1..=65_536).contains(&self.pending),
            "access.pending: must be 1..=65536",
        );
        need(
            (1..=self.pending.max(1)).contains(&self.pending_per_address),
            "access.pending_per_address: must be 1..=access.pending",
        );
        need(
            (10..=600_000).contains(&self.login_timeout_ms),
            "access.login_timeout_ms: must be 10..=600000",
        );
        need(
            self.throttle_base_ms <= self.throttle_max_ms,
            "access.throttle_base_ms: must not exceed throttle_max_ms",
        );
        need(
            (1..=65_536).contains(&self.recovery_clients),
            "access.recovery_clients: must be 1..=65536",
        );
        need(
            (1..=self.recovery_clients.max(1)).contains(&self.recovery_per_address),
            "access.recovery_per_address: must be 1..=access.recovery_clients",
        );
        need(
            self.recovery_idle_ms >= 10,
            "access.recovery_idle_ms: must be at least 10",
        );
    }
}

/// The `[reports]` section: the per-account report streams (protocol version 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReportsConfig {
    /// Reports kept per account for replay to a client that reconnects (~104 bytes
    /// each, address space reserved up to 1,048,576 per account and touched as
    /// reports arrive). A client asking for older reports gets an open-orders
    /// snapshot instead. After a restart, retention covers the journal replayed since
    /// the newest snapshot. Default 100,000.
    pub retain_per_account: usize,
}

impl Default for ReportsConfig {
    fn default() -> Self {
        ReportsConfig {
            retain_per_account: 100_000,
        }
    }
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
    /// For a multicast `target`: the IPv4 address of the interface packets leave by
    /// (`IP_MULTICAST_IF`); subscribers join the group on the same one. Default
    /// `0.0.0.0`, the routing table's choice. `127.0.0.1` keeps a one-host feed on
    /// loopback, where every local subscriber gets every packet (what `peregrine up`
    /// does for its engine and HTTP gateway).
    pub multicast_interface: std::net::Ipv4Addr,
    /// Feed messages kept for replay by the recovery service (the most recent ones),
    /// a power of two; 0 keeps none (gaps are then healed from snapshots only).
    /// Default 65,536 (~3.7 MiB).
    pub replay_retain: usize,
    /// Feed messages wait at most this long, microseconds, for their packet to
    /// fill before it is sent (fewer `sendto` calls under load; a lone update leaves
    /// after this delay). 0: every batch sends its own packet. Default 50.
    pub max_delay_us: u64,
    /// The packet header sent (`docs/protocol.md`, section 5.1): 2, the 32-byte
    /// header with a version marker and the send time (default); 1, the 18-byte
    /// version-1 header, for subscribers written against version 1.
    pub packet_version: u8,
}

impl Default for MarketDataConfig {
    fn default() -> Self {
        MarketDataConfig {
            enabled: true,
            target: SocketAddr::from(([127, 0, 0, 1], 7701)),
            mtu: 1400,
            heartbeat_ms: 1000,
            multicast_ttl: 1,
            multicast_interface: std::net::Ipv4Addr::UNSPECIFIED,
            replay_retain: 65_536,
            max_delay_us: 50,
            packet_version: 2,
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
    /// HTTP address of `/metrics` and `/health`. Default `127.0.0.1:7790` (not 9100:
    /// node_exporter's port on most hosts); port 0 picks a free port (logged as
    /// `metrics on http://ADDR/metrics`).
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
            listen: SocketAddr::from(([127, 0, 0, 1], 7790)),
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
