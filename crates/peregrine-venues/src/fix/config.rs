//! The FIX venue's settings.

use serde::{Deserialize, Serialize};

/// `[[venues]] fix = { ... }`: a FIX 4.4 venue the engine connects to as initiator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixVenueConfig {
    /// The venue's FIX address, `IP:port`.
    pub addr: String,
    /// Our SenderCompID.
    pub sender_comp_id: String,
    /// The venue's CompID (our TargetCompID).
    pub target_comp_id: String,
    /// Password (554) sent in the Logon, if the venue wants one.
    #[serde(default)]
    pub password: Option<String>,
    /// HeartBtInt asked for, seconds; default 30.
    #[serde(default = "defaults::heartbeat_secs")]
    pub heartbeat_secs: u32,
    /// Pause between connection attempts, ms; default 1000.
    #[serde(default = "defaults::reconnect_ms")]
    pub reconnect_ms: u64,
    /// Message store file; without one the session resets its sequence numbers at
    /// every Logon (ResetSeqNumFlag) and keeps sent messages in memory.
    #[serde(default)]
    pub store: Option<std::path::PathBuf>,
    /// The instruments: the engine's id ↔ the venue's Symbol and decimals.
    pub instruments: Vec<FixInstrument>,
}

/// One instrument as the venue names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixInstrument {
    /// The engine's instrument id.
    pub id: u32,
    /// Symbol (55) at the venue.
    pub symbol: String,
    /// Decimals of prices (the engine's price units).
    pub price_decimals: u32,
    /// Decimals of quantities.
    pub qty_decimals: u32,
}

mod defaults {
    pub(super) fn heartbeat_secs() -> u32 {
        30
    }
    pub(super) fn reconnect_ms() -> u64 {
        1_000
    }
}

impl FixVenueConfig {
    /// Settings with the defaults, no password and no store.
    pub fn new(
        addr: &str,
        sender: &str,
        target: &str,
        instruments: Vec<FixInstrument>,
    ) -> FixVenueConfig {
        FixVenueConfig {
            addr: addr.to_owned(),
            sender_comp_id: sender.to_owned(),
            target_comp_id: target.to_owned(),
            password: None,
            heartbeat_secs: defaults::heartbeat_secs(),
            reconnect_ms: defaults::reconnect_ms(),
            store: None,
            instruments,
        }
    }

    /// Every problem, each prefixed with `name`.
    pub fn problems(&self, name: &str) -> Vec<String> {
        let mut p = Vec::new();
        if self.addr.parse::<std::net::SocketAddr>().is_err() {
            p.push(format!("{name}: addr {:?} is not IP:port", self.addr));
        }
        let mut session = peregrine_fix::session::SessionConfig::new(
            peregrine_fix::session::Role::Initiator,
            &self.sender_comp_id,
            &self.target_comp_id,
        );
        session.heartbeat_secs = self.heartbeat_secs;
        session.password = self.password.clone();
        if let Err(e) = session.validate() {
            p.extend(e.into_iter().map(|e| format!("{name}: {e}")));
        }
        if self.instruments.is_empty() {
            p.push(format!("{name}: no instruments"));
        }
        for i in &self.instruments {
            if i.price_decimals > 18 || i.qty_decimals > 18 {
                p.push(format!(
                    "{name}: instrument {}: at most 18 decimals",
                    i.symbol
                ));
            }
        }
        p
    }
}
