//! The gateway configuration (`gateway-http.toml`): a validated serde struct.
//!
//! Every section has defaults; `deny_unknown_fields` catches typos and
//! [`GatewayConfig::validate`] lists every problem at once. Where the exchange is and
//! what it trades comes from the `[exchange]` section, usually by pointing at the
//! exchange's own config file ([`crate::venue`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use peregrine_client::order_entry::{parse_addrs, BadAddress};
use serde::{Deserialize, Serialize};

/// Why a config could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The TOML did not parse into the config.
    #[error("parsing {path}: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The error.
        source: Box<toml::de::Error>,
    },
    /// The config parsed but is inconsistent.
    #[error("invalid config {path}:\n  {}", .problems.join("\n  "))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem found.
        problems: Vec<String>,
    },
}

/// One API key: which exchange account it trades (the gateway logs in there with the
/// account's key from `[exchange] keys`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiKeyConfig {
    /// The exchange account this key reaches (and no other).
    pub account: u32,
    /// The public API key (`X-MBX-APIKEY`), 8..=128 characters of `[A-Za-z0-9_-]`.
    pub api_key: String,
    /// The HMAC-SHA256 secret, 8..=128 printable ASCII characters.
    pub secret_key: String,
    /// May use the operations API (engine stats, limits, kill switch). Default false.
    #[serde(default)]
    pub operator: bool,
}

/// `[exchange]`: where the exchange is and what it trades.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExchangeSection {
    /// The exchange's config file: addresses, instruments and assets are read from it
    /// (relative paths are relative to the gateway config's directory). Default none.
    pub config: Option<PathBuf>,
    /// Order-entry address; overrides the exchange config's `listen`. A cluster:
    /// every node's address, `"a,b,c"` (the sessions follow the leader).
    pub order_entry: Option<AddrList>,
    /// Market-data feed address to bind (the exchange's `market_data.target`).
    pub feed: Option<SocketAddr>,
    /// Recovery (snapshot and replay) address (the exchange's `recovery_listen`, and
    /// for a cluster its peers' `recovery`). A cluster: every node's, `"a,b,c"`.
    pub recovery: Option<AddrList>,
    /// The account key file (`peregrine keygen --keys-out`): the key of every
    /// api_keys account proves the gateway's protocol v2 login (relative paths are
    /// relative to the gateway config's directory). Required when api_keys is not
    /// empty.
    pub keys: Option<PathBuf>,
    /// How long an order request may wait for the exchange's answer, ms. Default 5000.
    pub answer_timeout_ms: u64,
}

impl Default for ExchangeSection {
    fn default() -> Self {
        ExchangeSection {
            config: None,
            order_entry: None,
            feed: None,
            recovery: None,
            keys: None,
            answer_timeout_ms: 5_000,
        }
    }
}

/// One order-entry address or a cluster's nodes: `"IP:port"`, or several separated
/// by commas, in the TOML.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AddrList(Vec<SocketAddr>);

impl AddrList {
    /// The addresses, in the configured order (never empty).
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.0
    }
}

impl TryFrom<String> for AddrList {
    type Error = BadAddress;
    fn try_from(text: String) -> Result<Self, BadAddress> {
        parse_addrs(&text).map(AddrList)
    }
}

impl From<AddrList> for String {
    fn from(l: AddrList) -> String {
        l.0.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl From<SocketAddr> for AddrList {
    fn from(a: SocketAddr) -> Self {
        AddrList(vec![a])
    }
}

/// `[limits]`: request weights and order counts, as Binance publishes them in
/// `exchangeInfo.rateLimits`, plus transport limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsSection {
    /// Request weight per client IP per minute (`REQUEST_WEIGHT`). Default 6000.
    pub request_weight_per_minute: u32,
    /// New orders per account per 10 seconds (`ORDERS`). Default 100.
    pub orders_per_10s: u32,
    /// New orders per account per day (`ORDERS`). Default 200000.
    pub orders_per_day: u32,
    /// Largest request body, bytes. Default 65536.
    pub max_body_bytes: usize,
    /// Time a client has to send a request head, ms. Default 10000.
    pub header_timeout_ms: u64,
    /// Concurrent HTTP connections (WebSockets included). Default 4096.
    pub max_connections: usize,
    /// Concurrent connections from one IP address. Default 1024.
    pub max_connections_per_ip: usize,
}

impl Default for LimitsSection {
    fn default() -> Self {
        LimitsSection {
            request_weight_per_minute: 6_000,
            orders_per_10s: 100,
            orders_per_day: 200_000,
            max_body_bytes: 65_536,
            header_timeout_ms: 10_000,
            max_connections: 4_096,
            max_connections_per_ip: 1_024,
        }
    }
}

/// `[ws]`: WebSocket stream limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WsSection {
    /// Streams one connection may subscribe to. Default 1024 (as Binance).
    pub max_streams_per_connection: usize,
    /// Incoming messages per second per connection before it is closed. Default 5
    /// (as Binance).
    pub max_incoming_per_second: u32,
    /// Largest incoming message, bytes. Default 4096.
    pub max_message_bytes: usize,
    /// Events a subscriber may fall behind before it is disconnected. Default 4096.
    pub lag_limit: usize,
    /// Listen keys expire after this long without a keepalive, minutes. Default 60.
    pub listen_key_ttl_min: u64,
}

impl Default for WsSection {
    fn default() -> Self {
        WsSection {
            max_streams_per_connection: 1_024,
            max_incoming_per_second: 5,
            max_message_bytes: 4_096,
            lag_limit: 4_096,
            listen_key_ttl_min: 60,
        }
    }
}

/// `[history]`: the history store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HistorySection {
    /// `sqlite://PATH` (created if missing; relative to the working directory),
    /// `sqlite::memory:` or `postgres://user:pass@host/db`. Default
    /// `sqlite://data/history.db`.
    pub url: String,
    /// Most events written in one transaction. Default 4096.
    pub batch: usize,
    /// Milliseconds the writer waits after the first event of a transaction for
    /// more (a reader waiting for its writes ends the wait). 0: commit at once.
    /// Default 5.
    pub linger_ms: u64,
}

impl Default for HistorySection {
    fn default() -> Self {
        HistorySection {
            url: "sqlite://data/history.db".into(),
            batch: 4_096,
            linger_ms: 5,
        }
    }
}

/// `[engine]`: the order engine whose operations page the gateway serves.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineSection {
    /// The engine's control socket (`<shm dir>/control.sock`). Default none: the
    /// operations page says no engine is configured.
    pub control_socket: Option<PathBuf>,
}

/// `[ui]`: the web pages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UiSection {
    /// An API key whose key and secret the page fills in for the visitor. Only for a
    /// demo on a trusted machine: anyone who can open the page can trade with it.
    /// Default none.
    pub prefill_api_key: Option<String>,
}

/// The whole gateway config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GatewayConfig {
    /// HTTP listen address. Port 0 picks a free port. Default `127.0.0.1:8080`.
    pub listen: SocketAddr,
    /// Where the exchange is.
    pub exchange: ExchangeSection,
    /// API keys, one per account.
    #[serde(rename = "api_keys")]
    pub api_keys: Vec<ApiKeyConfig>,
    /// Rate and size limits.
    pub limits: LimitsSection,
    /// WebSocket limits.
    pub ws: WsSection,
    /// History store.
    pub history: HistorySection,
    /// Order engine operations.
    pub engine: EngineSection,
    /// Web pages.
    pub ui: UiSection,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            exchange: ExchangeSection::default(),
            api_keys: Vec::new(),
            limits: LimitsSection::default(),
            ws: WsSection::default(),
            history: HistorySection::default(),
            engine: EngineSection::default(),
            ui: UiSection::default(),
        }
    }
}

fn key_chars_ok(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl GatewayConfig {
    /// Parses TOML text (no validation).
    pub fn parse(text: &str) -> Result<GatewayConfig, toml::de::Error> {
        toml::from_str(text)
    }

    /// Reads, parses and validates `path`; a relative `exchange.config` or
    /// `exchange.keys` is resolved against the directory of `path`.
    pub fn load(path: &Path) -> Result<GatewayConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_owned(),
            source,
        })?;
        let mut config = Self::parse(&text).map_err(|source| ConfigError::Parse {
            path: path.to_owned(),
            source: Box::new(source),
        })?;
        if let Some(dir) = path.parent() {
            for p in [&mut config.exchange.config, &mut config.exchange.keys]
                .into_iter()
                .flatten()
            {
                if p.is_relative() {
                    *p = dir.join(&*p);
                }
            }
        }
        config.validate().map_err(|problems| ConfigError::Invalid {
            path: path.to_owned(),
            problems,
        })?;
        Ok(config)
    }

    /// Every problem at once.
    pub fn validate(&self) -> Result<(), Vec<String>> {
        let mut errs = Vec::new();
        let mut keys = std::collections::HashSet::new();
        let mut accounts = std::collections::HashSet::new();
        for (i, k) in self.api_keys.iter().enumerate() {
            let at = format!("api_keys[{i}]");
            if !(8..=128).contains(&k.api_key.len()) || !key_chars_ok(&k.api_key) {
                errs.push(format!("{at}.api_key: 8..=128 characters of [A-Za-z0-9_-]"));
            }
            if !(8..=128).contains(&k.secret_key.len())
                || !k.secret_key.bytes().all(|b| b.is_ascii_graphic())
            {
                errs.push(format!(
                    "{at}.secret_key: 8..=128 printable ASCII characters"
                ));
            }
            if !keys.insert(k.api_key.clone()) {
                errs.push(format!("{at}.api_key: used twice"));
            }
            if !accounts.insert(k.account) {
                errs.push(format!(
                    "{at}.account: account {} has two keys (one session per account)",
                    k.account
                ));
            }
        }
        if !self.api_keys.is_empty() && self.exchange.keys.is_none() {
            errs.push(
                "exchange.keys: the account key file (peregrine keygen) is needed to log in \
                 the api_keys accounts"
                    .into(),
            );
        }
        let l = &self.limits;
        if l.request_weight_per_minute == 0 || l.orders_per_10s == 0 || l.orders_per_day == 0 {
            errs.push("limits: request_weight_per_minute, orders_per_10s, orders_per_day must be positive".into());
        }
        if !(1_024..=16 << 20).contains(&l.max_body_bytes) {
            errs.push("limits.max_body_bytes: 1024..=16777216".into());
        }
        if !(100..=600_000).contains(&l.header_timeout_ms) {
            errs.push("limits.header_timeout_ms: 100..=600000".into());
        }
        if l.max_connections == 0 || l.max_connections_per_ip == 0 {
            errs.push("limits.max_connections and max_connections_per_ip must be positive".into());
        }
        let w = &self.ws;
        if !(1..=65_536).contains(&w.max_streams_per_connection) {
            errs.push("ws.max_streams_per_connection: 1..=65536".into());
        }
        if w.max_incoming_per_second == 0 {
            errs.push("ws.max_incoming_per_second: must be positive".into());
        }
        if !(64..=1 << 20).contains(&w.max_message_bytes) {
            errs.push("ws.max_message_bytes: 64..=1048576".into());
        }
        if !(16..=1 << 20).contains(&w.lag_limit) {
            errs.push("ws.lag_limit: 16..=1048576".into());
        }
        if !(1..=24 * 60).contains(&w.listen_key_ttl_min) {
            errs.push("ws.listen_key_ttl_min: 1..=1440".into());
        }
        if !(self.history.url.starts_with("sqlite:")
            || self.history.url.starts_with("postgres://")
            || self.history.url.starts_with("postgresql://"))
        {
            errs.push("history.url: sqlite://PATH, sqlite::memory: or postgres://...".into());
        }
        if !(1..=1 << 20).contains(&self.history.batch) {
            errs.push("history.batch: 1..=1048576".into());
        }
        if self.history.linger_ms > 1_000 {
            errs.push("history.linger_ms: 0..=1000".into());
        }
        if !(1..=600_000).contains(&self.exchange.answer_timeout_ms) {
            errs.push("exchange.answer_timeout_ms: 1..=600000".into());
        }
        if let Some(k) = &self.ui.prefill_api_key {
            if !self.api_keys.iter().any(|a| &a.api_key == k) {
                errs.push("ui.prefill_api_key: not one of the api_keys".into());
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_text_is_the_default_and_valid() {
        let c = GatewayConfig::parse("").unwrap();
        assert_eq!(c, GatewayConfig::default());
        c.validate().unwrap();
    }

    #[test]
    fn defaults_are_pinned() {
        let c = GatewayConfig::default();
        assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(c.limits.request_weight_per_minute, 6_000);
        assert_eq!(c.limits.orders_per_10s, 100);
        assert_eq!(c.limits.orders_per_day, 200_000);
        assert_eq!(c.limits.max_body_bytes, 65_536);
        assert_eq!(c.ws.max_streams_per_connection, 1_024);
        assert_eq!(c.ws.max_incoming_per_second, 5);
        assert_eq!(c.history.url, "sqlite://data/history.db");
        assert_eq!(c.exchange.answer_timeout_ms, 5_000);
    }

    #[test]
    fn unknown_keys_are_errors() {
        assert!(GatewayConfig::parse("lisen = \"127.0.0.1:1\"").is_err());
        assert!(GatewayConfig::parse("[limits]\norders_per_10 = 5").is_err());
    }

    #[test]
    fn order_entry_takes_one_address_or_a_cluster_list() {
        let c = GatewayConfig::parse("[exchange]\norder_entry = \"127.0.0.1:7700\"").unwrap();
        let one = c.exchange.order_entry.unwrap();
        assert_eq!(one.addrs(), ["127.0.0.1:7700".parse().unwrap()]);
        let c = GatewayConfig::parse(
            "[exchange]\norder_entry = \"127.0.0.1:1, 127.0.0.1:2,127.0.0.1:3\"",
        )
        .unwrap();
        let list = c.exchange.order_entry.clone().unwrap();
        assert_eq!(list.addrs().len(), 3);
        assert_eq!(String::from(list), "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3");
        for bad in ["", "127.0.0.1:1,", "127.0.0.1:1,node2:7700"] {
            let text = format!("[exchange]\norder_entry = {bad:?}");
            assert!(GatewayConfig::parse(&text).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn every_problem_is_listed() {
        let text = r#"
            [[api_keys]]
            account = 1
            api_key = "short"
            secret_key = "secret secret"
            [[api_keys]]
            account = 1
            api_key = "short"
            secret_key = "0123456789"
            [limits]
            orders_per_10s = 0
            [history]
            url = "mysql://x"
        "#;
        let errs = GatewayConfig::parse(text).unwrap().validate().unwrap_err();
        let all = errs.join("\n");
        for needle in [
            "api_keys[0].api_key",
            "api_keys[0].secret_key",
            "exchange.keys",
            "api_keys[1].api_key: used twice",
            "account 1 has two keys",
            "orders_per_10s",
            "history.url",
        ] {
            assert!(all.contains(needle), "{needle} missing from:\n{all}");
        }
    }
}
