//! Starting and stopping the engine process: rings, threads, control socket.
//!
//! [`start`] creates the shared-memory directory and, per configured strategy, its
//! submit and return rings (removing stale files a crashed run left; see [`rings`]),
//! binds the control
//! socket, and spawns one gateway thread per venue and the orchestrator thread, each
//! with its configured wait strategy and core. [`Engine::wait`] blocks the calling
//! thread until a `shutdown` command or the duration, then stops every thread, removes
//! the files and returns the final report.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use peregrine_queue::pin::{available_cores, pin_current, spinner_warning, CoreId};
use peregrine_queue::shm::ShmError;
use peregrine_queue::spsc;
use peregrine_strategy::paths;

use crate::config::{EngineConfig, ThreadConfig, VenueConfig, VenueKind};
use crate::control::{self, Shared};
use crate::gateway::{Completion, Gateway, GatewayCmd, GatewayCounters};
use crate::orchestrator::{GatewayLink, Orchestrator, StrategyLink};
use crate::rings;
use crate::venue::exchange::ExchangeVenue;
use crate::venue::sim::SimVenue;
use crate::venue::Venue;

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
}

/// A running engine.
#[derive(Debug)]
pub struct Engine {
    dir: PathBuf,
    files: Vec<PathBuf>,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    orchestrator: JoinHandle<Orchestrator>,
    others: Vec<JoinHandle<()>>,
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
    let (links, files) = create_rings(cfg, &dir)?;
    let stop = Arc::new(AtomicBool::new(false));
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
        };
        let handle = match v.kind() {
            Some(VenueKind::Sim(sim)) => spawn_gateway(v, SimVenue::new(*sim), parts)?,
            Some(VenueKind::Exchange(x)) => {
                let mut venue = ExchangeVenue::new(&v.name, x.clone())
                    .map_err(|e| StartError::Venue(v.name.clone(), e.to_string()))?;
                // Connect before strategies can send (blocking up to the connect
                // timeout); a failure is not fatal: the gateway keeps retrying.
                if let Err(e) = venue.connect(peregrine_queue::clock::now_ns()) {
                    notes.push(format!(
                        "WARNING: venue {}: {e}; the gateway retries every {} ms",
                        v.name, x.reconnect_ms
                    ));
                }
                spawn_gateway(v, venue, parts)?
            }
            None => return Err(StartError::Venue(v.name.clone(), "no adapter".into())),
        };
        others.push(handle);
        gateways.push(GatewayLink {
            name: v.name.clone(),
            inbox: tx,
            counters,
        });
    }
    let orch = Orchestrator::new(cfg, links, gateways, completions, Arc::clone(&shared));
    // A snapshot exists before the socket does: a client never sees an empty one.
    orch.publish(peregrine_queue::clock::now_ns());
    let socket = paths::control_socket(&dir);
    let control = control::serve(&socket, Arc::clone(&shared))
        .map_err(|e| StartError::Io(socket.clone(), e))?;
    others.push(control);
    let core = core_for(&cfg.orchestrator, &cores);
    let orchestrator = spawn("orchestrator", move || {
        eprintln!("{}", pin_current("orchestrator", core).describe());
        orch.run()
    })?;
    Ok(Engine {
        dir,
        files: [files, vec![socket]].concat(),
        shared,
        stop,
        orchestrator,
        others,
        notes,
    })
}

/// What every gateway thread gets besides its adapter.
struct GatewayParts {
    index: u32,
    inbox: peregrine_queue::Consumer<GatewayCmd>,
    completions: Arc<ArrayQueue<Completion>>,
    counters: Arc<GatewayCounters>,
    stop: Arc<AtomicBool>,
    core: Option<CoreId>,
}

fn spawn_gateway<V: Venue + Send + 'static>(
    v: &VenueConfig,
    venue: V,
    p: GatewayParts,
) -> Result<JoinHandle<()>, StartError> {
    let gw = Gateway {
        index: p.index,
        venue,
        inbox: p.inbox,
        completions: p.completions,
        counters: p.counters,
        stop: p.stop,
        wait: v.thread.idle_policy(),
    };
    let name = format!("gw-{}", v.name);
    let (core, label) = (p.core, name.clone());
    spawn(&name, move || {
        eprintln!("{}", pin_current(&label, core).describe());
        gw.run();
    })
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
        links.push(rings::create_link(dir, &s.name, cfg.ring_capacity)?);
        files.extend([
            paths::submit_ring(dir, &s.name),
            paths::return_ring(dir, &s.name),
        ]);
    }
    Ok((links, files))
}

impl Engine {
    /// The shared-memory directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Asks every thread to stop.
    pub fn stop(&self) {
        // Relaxed: a stop flag.
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Blocks until `shutdown` (control socket), [`Engine::stop`] or `duration`, then
    /// joins the threads, removes the files and returns the final report.
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
            Ok(orch) => orch.render(peregrine_queue::clock::now_ns()),
            Err(_) => "orchestrator thread panicked\n".to_owned(),
        };
        for h in self.others {
            let _ = h.join();
        }
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
        let _ = std::fs::remove_dir(&self.dir); // only if empty
        drop(self.shared);
        report
    }
}
