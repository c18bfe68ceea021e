//! Starting the exchange: build the core from the config, recover it from the
//! journal, bind the sockets, pin and spawn the threads of the configured topology.

use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use peregrine_exchange_core::dispatch::{Dispatch, MatchingMode, Sequencer};
use peregrine_exchange_core::feed::Feed;
use peregrine_exchange_core::reports::ReportStore;
use peregrine_exchange_core::route::reference::definitions;
use peregrine_exchange_core::telemetry::{DepthPublisher, Stopwatch};
use peregrine_exchange_core::{Clock, CommandLog, Core, NoLog, VenueSpec};
use peregrine_journal::FsyncPolicy;
use peregrine_queue::pin::{available_cores, pin_current, spinner_warning, CoreId};
use peregrine_queue::WaitStrategy;
use peregrine_wire::md::packet::PacketFormat;

use crate::config::{Config, Topology};
use crate::durability::group_commit::GroupCommit;
use crate::durability::startup;
use crate::error::{ExchangeError, IoContext};
use crate::feed::recovery::{RecoveryLimits, RecoveryServer};
use crate::feed::udp::UdpFeed;
use crate::feed::FeedIo;
use crate::metrics::ack::{AckSummary, AckTimer};
use crate::metrics::hub::MetricsHub;
use crate::net::sockets::Sockets;
use crate::net::sources::{Nonces, SessionClock};
use crate::net::table::SessionTable;
use peregrine_metrics::MetricsServer;

/// How to start, beyond the config: the operator's decisions for this start only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StartOptions {
    /// Start even if the journal lost committed records (its end was truncated,
    /// damaged or deleted): truncate to what it holds and carry on. Off by default:
    /// the exchange refuses to start and names how many records are missing.
    pub accept_loss: bool,
}

/// What a run measured, for the summary printed when the exchange stops.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    /// The server-side order→ack time by stage (compact topology, continuous mode).
    pub ack: Option<AckSummary>,
}

impl RunSummary {
    /// The text printed at the stop.
    pub fn text(&self) -> String {
        match &self.ack {
            Some(a) => a.text(),
            None => "server order->ack: not measured (split topology or batch mode)\n".into(),
        }
    }
}

/// Runs the exchange until `stop` is set. With a `[journal]` section it first
/// recovers the state from the journal and then journals every command; without one
/// it journals nothing. `on_ready` gets the bound order-entry address once the
/// listener is up.
pub fn run(
    config: Config,
    stop: Arc<AtomicBool>,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<RunSummary, ExchangeError> {
    run_opts(config, StartOptions::default(), stop, on_ready)
}

/// [`run`] with [`StartOptions`].
pub fn run_opts(
    config: Config,
    options: StartOptions,
    stop: Arc<AtomicBool>,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<RunSummary, ExchangeError> {
    if config.cluster.is_some() {
        return Err(ExchangeError::Config(vec![
            "the config has a [cluster] section: start with --cluster (run_cluster; a cluster node's journal holds the Raft log)".into(),
        ]));
    }
    let Some(section) = config.journal.clone() else {
        return run_with_log(config, NoLog, stop, on_ready);
    };
    let venue = config.venue().map_err(ExchangeError::Config)?;
    let host = startup::Host::os();
    let log = startup::open(&host, &section, options.accept_loss)?;
    let (core, feed) = build_core(&config, &venue, log)?;
    // (Recovery applies the initial balances of a venue with no history.)
    let (core, reports) = startup::recover(&host, &config, &section, &venue, core)?;
    // Group commit off the matching thread, unless every command syncs anyway, or
    // nothing does, or commitments are on (a commitment must never cover a command
    // that is not durable: they keep the synchronous commit).
    // The negative control of the crash tests: only in a build with the `sabotage`
    // feature (never in what users run).
    #[cfg(feature = "sabotage")]
    if crate::durability::sabotage::requested() {
        let core = core.try_map_log(|l| {
            Ok::<_, ExchangeError>(crate::durability::sabotage::ReleaseBeforeDurable::new(l))
        })?;
        return serve(config, core, feed, reports, None, &stop, on_ready, &|| None);
    }
    let async_sync = section.fsync == FsyncPolicy::Batch && !config.commitments.enabled;
    if !async_sync {
        return serve(config, core, feed, reports, None, &stop, on_ready, &|| None);
    }
    let core = core
        .try_map_log(|log| GroupCommit::spawn(log, section.sync_nice))
        .doing(|| "spawning the journal sync thread".into())?;
    let wake = match core.log().wake_fd() {
        Some(fd) => Some(
            fd.try_clone_to_owned()
                .doing(|| "duplicating the sync thread's eventfd".into())?,
        ),
        None => None,
    };
    serve(config, core, feed, reports, wake, &stop, on_ready, &|| None)
}

/// [`run`] with a given command log and no recovery (tests, benchmarks).
pub fn run_with_log<L: CommandLog + Send + 'static>(
    config: Config,
    log: L,
    stop: Arc<AtomicBool>,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<RunSummary, ExchangeError> {
    let venue = config.venue().map_err(ExchangeError::Config)?;
    let (mut core, feed) = build_core(&config, &venue, log)?;
    // Funded while the streams are collected: the store holds the funding reports the
    // core numbered (else the accounts' first live reports jump the store's count).
    let retention = peregrine_exchange_core::reports::Retention {
        per_account: config.reports.retain_per_account,
    };
    core.collect_reports(ReportStore::new(retention), 1);
    startup::fund(&mut core, venue.balances.as_ref())?;
    let reports = core.take_reports();
    serve(config, core, feed, reports, None, &stop, on_ready, &|| None)
}

/// The core over `log` with its feed, and the feed's sockets (UDP, recovery service).
fn build_core<L: CommandLog>(
    config: &Config,
    venue: &VenueSpec,
    log: L,
) -> Result<(Core<L>, FeedIo), ExchangeError> {
    let core = core_for(config, venue, log, Clock::monotonic())?;
    attach_feed(config, core)
}

/// A fresh core of `venue` over `log` reading `clock`, with room for the config's
/// live orders.
pub(crate) fn core_for<L: CommandLog>(
    config: &Config,
    venue: &VenueSpec,
    log: L,
    clock: Clock,
) -> Result<Core<L>, ExchangeError> {
    let owners = config
        .arena_capacity
        .saturating_mul(config.instruments.len())
        .min(1 << 22);
    Ok(venue.core(log, clock, owners)?)
}

/// Attaches the market-data feed (and opens its sockets: UDP, recovery service) to
/// `core` as the config asks.
pub(crate) fn attach_feed<L: CommandLog>(
    config: &Config,
    core: Core<L>,
) -> Result<(Core<L>, FeedIo), ExchangeError> {
    let core = with_feed(config, core, feed_session_id());
    let mut io = FeedIo::default();
    if config.market_data.enabled {
        let md = &config.market_data;
        io.udp = Some(UdpFeed::open(md).doing(|| "opening the market-data socket".into())?);
    }
    if config.recovery_enabled {
        let a = &config.access;
        let limits = RecoveryLimits {
            clients: a.recovery_clients,
            per_address: a.recovery_per_address,
            idle: Duration::from_millis(a.recovery_idle_ms),
        };
        let recovery = RecoveryServer::bind(config.recovery_listen, limits)
            .doing(|| format!("binding the recovery service on {}", config.recovery_listen))?
            .with_definitions(definitions(&config.instruments, &config.assets));
        let addr = recovery
            .local_addr()
            .doing(|| "reading the recovery address".into())?;
        log::info!("recovery (snapshots) on {addr}");
        io.recovery = Some(recovery);
    }
    Ok((core, io))
}

/// Attaches the market-data feed of session `session_id` to `core` when the config
/// turns it on (no socket: [`attach_feed`] opens them).
pub(crate) fn with_feed<L: CommandLog>(config: &Config, core: Core<L>, session_id: u64) -> Core<L> {
    if !config.market_data.enabled {
        return core;
    }
    let md = &config.market_data;
    let now = core.now().0;
    let heartbeat_ns = md.heartbeat_ms.saturating_mul(1_000_000);
    let format = PacketFormat::from_version(md.packet_version).unwrap_or_default();
    let feed = Feed::new(session_id, md.mtu, heartbeat_ns, md.replay_retain, now)
        .with_max_delay(md.max_delay_us.saturating_mul(1_000))
        .with_format(format);
    core.with_feed(feed)
}

/// Binds the order-entry listener and runs the topology's threads until `stop`.
/// `farewell`: the last message for every session at the stop, if any (the compact
/// topology's; a cluster leader that lost its quorum).
#[allow(clippy::too_many_arguments, reason = "one call per way of starting")]
pub(crate) fn serve<L: CommandLog + Send + 'static>(
    config: Config,
    core: Core<L>,
    feed: FeedIo,
    reports: Option<ReportStore>,
    durable_signal: Option<OwnedFd>,
    stop: &Arc<AtomicBool>,
    on_ready: impl FnOnce(SocketAddr),
    farewell: &dyn Fn() -> Option<peregrine_wire::v2::Outbound>,
) -> Result<RunSummary, ExchangeError> {
    let stopwatch = Stopwatch::new();
    let mut sockets = Sockets::bind(config.listen, SessionTable::slots_for(&config))
        .doing(|| format!("binding {}", config.listen))?;
    let table = SessionTable::new(
        &config,
        core.shared_seq(),
        reports,
        Clock::monotonic(),
        SessionClock::Monotonic,
        Nonces::Os,
    )
    .with_stage_timing(stopwatch);
    let core = core.with_stage_timing(stopwatch);
    if let (Some(fd), Topology::Compact) = (durable_signal, config.topology) {
        sockets
            .watch_durable(fd)
            .doing(|| "watching the sync thread's eventfd".into())?;
    }
    let (core, table, metrics) = attach_metrics(&config, core, table)?;
    let addr = sockets
        .local_addr()
        .doing(|| "reading the listener address".into())?;
    let cores = pin_targets(&config);
    let spinning = match config.topology {
        Topology::Compact => 1,
        Topology::Split => 2,
    } * usize::from(config.wait == WaitStrategy::BusySpin);
    warn_if_oversubscribed(spinning);
    log::info!(
        "exchange: {:?} topology, {:?} mode, wait {:?}, {} instrument(s), {} account(s), market data {}",
        config.topology,
        config.mode,
        config.wait,
        config.instruments.len(),
        config.accounts.len(),
        if config.market_data.enabled {
            config.market_data.target.to_string()
        } else {
            "off".into()
        }
    );
    on_ready(addr);
    let mut summary = RunSummary::default();
    match config.topology {
        Topology::Compact => {
            pin("exchange", cores.first().copied().flatten());
            let dispatch = Dispatch::new(sequencer(&config));
            let mut acks = AckTimer::new(stopwatch);
            if let Some(m) = &metrics {
                let ns = config.metrics.publish_interval_ms.saturating_mul(1_000_000);
                acks = acks.with_hub(Arc::clone(&m.hub), ns);
            }
            let acks = crate::net::compact::run(
                table,
                sockets,
                core,
                feed,
                dispatch,
                acks,
                config.wait,
                stop,
                farewell,
            )
            .doing(|| "the exchange loop failed".into())?;
            if config.mode == MatchingMode::Continuous {
                summary.ack = Some(acks.summary());
            }
        }
        Topology::Split => run_split(&config, table, sockets, core, feed, cores, stop)?,
    }
    Ok(summary)
}

/// The `/metrics` thread; stopped and joined when dropped (also on an error
/// return of the topology).
struct MetricsThread {
    hub: Arc<MetricsHub>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Drop for MetricsThread {
    fn drop(&mut self) {
        // Relaxed: a stop request needs no ordering with other memory.
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// With `[metrics] enabled`: the hub, the core's counters and depth publisher, the
/// session table's counters, and the HTTP thread (bound before `on_ready`, so its
/// address is logged before the exchange reports ready).
fn attach_metrics<L: CommandLog>(
    config: &Config,
    core: Core<L>,
    table: SessionTable,
) -> Result<(Core<L>, SessionTable, Option<MetricsThread>), ExchangeError> {
    let m = &config.metrics;
    if !m.enabled {
        return Ok((core, table, None));
    }
    let server = MetricsServer::bind(m.listen)
        .doing(|| format!("binding the metrics endpoint on {}", m.listen))?;
    let interval = Duration::from_millis(m.publish_interval_ms);
    let depth = DepthPublisher::new(
        core.engine(),
        m.depth_levels,
        m.depth_interval_us.saturating_mul(1000),
    );
    let hub = Arc::new(MetricsHub::new(&config.instruments, Some(depth.slot())));
    let interval_ns = u64::try_from(interval.as_nanos()).unwrap_or(u64::MAX);
    let core = core
        .with_depth(depth)
        .with_metrics(hub.core_slot(), interval_ns);
    let table = table.with_metrics(Arc::clone(&hub), interval);
    let addr = server
        .local_addr()
        .doing(|| "reading the metrics address".into())?;
    log::info!("metrics on http://{addr}/metrics");
    let stop = Arc::new(AtomicBool::new(false));
    let render_hub = Arc::clone(&hub);
    let render: peregrine_metrics::Render =
        Box::new(move || Some(crate::metrics::render::render(&render_hub)));
    let handle = server
        .spawn(render, Arc::clone(&stop))
        .doing(|| "spawning the metrics thread".into())?;
    let thread = MetricsThread {
        hub,
        stop,
        handle: Some(handle),
    };
    Ok((core, table, Some(thread)))
}

fn run_split<L: CommandLog + Send + 'static>(
    config: &Config,
    table: SessionTable,
    sockets: Sockets,
    core: Core<L>,
    feed: FeedIo,
    cores: Vec<Option<CoreId>>,
    stop: &Arc<AtomicBool>,
) -> Result<(), ExchangeError> {
    let (req_tx, req_rx) = peregrine_queue::spsc::ring(config.ring_capacity);
    let (rep_tx, rep_rx) = peregrine_queue::spsc::ring(config.ring_capacity);
    let wait = config.wait;
    let dispatch = Dispatch::new(sequencer(config));
    let stop_m = Arc::clone(stop);
    let match_core = cores.get(1).copied().flatten();
    let matcher = std::thread::Builder::new()
        .name("matching".into())
        .spawn(move || {
            pin("matching", match_core);
            crate::net::split::matching(core, feed, dispatch, req_rx, rep_tx, wait, &stop_m)
        })
        .doing(|| "spawning the matching thread".into())?;
    pin("ingestion", cores.first().copied().flatten());
    crate::net::split::ingest(table, sockets, req_tx, rep_rx, wait, stop);
    matcher
        .join()
        .map_err(|_| ExchangeError::MatchingPanicked)?
        .doing(|| "the matching loop failed".into())
}

/// A feed session id never reused by a later start: wall-clock nanoseconds with the
/// low 16 bits random, so two starts within the same second (or nanosecond tick of a
/// coarse clock) still differ. Subscribers compare ids only for equality.
fn feed_session_id() -> u64 {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    let mut r = [0u8; 2];
    if getrandom::fill(&mut r).is_err() {
        // Without randomness the nanoseconds alone still differ between starts.
        return ns;
    }
    (ns & !0xFFFF) | u64::from(u16::from_le_bytes(r))
}

/// The batch-mode tick buffer, or `None` in continuous mode.
fn sequencer(config: &Config) -> Option<Sequencer> {
    match config.mode {
        MatchingMode::Continuous => None,
        MatchingMode::Batch => Some(Sequencer::new(
            config.tick_us.saturating_mul(1_000),
            config.tick_capacity,
        )),
    }
}

/// Resolves `pin_cores` against the cores this process may use. Called once on the
/// main thread before any pinning (see FACTS: `get_core_ids` answers for the calling
/// thread only).
fn pin_targets(config: &Config) -> Vec<Option<CoreId>> {
    let Some(wanted) = &config.pin_cores else {
        return Vec::new();
    };
    let available = available_cores();
    wanted
        .iter()
        .map(|&id| {
            let found = available.iter().copied().find(|c| c.id == id);
            if found.is_none() {
                log::warn!("warning: core {id} is not available; thread left unpinned");
            }
            found
        })
        .collect()
}

/// Pins the calling thread (if a core was resolved for it), loud on failure.
fn pin(thread: &str, core: Option<CoreId>) {
    let outcome = pin_current(thread, core);
    if core.is_some() && !outcome.pinned {
        log::warn!("warning: {}", outcome.describe());
    }
}

/// Logs a warning when more threads would busy-spin than the machine has cores
/// (`peregrine_queue::spinner_warning`), or when they take every core.
fn warn_if_oversubscribed(spinning_threads: usize) {
    let cores = available_cores().len().max(1);
    if let Some(w) = spinner_warning(spinning_threads, cores) {
        log::warn!("WARNING: {w}; use wait = \"spin-yield\" or fewer spinning threads");
    } else if spinning_threads == cores {
        log::warn!(
            "warning: {spinning_threads} busy-spinning threads use every core ({cores}); \
             clients on this machine will compete with them"
        );
    }
}
