//! `gateway-fix.toml`: where to listen, which exchange, the instruments, and the
//! sessions (FIX CompIDs ↔ exchange accounts, whose keys are in a key file).

use std::path::{Path, PathBuf};

use peregrine_client::order_entry::{parse_addrs, BadAddress};
use peregrine_queue::WaitStrategy;
use serde::Deserialize;

/// The gateway's configuration.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayConfig {
    /// FIX listen address, e.g. `127.0.0.1:9878` (port 0: pick one; the gateway
    /// prints it).
    pub listen: String,
    /// The exchange's order-entry address (native protocol): `IP:port`, or a
    /// cluster's nodes separated by commas (`"a,b,c"`; the sessions follow the
    /// leader's redirects and pass over nodes that are down).
    pub exchange: String,
    /// Our CompID (the clients' TargetCompID). Default `PEREGRINE`.
    #[serde(default = "default_comp_id")]
    pub comp_id: String,
    /// The account keys (`peregrine keygen --keys-out`): the gateway logs in to the
    /// exchange as each session's account with its key. Secret (mode 0600).
    pub keys_file: PathBuf,
    /// Directory of the per-session message stores.
    pub store_dir: PathBuf,
    /// `fdatasync` every store flush (survives power loss) instead of `write` only.
    #[serde(default)]
    pub fsync: bool,
    /// Range of HeartBtInt (s) accepted at Logon. Default [1, 300].
    #[serde(default = "default_heartbeat_bounds")]
    pub heartbeat_bounds: [u32; 2],
    /// Largest BodyLength accepted. Default 8192.
    #[serde(default = "default_max_body")]
    pub max_body: usize,
    /// Largest |SendingTime − now| accepted, in seconds. Default 120.
    #[serde(default = "default_skew")]
    pub max_clock_skew_secs: u64,
    /// Connections that have not logged on, at most (beyond: refused). Default 64.
    #[serde(default = "default_pending")]
    pub max_pending_connections: usize,
    /// Seconds a new connection has to log on. Default 5.
    #[serde(default = "default_logon_timeout")]
    pub logon_timeout_secs: u64,
    /// What the gateway thread does when it finds no work
    /// (`peregrine_queue::WaitStrategy`): `busy-spin`, `spin-yield`, or `park`
    /// (default, as the exchange): 100 spins and 10 yields, then it blocks in
    /// `epoll_wait` on all its sockets until input arrives or a timer is due, leaving
    /// the core to the exchange and the clients.
    #[serde(default = "default_wait")]
    pub wait: WaitStrategy,
    /// How inbound FIX messages are checked against the FIX 4.4 dictionary
    /// (`[validation]`; every check on by default).
    #[serde(default)]
    pub validation: ValidationConfig,
    /// The instruments clients may trade, by Symbol (55).
    pub instruments: Vec<InstrumentConfig>,
    /// The FIX sessions.
    pub sessions: Vec<SessionEntry>,
}

/// `[validation]`: QuickFIX's settings of the same names, strict by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ValidationConfig {
    /// Check messages against the dictionary at all (`UseDataDictionary`).
    pub use_data_dictionary: bool,
    /// Refuse a header field after the body, Reject 14 (`ValidateFieldsOutOfOrder`).
    pub validate_fields_out_of_order: bool,
    /// Refuse user-defined tags (5000 and above) the dictionary does not define,
    /// Reject 0 (`ValidateUserDefinedFields`).
    pub validate_user_defined_fields: bool,
    /// Ignore tags below 5000 the dictionary does not know or does not define for
    /// the message type, instead of Reject 0 / 2 (`AllowUnknownMsgFields`).
    pub allow_unknown_msg_fields: bool,
    /// Check SendingTime against the clock, within `max_clock_skew_secs`
    /// (`CheckLatency`).
    pub check_latency: bool,
}

impl Default for ValidationConfig {
    fn default() -> Self {
        let v = peregrine_fix::dict::Validation::default();
        ValidationConfig {
            use_data_dictionary: v.use_data_dictionary,
            validate_fields_out_of_order: v.fields_out_of_order,
            validate_user_defined_fields: v.user_defined_fields,
            allow_unknown_msg_fields: v.allow_unknown_message_fields,
            check_latency: true,
        }
    }
}

impl ValidationConfig {
    /// The session layer's form.
    pub fn dictionary(&self) -> peregrine_fix::dict::Validation {
        peregrine_fix::dict::Validation {
            use_data_dictionary: self.use_data_dictionary,
            fields_out_of_order: self.validate_fields_out_of_order,
            user_defined_fields: self.validate_user_defined_fields,
            allow_unknown_message_fields: self.allow_unknown_msg_fields,
        }
    }
}

/// An instrument as the gateway maps it (the exchange's instrument list).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstrumentConfig {
    /// Symbol (55).
    pub symbol: String,
    /// The exchange's instrument id.
    pub id: u32,
    /// Decimals of the price unit.
    pub price_decimals: u32,
    /// Decimals of the quantity unit.
    pub qty_decimals: u32,
}

/// One FIX session.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionEntry {
    /// The client's SenderCompID (49).
    pub comp_id: String,
    /// Password (554) the client must send; none if absent.
    #[serde(default)]
    pub password: Option<String>,
    /// The exchange account it trades for (its key is in `keys_file`).
    pub account: u32,
    /// Start both sequence numbers again at every Logon (QuickFIX `ResetOnLogon`).
    #[serde(default)]
    pub reset_on_logon: bool,
    /// Start both sequence numbers again after every Logout (`ResetOnLogout`).
    #[serde(default)]
    pub reset_on_logout: bool,
    /// Start both sequence numbers again whenever the connection ends
    /// (`ResetOnDisconnect`).
    #[serde(default)]
    pub reset_on_disconnect: bool,
}

fn default_comp_id() -> String {
    "PEREGRINE".to_string()
}
fn default_heartbeat_bounds() -> [u32; 2] {
    [1, 300]
}
fn default_max_body() -> usize {
    8192
}
fn default_skew() -> u64 {
    120
}
fn default_pending() -> usize {
    64
}
fn default_logon_timeout() -> u64 {
    5
}
fn default_wait() -> WaitStrategy {
    WaitStrategy::SpinThenPark
}

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not valid TOML for this structure.
    #[error("{path}: {source}")]
    Parse {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: toml::de::Error,
    },
    /// Values that do not make sense, every one listed.
    #[error("invalid gateway config: {}", .0.join("; "))]
    Invalid(Vec<String>),
}

impl GatewayConfig {
    /// Reads, parses and validates a file.
    pub fn load(path: &Path) -> Result<GatewayConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let config: GatewayConfig = toml::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.display().to_string(),
            source,
        })?;
        config.validate()?;
        Ok(config)
    }

    /// The exchange's order-entry addresses (one, or a cluster's nodes).
    pub fn exchange_addrs(&self) -> Result<Vec<std::net::SocketAddr>, BadAddress> {
        parse_addrs(&self.exchange)
    }

    /// Every problem at once.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut p = Vec::new();
        if self.listen.parse::<std::net::SocketAddr>().is_err() {
            p.push(format!("listen {:?} is not an address", self.listen));
        }
        if let Err(e) = self.exchange_addrs() {
            p.push(format!("exchange {:?}: {e}", self.exchange));
        }
        let [lo, hi] = self.heartbeat_bounds;
        if lo == 0 || lo > hi {
            p.push("heartbeat_bounds: need 0 < low <= high".to_string());
        }
        if self.max_body < 256 {
            p.push("max_body below 256".to_string());
        }
        if self.instruments.is_empty() {
            p.push("no [[instruments]]".to_string());
        }
        if self.sessions.is_empty() {
            p.push("no [[sessions]]".to_string());
        }
        for (i, a) in self.instruments.iter().enumerate() {
            if self.instruments[..i]
                .iter()
                .any(|b| b.symbol == a.symbol || b.id == a.id)
            {
                p.push(format!(
                    "instrument {:?}: symbol or id used twice",
                    a.symbol
                ));
            }
            if a.price_decimals > 18 || a.qty_decimals > 18 {
                p.push(format!("instrument {:?}: at most 18 decimals", a.symbol));
            }
        }
        for (i, s) in self.sessions.iter().enumerate() {
            if self.sessions[..i].iter().any(|b| b.comp_id == s.comp_id) {
                p.push(format!("session {:?} configured twice", s.comp_id));
            }
            if self.sessions[..i].iter().any(|b| b.account == s.account) {
                p.push(format!(
                    "session {:?}: account {} already has a session (one native stream per account)",
                    s.comp_id, s.account
                ));
            }
            let mut fix = peregrine_fix::session::SessionConfig::new(
                peregrine_fix::session::Role::Acceptor,
                &self.comp_id,
                &s.comp_id,
            );
            fix.password = s.password.clone();
            if let Err(problems) = fix.validate() {
                p.extend(
                    problems
                        .into_iter()
                        .map(|e| format!("session {:?}: {e}", s.comp_id)),
                );
            }
        }
        if p.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::Invalid(p))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
listen = "127.0.0.1:9878"
exchange = "127.0.0.1:9000"
store_dir = "data/fix"
keys_file = "keys.toml"

[[instruments]]
symbol = "PGN-USD"
id = 1
price_decimals = 2
qty_decimals = 0

[[sessions]]
comp_id = "CLIENT1"
password = "secret"
account = 1
"#;

    #[test]
    fn defaults_are_pinned() {
        let c: GatewayConfig = toml::from_str(EXAMPLE).unwrap();
        c.validate().unwrap();
        assert_eq!(c.comp_id, "PEREGRINE");
        assert_eq!(c.heartbeat_bounds, [1, 300]);
        assert_eq!(
            (
                c.max_body,
                c.max_clock_skew_secs,
                c.max_pending_connections,
                c.logon_timeout_secs
            ),
            (8192, 120, 64, 5)
        );
        assert!(!c.fsync);
        assert_eq!(c.wait, WaitStrategy::SpinThenPark);
        let v = c.validation;
        assert!(v.use_data_dictionary && v.validate_fields_out_of_order);
        assert!(v.validate_user_defined_fields && !v.allow_unknown_msg_fields);
        assert!(v.check_latency);
        assert_eq!(v.dictionary(), peregrine_fix::dict::Validation::default());
        let s = &c.sessions[0];
        assert!(!s.reset_on_logon && !s.reset_on_logout && !s.reset_on_disconnect);
    }

    #[test]
    fn validation_and_resets_are_read() {
        let text = format!(
            "{EXAMPLE}reset_on_logon = true\nreset_on_disconnect = true\n\
             [validation]\nvalidate_user_defined_fields = false\ncheck_latency = false\n"
        );
        let c: GatewayConfig = toml::from_str(&text).unwrap();
        assert!(c.sessions[0].reset_on_logon && c.sessions[0].reset_on_disconnect);
        assert!(!c.sessions[0].reset_on_logout);
        assert!(!c.validation.validate_user_defined_fields && !c.validation.check_latency);
        assert!(c.validation.use_data_dictionary);
        let bad = format!("{EXAMPLE}[validation]\nvalidate_everything = true\n");
        assert!(toml::from_str::<GatewayConfig>(&bad).is_err());
    }

    #[test]
    fn wait_takes_the_workspace_names() {
        for name in ["busy-spin", "spin-yield", "park"] {
            let c: GatewayConfig =
                toml::from_str(&format!("wait = \"{name}\"\n{EXAMPLE}")).unwrap();
            assert_eq!(c.wait.name(), name);
        }
        assert!(toml::from_str::<GatewayConfig>(&format!("wait = \"spin\"\n{EXAMPLE}")).is_err());
    }

    #[test]
    fn validate_reports_every_problem() {
        let mut c: GatewayConfig = toml::from_str(EXAMPLE).unwrap();
        c.listen = "nowhere".into();
        c.heartbeat_bounds = [0, 1];
        c.sessions.push(c.sessions[0].clone());
        let ConfigError::Invalid(p) = c.validate().unwrap_err() else {
            panic!()
        };
        assert_eq!(p.len(), 4, "{p:?}");
        assert!(toml::from_str::<GatewayConfig>(&format!("{EXAMPLE}\nbogus = 1")).is_err());
    }

    #[test]
    fn exchange_takes_one_address_or_a_list() {
        let mut c: GatewayConfig = toml::from_str(EXAMPLE).unwrap();
        assert_eq!(c.exchange_addrs().unwrap().len(), 1);
        c.exchange = "127.0.0.1:9000, 127.0.0.1:9001,127.0.0.1:9002".into();
        c.validate().unwrap();
        assert_eq!(
            c.exchange_addrs().unwrap()[2],
            "127.0.0.1:9002".parse().unwrap()
        );
        for bad in ["", "127.0.0.1:9000,", "127.0.0.1:9000,exchange:9001", "x"] {
            c.exchange = bad.into();
            let ConfigError::Invalid(p) = c.validate().unwrap_err() else {
                panic!()
            };
            assert!(p[0].starts_with("exchange "), "{p:?}");
        }
    }

    #[test]
    fn the_shipped_example_is_valid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../gateway-fix.toml");
        GatewayConfig::load(&path).unwrap();
    }
}
