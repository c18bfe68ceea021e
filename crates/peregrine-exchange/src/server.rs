//! Starting the exchange: build the engine, bind the sockets, pin and spawn the
//! threads of the configured topology.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use peregrine_book::MatchingEngine;

use crate::balances::BalanceSetup;
use crate::config::{Config, Topology};
use crate::core::Core;
use crate::depth::DepthPublisher;
use crate::http::MetricsServer;
use crate::journal::{CommandLog, NoLog};
use crate::journal_log::JournalLog;
use crate::journal_replay::{open_journal, restore};
use crate::md::MdPublisher;
use crate::metrics::MetricsHub;
use crate::snapshotter::Snapshotter;
use crate::table::SessionTable;
use crate::wait::warn_if_oversubscribed;
use peregrine_journal::{SnapshotConfig, SnapshotStore};

/// Runs the exchange until `stop` is set. With a `[journal]` section it first
/// recovers the state from the journal and then journals every command; without one
/// it journals nothing. `on_ready` gets the bound order-entry address once the
/// listener is up.
pub fn run(
    config: Config,
    stop: Arc<AtomicBool>,
    on_ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let Some(section) = config.journal.clone() else {
        return run_with_log(config, NoLog, stop, on_ready);
    };
    crate::log::init();
    let (journal, _report) = open_journal(&section).with_context(|| {
        format!(
            "recovering the journal in {}: refusing to start (the journal is damaged \
             before its tail; inspect or restore it, never delete records silently)",
            section.dir.display()
        )
    })?;
    let mut core = build_core(&config, JournalLog::new(journal))?;
    let setup = balance_setup(&config)?;
    if let Some(s) = &setup {
        core = core.with_balances(s);
    }
    if config.commitments.enabled {
        core = core.with_commitments(crate::hasher::spawn_for(&config, &section)?);
    }
    let store = if section.snapshot_every > 0 {
        let dir = section.snapshot_dir();
        let config = SnapshotConfig {
            prune_journal_dir: section.prune.then(|| section.dir.clone()),
            ..SnapshotConfig::default()
        };
        Some(
            SnapshotStore::open(&dir, config)
                .with_context(|| format!("opening {}", dir.display()))?,
        )
    } else {
        None
    };
    // With commitments, recovery replays the whole journal: the open window may have
    // started before the newest snapshot (docs/commitments.md).
    let restore_from = if config.commitments.enabled {
        None
    } else {
        store.as_ref()
    };
    restore(&mut core, restore_from).with_context(|| {
        format!(
            "recovering from the journal in {}: refusing to start",
            section.dir.display()
        )
    })?;
    core.commitments_floor();
    if let Some(store) = store {
        // The snapshot thread keeps a replica fed by the journaled records, so the
        // matching thread never encodes a snapshot (crate::snapshotter).
        let (specs, capacity, balances) = (
            config.instruments.clone(),
            config.arena_capacity,
            setup.clone(),
        );
        let make: crate::snapshotter::ReplicaFactory = Box::new(move || {
            let engine = MatchingEngine::new(&specs, capacity).ok()?;
            let seq = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let core = Core::new(engine, capacity, seq, crate::journal::NoLog, None);
            Some(match &balances {
                Some(b) => core.with_balances(b),
                None => core,
            })
        });
        let snapshots = Snapshotter::spawn_replica(store, section.snapshot_every, make)?;
        core = core.with_snapshots(snapshots);
    }
    fund(&mut core, setup.as_ref())?;
    serve(config, core, &stop, on_ready)
}

/// [`run`] with a given command log and no recovery (tests, benchmarks).
pub fn run_with_log<L: CommandLog + Send + 'static>(
    config: Config,
    log: L,
    stop: Arc<AtomicBool>,
    on_ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    crate::log::init();
    let mut core = build_core(&config, log)?;
    let setup = balance_setup(&config)?;
    if let Some(s) = &setup {
        core = core.with_balances(s);
    }
    fund(&mut core, setup.as_ref())?;
    serve(config, core, &stop, on_ready)
}

/// The config's balances resolved to ids (`None`: balances off).
pub fn balance_setup(config: &Config) -> anyhow::Result<Option<BalanceSetup>> {
    BalanceSetup::from_config(config)
        .map_err(|errs| anyhow::anyhow!("invalid balances config:\n  - {}", errs.join("\n  - ")))
}

/// Applies `[[balances.initial]]` when the venue starts with no history.
fn fund<L: CommandLog>(core: &mut Core<L>, setup: Option<&BalanceSetup>) -> anyhow::Result<()> {
    let Some(s) = setup else {
        return Ok(());
    };
    let n = core
        .fund_initial(&s.initial)
        .context("journaling the initial balances")?;
    crate::log!(
        "balances on: {} instrument(s) with assets, {} admin account(s), {n} initial deposit(s) applied",
        s.instruments.len(),
        s.policy.admins.len()
    );
    Ok(())
}

/// The engine, feed publisher and recovery service around `log`.
fn build_core<L: CommandLog>(config: &Config, log: L) -> anyhow::Result<Core<L>> {
    let engine = MatchingEngine::new(&config.instruments, config.arena_capacity)
        .context("building the matching engine")?;
    let md = if config.market_data.enabled {
        let session_id = crate::clock::Clock::new().now().0 / 1_000_000_000;
        Some(
            MdPublisher::new(&config.market_data, session_id)
                .context("opening the market-data socket")?,
        )
    } else {
        None
    };
    let engine_seq = Arc::new(AtomicU64::new(0));
    let owners = config
        .arena_capacity
        .saturating_mul(config.instruments.len())
        .min(1 << 22);
    let mut core = Core::new(engine, owners, engine_seq, log, md);
    if config.recovery_enabled {
        let recovery =
            crate::recovery::RecoveryServer::bind(config.recovery_listen).with_context(|| {
                format!("binding the recovery service on {}", config.recovery_listen)
            })?;
        crate::log!("recovery (snapshots) on {}", recovery.local_addr()?);
        core = core.with_recovery(recovery);
    }
    Ok(core)
}

/// Binds the order-entry listener and runs the topology's threads until `stop`.
fn serve<L: CommandLog + Send + 'static>(
    config: Config,
    core: Core<L>,
    stop: &Arc<AtomicBool>,
    on_ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let table = SessionTable::bind(&config, core.shared_seq())
        .with_context(|| format!("binding {}", config.listen))?;
    let (core, table, _metrics) = attach_metrics(&config, core, table)?;
    let addr = table.local_addr()?;
    let cores = pin_targets(&config);
    let spinning = match config.topology {
        Topology::Compact => 1,
        Topology::Split => 2,
    } * usize::from(config.wait.spins());
    warn_if_oversubscribed(spinning);
    crate::log!(
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
    match config.topology {
        Topology::Compact => {
            pin(cores.first().copied().flatten());
            let dispatch = crate::batch::Dispatch::new(sequencer(&config));
            crate::compact::run(table, core, dispatch, config.wait, stop)?;
        }
        Topology::Split => run_split(&config, table, core, cores, stop)?,
    }
    Ok(())
}

/// The `/metrics` thread; stopped and joined when dropped (also on an error
/// return of the topology).
struct MetricsThread {
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
) -> anyhow::Result<(Core<L>, SessionTable, Option<MetricsThread>)> {
    let m = &config.metrics;
    if !m.enabled {
        return Ok((core, table, None));
    }
    let server = MetricsServer::bind(m.listen)
        .with_context(|| format!("binding the metrics endpoint on {}", m.listen))?;
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
        .with_metrics(Arc::clone(&hub), interval_ns);
    let table = table.with_metrics(Arc::clone(&hub), interval);
    crate::log!("metrics on http://{}/metrics", server.local_addr()?);
    let stop = Arc::new(AtomicBool::new(false));
    let handle = server
        .spawn(hub, Arc::clone(&stop))
        .context("spawning the metrics thread")?;
    let thread = MetricsThread {
        stop,
        handle: Some(handle),
    };
    Ok((core, table, Some(thread)))
}

fn run_split<L: CommandLog + Send + 'static>(
    config: &Config,
    table: SessionTable,
    core: Core<L>,
    cores: Vec<Option<core_affinity::CoreId>>,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<()> {
    let (req_tx, req_rx) = crate::ring::ring(config.ring_capacity);
    let (rep_tx, rep_rx) = crate::ring::ring(config.ring_capacity);
    let wait = config.wait;
    let dispatch = crate::batch::Dispatch::new(sequencer(config));
    let stop_m = Arc::clone(stop);
    let match_core = cores.get(1).copied().flatten();
    let matcher = std::thread::Builder::new()
        .name("matching".into())
        .spawn(move || {
            pin(match_core);
            crate::split::matching(core, dispatch, req_rx, rep_tx, wait, &stop_m)
        })?;
    pin(cores.first().copied().flatten());
    crate::split::ingest(table, req_tx, rep_rx, wait, stop);
    matcher
        .join()
        .map_err(|_| anyhow::anyhow!("matching thread panicked"))??;
    Ok(())
}

/// The batch-mode tick buffer, or `None` in continuous mode.
fn sequencer(config: &Config) -> Option<crate::sequencer::Sequencer> {
    match config.mode {
        crate::commit_config::MatchingMode::Continuous => None,
        crate::commit_config::MatchingMode::Batch => Some(crate::sequencer::Sequencer::new(
            config.tick_us.saturating_mul(1_000),
            config.tick_capacity,
        )),
    }
}

/// Resolves `pin_cores` against the cores this process may use. Called once on the
/// main thread before any pinning (see FACTS: `get_core_ids` answers for the calling
/// thread only).
fn pin_targets(config: &Config) -> Vec<Option<core_affinity::CoreId>> {
    let Some(wanted) = &config.pin_cores else {
        return Vec::new();
    };
    let available = core_affinity::get_core_ids().unwrap_or_default();
    wanted
        .iter()
        .map(|&id| {
            let found = available.iter().copied().find(|c| c.id == id);
            if found.is_none() {
                crate::log!("warning: core {id} is not available; thread left unpinned");
            }
            found
        })
        .collect()
}

fn pin(core: Option<core_affinity::CoreId>) {
    if let Some(c) = core {
        if !core_affinity::set_for_current(c) {
            crate::log!("warning: pinning to core {} failed", c.id);
        }
    }
}
