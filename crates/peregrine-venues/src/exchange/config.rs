//! The exchange venue's settings, errors and counters.

use std::net::SocketAddr;
use std::path::Path;

use peregrine_client::keys::KeyFile;
use peregrine_types::AccountId;
use peregrine_wire::auth::AccountKey;
use peregrine_wire::v2::client::Violation;
use peregrine_wire::DecodeError;
use serde::{Deserialize, Serialize};

/// Exchange venue settings (`[[venues]] exchange = { ... }` in `engine.toml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExchangeConfig {
    /// Order-entry address of the exchange, `IP:port`; for a cluster
    /// (`peregrine exchange --cluster`) every node's, separated by commas: the
    /// adapter logs in wherever the leader is, following its redirects, and moves to
    /// the next address when one does not answer.
    pub addr: String,
    /// Trading account to log in as.
    pub account: u32,
    /// A key file holding the account's key (`peregrine keygen --keys-out`; the
    /// account's entry is used). Exactly one of `key_file` and `key`.
    #[serde(default)]
    pub key_file: Option<String>,
    /// The account's key itself, 64 hex digits (prefer `key_file`: the engine's
    /// config is then no secret).
    #[serde(default)]
    pub key: Option<String>,
    /// Heartbeat interval asked for at login, ms (the exchange's answer is used);
    /// default 1000.
    #[serde(default = "defaults::heartbeat_ms")]
    pub heartbeat_ms: u32,
    /// Connect + login timeout, ms; default 2000.
    #[serde(default = "defaults::connect_timeout_ms")]
    pub connect_timeout_ms: u64,
    /// Pause between reconnection attempts, ms; default 1000.
    #[serde(default = "defaults::reconnect_ms")]
    pub reconnect_ms: u64,
    /// Open orders tracked at once (maps reserved up front); more are refused as
    /// busy. Default 65,536.
    #[serde(default = "defaults::max_orders")]
    pub max_orders: usize,
    /// Outbound buffer, bytes; a request that does not fit is refused as busy.
    /// Default 65,536.
    #[serde(default = "defaults::out_buffer")]
    pub out_buffer: usize,
    /// The exchange's market-data feed (`feed = { addr, recovery }`); none: no
    /// market data from this venue. See [`super::md::FeedConfig`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed: Option<super::md::FeedConfig>,
}

mod defaults {
    pub(super) fn heartbeat_ms() -> u32 {
        1_000
    }
    pub(super) fn connect_timeout_ms() -> u64 {
        2_000
    }
    pub(super) fn reconnect_ms() -> u64 {
        1_000
    }
    pub(super) fn max_orders() -> usize {
        65_536
    }
    pub(super) fn out_buffer() -> usize {
        65_536
    }
}

impl ExchangeConfig {
    /// Settings with every optional field at its default, the key read from
    /// `key_file`.
    pub fn new(addr: &str, account: u32, key_file: &str) -> ExchangeConfig {
        ExchangeConfig {
            addr: addr.to_owned(),
            account,
            key_file: Some(key_file.to_owned()),
            key: None,
            heartbeat_ms: defaults::heartbeat_ms(),
            connect_timeout_ms: defaults::connect_timeout_ms(),
            reconnect_ms: defaults::reconnect_ms(),
            max_orders: defaults::max_orders(),
            out_buffer: defaults::out_buffer(),
            feed: None,
        }
    }

    /// Every problem, each prefixed with `at` (e.g. `venues[0].exchange`).
    pub fn problems(&self, at: &str) -> Vec<String> {
        let mut p = Vec::new();
        if parse_addrs(&self.addr).is_none() {
            p.push(format!(
                "{at}.addr {:?}: expected IP:port (or several, separated by commas)",
                self.addr
            ));
        }
        if self.account == 0 {
            p.push(format!("{at}.account must be > 0"));
        }
        match (&self.key_file, &self.key) {
            (None, None) => p.push(format!(
                "{at}: the account's key is missing: give key_file (from `peregrine keygen`) or key"
            )),
            (Some(_), Some(_)) => p.push(format!("{at}: give key_file or key, not both")),
            (None, Some(k)) if AccountKey::from_hex(k).is_none() => {
                p.push(format!("{at}.key must be 64 hex digits"))
            }
            (Some(f), None) => {
                if let Err(e) = KeyFile::key_of(Path::new(f), AccountId(self.account)) {
                    p.push(format!("{at}.key_file: {e}"));
                }
            }
            _ => {}
        }
        if self.heartbeat_ms == 0 {
            p.push(format!("{at}.heartbeat_ms must be > 0"));
        }
        if self.connect_timeout_ms == 0 {
            p.push(format!("{at}.connect_timeout_ms must be > 0"));
        }
        if self.max_orders == 0 || self.max_orders > 1 << 24 {
            p.push(format!("{at}.max_orders must be 1..=16777216"));
        }
        if self.out_buffer < peregrine_wire::MAX_MESSAGE_SIZE {
            p.push(format!(
                "{at}.out_buffer must be >= {}",
                peregrine_wire::MAX_MESSAGE_SIZE
            ));
        }
        if let Some(f) = &self.feed {
            p.extend(f.problems(&format!("{at}.feed")));
        }
        p
    }
}

impl ExchangeConfig {
    /// The account's key (from `key` or `key_file`).
    pub fn account_key(&self) -> Result<AccountKey, ExchangeError> {
        match (&self.key, &self.key_file) {
            (Some(k), None) => AccountKey::from_hex(k)
                .ok_or_else(|| ExchangeError::Config("key must be 64 hex digits".into())),
            (None, Some(f)) => KeyFile::key_of(Path::new(f), AccountId(self.account))
                .map_err(|e| ExchangeError::Config(e.to_string())),
            _ => Err(ExchangeError::Config(
                "give exactly one of key_file and key".into(),
            )),
        }
    }
}

/// The addresses of `text`: `IP:port`, or several separated by commas.
pub(crate) fn parse_addrs(text: &str) -> Option<Vec<SocketAddr>> {
    peregrine_client::order_entry::parse_addrs(text).ok()
}

/// Why the session ended (or never started).
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// The settings cannot work (see [`ExchangeConfig::problems`]).
    #[error("bad settings: {0}")]
    Config(String),
    /// Connecting failed.
    #[error("connecting to {0}: {1}")]
    Connect(SocketAddr, std::io::Error),
    /// A read or write failed.
    #[error("socket: {0}")]
    Io(std::io::Error),
    /// The exchange closed the connection.
    #[error("the exchange closed the connection")]
    Closed,
    /// The exchange refused the login (`retry_after_ms`: throttled).
    #[error("login refused, reason {reason} (retry after {retry_after_ms} ms)")]
    LoginRejected {
        /// The login reason code (`docs/protocol.md`).
        reason: u16,
        /// Milliseconds before another attempt may succeed (0: none given).
        retry_after_ms: u32,
    },
    /// The session or its report stream broke the protocol (a gap, a repeat, a
    /// message out of place).
    #[error("session violation: {0}")]
    Session(#[from] Violation),
    /// No login answer in time.
    #[error("no login answer within {0} ms")]
    LoginTimeout(u64),
    /// Bytes that are not the protocol.
    #[error("protocol violation: {0}")]
    Protocol(#[from] DecodeError),
    /// A session sequence number was skipped or repeated.
    #[error("session sequence gap: expected {expected}, got {got}")]
    SequenceGap {
        /// The next number expected.
        expected: u64,
        /// The number received.
        got: u64,
    },
    /// A message that cannot come now.
    #[error("unexpected {0}")]
    Unexpected(&'static str),
    /// A cluster follower answered: the leader is elsewhere (or not elected yet).
    #[error("redirected: leader {leader_id} at {address:?} (retry after {retry_after_ms} ms)")]
    Redirected {
        /// The leader's node id (0: none known yet).
        leader_id: u64,
        /// Its order-entry address, when the follower knows it.
        address: Option<SocketAddr>,
        /// How long to wait when no leader is known.
        retry_after_ms: u32,
    },
    /// Nothing received for three heartbeat intervals.
    #[error("the exchange was silent for {0} ms")]
    Silent(u64),
}

/// What the adapter counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExchangeStats {
    /// Successful logins.
    pub logins: u64,
    /// Sessions lost (or connection attempts that failed).
    pub disconnects: u64,
    /// Reports about orders or requests the adapter did not know.
    pub unknown_reports: u64,
    /// Orders left in doubt after a login's recovery because the exchange no longer
    /// retained their reports (an open-orders snapshot instead of a replay): never
    /// settled on a guess.
    pub unresolved: u64,
    /// Reports received in a replay after a login (missed while disconnected).
    pub replayed: u64,
    /// Replayed fills skipped as already counted before an engine restart.
    pub replayed_duplicates: u64,
}
