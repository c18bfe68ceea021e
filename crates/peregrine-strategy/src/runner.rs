//! Runs a [`Strategy`] against a running engine.
//!
//! The runner attaches to the strategy's two rings in the engine's directory (waiting
//! up to `attach_timeout` for the engine to create them), claims the producer end of
//! the submit ring and the consumer end of the return ring, and loops: pop an event,
//! stamp t8, dispatch it to the strategy; fire timers; send a heartbeat (carrying the
//! process id) every `heartbeat_interval`; when idle, wait by the configured
//! [`WaitStrategy`]. It stops when `stop` is set, `duration` has passed or the
//! strategy says it is [`finished`](Strategy::finished).
//!
//! A ring pair serves one incarnation of the strategy. When the engine declares the
//! strategy dead it unlinks the ring files, and later creates fresh ones at the same
//! paths for a restarted process. So:
//!
//! * at every heartbeat the runner checks that the files at its ring paths are still
//!   the ones it mapped (device and inode); if not, the engine has given up on this
//!   process (it stalled past the heartbeat timeout, or the engine restarted) and
//!   whatever it writes is never read: the runner stops and reports
//!   [`RunSummary::detached`];
//! * at every heartbeat it also checks that the engine process that made the rings
//!   (its pid and start time, from `engine.pid` in the directory) still runs; if it
//!   died, the run stops within that heartbeat interval and reports
//!   [`RunSummary::engine_gone`] (nothing would ever answer again);
//! * when [`run`] returns it keeps its claims on both rings (the handles are leaked
//!   until the process exits), so a new process cannot attach to rings that may still
//!   hold this one's unread messages: it waits until the engine has noticed this
//!   process is gone and re-created them.
//!
//! Why a run was detached is told in [`RunSummary::detached_why`]: the engine writes
//! the reason it declared a strategy dead next to its rings (`<name>.dead`), and a
//! changed `engine.pid` means the engine itself restarted.
//!
//! Market data: the runner also attaches the strategy's market-data ring
//! (`<name>.md`) and the engine's book board (both optional: an engine without
//! market data has neither). For each book event it reads the book's *current*
//! version from the board and calls [`Strategy::on_book`], unless that version was
//! already delivered (events queued behind a newer version collapse into nothing);
//! each trade event becomes [`Strategy::on_trade`]. After each `on_book` it sends a
//! market-data receipt, so the engine's latency table has the venue → engine →
//! `on_book` path.
//!
//! It keeps HdrHistograms per run: per new order (at its ack or reject) the round
//! trip t8 − t1 and the round trip minus venue time (t8 − t1) − (t5 − t4), the
//! strategy↔engine cost the goal is about; per `on_book` the time from the
//! venue's timestamp to the callback.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::api::Api;
use crate::md::{self, BoardReader, MdEvent, MdKind};
use crate::msg::{Event, EventKind, Request};
use crate::paths;
use crate::strategy::Strategy;
use hdrhistogram::Histogram;
use peregrine_queue::clock::now_ns;
use peregrine_queue::shm::{ShmError, ShmSpsc, ShmSpscConsumer};
use peregrine_queue::WaitStrategy;
use peregrine_types::stamp;

/// How to run.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// The engine's shared-memory directory.
    pub dir: PathBuf,
    /// This strategy's name, as configured in the engine.
    pub name: String,
    /// What to do when no event is waiting.
    pub wait: WaitStrategy,
    /// Heartbeat period.
    pub heartbeat_interval: Duration,
    /// Stop after this long (`None`: until `stop`).
    pub duration: Option<Duration>,
    /// How long to wait for the engine to create the rings.
    pub attach_timeout: Duration,
    /// Send a receipt (with t8) for every ack and reject, so the engine's latency
    /// table covers the whole round trip; and one per `on_book` (market-data latency).
    pub receipts: bool,
}

/// Market-data events handled per loop turn at most (order events come first).
const MD_BATCH: usize = 64;

impl RunnerConfig {
    /// Defaults: spin-then-yield, heartbeat every 100 ms, attach timeout 5 s.
    pub fn new(dir: PathBuf, name: &str) -> RunnerConfig {
        RunnerConfig {
            dir,
            name: name.to_owned(),
            wait: WaitStrategy::SpinThenYield,
            heartbeat_interval: Duration::from_millis(100),
            duration: None,
            attach_timeout: Duration::from_secs(5),
            receipts: true,
        }
    }
}

/// Why the runner could not run.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// A ring could not be attached or claimed.
    #[error("attaching {ring}: {source}")]
    Attach {
        /// Which ring.
        ring: PathBuf,
        /// Why.
        source: ShmError,
    },
    /// The engine replaced the ring files while the runner attached to them.
    #[error("the ring files in {0} were replaced while attaching")]
    Replaced(PathBuf),
}

/// What happened during a run.
#[derive(Debug)]
pub struct RunSummary {
    /// Events by kind: ack, reject, fill, cancelled, cancel-reject, unknown, replaced,
    /// replace-reject, triggered, list status.
    pub events: [u64; 10],
    /// Requests pushed (orders, cancels, heartbeats).
    pub sent: u64,
    /// Pushes refused (ring full).
    pub full: u64,
    /// t8 − t1 per new order, ns.
    pub round_trip: Histogram<u64>,
    /// (t8 − t1) − (t5 − t4) per new order that reached a venue, ns.
    pub rt_minus_venue: Histogram<u64>,
    /// The run stopped because the engine replaced this strategy's ring files (it
    /// declared the process dead, or restarted): nothing sent any more was read.
    pub detached: bool,
    /// Why, when the engine said (its `<name>.dead` note, or its restart).
    pub detached_why: Option<String>,
    /// The run stopped because the engine process (this pid) is gone.
    pub engine_gone: Option<u32>,
    /// `on_book` calls.
    pub books: u64,
    /// Book events that named a version already delivered (collapsed here).
    pub stale_books: u64,
    /// `on_trade` calls.
    pub trades: u64,
    /// Market-data events the engine could not deliver (the latest `skipped`).
    pub md_skipped: u64,
    /// Venue timestamp → `on_book`, ns.
    pub feed_to_book: Histogram<u64>,
}

impl RunSummary {
    fn new() -> RunSummary {
        let h = || Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("static bounds");
        RunSummary {
            events: [0; 10],
            sent: 0,
            full: 0,
            round_trip: h(),
            rt_minus_venue: h(),
            detached: false,
            detached_why: None,
            engine_gone: None,
            books: 0,
            stale_books: 0,
            trades: 0,
            md_skipped: 0,
            feed_to_book: h(),
        }
    }

    /// A few lines for humans.
    pub fn render(&self) -> String {
        let e = &self.events;
        let mut s = format!(
            "events: ack {} reject {} fill {} cancelled {} cancel_reject {} replaced {} \
             replace_reject {} triggered {} list_status {} unknown {}\n\
             requests sent {} (ring full {})\n",
            e[0], e[1], e[2], e[3], e[4], e[6], e[7], e[8], e[9], e[5], self.sent, self.full
        );
        if self.books + self.trades > 0 {
            s += &format!(
                "market data: on_book {} (stale events collapsed {}) on_trade {} skipped by the \
                 engine {}\n",
                self.books, self.stale_books, self.trades, self.md_skipped
            );
        }
        if self.detached {
            s += &format!(
                "DETACHED: the engine replaced this strategy's rings ({}); restart the strategy\n",
                self.detached_why
                    .as_deref()
                    .unwrap_or("it declared the process dead, or restarted")
            );
        }
        if let Some(pid) = self.engine_gone {
            s += &format!(
                "ENGINE GONE: the engine process (pid {pid}) exited; this strategy stopped \
                 (restart it once an engine runs again)\n"
            );
        }
        for (name, h) in [
            ("round trip", &self.round_trip),
            ("rt - venue", &self.rt_minus_venue),
            ("feed->book", &self.feed_to_book),
        ] {
            s += &format!(
                "{name:<11} n={:<8} p50={}ns p99={}ns p99.9={}ns max={}ns\n",
                h.len(),
                h.value_at_quantile(0.5),
                h.value_at_quantile(0.99),
                h.value_at_quantile(0.999),
                h.max()
            );
        }
        s
    }

    fn record(&mut self, ev: &Event) {
        if let Some(rt) = ev.round_trip_ns() {
            self.round_trip.saturating_record(rt.max(1));
            if let Some(v) = ev.venue_ns() {
                self.rt_minus_venue
                    .saturating_record(rt.saturating_sub(v).max(1));
            }
        }
    }
}

/// Attaches and runs `strategy` until `stop` or the configured duration.
pub fn run<S: Strategy>(
    strategy: &mut S,
    cfg: &RunnerConfig,
    stop: &AtomicBool,
) -> Result<RunSummary, RunnerError> {
    let (mut api, mut rx, mut mdrx, files) = attach_files(cfg)?;
    let engine = EngineProc::read(&cfg.dir);
    let mut delivered: Vec<u64> = Vec::new();
    let pid = std::process::id();
    let _ = api.send_raw(Request::heartbeat(pid, now_ns()));
    strategy.on_start(&mut api);
    let mut summary = RunSummary::new();
    let mut waiter = cfg.wait.idler();
    let heartbeat_ns = cfg.heartbeat_interval.as_nanos() as u64;
    let start = now_ns();
    let deadline = cfg.duration.map(|d| start + d.as_nanos() as u64);
    let mut next_heartbeat = start + heartbeat_ns;
    let mut next_timer = start + strategy.timer_interval_ns();
    let mut idle_turns: u32 = 0;
    // Relaxed: a stop flag; no data is published through it.
    while !stop.load(Ordering::Relaxed) && !strategy.finished() {
        let mut busy = false;
        while let Some(mut ev) = rx.try_pop() {
            ev.ts[stamp::STRATEGY_RECV] = now_ns();
            dispatch(strategy, &mut api, &mut summary, &ev);
            // The first answer to a new order or a replace: one latency sample each.
            let first = matches!(
                ev.kind(),
                Some(
                    EventKind::Ack
                        | EventKind::Reject
                        | EventKind::Replaced
                        | EventKind::ReplaceReject
                )
            );
            if cfg.receipts && first {
                let _ = api.send_raw(Request::receipt(ev.client_id, ev.ts[stamp::STRATEGY_RECV]));
            }
            busy = true;
        }
        if let Some(mdrx) = mdrx.as_mut() {
            for _ in 0..MD_BATCH {
                let Some(ev) = mdrx.try_pop() else { break };
                market_data(
                    strategy,
                    &mut api,
                    &mut summary,
                    &mut delivered,
                    &ev,
                    cfg.receipts,
                );
                busy = true;
            }
        }
        if busy {
            strategy.on_batch_end(&mut api);
        }
        idle_turns = if busy { 0 } else { idle_turns.wrapping_add(1) };
        // A clock read costs ~23 ns, as long as a whole ring hand-off: while idle, look
        // at the clock (timers, heartbeat, deadline) every 32 turns only, so an event
        // that arrives is seen sooner.
        if busy || idle_turns.is_multiple_of(32) {
            let now = now_ns();
            if deadline.is_some_and(|d| now >= d) {
                break;
            }
            if now >= next_timer {
                strategy.on_timer(&mut api, now);
                next_timer = now + strategy.timer_interval_ns();
                busy = true;
            }
            if now >= next_heartbeat {
                if files.replaced(cfg) {
                    summary.detached = true;
                    summary.detached_why = detached_why(cfg, engine);
                    break;
                }
                if let Some(e) = engine.filter(|e| !e.alive()) {
                    summary.engine_gone = Some(e.pid);
                    break;
                }
                let _ = api.send_raw(Request::heartbeat(pid, now));
                next_heartbeat = now + heartbeat_ns;
            }
        }
        if busy {
            waiter.reset();
        } else {
            waiter.idle();
        }
    }
    summary.sent = api.sent();
    summary.full = api.full();
    // Keep both claims until the process exits (see the module docs): the rings stay
    // ours, and the engine re-creates them once it sees this process gone.
    std::mem::forget(api);
    std::mem::forget(rx);
    std::mem::forget(mdrx);
    Ok(summary)
}

/// One market-data event: the current book for a book event (if not delivered yet),
/// or the trade.
fn market_data<S: Strategy>(
    s: &mut S,
    api: &mut Api,
    summary: &mut RunSummary,
    delivered: &mut Vec<u64>,
    ev: &MdEvent,
    receipts: bool,
) {
    summary.md_skipped = ev.skipped;
    match ev.kind() {
        Some(MdKind::Book) => {
            let slot = ev.slot as usize;
            let Some(book) = api.book_at(slot) else {
                return;
            };
            if delivered.len() <= slot {
                delivered.resize(slot + 1, 0);
            }
            if book.seq <= delivered[slot] {
                summary.stale_books += 1;
                return;
            }
            delivered[slot] = book.seq;
            let seen = now_ns();
            summary.books += 1;
            if book.exchange_ts != 0 {
                summary
                    .feed_to_book
                    .saturating_record(seen.saturating_sub(book.exchange_ts).max(1));
            }
            s.on_book(api, book.instrument, &book);
            if receipts {
                // The sample is for the version read, which may be newer than `ev`.
                let mut latest = *ev;
                latest.exchange_ts = book.exchange_ts;
                latest.recv_ts = book.recv_ts;
                let _ = api.send_raw(Request::md_receipt(&latest, seen));
            }
        }
        Some(MdKind::Trade) => {
            summary.trades += 1;
            s.on_trade(api, &ev.trade());
        }
        None => {}
    }
}

/// The engine process that made the rings: its pid and its start time (in clock
/// ticks since boot, field 22 of `/proc/<pid>/stat`), so a reused pid is not taken
/// for it. The engine writes both into `engine.pid` in its directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EngineProc {
    pid: u32,
    start: u64,
}

impl EngineProc {
    /// The engine named in `dir`'s `engine.pid` (`None`: no such file, an engine that
    /// does not write one).
    fn read(dir: &std::path::Path) -> Option<EngineProc> {
        let text = std::fs::read_to_string(paths::engine_pid(dir)).ok()?;
        let mut words = text.split_whitespace();
        let pid = words.next()?.parse().ok()?;
        let start = words.next()?.parse().ok()?;
        Some(EngineProc { pid, start })
    }

    /// Whether it still runs (one read of `/proc/<pid>/stat`, in memory).
    fn alive(&self) -> bool {
        paths::process_start(self.pid) == Some(self.start)
    }
}

/// Why the rings were replaced, as far as the engine said.
fn detached_why(cfg: &RunnerConfig, was: Option<EngineProc>) -> Option<String> {
    let now = EngineProc::read(&cfg.dir);
    if let (Some(a), Some(b)) = (was, now) {
        if a != b {
            return Some(format!(
                "the engine restarted: pid {} is now pid {}",
                a.pid, b.pid
            ));
        }
    }
    let note = std::fs::read_to_string(paths::dead_note(&cfg.dir, &cfg.name)).ok()?;
    Some(format!("the engine declared it dead: {}", note.trim()))
}

/// The identity (device, inode) of the ring files a runner mapped (the market-data
/// ring is optional).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RingFiles {
    submit: (u64, u64),
    ret: (u64, u64),
    md: Option<(u64, u64)>,
}

impl RingFiles {
    /// Both files as they are on disk now (`None` if either is missing).
    fn now(cfg: &RunnerConfig) -> Option<RingFiles> {
        use std::os::unix::fs::MetadataExt;
        let id = |p: PathBuf| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        Some(RingFiles {
            submit: id(paths::submit_ring(&cfg.dir, &cfg.name))?,
            ret: id(paths::return_ring(&cfg.dir, &cfg.name))?,
            md: id(md::ring_path(&cfg.dir, &cfg.name)),
        })
    }

    /// Whether the files at the ring paths are no longer the ones mapped (two `stat`
    /// calls; done once per heartbeat).
    fn replaced(&self, cfg: &RunnerConfig) -> bool {
        RingFiles::now(cfg) != Some(*self)
    }
}

fn dispatch<S: Strategy>(s: &mut S, api: &mut Api, summary: &mut RunSummary, ev: &Event) {
    let slot = match ev.kind() {
        Some(EventKind::Ack) => 0,
        Some(EventKind::Reject) => 1,
        Some(EventKind::Fill) => 2,
        Some(EventKind::Cancelled) => 3,
        Some(EventKind::CancelReject) => 4,
        Some(EventKind::Replaced) => 6,
        Some(EventKind::ReplaceReject) => 7,
        Some(EventKind::Triggered) => 8,
        Some(EventKind::ListStatus) => 9,
        None => 5,
    };
    summary.events[slot] += 1;
    if slot <= 1 {
        summary.record(ev);
    }
    api.observe(ev);
    s.on_event(api, ev);
}

/// Attaches both rings, retrying until the engine has created them (and, after a
/// restart of this strategy, until it has re-created them: the previous process keeps
/// its claims).
pub fn attach(cfg: &RunnerConfig) -> Result<(Api, ShmSpscConsumer<Event>), RunnerError> {
    attach_files(cfg).map(|(api, rx, _, _)| (api, rx))
}

/// The strategy's market-data ring, if the engine made one.
type MdRx = Option<ShmSpscConsumer<MdEvent>>;

/// [`attach`], also returning which files were mapped: the attach is retried if either
/// file was replaced while it ran.
fn attach_files(
    cfg: &RunnerConfig,
) -> Result<(Api, ShmSpscConsumer<Event>, MdRx, RingFiles), RunnerError> {
    let md_path = md::ring_path(&cfg.dir, &cfg.name);
    let submit = paths::submit_ring(&cfg.dir, &cfg.name);
    let ret = paths::return_ring(&cfg.dir, &cfg.name);
    let deadline = Instant::now() + cfg.attach_timeout;
    loop {
        let before = RingFiles::now(cfg);
        let attempt = ShmSpsc::<Request>::attach(&submit)
            .and_then(|r| r.producer())
            .map_err(|source| RunnerError::Attach {
                ring: submit.clone(),
                source,
            })
            .and_then(|tx| {
                ShmSpsc::<Event>::attach(&ret)
                    .and_then(|r| r.consumer())
                    .map(|rx| (tx, rx))
                    .map_err(|source| RunnerError::Attach {
                        ring: ret.clone(),
                        source,
                    })
            })
            .and_then(|(tx, rx)| {
                let mdrx = match before.and_then(|f| f.md) {
                    None => None,
                    Some(_) => Some(
                        ShmSpsc::<MdEvent>::attach(&md_path)
                            .and_then(|r| r.consumer())
                            .map_err(|source| RunnerError::Attach {
                                ring: md_path.clone(),
                                source,
                            })?,
                    ),
                };
                let board = BoardReader::attach(&md::board::path(&cfg.dir)).ok();
                // An engine without a doorbell (or a broken one) serves the
                // strategy all the same, within its idle sleep.
                let bell = crate::doorbell::Doorbell::open(&paths::doorbell(&cfg.dir)).ok();
                Ok((Api::new(tx, board).with_doorbell(bell), rx, mdrx))
            });
        let attempt = attempt.and_then(|(api, rx, mdrx)| match before {
            Some(files) if RingFiles::now(cfg) == Some(files) => Ok((api, rx, mdrx, files)),
            // Replaced (or removed) while we attached: try again.
            _ => Err(RunnerError::Replaced(cfg.dir.clone())),
        });
        match attempt {
            Ok(found) => return Ok(found),
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::pinger::{Pinger, PingerConfig};
    use crate::msg::Command;
    use peregrine_types::InstrumentId;

    #[test]
    fn attach_times_out_without_an_engine() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = RunnerConfig::new(dir.path().to_owned(), "s");
        cfg.attach_timeout = Duration::from_millis(50);
        assert!(matches!(attach(&cfg), Err(RunnerError::Attach { .. })));
    }

    /// A fake engine answers every new order with a reject; the pinger's runner sees
    /// every answer, measures it, and sends heartbeat and receipts.
    #[test]
    fn pinger_round_trips_against_a_fake_engine() {
        let dir = tempfile::tempdir().unwrap();
        let submit = ShmSpsc::<Request>::create(&paths::submit_ring(dir.path(), "p"), 64).unwrap();
        let ret = ShmSpsc::<Event>::create(&paths::return_ring(dir.path(), "p"), 64).unwrap();
        let (mut rx, mut tx) = (submit.consumer().unwrap(), ret.producer().unwrap());
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let engine_stop = std::sync::Arc::clone(&stop);
        let engine = std::thread::spawn(move || {
            let mut seen = Vec::new();
            loop {
                let Some(req) = rx.try_pop() else {
                    // Relaxed: a stop flag; the ring is drained before stopping.
                    if engine_stop.load(Ordering::Relaxed) {
                        break;
                    }
                    std::thread::yield_now();
                    continue;
                };
                let cmd = req.decode().unwrap();
                if let Command::New(o) = cmd {
                    let mut ev = Event {
                        kind: EventKind::Reject as u8,
                        client_id: o.client_id,
                        ..Event::default()
                    };
                    ev.ts[stamp::STRATEGY_SEND] = req.t1;
                    tx.try_push(ev).unwrap();
                }
                seen.push(cmd);
            }
            seen
        });
        let mut cfg = RunnerConfig::new(dir.path().to_owned(), "p");
        cfg.duration = Some(Duration::from_secs(20));
        let mut pinger = Pinger::new(PingerConfig {
            venue: 0,
            instrument: InstrumentId(1),
            qty: 1,
            count: 3,
        });
        let summary = run(&mut pinger, &cfg, &AtomicBool::new(false)).unwrap();
        stop.store(true, Ordering::Relaxed);
        let seen = engine.join().unwrap();
        assert_eq!(summary.events[1], 3);
        assert_eq!(summary.round_trip.len(), 3);
        assert!(matches!(seen[0], Command::Heartbeat { pid } if pid == std::process::id()));
        let receipts = seen
            .iter()
            .filter(|c| matches!(c, Command::Receipt { t8, .. } if *t8 > 0))
            .count();
        assert_eq!(receipts, 3);
    }

    /// Does nothing; runs until stopped.
    struct Idle;
    impl Strategy for Idle {}

    /// The engine replaces the ring files (as when it declares the strategy dead): the
    /// runner notices at its next heartbeat and stops, reporting `detached`; it keeps
    /// its claims on the old rings, so nobody else can attach to them.
    #[test]
    fn replaced_rings_detach_the_runner_and_claims_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let submit_path = paths::submit_ring(dir.path(), "p");
        let submit = ShmSpsc::<Request>::create(&submit_path, 64).unwrap();
        let _ret = ShmSpsc::<Event>::create(&paths::return_ring(dir.path(), "p"), 64).unwrap();
        let mut engine_end = submit.consumer().unwrap();
        let mut cfg = RunnerConfig::new(dir.path().to_owned(), "p");
        cfg.duration = Some(Duration::from_secs(20));
        cfg.heartbeat_interval = Duration::from_millis(10);
        cfg.wait = WaitStrategy::SpinThenPark;
        let runner_cfg = cfg.clone();
        let h = std::thread::spawn(move || {
            run(&mut Idle, &runner_cfg, &AtomicBool::new(false)).unwrap()
        });
        // Replace the file only once the runner has attached (its first heartbeat
        // arrives), so the test is about noticing a replaced file, not a missing one.
        peregrine_testkit::wait_until(
            "the runner's first heartbeat",
            Duration::from_secs(10),
            || engine_end.try_pop().is_some(),
        );
        std::fs::remove_file(&submit_path).unwrap();
        let _fresh = ShmSpsc::<Request>::create(&submit_path, 64).unwrap();
        let summary = h.join().unwrap();
        assert!(summary.detached);
        assert!(summary.render().contains("DETACHED"));
        assert!(
            matches!(submit.producer(), Err(ShmError::AlreadyClaimed(_))),
            "the finished runner still holds the old ring's producer claim"
        );
    }
}
