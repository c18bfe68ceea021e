//! The exchange venue's settings, errors and counters.

use std::net::SocketAddr;

use peregrine_wire::{Credential, DecodeError};
use serde::{Deserialize, Serialize};

/// Exchange venue settings (`[[venues]] exchange = { ... }` in `engine.toml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExchangeConfig {
    /// Order-entry address of the exchange, `IP:port`.
    pub addr: String,
    /// Trading account to log in as.
    pub account: u32,
    /// Its password (1..=16 bytes; the wire credential).
    pub password: String,
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
    pub fn heartbeat_ms() -> u32 {
        1_000
    }
    pub fn connect_timeout_ms() -> u64 {
        2_000
    }
    pub fn reconnect_ms() -> u64 {
        1_000
    }
    pub fn max_orders() -> usize {
        65_536
    }
    pub fn out_buffer() -> usize {
        65_536
    }
}

impl ExchangeConfig {
    /// Settings with every optional field at its default.
    pub fn new(addr: &str, account: u32, password: &str) -> ExchangeConfig {
        ExchangeConfig {
            addr: addr.to_owned(),
            account,
            password: password.to_owned(),
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
        if self.addr.parse::<SocketAddr>().is_err() {
            p.push(format!("{at}.addr {:?}: expected IP:port", self.addr));
        }
        if self.account == 0 {
            p.push(format!("{at}.account must be > 0"));
        }
        if Credential::from_text(&self.password).is_none() || self.password.is_empty() {
            p.push(format!("{at}.password must be 1..=16 bytes"));
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
    /// The exchange refused the login.
    #[error("login refused, reason {0}")]
    LoginRejected(u16),
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
    /// Orders still in doubt at a reconciliation barrier (fills may have been missed).
    pub reconciled_gone: u64,
}
