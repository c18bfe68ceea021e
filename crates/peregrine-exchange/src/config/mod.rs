//! The exchange configuration: a validated serde struct read from TOML.
//!
//! Every field has a documented default, so an empty file (or the shipped
//! `exchange.toml`) starts a working exchange on a laptop. [`Config::validate`] reports
//! every problem at once; the engine receives the config by value.

mod backpressure;
mod sections;

use std::net::SocketAddr;
use std::path::Path;

use peregrine_commit::CommitmentsSection;
use peregrine_exchange_core::balances::{
    self, AssetConfig, BalanceInputs, BalanceSetup, BalancesConfig,
};
use peregrine_exchange_core::dispatch::{self, MatchingMode};
use peregrine_exchange_core::journal::JournalSection;
use peregrine_exchange_core::VenueSpec;
use peregrine_queue::WaitStrategy;
use peregrine_types::{AccountId, InstrumentSpec};
use peregrine_wire::md::packet::PacketFormat;
use serde::{Deserialize, Serialize};

pub use backpressure::BackpressureConfig;
pub use sections::{
    AccessConfig, AccountConfig, MarketDataConfig, MetricsConfig, ReportsConfig, Topology,
};

/// Everything the exchange needs to start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Order-entry TCP address. Default `127.0.0.1:7700`; port 0 picks a free port
    /// (the chosen address is printed on stdout as `listening on ADDR`).
    pub listen: SocketAddr,
    /// Tradable instruments. Default: one instrument, id 1, `PGN-USD`, 2 price
    /// decimals, tick 1, lot 1, quantity 1..=1,000,000, band 100.00 ± 50.00.
    pub instruments: Vec<InstrumentSpec>,
    /// Accounts allowed to log in, by stored key hash. Default: none (the exchange
    /// refuses to start without an account: create them with `peregrine keygen`).
    pub accounts: Vec<AccountConfig>,
    /// A file of more `[[accounts]]` entries (what `peregrine keygen --accounts-out`
    /// writes), read at load. A relative path is taken relative to the config file's
    /// directory when the file is there, else relative to the working directory (so
    /// `--config cluster/node1.toml` finds `cluster/accounts.toml`). Default: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accounts_file: Option<std::path::PathBuf>,
    /// Limits on connecting and logging in. Default: see [`AccessConfig`].
    pub access: AccessConfig,
    /// Report stream retention. Default: see [`ReportsConfig`].
    pub reports: ReportsConfig,
    /// Resting-order capacity of each book (preallocated). Default 65,536.
    pub arena_capacity: usize,
    /// Market-data feed.
    pub market_data: MarketDataConfig,
    /// Thread layout. Default `compact`.
    pub topology: Topology,
    /// What idle polling threads do: the workspace's one idler,
    /// `peregrine_queue::WaitStrategy`. Default `park`: 100 spins and 10 yields, then
    /// the compact loop blocks in `epoll_wait` until input arrives (an idle exchange
    /// burns no core; the split loops park 50 µs at a time). `busy-spin` never blocks
    /// (the lowest latency, a core of its own); `spin-yield` yields the core after 100
    /// spins instead of blocking.
    pub wait: WaitStrategy,
    /// Cores to pin threads to: `[loop]` for compact, `[ingestion, matching]` for
    /// split. Default: none (the OS schedules).
    pub pin_cores: Option<Vec<usize>>,
    /// Logged-in sessions at once; a login beyond it is refused (`session_limit`).
    /// Connections waiting to log in have their own pool (`[access]`). Default 256.
    pub max_sessions: usize,
    /// Logged-in sessions of one account at once (trading and drop copies); a login
    /// beyond it is refused (`account_session_limit`), so one account cannot take
    /// every slot. Default 16 (above `max_sessions`, `max_sessions` is the limit: a
    /// config that lowers `max_sessions` alone stays valid).
    pub max_sessions_per_account: usize,
    /// Bytes of outbound messages a session may have queued beyond its report stream
    /// (answers, the stream's next reports; the stream itself waits in the report
    /// retention); a session that overflows it is disconnected (`slow_reader`).
    /// Default 262,144 (about 3,000 fills).
    pub session_out_buffer: usize,
    /// A session whose unsent output does not move for this long (it stopped reading)
    /// is disconnected (`Disconnect` reason `slow_reader`); it resumes its stream on
    /// its next login. Milliseconds; default 5,000.
    pub slow_reader_ms: u64,
    /// Heartbeat interval granted to sessions, milliseconds. Default 1000.
    pub heartbeat_ms: u32,
    /// Capacity of each split-topology ring (power of two). Default 65,536.
    pub ring_capacity: usize,
    /// TCP address of the feed's recovery (snapshot) service. Default
    /// `127.0.0.1:7702`.
    pub recovery_listen: SocketAddr,
    /// Serve snapshots at all. Default `true`.
    pub recovery_enabled: bool,
    /// Write-ahead journal of every command, replayed on start. Default: none (no
    /// journal, an empty book on every start).
    pub journal: Option<JournalSection>,
    /// Prometheus endpoint and depth snapshots. Default: off.
    pub metrics: MetricsConfig,
    /// Account balances (reserve on entry, settle on fills). Default: off.
    #[serde(skip_serializing_if = "BalancesConfig::is_default")]
    pub balances: BalancesConfig,
    /// Assets (currencies, coins) for balances; instruments name theirs with `base`
    /// and `quote`. Default: none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub assets: Vec<AssetConfig>,
    /// `continuous` (default: match on arrival) or `batch` (match in ticks of
    /// `tick_us`). See docs/exchange.md, "Matching modes".
    pub mode: MatchingMode,
    /// Batch mode: the tick interval, microseconds. Default 1000.
    pub tick_us: u64,
    /// Batch mode: requests one tick may hold (preallocated). A request that finds
    /// the tick full closes it early (it runs at once with its boundary timestamp).
    /// Default 65,536.
    pub tick_capacity: usize,
    /// The account that receives the fees of instruments with `fees` and pays their
    /// maker rebates, when balances are on (docs/fees.md). Required then; without
    /// balances fees are reported in fills but not charged. Default: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fee_account: Option<AccountId>,
    /// Commitments (state hash + Merkle root per window). Default: off.
    pub commitments: CommitmentsSection,
    /// When requests are refused `busy` instead of queued (single node and cluster
    /// leader). Default: see [`BackpressureConfig`].
    pub backpressure: BackpressureConfig,
    /// Replication over Raft (`peregrine exchange --cluster`; docs/cluster.md).
    /// Default: none (a single node).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<peregrine_cluster::ClusterConfig>,
}

impl Default for Config {
    fn default() -> Self {
        let mut spec = InstrumentSpec::example(1);
        spec.symbol = "PGN-USD".to_string();
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 7700)),
            instruments: vec![spec],
            accounts: Vec::new(),
            accounts_file: None,
            access: AccessConfig::default(),
            reports: ReportsConfig::default(),
            arena_capacity: 65_536,
            market_data: MarketDataConfig::default(),
            topology: Topology::Compact,
            wait: WaitStrategy::SpinThenPark,
            pin_cores: None,
            max_sessions: 256,
            max_sessions_per_account: 16,
            session_out_buffer: 256 * 1024,
            slow_reader_ms: 5_000,
            heartbeat_ms: 1000,
            ring_capacity: 65_536,
            recovery_listen: SocketAddr::from(([127, 0, 0, 1], 7702)),
            recovery_enabled: true,
            journal: None,
            metrics: MetricsConfig::default(),
            balances: BalancesConfig::default(),
            assets: Vec::new(),
            mode: MatchingMode::Continuous,
            tick_us: 1000,
            tick_capacity: 65_536,
            fee_account: None,
            commitments: CommitmentsSection::default(),
            backpressure: BackpressureConfig::default(),
            cluster: None,
        }
    }
}

/// The config could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The TOML is malformed or has unknown fields.
    #[error("cannot parse {path}: {source}")]
    Parse {
        /// File.
        path: String,
        /// Cause.
        source: Box<toml::de::Error>,
    },
    /// Every semantic problem found.
    #[error("invalid config:\n  - {}", .0.join("\n  - "))]
    Invalid(Vec<String>),
}

impl Config {
    /// Where a client of this exchange sends order entry: `listen`, then for a
    /// cluster every peer's `client` address (a follower redirects to the leader).
    pub fn order_entry_addresses(&self) -> Vec<SocketAddr> {
        self.with_peers(self.listen, |p| p.client.as_deref())
    }

    /// Where a feed subscriber asks for recovery: `recovery_listen`, then for a
    /// cluster every peer's `recovery` address; none when recovery is off.
    pub fn recovery_addresses(&self) -> Vec<SocketAddr> {
        if !self.recovery_enabled {
            return Vec::new();
        }
        self.with_peers(self.recovery_listen, |p| p.recovery.as_deref())
    }

    /// `own`, then each peer's address `pick` names that resolves, without repeats.
    fn with_peers(
        &self,
        own: SocketAddr,
        pick: impl Fn(&peregrine_cluster::PeerConfig) -> Option<&str>,
    ) -> Vec<SocketAddr> {
        let mut addrs = vec![own];
        let peers = self.cluster.iter().flat_map(|c| &c.peers);
        for text in peers.filter_map(pick) {
            let resolved = std::net::ToSocketAddrs::to_socket_addrs(text)
                .ok()
                .and_then(|mut i| i.next());
            if let Some(a) = resolved.filter(|a| !addrs.contains(a)) {
                addrs.push(a);
            }
        }
        addrs
    }

    /// Reads, parses and validates a TOML file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let mut config = Config::parse(&text).map_err(|source| ConfigError::Parse {
            path: path.display().to_string(),
            source: Box::new(source),
        })?;
        config.resolve_accounts_file(path);
        config.load_accounts_file()?;
        config.validate().map_err(ConfigError::Invalid)?;
        Ok(config)
    }

    /// A relative `accounts_file` names a file beside the config at `path` if one is
    /// there (else it stays relative to the working directory, as before).
    fn resolve_accounts_file(&mut self, path: &Path) {
        let (Some(file), Some(dir)) = (self.accounts_file.as_ref(), path.parent()) else {
            return;
        };
        let beside = dir.join(file);
        if file.is_relative() && beside.is_file() {
            self.accounts_file = Some(beside);
        }
    }

    /// Appends the `[[accounts]]` of `accounts_file`, if set.
    pub fn load_accounts_file(&mut self) -> Result<(), ConfigError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            #[serde(default)]
            accounts: Vec<AccountConfig>,
        }
        let Some(path) = self.accounts_file.clone() else {
            return Ok(());
        };
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let file: File = toml::from_str(&text).map_err(|source| ConfigError::Parse {
            path: path.display().to_string(),
            source: Box::new(source),
        })?;
        self.accounts.extend(file.accounts);
        Ok(())
    }

    /// Parses TOML text (no validation).
    pub fn parse(text: &str) -> Result<Config, toml::de::Error> {
        toml::from_str(text)
    }

    /// The config as TOML text.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// Checks everything; returns every problem found.
    pub fn validate(&self) -> Result<(), Vec<String>> {
        let mut errs = Vec::new();
        self.check_instruments(&mut errs);
        self.check_accounts(&mut errs);
        self.check_limits(&mut errs);
        self.access.check(&mut errs);
        if let Some(j) = &self.journal {
            j.check(&mut errs);
        }
        if self.metrics.enabled {
            self.metrics.check(&mut errs);
            let m = self.metrics.listen;
            let clash = m.port() != 0
                && (m == self.listen || (self.recovery_enabled && m == self.recovery_listen));
            if clash {
                errs.push("metrics.listen: must differ from listen and recovery_listen".into());
            }
        }
        self.with_balance_inputs(|inputs| balances::check(inputs, &mut errs));
        self.check_fees(&mut errs);
        self.check_mode(&mut errs);
        if let Some(c) = &self.cluster {
            self.check_cluster(c, &mut errs);
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs)
        }
    }

    /// What a cluster node needs beyond a valid `[cluster]`: the parts of the
    /// exchange replication covers.
    fn check_cluster(&self, c: &peregrine_cluster::ClusterConfig, errs: &mut Vec<String>) {
        if let Err(problems) = c.validate() {
            errs.extend(problems.into_iter().map(|p| format!("cluster: {p}")));
        }
        if self.journal.is_none() {
            errs.push("cluster: needs [journal] (its dir holds the node's Raft log)".into());
        }
        if self.listen.port() == 0 {
            errs.push("cluster: listen needs a fixed port (peers redirect clients to it)".into());
        }
        if self.topology != Topology::Compact {
            errs.push("cluster: runs the compact topology only".into());
        }
        if self.mode != MatchingMode::Continuous {
            errs.push(
                "cluster: runs continuous matching only (batch mode is not replicated)".into(),
            );
        }
        if self.commitments.enabled {
            errs.push("cluster: commitments are not replicated yet; turn them off".into());
        }
    }

    fn check_instruments(&self, errs: &mut Vec<String>) {
        if self.instruments.is_empty() {
            errs.push("instruments: at least one instrument is required".into());
        }
        let mut seen = Vec::new();
        for spec in &self.instruments {
            if let Err(e) = spec.validate() {
                errs.push(format!("instrument {} ({}): {e}", spec.id, spec.symbol));
            }
            if spec.id.0 > u32::from(u16::MAX) {
                errs.push(format!("instrument {}: id must be <= 65535", spec.id));
            }
            if seen.contains(&spec.id) {
                errs.push(format!("instrument {}: id defined twice", spec.id));
            }
            seen.push(spec.id);
        }
    }

    fn check_accounts(&self, errs: &mut Vec<String>) {
        if self.accounts.is_empty() {
            errs.push(
                "accounts: no account can log in; create keys with `peregrine keygen \
                 --accounts 1-4 --keys-out data/keys.toml --accounts-out data/accounts.toml` \
                 and set accounts_file = \"data/accounts.toml\" (there are no built-in \
                 accounts)"
                    .into(),
            );
        }
        let mut seen = Vec::new();
        for a in &self.accounts {
            a.check(errs);
            if seen.contains(&a.id) {
                errs.push(format!("account {}: id defined twice", a.id));
            }
            seen.push(a.id);
        }
    }

    fn check_limits(&self, errs: &mut Vec<String>) {
        let mut need = |ok: bool, msg: &str| {
            if !ok {
                errs.push(msg.to_string());
            }
        };
        need(
            (1..=1 << 26).contains(&self.arena_capacity),
            "arena_capacity: must be 1..=67108864",
        );
        need(
            (1..=65_536).contains(&self.max_sessions),
            "max_sessions: must be 1..=65536",
        );
        need(
            (1..=65_536).contains(&self.max_sessions_per_account),
            "max_sessions_per_account: must be 1..=65536",
        );
        need(
            self.session_out_buffer >= 4 * peregrine_wire::MAX_MESSAGE_SIZE,
            "session_out_buffer: must be at least 2048 bytes",
        );
        need(self.slow_reader_ms > 0, "slow_reader_ms: must be positive");
        need(self.heartbeat_ms > 0, "heartbeat_ms: must be positive");
        need(
            self.ring_capacity.is_power_of_two() && self.ring_capacity >= 2,
            "ring_capacity: must be a power of two >= 2",
        );
        let md = &self.market_data;
        need(
            (64..=65_507).contains(&md.mtu),
            "market_data.mtu: must be 64..=65507",
        );
        need(
            md.max_delay_us <= 1_000_000,
            "market_data.max_delay_us: must be at most 1000000",
        );
        need(
            md.heartbeat_ms > 0,
            "market_data.heartbeat_ms: must be positive",
        );
        need(
            md.replay_retain == 0 || md.replay_retain.is_power_of_two(),
            "market_data.replay_retain: must be 0 or a power of two",
        );
        need(
            PacketFormat::from_version(md.packet_version).is_some(),
            "market_data.packet_version: must be 1 or 2",
        );
        if self.recovery_enabled {
            need(
                self.recovery_listen != self.listen || self.listen.port() == 0,
                "recovery_listen: must differ from listen",
            );
        }
        if let Some(cores) = &self.pin_cores {
            let want = match self.topology {
                Topology::Compact => 1,
                Topology::Split => 2,
            };
            need(
                cores.len() == want,
                "pin_cores: give 1 core for compact, 2 for split ([ingestion, matching])",
            );
        }
    }

    /// Fees are charged into `fee_account` with balances on; it must be an account.
    fn check_fees(&self, errs: &mut Vec<String>) {
        let fees = self.instruments.iter().any(|i| i.fees.is_some());
        match (self.fee_account, self.balances.enabled) {
            (Some(_), false) => errs.push(
                "fee_account: fees are charged only with [balances] enabled = true \
                 (without balances they are reported in fills, not charged)"
                    .into(),
            ),
            (Some(a), true) if !self.accounts.iter().any(|c| c.id == a) => errs.push(format!(
                "fee_account: account {a} is not among the [[accounts]]"
            )),
            (None, true) if fees => errs.push(
                "fee_account: an instrument has fees and balances are on: name the \
                 account that receives them"
                    .into(),
            ),
            _ => {}
        }
    }

    fn check_mode(&self, errs: &mut Vec<String>) {
        if !(1..=1_000_000).contains(&self.tick_us) {
            errs.push("tick_us: must be 1..=1000000".into());
        }
        if !(1..=1 << 22).contains(&self.tick_capacity) {
            errs.push("tick_capacity: must be 1..=4194304".into());
        }
        self.commitments.check(errs);
        if self.commitments.enabled && self.journal.is_none() {
            errs.push("commitments.enabled: needs a [journal] (the commitment log lives in its directory)".into());
        }
    }

    /// The commitment window in nanoseconds (the tick in batch mode, the interval in
    /// continuous mode).
    pub fn commit_window_ns(&self) -> u64 {
        dispatch::window_ns(self.mode, self.tick_us, &self.commitments)
    }

    /// The balances config resolved to ids (`None`: balances off), or every problem.
    pub fn balance_setup(&self) -> Result<Option<BalanceSetup>, Vec<String>> {
        self.with_balance_inputs(BalanceSetup::resolve)
    }

    /// The venue's shape: instruments, book capacity, balances.
    pub fn venue(&self) -> Result<VenueSpec, Vec<String>> {
        Ok(VenueSpec {
            instruments: self.instruments.clone(),
            arena_capacity: self.arena_capacity,
            balances: self.balance_setup()?,
            fee_account: self.fee_account,
            admins: self
                .accounts
                .iter()
                .filter(|a| a.admin)
                .map(|a| a.id)
                .collect(),
        })
    }

    fn with_balance_inputs<T>(&self, f: impl FnOnce(&BalanceInputs<'_>) -> T) -> T {
        let accounts: Vec<AccountId> = self.accounts.iter().map(|a| a.id).collect();
        let admins: Vec<AccountId> = self
            .accounts
            .iter()
            .filter(|a| a.admin)
            .map(|a| a.id)
            .collect();
        f(&BalanceInputs {
            instruments: &self.instruments,
            accounts: &accounts,
            admins: &admins,
            assets: &self.assets,
            balances: &self.balances,
        })
    }
}

#[cfg(test)]
mod balances_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_config_names_every_nodes_client_and_recovery_address() {
        let text = "listen = \"127.0.0.1:7701\"\nrecovery_listen = \"127.0.0.1:7711\"\n\
            [cluster]\nnode_id = 1\nlisten = \"127.0.0.1:7721\"\n\
            [[cluster.peers]]\nid = 1\naddr = \"127.0.0.1:7721\"\nclient = \"127.0.0.1:7701\"\n\
            recovery = \"127.0.0.1:7711\"\n\
            [[cluster.peers]]\nid = 2\naddr = \"127.0.0.1:7722\"\nclient = \"127.0.0.1:7702\"\n\
            recovery = \"127.0.0.1:7712\"\n\
            [[cluster.peers]]\nid = 3\naddr = \"127.0.0.1:7723\"\n";
        let c: Config = toml::from_str(text).unwrap();
        let a = |p: u16| SocketAddr::from(([127, 0, 0, 1], p));
        assert_eq!(c.order_entry_addresses(), [a(7701), a(7702)]);
        assert_eq!(c.recovery_addresses(), [a(7711), a(7712)]);
        let single = Config::default();
        assert_eq!(single.order_entry_addresses(), [single.listen]);
        let off = Config {
            recovery_enabled: false,
            ..Config::default()
        };
        assert!(off.recovery_addresses().is_empty());
    }

    #[test]
    fn defaults_are_pinned() {
        let c = Config::default();
        assert_eq!(c.listen.to_string(), "127.0.0.1:7700");
        assert_eq!(c.instruments.len(), 1);
        assert_eq!(c.instruments[0].id.0, 1);
        assert_eq!(c.instruments[0].symbol, "PGN-USD");
        assert_eq!(c.instruments[0].reference_price, 10_000);
        assert!(c.accounts.is_empty(), "no built-in accounts");
        assert_eq!(c.accounts_file, None);
        assert_eq!(c.access, AccessConfig::default());
        assert_eq!(c.access.pending, 1024);
        assert_eq!(c.access.pending_per_address, 64);
        assert_eq!(c.access.login_timeout_ms, 2000);
        assert_eq!(
            (
                c.access.throttle_free_failures,
                c.access.throttle_base_ms,
                c.access.throttle_max_ms
            ),
            (3, 250, 30_000)
        );
        assert_eq!(
            (
                c.access.recovery_clients,
                c.access.recovery_per_address,
                c.access.recovery_idle_ms
            ),
            (64, 8, 10_000)
        );
        assert_eq!(c.reports.retain_per_account, 100_000);
        assert_eq!(
            (c.backpressure.max_in_flight, c.backpressure.max_delay_ms),
            (100_000, 100)
        );
        assert_eq!(c.arena_capacity, 65_536);
        assert_eq!(c.market_data, MarketDataConfig::default());
        assert!(c.market_data.enabled);
        assert_eq!(c.market_data.target.to_string(), "127.0.0.1:7701");
        assert_eq!(c.market_data.mtu, 1400);
        assert_eq!(c.market_data.max_delay_us, 50);
        assert_eq!(c.topology, Topology::Compact);
        assert_eq!(c.wait, WaitStrategy::SpinThenPark);
        assert_eq!(c.pin_cores, None);
        assert_eq!(c.max_sessions, 256);
        assert_eq!(c.max_sessions_per_account, 16);
        assert_eq!(c.session_out_buffer, 262_144);
        assert_eq!(c.slow_reader_ms, 5_000);
        assert_eq!(c.heartbeat_ms, 1000);
        assert_eq!(c.ring_capacity, 65_536);
        assert_eq!(c.recovery_listen.to_string(), "127.0.0.1:7702");
        assert!(c.recovery_enabled);
        assert_eq!(c.journal, None);
        assert!(!c.metrics.enabled);
        assert_eq!(c.metrics.listen.to_string(), "127.0.0.1:7790");
        assert_eq!(c.metrics.publish_interval_ms, 100);
        assert_eq!(c.metrics.depth_levels, 5);
        assert_eq!(c.metrics.depth_interval_us, 500);
        assert_eq!(c.mode, MatchingMode::Continuous);
        assert_eq!(c.tick_us, 1000);
        assert_eq!(c.tick_capacity, 65_536);
        assert_eq!(c.commitments, CommitmentsSection::default());
        let errs = c.validate().unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].contains("peregrine keygen"),
            "refuses to start without accounts"
        );
        assert_eq!(with_account(c).validate(), Ok(()));
    }

    /// `c` with one valid account.
    fn with_account(mut c: Config) -> Config {
        c.accounts.push(AccountConfig {
            id: AccountId(1),
            stored_key: "ab".repeat(32),
            admin: false,
            operator: false,
        });
        c
    }

    #[test]
    fn passwords_are_not_accepted() {
        let e = Config::parse("[[accounts]]\nid = 1\npassword = \"secret-1\"\n");
        assert!(e.is_err(), "a password is an unknown field");
        let mut c = Config::default();
        c.accounts.push(AccountConfig {
            id: AccountId(1),
            stored_key: "secret-1".into(),
            admin: false,
            operator: false,
        });
        let errs = c.validate().unwrap_err();
        assert!(errs[0].contains("64 hex digits"), "{errs:?}");
    }

    #[test]
    fn an_accounts_file_adds_accounts() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("accounts.toml");
        std::fs::write(
            &file,
            format!(
                "[[accounts]]\nid = 7\nstored_key = \"{}\"\noperator = true\n",
                "cd".repeat(32)
            ),
        )
        .unwrap();
        let mut c = Config {
            accounts_file: Some(file),
            ..Config::default()
        };
        c.load_accounts_file().unwrap();
        assert_eq!(c.accounts.len(), 1);
        assert!(c.accounts[0].operator);
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn a_relative_accounts_file_is_found_beside_the_config() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("cluster");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(
            sub.join("accounts.toml"),
            format!(
                "[[accounts]]\nid = 3\nstored_key = \"{}\"\n",
                "ab".repeat(32)
            ),
        )
        .unwrap();
        let config = sub.join("node1.toml");
        std::fs::write(&config, "accounts_file = \"accounts.toml\"\n").unwrap();
        // The working directory is elsewhere (the crate's): only the config's
        // directory holds the file.
        let c = Config::load(&config).unwrap();
        assert_eq!(c.accounts_file, Some(sub.join("accounts.toml")));
        assert_eq!(c.accounts.len(), 1);
        // Absolute paths and paths that are not beside the config are left alone.
        let mut c = Config {
            accounts_file: Some("elsewhere.toml".into()),
            ..Config::default()
        };
        c.resolve_accounts_file(&config);
        assert_eq!(c.accounts_file, Some("elsewhere.toml".into()));
    }

    #[test]
    fn empty_toml_is_the_default() {
        assert_eq!(Config::parse("").unwrap(), Config::default());
    }

    #[test]
    fn round_trips_through_toml() {
        let c = Config::default();
        assert_eq!(Config::parse(&c.to_toml()).unwrap(), c);
    }

    #[test]
    fn shipped_exchange_toml_is_valid_once_keys_exist() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../exchange.toml");
        let text = std::fs::read_to_string(path).unwrap();
        let c = Config::parse(&text).unwrap();
        assert_eq!(c.listen.to_string(), "127.0.0.1:7700");
        assert!(c.accounts.is_empty(), "no credentials in the shipped file");
        assert!(c.accounts_file.is_some());
        assert_eq!(with_account(c).validate(), Ok(()));
    }

    #[test]
    fn lowering_max_sessions_alone_stays_valid() {
        // The per-account cap (default 16) above max_sessions: max_sessions limits.
        let c = with_account(Config::parse("max_sessions = 2").unwrap());
        assert_eq!(c.validate(), Ok(()));
        let mut c = with_account(Config::default());
        c.max_sessions_per_account = 0;
        assert!(c.validate().is_err());
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert!(Config::parse("listen_addr = \"1.2.3.4:5\"").is_err());
        assert!(Config::parse("[market_data]\nport = 3").is_err());
        assert!(Config::parse("topology = \"sideways\"").is_err());
        assert!(Config::parse("wait = \"busy-spin\"\ntopology = \"split\"").is_ok());
    }

    #[test]
    fn validate_reports_every_problem() {
        let mut c = Config::default();
        c.instruments.push(c.instruments[0].clone());
        c.instruments[0].tick_size = 0;
        let mut c = with_account(with_account(c));
        c.accounts[0].stored_key = "x".repeat(17);
        c.arena_capacity = 0;
        c.max_sessions = 0;
        c.max_sessions_per_account = 0;
        c.session_out_buffer = 10;
        c.slow_reader_ms = 0;
        c.heartbeat_ms = 0;
        c.ring_capacity = 1000;
        c.market_data.mtu = 10;
        c.market_data.heartbeat_ms = 0;
        c.market_data.replay_retain = 1000;
        c.market_data.packet_version = 3;
        c.pin_cores = Some(vec![0, 1]);
        c.recovery_listen = c.listen;
        c.access.pending = 0;
        let errs = c.validate().unwrap_err();
        assert_eq!(errs.len(), 19, "{errs:#?}");
        assert!(errs.iter().any(|e| e.contains("defined twice")));
        assert!(errs.iter().any(|e| e.contains("ring_capacity")));
        let empty = Config {
            instruments: vec![],
            accounts: vec![],
            ..Config::default()
        };
        assert_eq!(empty.validate().unwrap_err().len(), 2);
    }

    #[test]
    fn metrics_section_is_validated_when_enabled() {
        let mut c = with_account(
            Config::parse("[metrics]\nenabled = true\nlisten = \"127.0.0.1:7700\"").unwrap(),
        );
        c.metrics.publish_interval_ms = 0;
        c.metrics.depth_levels = 0;
        c.metrics.depth_interval_us = 0;
        assert_eq!(c.validate().unwrap_err().len(), 4);
        c.metrics.enabled = false;
        assert_eq!(c.validate(), Ok(()), "a disabled section is not checked");
        assert!(Config::parse("[metrics]\nport = 1").is_err());
    }

    #[test]
    fn commitment_keys_parse_and_validate() {
        let c = with_account(
            Config::parse(
                "mode = \"batch\"\ntick_us = 500\n[commitments]\nenabled = true\ninterval_ms = 5",
            )
            .unwrap(),
        );
        assert_eq!(c.mode, MatchingMode::Batch);
        assert_eq!(c.commit_window_ns(), 500_000);
        let errs = c.validate().unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].contains("needs a [journal]"));
        let bad = with_account(Config {
            tick_us: 0,
            tick_capacity: 0,
            ..Config::default()
        });
        assert_eq!(bad.validate().unwrap_err().len(), 2);
        assert!(Config::parse("mode = \"sideways\"").is_err());
        assert!(Config::parse("[commitments]\ninterval = 3").is_err());
    }
}
