//! One replay from start to end: open the input, profile it, build the core, attach
//! the strategy and the checks, run, and report. What `peregrine replay` and the
//! Python package's `peregrine.replay` call.

use std::path::PathBuf;
use std::time::Instant;

use peregrine_types::InstrumentSpec;

use crate::attach::{AttachError, Attached};
use crate::check::{Rebuild, Snapshots};
use crate::data::binance::{self, BinanceL2};
use crate::data::itch_l3::ItchL3;
use crate::data::lobster::LobsterBook;
use crate::data::stream::open;
use crate::data::tardis::{self, TardisL2};
use crate::data::{DataError, Units};
use crate::l2::{L2Market, QueueModel};
use crate::l3::L3Market;
use crate::latency::{Latency, LatencyModel};
use crate::lobster_seed;
use crate::profile::{self, Profile};
use crate::report::{Recorder, Report};
use crate::sim::{self, ReplayError, Settings, StrategySide, Timeline};
use crate::venue::{Venue, VenueError};

/// Recorded data to replay.
#[derive(Debug, Clone)]
pub enum Input {
    /// An ITCH 5.0 file (plain or gzip) and the symbol to replay.
    Itch {
        /// The file.
        path: PathBuf,
        /// The symbol.
        symbol: String,
    },
    /// A LOBSTER message file, and optionally its order book file (checked against).
    Lobster {
        /// `..._message_N.csv`.
        messages: PathBuf,
        /// `..._orderbook_N.csv`.
        book: Option<PathBuf>,
    },
    /// A Binance raw stream recording.
    Binance {
        /// The file.
        path: PathBuf,
    },
    /// Tardis CSVs.
    Tardis {
        /// `incremental_book_L2` file.
        book: PathBuf,
        /// `trades` file.
        trades: Option<PathBuf>,
    },
}

impl Input {
    /// Whether the input is order by order.
    pub fn is_l3(&self) -> bool {
        matches!(self, Input::Itch { .. } | Input::Lobster { .. })
    }

    fn name(&self) -> &'static str {
        match self {
            Input::Itch { .. } => "ITCH 5.0",
            Input::Lobster { .. } => "LOBSTER",
            Input::Binance { .. } => "Binance",
            Input::Tardis { .. } => "Tardis",
        }
    }

    fn describe(&self) -> String {
        match self {
            Input::Itch { path, symbol } => format!("{} ({symbol})", path.display()),
            Input::Lobster { messages, .. } => messages.display().to_string(),
            Input::Binance { path } => path.display().to_string(),
            Input::Tardis { book, .. } => book.display().to_string(),
        }
    }
}

/// How to replay.
#[derive(Debug, Clone)]
pub struct Options {
    /// The data.
    pub input: Input,
    /// Latencies, timeline, venue index, sampling.
    pub settings: Settings,
    /// Order entry and response latencies.
    pub latency: LatencyModel,
    /// Uniform jitter added to each latency, ns (drawn from `seed`).
    pub jitter_ns: u64,
    /// The seed of everything random in the replay.
    pub seed: u64,
    /// Check the core against the file's own book at every step (L3; no strategy).
    pub check: bool,
    /// Order-by-order comparison every this many messages (with `check`).
    pub full_check_every: u64,
    /// The queue-position model of an L2 replay.
    pub queue: QueueModel,
    /// The instrument, instead of one derived from the data.
    pub spec: Option<InstrumentSpec>,
    /// Price and quantity decimals of a text format, instead of inferring them.
    pub units: Option<Units>,
}

impl Options {
    /// Defaults for `input`: no latency, no check, seed 1, risk-averse queue.
    pub fn new(input: Input) -> Options {
        let timeline = if input.is_l3() {
            Timeline::Exchange
        } else {
            Timeline::Local
        };
        Options {
            input,
            settings: Settings {
                timeline,
                ..Settings::default()
            },
            latency: LatencyModel::Constant {
                entry_ns: 0,
                response_ns: 0,
            },
            jitter_ns: 0,
            seed: 1,
            check: false,
            full_check_every: 100_000,
            queue: QueueModel::RiskAverse,
            spec: None,
            units: None,
        }
    }
}

/// Why a replay failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The data.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The core.
    #[error(transparent)]
    Venue(#[from] VenueError),
    /// Attaching the strategy.
    #[error("attaching the strategy: {0}")]
    Attach(#[from] AttachError),
    /// The run.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The options.
    #[error("{0}")]
    Options(String),
}

/// A prepared replay: the profile and the instrument, known before anything runs (a
/// strategy needs the instrument's units to be written).
#[derive(Debug, Clone)]
pub struct Plan {
    /// The options.
    pub options: Options,
    /// What the first pass found.
    pub profile: Profile,
    /// The instrument the core runs.
    pub spec: InstrumentSpec,
    /// Decimals of the text format's numbers.
    pub units: Units,
}

fn itch_units() -> Units {
    Units {
        price_decimals: 4,
        qty_decimals: 0,
    }
}

/// Profiles the input and fixes the instrument.
pub fn plan(options: Options) -> Result<Plan, SessionError> {
    let (profile, units) = match &options.input {
        Input::Itch { path, symbol } => (
            profile::l3(&mut ItchL3::new(open(path)?, symbol))?,
            itch_units(),
        ),
        Input::Lobster { messages, book } => (
            profile::l3(&mut lobster_seed::open(messages, book.as_deref())?)?,
            itch_units(),
        ),
        Input::Binance { path } => {
            let units = match options.units {
                Some(u) => u,
                None => binance::infer_units(open(path)?)?,
            };
            (profile::l2(&mut BinanceL2::new(open(path)?, units))?, units)
        }
        Input::Tardis { book, trades } => {
            let units = match options.units {
                Some(u) => u,
                None => {
                    let mut u = Units {
                        price_decimals: 0,
                        qty_decimals: 0,
                    };
                    tardis::infer_units(open(book)?, &mut u)?;
                    if let Some(t) = trades {
                        tardis::infer_units(open(t)?, &mut u)?;
                    }
                    u
                }
            };
            let trades = trades.as_ref().map(|t| open(t)).transpose()?;
            (
                profile::l2(&mut TardisL2::new(open(book)?, trades, units))?,
                units,
            )
        }
    };
    let symbol = match &options.input {
        Input::Itch { symbol, .. } => symbol.clone(),
        _ => "REPLAY".into(),
    };
    let spec = match &options.spec {
        Some(s) => s.clone(),
        None => profile::spec(
            &profile,
            &symbol,
            units.price_decimals,
            units.qty_decimals,
            100,
        ),
    };
    spec.validate()
        .map_err(|e| SessionError::Options(format!("instrument: {e}")))?;
    Ok(Plan {
        options,
        profile,
        spec,
        units,
    })
}

/// Orders the core must hold: the data's peak, the strategy's room, slack.
fn capacity(plan: &Plan) -> usize {
    let per_level = if plan.options.input.is_l3() { 1 } else { 8 };
    (plan.profile.max_live * per_level + 4_096).next_power_of_two()
}

/// Runs `plan` with `strategy` attached (if any).
pub fn run(plan: &Plan, strategy: Option<&mut dyn Attached>) -> Result<Report, SessionError> {
    let o = &plan.options;
    if o.check && strategy.is_some() {
        return Err(SessionError::Options(
            "the book check needs a replay without a strategy (a strategy changes the book)".into(),
        ));
    }
    let cap = capacity(plan);
    let mut venue = Venue::new(plan.spec.clone(), cap)?;
    let latency = Latency::new(o.latency.clone(), o.jitter_ns, o.seed);
    let sample_every = o.settings.sample_every_ns;
    let side = strategy.map(|s| {
        let rec = Recorder::new(
            plan.units.price_decimals,
            plan.units.qty_decimals,
            sample_every,
        );
        (s, StrategySide::new(o.settings.venue_index, latency, rec))
    });
    let started = Instant::now();
    let (outcome, l3, l2) = match &o.input {
        Input::Itch { path, symbol } => {
            let mut src = ItchL3::new(open(path)?, symbol);
            let mut market = L3Market::new(plan.profile.max_live);
            let mut rebuild = o
                .check
                .then(|| Rebuild::new(&plan.spec, cap, o.full_check_every));
            let check = rebuild
                .as_mut()
                .map(|r| r as &mut dyn sim::Checker<L3Market>);
            let out = sim::run(&mut src, &mut market, &mut venue, side, check, &o.settings)?;
            (out, Some(market.counts), None)
        }
        Input::Lobster { messages, book } => {
            let mut src = lobster_seed::open(messages, book.as_deref())?;
            let mut market = L3Market::new(plan.profile.max_live);
            let mut snapshots = match (o.check, book) {
                (true, Some(b)) => Some(Snapshots::new(LobsterBook::new(open(b)?))),
                _ => None,
            };
            let mut rebuild = (o.check && snapshots.is_none())
                .then(|| Rebuild::new(&plan.spec, cap, o.full_check_every));
            let check: Option<&mut dyn sim::Checker<L3Market>> =
                match (&mut snapshots, &mut rebuild) {
                    (Some(s), _) => Some(s),
                    (None, Some(r)) => Some(r),
                    _ => None,
                };
            let out = sim::run(&mut src, &mut market, &mut venue, side, check, &o.settings)?;
            (out, Some(market.counts), None)
        }
        Input::Binance { path } => {
            let mut src = BinanceL2::new(open(path)?, plan.units);
            let mut market = L2Market::new(o.queue);
            let out = sim::run(&mut src, &mut market, &mut venue, side, None, &o.settings)?;
            (out, None, Some(market.counts))
        }
        Input::Tardis { book, trades } => {
            let trades = trades.as_ref().map(|t| open(t)).transpose()?;
            let mut src = TardisL2::new(open(book)?, trades, plan.units);
            let mut market = L2Market::new(o.queue);
            let out = sim::run(&mut src, &mut market, &mut venue, side, None, &o.settings)?;
            (out, None, Some(market.counts))
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let (strategy, fills, samples) = match outcome.strategy {
        Some(side) => (
            Some(side.recorder.finish(&side.gateway.fills)),
            side.gateway.fills,
            side.recorder.samples,
        ),
        None => (None, Vec::new(), Vec::new()),
    };
    Ok(Report {
        format: o.input.name().into(),
        input: o.input.describe(),
        messages: outcome.messages,
        requests: l3.map_or(0, |c| c.requests) + l2.map_or(0, |c| c.requests),
        wall_s: wall,
        messages_per_s: outcome.messages as f64 / wall.max(1e-9),
        span: outcome.span,
        state_hash: venue.state_hash(),
        l3,
        l2,
        check: outcome.check,
        strategy,
        fills,
        samples,
        decimals: (plan.units.price_decimals, plan.units.qty_decimals),
    })
}
