//! What the core is built from: plain values the engine's config is turned into.

use peregrine_risk::Limits;
use peregrine_venues::ReasonNames;
use serde::{Deserialize, Serialize};

use crate::units::InstrumentInfo;

/// What happens to a dead strategy's open orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeadPolicy {
    /// Cancel every open order at every venue (default).
    Cancel,
    /// Leave them working (new orders are still blocked).
    Leave,
}

/// One strategy: its name (for journals, replies and reports) and its limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategySpec {
    /// Name.
    pub name: String,
    /// Its risk limits.
    pub limits: Limits,
}

/// One venue: its name and the names of its reject reasons.
#[derive(Debug, Clone)]
pub struct VenueSpec {
    /// Name.
    pub name: String,
    /// Names the venue's reject reasons ([`peregrine_venues::Venue::reason_name`]).
    pub reason_name: ReasonNames,
    /// The venue's adapter carries stops, trailing stops and icebergs (the native
    /// exchange adapter does; the simulated and FIX ones do not): orders with them to
    /// another venue are refused (`UNSUPPORTED`) before they leave the engine.
    pub conditional: bool,
    /// The venue's adapter sends order lists (OCO, OTO, OTOCO) as one list (the
    /// native exchange adapter does): a list for another venue is refused
    /// (`UNSUPPORTED`), never sent as separate orders.
    pub lists: bool,
}

/// The core's configuration.
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// The engine's name (in replies and reports).
    pub name: String,
    /// Strategies, in config order (strategy id = index).
    pub strategies: Vec<StrategySpec>,
    /// Venues, in config order (venue index = index).
    pub venues: Vec<VenueSpec>,
    /// Instruments orders may name.
    pub instruments: Vec<u32>,
    /// How reports show prices and quantities.
    pub instrument_info: Vec<InstrumentInfo>,
    /// Limits over all strategies together.
    pub global_limits: Limits,
    /// A strategy silent this long (on the engine's own loop clock) is dead.
    pub heartbeat_timeout_ns: u64,
    /// What a death does to open orders.
    pub on_dead: DeadPolicy,
    /// Orders in flight at most (the order table is reserved for them up front; a new
    /// order beyond is refused as busy).
    pub max_in_flight: usize,
    /// A gap longer than this between two inputs means the engine's own loop did not
    /// run (it was not scheduled, or blocked): strategies' silence during it is not
    /// counted against them. The shell sends a [`crate::Input::Tick`] at least every
    /// millisecond while it runs, and never sleeps longer than a fraction of this.
    pub stall_ns: u64,
    /// Whether state changes are journaled (emitted as [`crate::Output::Record`]).
    pub journal: bool,
    /// The first engine order id (the engine starts it from the wall clock, so ids are
    /// not reused across runs; a restored journal raises it; below 2^62).
    pub first_engine_id: u64,
}

impl CoreConfig {
    /// Defaults for tests and examples: the given strategies with no limits, venues
    /// named `v0`, `v1`, ..., instrument 1, 1 s heartbeat timeout, cancel on death,
    /// room for 4,096 orders, a 100 ms stall threshold, no journal.
    pub fn new(strategies: &[&str], venues: usize) -> CoreConfig {
        CoreConfig {
            name: "core".into(),
            strategies: strategies
                .iter()
                .map(|n| StrategySpec {
                    name: (*n).to_owned(),
                    limits: Limits::default(),
                })
                .collect(),
            venues: (0..venues)
                .map(|i| VenueSpec {
                    name: format!("v{i}"),
                    reason_name:
                        <peregrine_venues::sim::SimVenue as peregrine_venues::Venue>::reason_name,
                    conditional: false,
                    lists: false,
                })
                .collect(),
            instruments: vec![1],
            instrument_info: Vec::new(),
            global_limits: Limits::default(),
            heartbeat_timeout_ns: 1_000_000_000,
            on_dead: DeadPolicy::Cancel,
            max_in_flight: 4_096,
            stall_ns: 100_000_000,
            journal: false,
            first_engine_id: 1,
        }
    }

    /// The index of venue `name`.
    pub fn venue_index(&self, name: &str) -> Option<u32> {
        self.venues
            .iter()
            .position(|v| v.name == name)
            .map(|i| i as u32)
    }

    /// The index of strategy `name`.
    pub fn strategy_index(&self, name: &str) -> Option<u16> {
        self.strategies
            .iter()
            .position(|s| s.name == name)
            .map(|i| i as u16)
    }
}
