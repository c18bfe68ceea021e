//! Starting and stopping the engine process: rings, threads, control socket.
//!
//! [`start`] creates the shared-memory directory and, per configured strategy, its
//! submit and return rings (removing stale files a crashed run left; see [`rings`]),
//! binds the control
//! socket, and spawns one gateway thread per venue, the market-data thread, the
//! journal thread (with a journal), the log thread and the orchestrator thread, each
//! with its configured wait strategy and core. No thread on the order path makes a
//! file-system call: the journal thread writes the journal, the log thread stderr.
//! [`Engine::wait`] blocks the calling thread until a `shutdown` command or the
//! duration, then stops every thread, removes the files and returns the final report.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use peregrine_queue::pin::{available_cores, pin_current, spinner_warning, CoreId};
use peregrine_queue::shm::ShmError;
use peregrine_queue::{spsc, WaitStrategy};
use peregrine_strategy::doorbell::Doorbell;
use peregrine_strategy::paths;

use crate::config::{EngineConfig, ThreadConfig, VenueConfig, VenueKind};
use crate::control::{self, Shared};
use crate::durable::{self, EngineJournal, JournalState, Rec, Recovered};
use crate::gateway::{Completion, Dispatch, Gateway, GatewayCounters};
use crate::log::EngineLog;
use crate::market::fanout::Outbox;
use crate::market::thread::{MdCounters, MdThread, SlotMap};
use crate::orchestrator::{GatewayLink, Orchestrator};
use crate::rings;
use crate::rings::StrategyLink;
use peregrine_venues::exchange::ExchangeVenue;
use peregrine_venues::feed::MarketFeed;
use peregrine_venues::sim::SimVenue;
use peregrine_venues::Venue;

/// Why the engine could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Directory or socket trouble.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// A ring could not be created.
    #[error(transparent)]
    Ring(#[from] ShmError),
    /// A venue adapter could not be built.
    #[error("venue {0}: {1}")]
    Venue(String, String),
    /// The engine journal could not be opened or replayed.
    #[error("engine journal {0}: {1}")]
    Journal(PathBuf, String),
    /// The book board could not be created.
    #[error(transparent)]
    Board(#[from] peregrine_strategy::md::BoardError),
}

/// A running engine.
#[derive(Debug)]
pub struct Engine {
    dir: PathBuf,
    files: Vec<PathBuf>,
    strategies: Vec<String>,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    orchestrator: JoinHandle<Orchestrator>,
    others: Vec<JoinHandle<()>>,
    /// The journal thread and its own stop flag (set once the orchestrator is done).
    journal: Option<(JoinHandle<EngineJournal>, Arc<AtomicBool>)>,
    /// The log thread and its stop flag (set last).
    log: (JoinHandle<()>, Arc<AtomicBool>),
    /// Pinning outcomes and warnings, one line each.
    pub notes: Vec<String>,
}

/// Creates the rings and starts every thread.
pub fn start(cfg: &EngineConfig) -> Result<Engine, StartError> {
    let dir = cfg.dir();
    std::fs::create_dir_all(&dir).map_err(|e| StartError::Io(dir.clone(), e))?;
    let cores = available_cores(); // once, before anything is pinned (FACTS.md trap)
    let mut notes = Vec::new();
    if let Some(w) = spinner_warning(cfg.spinning_threads(), cores.len()) {
        notes.push(format!("WARNING: engine threads: {w}"));
    }
    let map = SlotMap::new(cfg.venues.len(), &cfg.instruments);
    let board_path = peregrine_strategy::md::board::path(&dir);
    let board = peregrine_strategy::md::BoardWriter::create(&board_path, &map.keys())?;
    // Before the rings: a strategy that finds its rings finds the bell.
    let bell_path = paths::doorbell(&dir);
    let bell = Arc::new(Doorbell::create(&bell_path).map_err(|e| StartError::Io(e.0, e.1))?);
    let (mut links, mut files) = create_rings(cfg, &dir)?;
    files.push(bell_path);
    files.push(board_path);
    let outboxes = outboxes(cfg, &map, &mut links);
    files.push(write_pid_file(&dir)?);
    let core_cfg = cfg.core();
    let (journal, recovered) = recover(cfg, &core_cfg, &mut notes)?;
    let mut settled = Vec::new();
    let mut feeds: Vec<(u32, Box<dyn MarketFeed>)> = Vec::new();
    let stop = Arc::new(AtomicBool::new(false));
    let log_stop = Arc::new(AtomicBool::new(false));
    let (log, log_thread) = EngineLog::start(Arc::clone(&log_stop))
        .map_err(|e| StartError::Io(PathBuf::from("log"), e))?;
    // The journal thread: the only thread that writes the journal's files (its
    // `fsync` and idle policy: it parks when idle, costing the cores nothing).
    let journal_stop = Arc::new(AtomicBool::new(false));
    let journal = match journal {
        None => None,
        Some(j) => Some(
            durable::thread::start(
                j,
                WaitStrategy::SpinThenPark.into(),
                Arc::clone(&journal_stop),
            )
            .map_err(|e| StartError::Io(PathBuf::from("journal"), e))?,
        ),
    };
    let journal_state = journal.as_ref().map(|(link, _)| link.state());
    let shared = Arc::new(Shared::new(Arc::clone(&stop)));
    let completions = Arc::new(ArrayQueue::new(cfg.ring_capacity));
    let mut others = Vec::new();
    let mut gateways = Vec::new();
    for (i, v) in cfg.venues.iter().enumerate() {
        let (tx, rx) = spsc::ring(cfg.ring_capacity);
        let counters = Arc::new(GatewayCounters::default());
        let parts = GatewayParts {
            index: i as u32,
            inbox: rx,
            completions: Arc::clone(&completions),
            counters: Arc::clone(&counters),
            stop: Arc::clone(&stop),
            core: core_for(&v.thread, &cores),
            journal: journal_state.clone(),
            log: log.clone(),
            bell: Arc::clone(&bell),
        };
        let (handle, reason_name) = match v.kind() {
            Some(VenueKind::Sim(sim)) => {
                let mut venue = SimVenue::new(*sim, &cfg.instruments);
                if let Some(f) = venue.market_feed() {
                    feeds.push((i as u32, f));
                }
                restore_into(&mut venue, i as u32, recovered.as_ref(), &mut settled);
                spawn_gateway(v, venue, parts)?
            }
            Some(VenueKind::Exchange(x)) => {
                let mut venue = ExchangeVenue::new(&v.name, x.clone())
                    .map_err(|e| StartError::Venue(v.name.clone(), e.to_string()))?;
                // With a journal, the report-stream position survives restarts: it
                // is journaled after the reports it covers.
                if let Some(seq) = resume_point(cfg, &v.name, i, recovered.as_ref()) {
                    venue = venue.with_resume(seq);
                }
                // Connect before strategies can send (blocking up to the connect
                // timeout); a failure is not fatal: the gateway keeps retrying.
                if let Some(f) = venue.market_feed() {
                    feeds.push((i as u32, f));
                }
                if let Some(feed) = &x.feed {
                    let f = peregrine_venues::exchange::md::ExchangeFeed::bind(
                        &v.name,
                        feed,
                        &cfg.instruments,
                    )
                    .map_err(|e| StartError::Venue(v.name.clone(), e))?;
                    feeds.push((i as u32, Box::new(f)));
                }
                restore_into(&mut venue, i as u32, recovered.as_ref(), &mut settled);
                if let Err(e) = venue.connect(peregrine_queue::clock::now_ns()) {
                    notes.push(format!(
                        "WARNING: venue {}: {e}; the gateway retries every {} ms",
                        v.name, x.reconnect_ms
                    ));
                }
                spawn_gateway(v, venue, parts)?
            }
            Some(VenueKind::Fix(f)) => {
                // Connects and logs on at its gateway thread's first poll (and
                // reconnects every `reconnect_ms`); with a `store`, sequence numbers
                // and sent messages survive restarts and FIX resend fills gaps.
                let mut venue = peregrine_venues::fix::FixVenue::new(&v.name, f.clone())
                    .map_err(|e| StartError::Venue(v.name.clone(), e))?;
                restore_into(&mut venue, i as u32, recovered.as_ref(), &mut settled);
                spawn_gateway(v, venue, parts)?
            }
            None => return Err(StartError::Venue(v.name.clone(), "no adapter".into())),
        };
        others.push(handle);
        gateways.push(GatewayLink {
            name: v.name.clone(),
            inbox: tx,
            counters,
            reason_name,
        });
    }
    let attach = Arc::new(ArrayQueue::new(cfg.strategies.len().max(1) * 4));
    let md_counters = Arc::new(MdCounters::new(cfg.strategies.len()));
    let md = MdThread::new(
        feeds,
        map,
        board,
        outboxes,
        Arc::clone(&attach),
        Arc::clone(&md_counters),
        Arc::clone(&stop),
        cfg.market_data.thread.idle_policy(),
    )
    .with_log(log.clone());
    let md_core = core_for(&cfg.market_data.thread, &cores);
    others.push(spawn("md", move || {
        eprintln!("{}", pin_current("md", md_core).describe());
        md.run();
    })?);
    let mut orch = Orchestrator::new(cfg, links, gateways, completions, Arc::clone(&shared))
        .with_market_data(attach, md_counters)
        .with_log(log.clone())
        .with_doorbell(bell);
    let journal = match journal {
        Some((link, h)) => {
            orch = orch.with_journal(link);
            Some((h, journal_stop))
        }
        None => None,
    };
    if let Some(r) = recovered {
        orch = orch.restore(r, settled);
    }
    // A snapshot exists before the socket does: a client never sees an empty one.
    orch.publish(peregrine_queue::clock::now_ns());
    if cfg.metrics.enabled {
        let (addr, h) = crate::metrics::serve(&cfg.metrics, Arc::clone(&shared))
            .map_err(|e| StartError::Io(PathBuf::from(cfg.metrics.listen.to_string()), e))?;
        notes.push(format!("metrics on http://{addr}/metrics"));
        others.push(h);
    }
    let socket = paths::control_socket(&dir);
    let control = control::serve(&socket, Arc::clone(&shared))
        .map_err(|e| StartError::Io(socket.clone(), e))?;
    others.push(control);
    let core = core_for(&cfg.orchestrator.thread(), &cores);
    let orchestrator = spawn("orchestrator", move || {
        eprintln!("{}", pin_current("orchestrator", core).describe());
        orch.run()
    })?;
    Ok(Engine {
        dir,
        files: [files, vec![socket]].concat(),
        strategies: cfg.strategies.iter().map(|s| s.name.clone()).collect(),
        shared,
        stop,
        orchestrator,
        others,
        journal,
        log: (log_thread, log_stop),
        notes,
    })
}

/// Writes `<dir>/engine.pid`: this process's id and start time, so a strategy's
/// runner notices the engine's death (within one heartbeat) and its restart.
fn write_pid_file(dir: &Path) -> Result<PathBuf, StartError> {
    let path = paths::engine_pid(dir);
    let pid = std::process::id();
    let start = paths::process_start(pid).unwrap_or(0);
    std::fs::write(&path, format!("{pid} {start}\n"))
        .map_err(|e| StartError::Io(path.clone(), e))?;
    Ok(path)
}

/// Where venue `name` (index `i`) resumes its report stream: the position the
/// journal holds, or (a journal from before positions were journaled) the
/// `<journal dir>/<venue>.report-seq` file an earlier version kept, read once here.
fn resume_point(
    cfg: &EngineConfig,
    name: &str,
    i: usize,
    recovered: Option<&Recovered>,
) -> Option<u64> {
    if let Some(seq) = recovered.and_then(|r| r.cursors.get(i).copied().flatten()) {
        return Some(seq);
    }
    let j = cfg.journal.as_ref()?;
    let text =
        std::fs::read_to_string(Path::new(&j.dir).join(format!("{name}.report-seq"))).ok()?;
    text.trim().parse().ok()
}

/// Opens the journal (if configured), replays it, and records this run's roster.
fn recover(
    cfg: &EngineConfig,
    core: &peregrine_orchestrator::CoreConfig,
    notes: &mut Vec<String>,
) -> Result<(Option<EngineJournal>, Option<Recovered>), StartError> {
    let Some(section) = &cfg.journal else {
        return Ok((None, None));
    };
    let started = Instant::now();
    let jerr = |e: String| StartError::Journal(section.dir.clone(), e);
    let mut journal =
        EngineJournal::open(&section.dir, section.fsync).map_err(|e| jerr(e.to_string()))?;
    let recovered = durable::replay(&mut journal, core, peregrine_queue::clock::now_ns())
        .map_err(|e| jerr(e.to_string()))?;
    let mut j = EngineJournal::new(journal);
    let roster = Rec::Roster {
        strategies: cfg.strategies.iter().map(|s| s.name.clone()).collect(),
        venues: cfg.venues.iter().map(|v| v.name.clone()).collect(),
    };
    if !j.append(&roster, peregrine_queue::clock::now_ns()) || !j.commit() {
        return Err(jerr(j.failed.clone().unwrap_or_default()));
    }
    if recovered.records > 0 {
        notes.push(format!(
            "engine journal {}: recovered {} records in {:.1} ms: {} open orders to reconcile \
             with their venues, positions and limits restored",
            section.dir.display(),
            recovered.records,
            started.elapsed().as_secs_f64() * 1e3,
            recovered.orders.len()
        ));
    }
    notes.extend(recovered.warnings.iter().map(|w| format!("WARNING: {w}")));
    Ok((Some(j), Some(recovered)))
}

/// Hands venue `venue`'s restored orders to its adapter; reports it settles at once
/// go to `settled`.
fn restore_into<V: Venue>(
    v: &mut V,
    venue: u32,
    recovered: Option<&Recovered>,
    settled: &mut Vec<Completion>,
) {
    let Some(r) = recovered else { return };
    let now = peregrine_queue::clock::now_ns();
    for o in r.orders.iter().filter(|o| o.venue == venue) {
        if let Some(report) = v.restore(o) {
            settled.push(Completion {
                venue,
                engine_id: o.engine_id,
                kind: crate::gateway::CompletionKind::Report(report),
                t3: 0,
                t4: now,
                t5: now,
                scheduled_ns: 0,
            });
        }
    }
}

/// What every gateway thread gets besides its adapter.
struct GatewayParts {
    index: u32,
    inbox: peregrine_queue::Consumer<Dispatch>,
    completions: Arc<ArrayQueue<Completion>>,
    counters: Arc<GatewayCounters>,
    stop: Arc<AtomicBool>,
    core: Option<CoreId>,
    journal: Option<Arc<JournalState>>,
    log: EngineLog,
    bell: Arc<Doorbell>,
}

/// Starts the gateway thread of `venue`; returns it with the venue's reason names.
fn spawn_gateway<V: Venue + Send + 'static>(
    v: &VenueConfig,
    venue: V,
    p: GatewayParts,
) -> Result<(JoinHandle<()>, peregrine_venues::ReasonNames), StartError> {
    let gw = Gateway {
        index: p.index,
        venue,
        inbox: p.inbox,
        completions: p.completions,
        counters: p.counters,
        stop: p.stop,
        wait: v.thread.idle_policy(),
        bell: Some(p.bell),
        journal: p.journal,
        log: p.log,
    };
    let name = format!("gw-{}", v.name);
    let (core, label) = (p.core, name.clone());
    let handle = spawn(&name, move || {
        eprintln!("{}", pin_current(&label, core).describe());
        gw.run();
    })?;
    Ok((handle, V::reason_name))
}

fn spawn<T: Send + 'static>(
    name: &str,
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<JoinHandle<T>, StartError> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(body)
        .map_err(|e| StartError::Io(PathBuf::from(name), e))
}

fn core_for(t: &ThreadConfig, cores: &[CoreId]) -> Option<CoreId> {
    t.core.and_then(|i| cores.get(i).copied())
}

fn create_rings(
    cfg: &EngineConfig,
    dir: &Path,
) -> Result<(Vec<StrategyLink>, Vec<PathBuf>), StartError> {
    let mut links = Vec::new();
    let mut files = Vec::new();
    for s in &cfg.strategies {
        let md_cap = cfg.market_data.ring_capacity;
        links.push(rings::create_link(dir, &s.name, cfg.ring_capacity, md_cap)?);
        files.extend([
            paths::submit_ring(dir, &s.name),
            paths::return_ring(dir, &s.name),
            peregrine_strategy::md::ring_path(dir, &s.name),
        ]);
    }
    Ok((links, files))
}

/// Each strategy's market-data outbox: its subscriptions, and its md ring taken out
/// of its link.
fn outboxes(cfg: &EngineConfig, map: &SlotMap, links: &mut [StrategyLink]) -> Vec<Outbox> {
    cfg.strategies
        .iter()
        .zip(links.iter_mut())
        .map(|(s, link)| {
            let mut wants = vec![false; map.len()];
            for sub in &s.subscribe {
                let slot = cfg
                    .venue_index(&sub.venue)
                    .and_then(|v| map.slot(v, peregrine_types::InstrumentId(sub.instrument)));
                if let Some(slot) = slot {
                    wants[slot] = true;
                }
            }
            Outbox::new(wants, link.md.take())
        })
        .collect()
}

impl Engine {
    /// The shared-memory directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The flag that stops the engine (a signal handler may set it).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// Asks every thread to stop.
    pub fn stop(&self) {
        // Relaxed: a stop flag.
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Blocks until `shutdown` (control socket), [`Engine::stop`] or `duration`, then
    /// joins the threads (the journal thread once the orchestrator's last records are
    /// handed over, the log thread last), removes the files and returns the final
    /// report.
    pub fn wait(self, duration: Option<Duration>) -> String {
        let started = Instant::now();
        // Relaxed: a stop flag.
        while !self.stop.load(Ordering::Relaxed) {
            if duration.is_some_and(|d| started.elapsed() >= d) {
                self.stop();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let report = match self.orchestrator.join() {
            Ok(mut orch) => {
                orch.finish_journal();
                orch.render(peregrine_queue::clock::now_ns())
            }
            Err(_) => "orchestrator thread panicked\n".to_owned(),
        };
        for h in self.others {
            let _ = h.join();
        }
        if let Some((h, stop)) = self.journal {
            // Relaxed: a stop flag; every record was handed over before it is set.
            stop.store(true, Ordering::Relaxed);
            let _ = h.join();
        }
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
        for s in &self.strategies {
            let _ = std::fs::remove_file(paths::dead_note(&self.dir, s));
        }
        let (log, log_stop) = self.log;
        // Relaxed: a stop flag; the log thread drains its queue before it ends.
        log_stop.store(true, Ordering::Relaxed);
        let _ = log.join();
        let _ = std::fs::remove_dir(&self.dir); // only if empty
        drop(self.shared);
        report
    }
}
