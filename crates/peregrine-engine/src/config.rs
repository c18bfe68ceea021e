//! The engine's configuration file (`engine.toml`).
//!
//! A validated serde struct: unknown fields are errors, every field has a documented
//! default (pinned by a test), and [`EngineConfig::validate`] reports every problem at
//! once. The engine receives it by value; nothing is global.

use std::path::{Path, PathBuf};

use peregrine_queue::{IdlePolicy, WaitStrategy};
use serde::{Deserialize, Serialize};

use peregrine_orchestrator::{CoreConfig, StrategySpec, VenueSpec};
use peregrine_risk::Limits;
use peregrine_venues::exchange::ExchangeConfig;
use peregrine_venues::sim::{FillModel, SimConfig};

/// The longest idle sleep the orchestrator may be given (µs).
const MAX_ORCH_SLEEP_US: u64 = 10_000;
/// A gap in the orchestrator's own loop longer than this is a stall of the engine
/// (not scheduled, or blocked), not strategies' silence (`CoreConfig::stall_ns`).
const STALL_NS: u64 = 100_000_000;

/// Engine order ids start from the wall clock in nanoseconds, so that ids (which the
/// exchange adapter uses as client order ids of new orders) are not reused by a
/// restarted engine; a journal raises the start above every id it holds.
fn first_engine_id() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        .clamp(1, (1 << 62) - (1 << 40))
}

/// How one engine thread waits and where it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThreadConfig {
    /// `busy-spin`, `spin-yield` or `park`; default `spin-yield`: safe on a 2-core
    /// machine.
    pub wait: WaitStrategy,
    /// Index into the cores the process may use (read once in `main`); default none.
    pub core: Option<usize>,
    /// After 1,000 idle turns in a row, sleep this long per turn instead of the wait
    /// strategy (a quiet thread that must not preempt spinners; see
    /// `peregrine_queue::wait`); default
    /// none.
    pub idle_sleep_us: Option<u64>,
}

impl ThreadConfig {
    /// The thread's idle behaviour.
    pub fn idle_policy(&self) -> IdlePolicy {
        IdlePolicy {
            sleep: self.idle_sleep_us.map(std::time::Duration::from_micros),
            ..self.wait.policy()
        }
    }
}

impl Default for ThreadConfig {
    fn default() -> Self {
        ThreadConfig {
            wait: WaitStrategy::SpinThenYield,
            core: None,
            idle_sleep_us: None,
        }
    }
}

/// The orchestrator's longest sleep on its doorbell unless `idle_sleep_us` says (µs).
const BELL_TIMEOUT_US: u64 = 1_000;

/// The orchestrator thread: a [`ThreadConfig`] whose default waits cheaply. Idle, it
/// spins 100 polls, yields 10, then sleeps on the engine's doorbell
/// (`peregrine_strategy::doorbell`): a strategy's push or a gateway's completion
/// wakes it at once, and it wakes by itself after `idle_sleep_us` (default 1 ms) for
/// timers, control commands and liveness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OrchestratorConfig {
    /// `busy-spin`, `spin-yield` or `park`; default `park` (sleep on the doorbell
    /// after the spins and yields). `busy-spin` and `spin-yield` never sleep (with
    /// `idle_sleep_us`: after 1,000 idle turns).
    pub wait: WaitStrategy,
    /// Index into the cores the process may use; default none.
    pub core: Option<usize>,
    /// The longest sleep on the doorbell (µs, at most 10,000); default 1,000 when
    /// `wait = "park"`, none otherwise.
    pub idle_sleep_us: Option<u64>,
}

impl Default for OrchestratorConfig {
    fn default() -> Self {
        OrchestratorConfig {
            wait: WaitStrategy::SpinThenPark,
            core: None,
            idle_sleep_us: None,
        }
    }
}

impl OrchestratorConfig {
    /// As a thread of the engine (wait, core, idle sleep).
    pub fn thread(&self) -> ThreadConfig {
        ThreadConfig {
            wait: self.wait,
            core: self.core,
            idle_sleep_us: self.idle_sleep_us,
        }
    }

    /// The longest sleep on the doorbell: `idle_sleep_us`, else 1 ms.
    pub fn bell_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_micros(self.idle_sleep_us.unwrap_or(BELL_TIMEOUT_US))
    }
}

pub use peregrine_orchestrator::DeadPolicy;

/// Strategy liveness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LivenessConfig {
    /// A strategy silent this long is dead; default 1000 ms. The SDK heartbeats every
    /// 100 ms.
    pub heartbeat_timeout_ms: u64,
    /// Default `cancel`.
    pub on_dead: DeadPolicy,
}

impl Default for LivenessConfig {
    fn default() -> Self {
        LivenessConfig {
            heartbeat_timeout_ms: 1_000,
            on_dead: DeadPolicy::Cancel,
        }
    }
}

/// A book a strategy wants changes of (`on_book`, `on_trade`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subscription {
    /// Venue name (a `[[venues]]` name).
    pub venue: String,
    /// Instrument id (one of `instruments`).
    pub instrument: u32,
}

/// One strategy the engine serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrategyConfig {
    /// Name (its ring files are `<name>.submit`, `<name>.return` and `<name>.md`).
    pub name: String,
    /// Its risk limits; default all off.
    #[serde(default)]
    pub limits: Limits,
    /// Books it receives market data for; default none (it can still read any book
    /// with `Api::book`).
    #[serde(default)]
    pub subscribe: Vec<Subscription>,
}

impl StrategyConfig {
    /// A strategy with no limits and no subscriptions.
    pub fn new(name: &str) -> StrategyConfig {
        StrategyConfig {
            name: name.to_owned(),
            limits: Limits::default(),
            subscribe: Vec::new(),
        }
    }
}

/// The engine's journal (restart recovery, `docs/engine.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalSection {
    /// Directory of the journal segments (created if missing).
    pub dir: PathBuf,
    /// `fdatasync` every commit (survives power loss; ~0.2 ms per commit here);
    /// default false: a commit reaches the page cache, which survives the engine's
    /// own crash or `kill -9`.
    #[serde(default)]
    pub fsync: bool,
}

/// The market-data thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MarketDataConfig {
    /// Its wait strategy and core; default spin-yield, unpinned.
    pub thread: ThreadConfig,
    /// Slots of each strategy's market-data ring (power of two); default 1024.
    pub ring_capacity: usize,
}

impl Default for MarketDataConfig {
    fn default() -> Self {
        MarketDataConfig {
            thread: ThreadConfig::default(),
            ring_capacity: 1_024,
        }
    }
}

/// One venue connection, driven by its own gateway thread. Exactly one of `sim`,
/// `exchange` and `fix` names the adapter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VenueConfig {
    /// Name for reports.
    pub name: String,
    /// The gateway thread; default spin-yield, unpinned.
    #[serde(default)]
    pub thread: ThreadConfig,
    /// The simulated venue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim: Option<SimConfig>,
    /// The Peregrine exchange over TCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange: Option<ExchangeConfig>,
    /// A FIX 4.4 venue (any FIX acceptor, `peregrine gateway fix` included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<peregrine_venues::fix::FixVenueConfig>,
}

/// The adapter a [`VenueConfig`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VenueKind<'a> {
    /// `sim = { ... }`.
    Sim(&'a SimConfig),
    /// `exchange = { ... }`.
    Exchange(&'a ExchangeConfig),
    /// `fix = { ... }`.
    Fix(&'a peregrine_venues::fix::FixVenueConfig),
}

impl VenueConfig {
    /// A simulated venue.
    pub fn sim(name: &str, sim: SimConfig) -> VenueConfig {
        VenueConfig {
            name: name.to_owned(),
            thread: ThreadConfig::default(),
            sim: Some(sim),
            exchange: None,
            fix: None,
        }
    }

    /// An exchange venue.
    pub fn exchange(name: &str, exchange: ExchangeConfig) -> VenueConfig {
        VenueConfig {
            name: name.to_owned(),
            thread: ThreadConfig::default(),
            sim: None,
            exchange: Some(exchange),
            fix: None,
        }
    }

    /// A FIX venue.
    pub fn fix(name: &str, fix: peregrine_venues::fix::FixVenueConfig) -> VenueConfig {
        VenueConfig {
            name: name.to_owned(),
            thread: ThreadConfig::default(),
            sim: None,
            exchange: None,
            fix: Some(fix),
        }
    }

    /// The adapter, `None` unless exactly one is configured (`validate` reports it).
    pub fn kind(&self) -> Option<VenueKind<'_>> {
        match (&self.sim, &self.exchange, &self.fix) {
            (Some(s), None, None) => Some(VenueKind::Sim(s)),
            (None, Some(e), None) => Some(VenueKind::Exchange(e)),
            (None, None, Some(f)) => Some(VenueKind::Fix(f)),
            _ => None,
        }
    }
}

/// `engine.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// Engine name; default `main`.
    pub name: String,
    /// Shared-memory directory; default `/dev/shm/peregrine-<name>`.
    pub shm_dir: Option<PathBuf>,
    /// Slots per ring (power of two); default 4096.
    pub ring_capacity: usize,
    /// How often the orchestrator publishes its stats snapshot; default 500 ms.
    pub stats_interval_ms: u64,
    /// Instruments orders may name; default `[1]`.
    pub instruments: Vec<u32>,
    /// The orchestrator thread; default park (on the doorbell), unpinned.
    pub orchestrator: OrchestratorConfig,
    /// Orders in flight at most; the orchestrator's order table is reserved for them
    /// at start (nothing grows on the order path); a new order beyond is refused as
    /// busy (205). Default 16,384.
    pub max_in_flight: usize,
    /// Liveness detection.
    pub liveness: LivenessConfig,
    /// Limits over all strategies together; default all off.
    pub global_limits: Limits,
    /// Strategies; default none.
    pub strategies: Vec<StrategyConfig>,
    /// Venues; default one simulated venue `sim` (D ~ U(1 µs, 50 µs), full fills).
    pub venues: Vec<VenueConfig>,
    /// The market-data thread.
    pub market_data: MarketDataConfig,
    /// Prometheus metrics (`GET /metrics`); default off.
    pub metrics: crate::metrics::MetricsConfig,
    /// How to show instruments (symbol, decimals, currency); default plain units.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instrument_info: Vec<crate::units::InstrumentInfo>,
    /// Journal for restart recovery; default none (the engine forgets everything
    /// when it stops).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal: Option<JournalSection>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            name: "main".into(),
            shm_dir: None,
            ring_capacity: 4096,
            stats_interval_ms: 500,
            instruments: vec![1],
            orchestrator: OrchestratorConfig::default(),
            max_in_flight: 16_384,
            liveness: LivenessConfig::default(),
            global_limits: Limits::default(),
            strategies: Vec::new(),
            venues: vec![VenueConfig::sim(
                "sim",
                SimConfig {
                    delay_lo_ns: 1_000,
                    delay_hi_ns: 50_000,
                    model: FillModel::Full,
                    seed: 1,
                    market: Default::default(),
                },
            )],
            market_data: MarketDataConfig::default(),
            metrics: Default::default(),
            instrument_info: Vec::new(),
            journal: None,
        }
    }
}

/// A config file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Reading the file failed.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// TOML syntax or an unknown/mistyped field.
    #[error("{0}: {1}")]
    Parse(PathBuf, toml::de::Error),
    /// Semantic problems, all of them.
    #[error("invalid config:\n  {}", .0.join("\n  "))]
    Invalid(Vec<String>),
}

impl EngineConfig {
    /// Parses TOML text and validates it.
    pub fn from_toml(text: &str, origin: &Path) -> Result<EngineConfig, ConfigError> {
        let cfg: EngineConfig =
            toml::from_str(text).map_err(|e| ConfigError::Parse(origin.to_owned(), e))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Reads, parses and validates a file.
    pub fn load(path: &Path) -> Result<EngineConfig, ConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| ConfigError::Io(path.to_owned(), e))?;
        EngineConfig::from_toml(&text, path)
    }

    /// The orchestrator core's configuration; `reasons` names each venue's reject
    /// reasons (in venue order; missing ones: the exchange's names).
    pub fn core_config(&self, reasons: &[peregrine_venues::ReasonNames]) -> CoreConfig {
        let default: peregrine_venues::ReasonNames =
            <peregrine_venues::sim::SimVenue as peregrine_venues::Venue>::reason_name;
        CoreConfig {
            name: self.name.clone(),
            strategies: self
                .strategies
                .iter()
                .map(|s| StrategySpec {
                    name: s.name.clone(),
                    limits: s.limits,
                })
                .collect(),
            venues: self
                .venues
                .iter()
                .enumerate()
                .map(|(i, v)| VenueSpec {
                    name: v.name.clone(),
                    reason_name: reasons.get(i).copied().unwrap_or(default),
                    conditional: matches!(v.kind(), Some(VenueKind::Exchange(_))),
                    lists: matches!(v.kind(), Some(VenueKind::Exchange(_))),
                })
                .collect(),
            instruments: self.instruments.clone(),
            instrument_info: self
                .instruments
                .iter()
                .map(|i| crate::units::InstrumentInfo::find(&self.instrument_info, *i))
                .collect(),
            global_limits: self.global_limits,
            heartbeat_timeout_ns: self.liveness.heartbeat_timeout_ms * 1_000_000,
            on_dead: self.liveness.on_dead,
            max_in_flight: self.max_in_flight,
            stall_ns: STALL_NS,
            journal: self.journal.is_some(),
            first_engine_id: first_engine_id(),
        }
    }

    /// [`EngineConfig::core_config`] with every venue's reasons named as the
    /// exchange's.
    pub fn core(&self) -> CoreConfig {
        self.core_config(&[])
    }

    /// The shared-memory directory.
    pub fn dir(&self) -> PathBuf {
        self.shm_dir
            .clone()
            .unwrap_or_else(|| peregrine_strategy::paths::default_dir(&self.name))
    }

    /// Checks everything and reports every problem.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut p = Vec::new();
        let name_ok = |n: &str| {
            !n.is_empty()
                && n.len() <= 64
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        if !name_ok(&self.name) {
            p.push(format!("name {:?}: use 1-64 of [A-Za-z0-9_-]", self.name));
        }
        if !self.ring_capacity.is_power_of_two() || self.ring_capacity < 2 {
            p.push(format!(
                "ring_capacity {} is not a power of two >= 2",
                self.ring_capacity
            ));
        }
        if self.stats_interval_ms == 0 {
            p.push("stats_interval_ms must be > 0".into());
        }
        if self.liveness.heartbeat_timeout_ms == 0 {
            p.push("liveness.heartbeat_timeout_ms must be > 0".into());
        }
        if self.max_in_flight == 0 || self.max_in_flight > 1 << 20 {
            p.push(format!(
                "max_in_flight {} must be in 1..=1048576",
                self.max_in_flight
            ));
        }
        // The orchestrator's loop clock tells its own stalls from strategies' silence:
        // it must never choose to sleep for long (`CoreConfig::stall_ns`).
        if self
            .orchestrator
            .idle_sleep_us
            .is_some_and(|us| us > MAX_ORCH_SLEEP_US)
        {
            p.push(format!(
                "orchestrator.idle_sleep_us must be at most {MAX_ORCH_SLEEP_US} (the \
                 orchestrator's loop is its clock for strategies' liveness)"
            ));
        }
        if self.instruments.is_empty() {
            p.push("instruments: at least one".into());
        }
        if self.venues.is_empty() {
            p.push("venues: at least one".into());
        }
        if self.strategies.len() > u16::MAX as usize {
            p.push("too many strategies".into());
        }
        for (i, s) in self.strategies.iter().enumerate() {
            if !name_ok(&s.name) {
                p.push(format!(
                    "strategies[{i}].name {:?}: use 1-64 of [A-Za-z0-9_-]",
                    s.name
                ));
            }
            if self.strategies[..i].iter().any(|o| o.name == s.name) {
                p.push(format!("strategies[{i}].name {:?} is a duplicate", s.name));
            }
            for sub in &s.subscribe {
                if !self.venues.iter().any(|v| v.name == sub.venue) {
                    p.push(format!(
                        "strategies[{i}].subscribe: no venue named {:?}",
                        sub.venue
                    ));
                }
                if !self.instruments.contains(&sub.instrument) {
                    p.push(format!(
                        "strategies[{i}].subscribe: instrument {} is not in `instruments`",
                        sub.instrument
                    ));
                }
            }
        }
        let md = self.market_data.ring_capacity;
        if !md.is_power_of_two() || md < 2 {
            p.push(format!(
                "market_data.ring_capacity {md} is not a power of two >= 2"
            ));
        }
        for (i, v) in self.venues.iter().enumerate() {
            if !name_ok(&v.name) {
                p.push(format!(
                    "venues[{i}].name {:?}: use 1-64 of [A-Za-z0-9_-]",
                    v.name
                ));
            }
            if self.venues[..i].iter().any(|o| o.name == v.name) {
                p.push(format!("venues[{i}].name {:?} is a duplicate", v.name));
            }
            match v.kind() {
                None if [v.sim.is_some(), v.exchange.is_some(), v.fix.is_some()]
                    .iter()
                    .filter(|b| **b)
                    .count()
                    > 1 =>
                {
                    p.push(format!(
                        "venues[{i}] ({}): give exactly one of `sim`, `exchange` and `fix`",
                        v.name
                    ))
                }
                None => p.push(format!(
                    "venues[{i}] ({}): give one of `sim = {{ ... }}`, `exchange = {{ addr, \
                     account, key_file }}` or `fix = {{ addr, sender_comp_id, \
                     target_comp_id, instruments }}`",
                    v.name
                )),
                Some(VenueKind::Sim(sim)) => {
                    if sim.delay_lo_ns > sim.delay_hi_ns {
                        p.push(format!("venues[{i}].sim: delay_lo_ns > delay_hi_ns"));
                    }
                    if matches!(sim.model, FillModel::Partial { percent } if percent == 0 || percent > 100)
                    {
                        p.push(format!("venues[{i}].sim.model: percent must be 1..=100"));
                    }
                    if sim.model == FillModel::Market {
                        p.extend(sim.market.problems(&format!("venues[{i}].sim.market")));
                    }
                }
                Some(VenueKind::Exchange(x)) => {
                    p.extend(x.problems(&format!("venues[{i}].exchange")));
                }
                Some(VenueKind::Fix(f)) => {
                    p.extend(f.problems(&format!("venues[{i}].fix")));
                    for inst in &f.instruments {
                        if !self.instruments.contains(&inst.id) {
                            p.push(format!(
                                "venues[{i}].fix: instrument {} ({}) is not in `instruments`",
                                inst.id, inst.symbol
                            ));
                        }
                    }
                }
            }
        }
        if p.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::Invalid(p))
        }
    }

    /// Per market-data book slot (venue-major, as the market-data thread's slot
    /// map): whether an exchange venue's feed fills it.
    pub fn exchange_feed_slots(&self) -> Vec<bool> {
        self.venues
            .iter()
            .flat_map(|v| {
                let fed = v.exchange.as_ref().is_some_and(|x| x.feed.is_some());
                self.instruments.iter().map(move |_| fed)
            })
            .collect()
    }

    /// Threads that keep a core busy while idle, counted against `cores`.
    pub fn spinning_threads(&self) -> usize {
        let spins = |t: &ThreadConfig| t.wait.occupies_core() as usize;
        spins(&self.orchestrator.thread())
            + spins(&self.market_data.thread)
            + self.venues.iter().map(|v| spins(&v.thread)).sum::<usize>()
    }

    /// The venue index called `name`.
    pub fn venue_index(&self, name: &str) -> Option<u32> {
        self.venues
            .iter()
            .position(|v| v.name == name)
            .map(|i| i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_pinned() {
        let d = EngineConfig::default();
        assert_eq!(d.name, "main");
        assert_eq!(d.shm_dir, None);
        assert_eq!(d.dir(), PathBuf::from("/dev/shm/peregrine-main"));
        assert_eq!(d.ring_capacity, 4096);
        assert_eq!(d.stats_interval_ms, 500);
        assert_eq!(d.instruments, vec![1]);
        assert_eq!(
            d.orchestrator,
            OrchestratorConfig {
                wait: WaitStrategy::SpinThenPark,
                core: None,
                idle_sleep_us: None
            }
        );
        assert_eq!(
            d.orchestrator.bell_timeout(),
            std::time::Duration::from_millis(1)
        );
        assert_eq!(d.max_in_flight, 16_384);
        assert_eq!(d.liveness.heartbeat_timeout_ms, 1_000);
        assert_eq!(d.liveness.on_dead, DeadPolicy::Cancel);
        assert_eq!(d.global_limits, Limits::default());
        assert!(d.strategies.is_empty());
        assert_eq!(d.venues.len(), 1);
        let Some(VenueKind::Sim(sim)) = d.venues[0].kind() else {
            panic!("the default venue is simulated");
        };
        assert_eq!(sim.delay_lo_ns, 1_000);
        assert_eq!(sim.delay_hi_ns, 50_000);
        assert_eq!(sim.model, FillModel::Full);
        assert_eq!(d.market_data.ring_capacity, 1_024);
        assert_eq!(d.journal, None);
        assert_eq!(d.market_data.thread.wait, WaitStrategy::SpinThenYield);
        assert!(d.validate().is_ok());
        // An empty file is the default config.
        assert_eq!(EngineConfig::from_toml("", Path::new("x")).unwrap(), d);
    }

    #[test]
    fn unknown_fields_are_errors() {
        let e = EngineConfig::from_toml("nam = \"x\"", Path::new("x")).unwrap_err();
        assert!(e.to_string().contains("nam"), "{e}");
        let e = EngineConfig::from_toml("[orchestrator]\nwait = \"spin\"", Path::new("x"));
        assert!(e.is_err());
    }

    #[test]
    fn validate_reports_every_problem() {
        let text = r#"
            name = "bad name"
            ring_capacity = 1000
            instruments = []
            [[strategies]]
            name = "a"
            [[strategies]]
            name = "a"
            [[venues]]
            name = "v"
            sim = { delay_lo_ns = 5, delay_hi_ns = 1, model = { kind = "full" }, seed = 1 }
        "#;
        let Err(ConfigError::Invalid(p)) = EngineConfig::from_toml(text, Path::new("x")) else {
            panic!("expected Invalid");
        };
        assert_eq!(p.len(), 5, "{p:#?}");
    }

    #[test]
    fn exchange_venue_parses_with_defaults() {
        let text = r#"
            [[venues]]
            name = "px"
            exchange = { addr = "127.0.0.1:7700", account = 1, key = "1111111111111111111111111111111111111111111111111111111111111111" }
        "#;
        let cfg = EngineConfig::from_toml(text, Path::new("x")).unwrap();
        let Some(VenueKind::Exchange(x)) = cfg.venues[0].kind() else {
            panic!("expected an exchange venue");
        };
        let mut want = ExchangeConfig::new("127.0.0.1:7700", 1, "unused");
        want.key_file = None;
        want.key = Some("1111111111111111111111111111111111111111111111111111111111111111".into());
        assert_eq!(*x, want);
        assert_eq!(
            (x.heartbeat_ms, x.connect_timeout_ms, x.reconnect_ms),
            (1_000, 2_000, 1_000)
        );
        assert_eq!((x.max_orders, x.out_buffer), (65_536, 65_536));
    }

    #[test]
    fn a_fix_venue_parses_and_its_problems_are_listed() {
        let good = r#"
            [[venues]]
            name = "fx"
            fix = { addr = "127.0.0.1:9878", sender_comp_id = "ME", target_comp_id = "VENUE", instruments = [{ id = 1, symbol = "PGN-USD", price_decimals = 2, qty_decimals = 0 }] }
        "#;
        let cfg = EngineConfig::from_toml(good, Path::new("x")).unwrap();
        let Some(VenueKind::Fix(f)) = cfg.venues[0].kind() else {
            panic!("not a FIX venue: {:?}", cfg.venues[0]);
        };
        assert_eq!((f.heartbeat_secs, f.reconnect_ms), (30, 1_000));
        let bad = r#"
            [[venues]]
            name = "fx"
            fix = { addr = "nowhere", sender_comp_id = "ME", target_comp_id = "VENUE", instruments = [{ id = 7, symbol = "X", price_decimals = 2, qty_decimals = 0 }] }
        "#;
        let Err(ConfigError::Invalid(p)) = EngineConfig::from_toml(bad, Path::new("x")) else {
            panic!("expected Invalid");
        };
        assert!(
            p.iter()
                .any(|m| m.contains("venues[0].fix") && m.contains("IP:port")),
            "{p:#?}"
        );
        assert!(p.iter().any(|m| m.contains("instrument 7")), "{p:#?}");
    }

    #[test]
    fn venue_needs_exactly_one_adapter_and_a_valid_exchange() {
        let text = r#"
            [[venues]]
            name = "none"
            [[venues]]
            name = "both"
            sim = { delay_lo_ns = 1, delay_hi_ns = 2, model = { kind = "full" }, seed = 1 }
            exchange = { addr = "127.0.0.1:7700", account = 1, key = "1111111111111111111111111111111111111111111111111111111111111111" }
            [[venues]]
            name = "bad"
            exchange = { addr = "localhost", account = 0, key = "not hex" }
            [[venues]]
            name = "nokey"
            exchange = { addr = "127.0.0.1:7700", account = 1, key_file = "/nonexistent/keys.toml" }
        "#;
        let Err(ConfigError::Invalid(p)) = EngineConfig::from_toml(text, Path::new("x")) else {
            panic!("expected Invalid");
        };
        assert_eq!(p.len(), 6, "{p:#?}");
        assert!(p[0].contains("give one of `sim"), "{}", p[0]);
        assert!(
            p[1].contains("exactly one of `sim`, `exchange` and `fix`"),
            "{}",
            p[1]
        );
        assert!(p[2].contains("venues[2].exchange.addr"), "{}", p[2]);
        assert!(p[3].contains("account"), "{}", p[3]);
        assert!(p[4].contains("key must be 64 hex digits"), "{}", p[4]);
        assert!(p[5].contains("venues[3].exchange.key_file"), "{}", p[5]);
        let e = EngineConfig::from_toml(
            "[[venues]]
name = \"x\"
exchange = { addr = \"127.0.0.1:1\", account = 1, key_file = \"k\", keyfile = 1 }",
            Path::new("x"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("keyfile"), "{e}");
    }

    #[test]
    fn repo_engine_toml_is_valid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../engine.toml");
        let cfg = EngineConfig::load(&path).unwrap();
        assert_eq!(cfg.strategies.len(), 2);
    }

    #[test]
    fn spinners_count_busy_and_yielding_threads() {
        let mut c = EngineConfig::default();
        assert_eq!(c.spinning_threads(), 2);
        c.orchestrator.wait = WaitStrategy::SpinThenYield;
        assert_eq!(c.spinning_threads(), 3);
        c.orchestrator.wait = WaitStrategy::SpinThenPark;
        c.venues[0].thread.wait = WaitStrategy::SpinThenPark;
        c.market_data.thread.wait = WaitStrategy::SpinThenPark;
        assert_eq!(c.spinning_threads(), 0);
    }
}
