//! Reference data: where the exchange listens and what it trades.
//!
//! Protocol v1 carries no instrument definitions, so the gateway reads them from the
//! exchange's own config file (the keys it needs; everything else in that file is
//! ignored here and checked by the exchange). This is one side of the exchange-link
//! seam: once the protocol sends instrument definitions on login, [`Venue`] is filled
//! from the wire instead.

use std::net::SocketAddr;
use std::path::Path;

use peregrine_types::InstrumentSpec;
use serde::Deserialize;

use crate::config::GatewayConfig;

/// An asset (for balances).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Asset {
    /// Wire id.
    pub id: u32,
    /// Symbol (`USD`).
    pub symbol: String,
    /// Decimals of its smallest unit.
    pub decimals: u32,
}

/// The slice of the exchange config the gateway needs. Not `deny_unknown_fields`:
/// the exchange owns that file.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
struct ExchangeFile {
    listen: SocketAddr,
    recovery_listen: SocketAddr,
    recovery_enabled: bool,
    market_data: MarketData,
    instruments: Option<Vec<InstrumentSpec>>,
    assets: Vec<Asset>,
    balances: Balances,
    cluster: Option<Cluster>,
}

/// A cluster node's config: the other nodes' client addresses.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Cluster {
    peers: Vec<Peer>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Peer {
    client: Option<String>,
    recovery: Option<String>,
}

impl ExchangeFile {
    /// `own`, then each peer's address `pick` names (that parses), without repeats.
    fn with_peers(&self, own: SocketAddr, pick: impl Fn(&Peer) -> Option<&str>) -> Vec<SocketAddr> {
        let mut addrs = vec![own];
        let peers = self.cluster.iter().flat_map(|c| &c.peers);
        for a in peers.filter_map(|p| pick(p)?.parse::<SocketAddr>().ok()) {
            if !addrs.contains(&a) {
                addrs.push(a);
            }
        }
        addrs
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
struct MarketData {
    target: SocketAddr,
    multicast_interface: std::net::Ipv4Addr,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Balances {
    enabled: bool,
}

impl Default for MarketData {
    fn default() -> Self {
        MarketData {
            target: ([127, 0, 0, 1], 7701).into(),
            multicast_interface: std::net::Ipv4Addr::UNSPECIFIED,
        }
    }
}

impl Default for ExchangeFile {
    fn default() -> Self {
        ExchangeFile {
            listen: ([127, 0, 0, 1], 7700).into(),
            recovery_listen: ([127, 0, 0, 1], 7702).into(),
            recovery_enabled: true,
            market_data: MarketData::default(),
            instruments: None,
            assets: Vec::new(),
            balances: Balances::default(),
            cluster: None,
        }
    }
}

/// Everything the gateway knows about the venue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Venue {
    /// Order entry (TCP): one address, or a cluster's nodes (`[exchange]
    /// order_entry`; the exchange config's `listen` and its cluster peers' `client`
    /// otherwise).
    pub order_entry: Vec<SocketAddr>,
    /// Feed address to bind (UDP unicast) or group to join (multicast).
    pub feed: SocketAddr,
    /// Interface a multicast feed is joined on (the exchange's
    /// `market_data.multicast_interface`).
    pub feed_interface: std::net::Ipv4Addr,
    /// Recovery service (TCP): its address, or every cluster node's (tried in
    /// turn; followers redirect to the leader); empty if the exchange serves none.
    pub recovery: Vec<SocketAddr>,
    /// Instruments.
    pub instruments: Vec<InstrumentSpec>,
    /// Assets (empty without balances).
    pub assets: Vec<Asset>,
    /// The exchange keeps balances.
    pub balances: bool,
}

/// Why the venue could not be described.
#[derive(Debug, thiserror::Error)]
pub enum VenueError {
    /// Reading the exchange config failed.
    #[error("reading the exchange config {0}: {1}")]
    Io(String, std::io::Error),
    /// Parsing it failed.
    #[error("parsing the exchange config {0}: {1}")]
    Parse(String, Box<toml::de::Error>),
    /// Something is inconsistent.
    #[error("{0}")]
    Invalid(String),
}

/// The exchange's built-in instrument when its config names none (mirrors the
/// exchange's default: `PGN-USD`, id 1).
fn default_instrument() -> InstrumentSpec {
    let mut spec = InstrumentSpec::example(1);
    spec.symbol = "PGN-USD".into();
    spec
}

impl Venue {
    /// Reads the exchange config named by `config.exchange.config` (if any) and
    /// applies the gateway's overrides.
    pub fn from_config(config: &GatewayConfig) -> Result<Venue, VenueError> {
        let file = match &config.exchange.config {
            Some(path) => Self::read(path)?,
            None => ExchangeFile::default(),
        };
        let instruments = file
            .instruments
            .clone()
            .unwrap_or_else(|| vec![default_instrument()]);
        let venue = Venue {
            order_entry: config.exchange.order_entry.as_ref().map_or_else(
                || file.with_peers(file.listen, |p| p.client.as_deref()),
                |l| l.addrs().to_vec(),
            ),
            feed: config.exchange.feed.unwrap_or(file.market_data.target),
            feed_interface: file.market_data.multicast_interface,
            recovery: match &config.exchange.recovery {
                Some(l) => l.addrs().to_vec(),
                None if file.recovery_enabled => {
                    file.with_peers(file.recovery_listen, |p| p.recovery.as_deref())
                }
                None => Vec::new(),
            },
            instruments,
            assets: if file.balances.enabled {
                file.assets
            } else {
                Vec::new()
            },
            balances: file.balances.enabled,
        };
        venue.check()?;
        Ok(venue)
    }

    fn read(path: &Path) -> Result<ExchangeFile, VenueError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| VenueError::Io(shown.clone(), e))?;
        toml::from_str(&text).map_err(|e| VenueError::Parse(shown, Box::new(e)))
    }

    fn check(&self) -> Result<(), VenueError> {
        let mut seen = std::collections::HashSet::new();
        for spec in &self.instruments {
            spec.validate()
                .map_err(|e| VenueError::Invalid(format!("instrument {}: {e}", spec.symbol)))?;
            if !crate::market::symbols::valid_symbol(&spec.symbol) {
                return Err(VenueError::Invalid(format!(
                    "instrument symbol {:?}: the API allows 1..=20 characters of [A-Z0-9-_.]",
                    spec.symbol
                )));
            }
            if !seen.insert(spec.symbol.clone()) {
                return Err(VenueError::Invalid(format!("symbol {} twice", spec.symbol)));
            }
        }
        if self.instruments.is_empty() {
            return Err(VenueError::Invalid(
                "the exchange trades no instrument".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_shipped_exchange_config() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../exchange.toml");
        let config = GatewayConfig {
            exchange: crate::config::ExchangeSection {
                config: Some(path),
                ..Default::default()
            },
            ..Default::default()
        };
        let v = Venue::from_config(&config).unwrap();
        assert_eq!(v.order_entry, ["127.0.0.1:7700".parse().unwrap()]);
        assert_eq!(v.feed.to_string(), "127.0.0.1:7701");
        assert_eq!(v.recovery[0].to_string(), "127.0.0.1:7702");
        assert_eq!(v.instruments.len(), 1);
        assert_eq!(v.instruments[0].symbol, "PGN-USD");
        assert!(!v.balances);
    }

    #[test]
    fn overrides_win_and_no_file_means_the_exchange_defaults() {
        let mut config = GatewayConfig::default();
        config.exchange.order_entry = Some(SocketAddr::from(([127, 0, 0, 1], 9000)).into());
        let v = Venue::from_config(&config).unwrap();
        assert_eq!(v.order_entry.len(), 1);
        assert_eq!(v.order_entry[0].port(), 9000);
        assert_eq!(v.feed.port(), 7701);
        assert_eq!(v.instruments[0].symbol, "PGN-USD");
    }

    #[test]
    fn a_cluster_nodes_config_names_every_node() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("node1.toml");
        std::fs::write(
            &path,
            "listen = \"127.0.0.1:7701\"\nrecovery_listen = \"127.0.0.1:7711\"\n\
             [cluster]\nnode_id = 1\n\
             [[cluster.peers]]\nid = 1\naddr = \"127.0.0.1:7721\"\nclient = \"127.0.0.1:7701\"\n\
             recovery = \"127.0.0.1:7711\"\n\
             [[cluster.peers]]\nid = 2\naddr = \"127.0.0.1:7722\"\nclient = \"127.0.0.1:7702\"\n\
             recovery = \"127.0.0.1:7712\"\n",
        )
        .unwrap();
        let mut config = GatewayConfig::default();
        config.exchange.config = Some(path);
        let v = Venue::from_config(&config).unwrap();
        let a = |p: u16| SocketAddr::from(([127, 0, 0, 1], p));
        assert_eq!(v.order_entry, [a(7701), a(7702)]);
        assert_eq!(v.recovery, [a(7711), a(7712)]);
    }
}
